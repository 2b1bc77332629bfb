//! Actual objects read as the files would write them.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::ControlFlow;

use monform_api::Remote;
use monform_model::Kind;
use monform_model::facts::{facts, variant_tag};
use monform_model::wire::{from_wire, from_wire_overlay, reference_tops};
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::actual::Actual;
use crate::identity::is_ownership_tag;
/// Maps remote ids back to logical ids, for reading actual objects in the files' form.
///
/// A plan's map borrows both ids from the account it read (`Names::new`):
/// at 100,000 checks, copies of them were 6 MiB of the plan's peak.
#[derive(Debug, Default)]
pub struct Names<'a> {
    /// Looked up for every reference of every resource in a plan: a fast hash.
    by_id: FxHashMap<(Kind, Cow<'a, str>), Cow<'a, str>>,
}

impl<'a> Names<'a> {
    pub fn new(actual: &'a Actual) -> Names<'a> {
        let mut by_id = FxHashMap::default();
        by_id.reserve(actual.owned.len() + actual.unrefreshed.len());
        for (address, remote) in &actual.owned {
            by_id.insert(
                (address.kind, Cow::Borrowed(remote.id.as_str())),
                Cow::Borrowed(address.id.as_str()),
            );
            if address.kind == Kind::PrivateLocation
                && let Some(Value::String(slug)) = remote.field("slugName")
            {
                by_id.insert(
                    (Kind::PrivateLocation, Cow::Owned(slug)),
                    Cow::Borrowed(address.id.as_str()),
                );
            }
        }
        // Trusted objects keep their remote id in the state (a private
        // location's slug is not there: `refresh.rs` reads those it needs).
        for (address, unrefreshed) in &actual.unrefreshed {
            by_id.insert(
                (address.kind, Cow::Borrowed(unrefreshed.remote_id.as_str())),
                Cow::Borrowed(address.id.as_str()),
            );
        }
        Names { by_id }
    }

    /// From (kind, remote id or slug, logical id) triples.
    pub fn from_pairs(pairs: impl Iterator<Item = (Kind, Value, String)>) -> Names<'a> {
        let by_id = pairs
            .map(|(kind, id, name)| ((kind, Cow::Owned(id_text(&id))), Cow::Owned(name)))
            .collect();
        Names { by_id }
    }

    pub fn name(&self, kind: Kind, id: &Value) -> Option<String> {
        // The map is covariant in its lifetime: looked up with a key that
        // borrows `id` for this call only, no copy of it.
        let by_id: &FxHashMap<(Kind, Cow<'_, str>), Cow<'_, str>> = &self.by_id;
        let key = match id {
            Value::String(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(id_text(other)),
        };
        by_id.get(&(kind, key)).map(|name| name.clone().into_owned())
    }

    /// Records that remote id (or slug) `id` of `kind` is `name`.
    pub fn insert(&mut self, kind: Kind, id: &Value, name: String) {
        self.by_id.insert((kind, Cow::Owned(id_text(id))), Cow::Owned(name));
    }

    /// Forgets `id` of `kind` if it still names `name`.
    pub fn remove(&mut self, kind: Kind, id: &Value, name: &str) {
        let key = (kind, Cow::Owned(id_text(id)));
        if self.by_id.get(&key).is_some_and(|n| n == name) {
            self.by_id.remove(&key);
        }
    }
}

pub(super) use monform_model::wire::id_text;

/// An actual object in the files' form: logical ids for references, no
/// ownership tags.
pub fn file_form(kind: Kind, remote: &Remote, names: &Names) -> Value {
    let mut value = from_wire(kind, &remote.body(), &|k, id| names.name(k, id));
    if let Some(tags) = value.get_mut("tags") {
        strip_ownership_tags(tags);
    }
    value
}

/// An actual object as the files would write it, read field by field:
/// fields holding references (and `tags`, without ownership tags) come
/// from a small rewritten copy, all others straight from the API's body.
///
/// The body is not parsed whole: its top-level fields are kept as their
/// texts, each parsed when first read. A no-op plan compares most fields
/// by text ([`ActualView::text`]) and parses none of them: parsing every
/// listed body into a `Value` was a fifth of a plan's instructions.
pub(crate) struct ActualView<'r> {
    /// The body's top-level fields but those `replaced`, in its order.
    fields: Vec<WireField<'r>>,
    overlay: serde_json::Map<String, Value>,
    replaced: Vec<String>,
}

/// A top-level field of the body: its text, and its value once read.
struct WireField<'r> {
    name: Cow<'r, str>,
    text: &'r str,
    value: OnceCell<Value>,
}

impl<'r> WireField<'r> {
    fn value(&self) -> &Value {
        // The text is a part of a body that was valid JSON when stored.
        self.value
            .get_or_init(|| serde_json::from_str(self.text).unwrap_or(Value::Null))
    }
}

impl<'r> ActualView<'r> {
    pub fn new(kind: Kind, remote: &'r Remote, names: &Names) -> ActualView<'r> {
        let mut fields = top_level_fields(remote);
        // What `from_wire_overlay` reads: the variant (which fields hold
        // references) and the top-level fields holding them, parsed.
        let mut wire = Value::Object(serde_json::Map::new());
        if let Some(tag) = variant_tag(kind)
            && let Some(field) = find(&fields, tag)
            && let Some(object) = wire.as_object_mut()
        {
            object.insert(tag.to_owned(), field.value().clone());
        }
        for top in reference_tops(facts(kind, &wire)) {
            if let Some(field) = find(&fields, top)
                && let Some(object) = wire.as_object_mut()
            {
                object.insert(top.to_owned(), field.value().clone());
            }
        }
        let (mut overlay, mut replaced) = from_wire_overlay(kind, &wire, &|k, id| names.name(k, id));
        if let Some(tags) = find(&fields, "tags") {
            let mut tags = tags.value().clone();
            strip_ownership_tags(&mut tags);
            overlay.insert("tags".to_owned(), tags);
            replaced.push("tags".to_owned());
        }
        fields.retain(|field| !replaced.iter().any(|r| *r == field.name));
        ActualView {
            fields,
            overlay,
            replaced,
        }
    }

    /// The object's `updated_at`, as [`Remote::version`] reads it.
    pub fn version(&self) -> Option<String> {
        self.get("updated_at").and_then(Value::as_str).map(str::to_owned)
    }

    pub fn get(&self, field: &str) -> Option<&Value> {
        // The overlay holds a few fields: a scan beats hashing the name.
        if let Some((_, value)) = self.overlay.iter().find(|(name, _)| *name == field) {
            Some(value)
        } else if self.replaced.iter().any(|r| r == field) {
            None
        } else {
            find(&self.fields, field).map(WireField::value)
        }
    }

    /// The field's text as the service sent it, when the files' form of
    /// it is that text (not a field holding references, nor `tags`).
    pub fn text(&self, field: &str) -> Option<&'r str> {
        if self.overlay.contains_key(field) || self.replaced.iter().any(|r| r == field) {
            return None;
        }
        find(&self.fields, field).map(|f| f.text)
    }
}

/// The last field of that name, as a parsed body keeps the last of a key given twice.
fn find<'f, 'r>(fields: &'f [WireField<'r>], name: &str) -> Option<&'f WireField<'r>> {
    fields.iter().rev().find(|field| field.name == name)
}

/// The top-level fields of an object's body, unparsed.
fn top_level_fields(remote: &Remote) -> Vec<WireField<'_>> {
    let mut fields = Vec::with_capacity(24);
    remote.each_field(|name, text| {
        fields.push(WireField {
            name,
            text,
            value: OnceCell::new(),
        });
        ControlFlow::Continue(())
    });
    fields
}

pub(super) fn strip_ownership_tags(tags: &mut Value) {
    if let Some(tags) = tags.as_array_mut() {
        tags.retain(|t| !t.as_str().is_some_and(is_ownership_tag));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key given twice reads as its last, as a parsed body does.
    #[test]
    fn a_field_given_twice_reads_as_its_last() {
        let field = |name: &'static str, text: &'static str| WireField {
            name: Cow::Borrowed(name),
            text,
            value: OnceCell::new(),
        };
        let fields = [field("name", r#""a""#), field("id", "1"), field("name", r#""b""#)];
        assert_eq!(find(&fields, "name").map(WireField::value), Some(&Value::from("b")));
        assert_eq!(find(&fields, "id").map(|f| f.text), Some("1"));
        assert!(find(&fields, "missing").is_none());
    }
}
