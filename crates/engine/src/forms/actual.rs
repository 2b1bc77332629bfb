//! Actual objects read as the files would write them.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::{Arc, Mutex, PoisonError};

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
/// at 100,000 checks, copies of them were 6 MiB of the plan's peak, and
/// a borrowed entry is two thirds the size of one that may be owned.
#[derive(Debug, Default)]
pub struct Names<'a> {
    /// Looked up for every reference of every resource in a plan: a fast hash.
    by_id: FxHashMap<(Kind, &'a str), &'a str>,
    /// Those not borrowed (a private location's slug, imports, an apply's
    /// creates and deletes); they come first. `None`: forgotten.
    owned: FxHashMap<Kind, FxHashMap<String, Option<String>>>,
    /// The files' form of each field holding references, by what it is
    /// made of (the kind, its variant's and the field's texts): most
    /// objects share a few (their group, their channels), and rewriting
    /// each one's was a third of reading it in the files' form.
    overlays: Mutex<FxHashMap<Vec<u8>, Arc<Overlay>>>,
}

/// What one field holding references of an object reads as in the files'
/// form ([`from_wire_overlay`] of that field): its files' name(s) and value.
#[derive(Debug, Default)]
struct Overlay {
    fields: Vec<(String, Value)>,
}

impl Overlay {
    /// At most this many are kept (a few hundred in practice): an account
    /// of all different ones is read, not held.
    const MOST: usize = 4096;
}

impl<'a> Names<'a> {
    pub fn new(actual: &'a Actual) -> Names<'a> {
        let mut names = Names::default();
        names.by_id.reserve(actual.owned.len() + actual.unrefreshed.len());
        for (address, remote) in &actual.owned {
            names
                .by_id
                .insert((address.kind, remote.id.as_str()), address.id.as_str());
            if address.kind == Kind::PrivateLocation
                && let Some(Value::String(slug)) = remote.field("slugName")
            {
                names
                    .owned_of(Kind::PrivateLocation)
                    .insert(slug, Some(address.id.clone()));
            }
        }
        // Trusted objects keep their remote id in the state (a private
        // location's slug is not there: `refresh.rs` reads those it needs).
        for (address, unrefreshed) in &actual.unrefreshed {
            names
                .by_id
                .insert((address.kind, unrefreshed.remote_id.as_str()), address.id.as_str());
        }
        names
    }

    /// From (kind, remote id or slug, logical id) triples.
    pub fn from_pairs(pairs: impl Iterator<Item = (Kind, Value, String)>) -> Names<'a> {
        let mut names = Names::default();
        for (kind, id, name) in pairs {
            names.owned_of(kind).insert(id_text(&id), Some(name));
        }
        names
    }

    fn owned_of(&mut self, kind: Kind) -> &mut FxHashMap<String, Option<String>> {
        // What was rewritten with the names before does not hold.
        self.overlays.get_mut().unwrap_or_else(PoisonError::into_inner).clear();
        self.owned.entry(kind).or_default()
    }

    /// The overlay made of `key` (what [`ActualView::new`] found), made
    /// by `make` when not made before.
    fn overlay(&self, key: &[u8], make: impl FnOnce() -> Overlay) -> Arc<Overlay> {
        let lock = || self.overlays.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(made) = lock().get(key) {
            return Arc::clone(made);
        }
        let made = Arc::new(make());
        let mut overlays = lock();
        if overlays.len() >= Overlay::MOST {
            overlays.clear();
        }
        overlays.insert(key.to_vec(), Arc::clone(&made));
        made
    }

    pub fn name(&self, kind: Kind, id: &Value) -> Option<String> {
        let key = match id {
            Value::String(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(id_text(other)),
        };
        self.name_of(kind, &key).map(str::to_owned)
    }

    fn name_of(&self, kind: Kind, id: &str) -> Option<&str> {
        if let Some(name) = self.owned.get(&kind).and_then(|owned| owned.get(id)) {
            return name.as_deref();
        }
        // The map is covariant in its lifetime: looked up with a key that
        // borrows `id` for this call only, no copy of it.
        let by_id: &FxHashMap<(Kind, &str), &str> = &self.by_id;
        by_id.get(&(kind, id)).copied()
    }

    /// Records that remote id (or slug) `id` of `kind` is `name`.
    pub fn insert(&mut self, kind: Kind, id: &Value, name: String) {
        self.owned_of(kind).insert(id_text(id), Some(name));
    }

    /// Forgets `id` of `kind` if it still names `name`.
    pub fn remove(&mut self, kind: Kind, id: &Value, name: &str) {
        let id = id_text(id);
        if self.name_of(kind, &id) == Some(name) {
            // Hides a borrowed entry too (a borrowed map is not changed).
            self.owned_of(kind).insert(id, None);
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
/// The body is not parsed whole, nor scanned again: its top-level fields
/// are sliced where the object's read found them ([`Remote::top_fields`]),
/// each parsed when first read. A no-op plan compares most fields by text
/// ([`ActualView::text`]) and parses none of them: parsing every listed
/// body into a `Value` was a fifth of a plan's instructions.
pub(crate) struct ActualView<'r> {
    /// The body's top-level fields but those replaced, in its order.
    fields: Vec<WireField<'r>>,
    /// The files' form of the fields holding references it has, each
    /// shared by the objects whose field reads alike.
    overlays: Vec<Arc<Overlay>>,
    /// The wire's names of the fields holding references (read from
    /// `overlays` only).
    replaced: Vec<&'static str>,
    /// Its tags without the ownership tag, if it has tags.
    tags: Option<Value>,
}

/// A top-level field of the body: its text, and its value once read.
struct WireField<'r> {
    name: Cow<'r, str>,
    text: &'r str,
    value: OnceCell<Value>,
}

impl<'r> WireField<'r> {
    fn value(&self) -> &Value {
        self.value.get_or_init(|| parse(self.text))
    }
}

/// A part of a body that was valid JSON when stored.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

impl<'r> ActualView<'r> {
    pub fn new(kind: Kind, remote: &'r Remote, names: &Names) -> ActualView<'r> {
        let mut fields = Vec::with_capacity(24);
        fields.extend(remote.top_fields().map(|(name, text)| WireField {
            name,
            text,
            value: OnceCell::new(),
        }));
        // What `from_wire_overlay` reads: the variant (which fields hold
        // references) and the top-level fields holding them, parsed. Each
        // such field's files' form is a function of its text (and the
        // variant's, and the names): made once per distinct text.
        let variant = variant_tag(kind).and_then(|tag| Some((tag, find(&fields, tag)?)));
        let facts = match variant {
            Some((tag, field)) => {
                let mut wire = serde_json::Map::new();
                wire.insert(tag.to_owned(), field.value().clone());
                facts(kind, &Value::Object(wire))
            }
            None => facts(kind, &Value::Null),
        };
        let replaced = reference_tops(facts);
        let mut key = Vec::new();
        let overlays = replaced
            .iter()
            .filter_map(|&top| {
                let field = find(&fields, top)?;
                key.clear();
                key.push(kind as u8);
                if let Some((_, variant)) = variant {
                    key.extend_from_slice(variant.text.as_bytes());
                }
                for part in [top, field.text] {
                    key.push(0);
                    key.extend_from_slice(part.as_bytes());
                }
                Some(names.overlay(&key, || {
                    let mut wire = serde_json::Map::new();
                    if let Some((tag, variant)) = variant {
                        wire.insert(tag.to_owned(), variant.value().clone());
                    }
                    wire.insert(top.to_owned(), parse(field.text));
                    let (fields, _) = from_wire_overlay(kind, &Value::Object(wire), &|k, id| names.name(k, id));
                    Overlay {
                        fields: fields.into_iter().collect(),
                    }
                }))
            })
            .collect();
        let tags = find(&fields, "tags").map(|tags| {
            let mut tags = parse(tags.text);
            strip_ownership_tags(&mut tags);
            tags
        });
        let has_tags = tags.is_some();
        fields.retain(|field| !(replaced.iter().any(|r| *r == field.name) || (has_tags && field.name == "tags")));
        ActualView {
            fields,
            overlays,
            replaced,
            tags,
        }
    }

    /// A field of the files' form made from a field holding references.
    fn overlaid(&self, field: &str) -> Option<&Value> {
        self.overlays
            .iter()
            .find_map(|overlay| overlay.fields.iter().find(|(name, _)| name == field))
            .map(|(_, value)| value)
    }

    /// The object's `updated_at`, as [`Remote::version`] reads it.
    pub fn version(&self) -> Option<String> {
        self.get("updated_at").and_then(Value::as_str).map(str::to_owned)
    }

    pub fn get(&self, field: &str) -> Option<&Value> {
        if let Some(tags) = self.tags.as_ref().filter(|_| field == "tags") {
            Some(tags)
        } else if let Some(value) = self.overlaid(field) {
            Some(value)
        } else if self.replaced.contains(&field) {
            None
        } else {
            find(&self.fields, field).map(WireField::value)
        }
    }

    /// The field's text as the service sent it, when the files' form of
    /// it is that text (not a field holding references, nor `tags`).
    pub fn text(&self, field: &str) -> Option<&'r str> {
        if (self.tags.is_some() && field == "tags") || self.overlaid(field).is_some() || self.replaced.contains(&field)
        {
            return None;
        }
        find(&self.fields, field).map(|f| f.text)
    }
}

/// The last field of that name, as a parsed body keeps the last of a key
/// given twice (`monform_model::pick::Fields`' rule).
fn find<'f, 'r>(fields: &'f [WireField<'r>], name: &str) -> Option<&'f WireField<'r>> {
    fields.iter().rev().find(|field| field.name == name)
}

pub(super) fn strip_ownership_tags(tags: &mut Value) {
    if let Some(tags) = tags.as_array_mut() {
        tags.retain(|t| !t.as_str().is_some_and(is_ownership_tag));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Objects whose fields holding references read alike share their
    /// files' form, made once; a name changed later is not read from it.
    #[test]
    fn views_share_the_files_form_of_their_references() {
        let body = |id: &str, group: u64, tags: &str| {
            json!({"id": id, "checkType": "API", "groupId": group, "tags": ["web", tags],
                   "alertChannelSubscriptions": [{"alertChannelId": 3, "activated": true}]})
        };
        let remotes = [
            Remote::new(Kind::Check, &body("a", 7, "monform:p/a")),
            Remote::new(Kind::Check, &body("b", 7, "monform:p/b")),
            Remote::new(Kind::Check, &body("c", 8, "monform:p/c")),
        ];
        let pairs = [
            (Kind::Group, json!(7), "g7"),
            (Kind::Group, json!(8), "g8"),
            (Kind::AlertChannel, json!(3), "ops"),
        ];
        let mut names = Names::from_pairs(pairs.into_iter().map(|(k, id, n)| (k, id, n.to_owned())));
        for remote in &remotes {
            let view = ActualView::new(Kind::Check, remote, &names);
            let whole = file_form(Kind::Check, remote, &names);
            for (field, value) in whole.as_object().unwrap() {
                assert_eq!(view.get(field), Some(value), "{field}");
            }
            assert!(view.text("groupId").is_none() && view.text("tags").is_none());
            assert_eq!(view.text("checkType"), Some(r#""API""#));
        }
        let (a, b) = (&remotes[0], &remotes[1]);
        let (view_a, view_b) = (
            ActualView::new(Kind::Check, a, &names),
            ActualView::new(Kind::Check, b, &names),
        );
        assert!(Arc::ptr_eq(&view_a.overlays[0], &view_b.overlays[0]));
        // Groups 7 and 8, channel 3.
        assert_eq!(names.overlays.lock().unwrap().len(), 3);
        names.insert(Kind::Group, &json!(7), "renamed".to_owned());
        assert_eq!(
            ActualView::new(Kind::Check, a, &names).get("group"),
            Some(&json!("renamed"))
        );
        assert_eq!(
            ActualView::new(Kind::Check, b, &names).get("tags"),
            Some(&json!(["web"]))
        );
    }

    /// Inserted names come before borrowed ones; a removal forgets both.
    #[test]
    fn names_insert_and_forget_over_the_borrowed_ones() {
        let mut actual = Actual::default();
        let remote = Remote::new(Kind::Group, &json!({"id": 7, "name": "g"}));
        actual
            .owned
            .insert(monform_model::Address::new(Kind::Group, "g-a"), remote);
        let mut names = Names::new(&actual);
        assert_eq!(names.name(Kind::Group, &json!(7)).as_deref(), Some("g-a"));
        assert_eq!(names.name(Kind::Group, &json!("7")).as_deref(), Some("g-a"));
        assert_eq!(names.name(Kind::Check, &json!(7)), None);
        names.remove(Kind::Group, &json!(7), "other");
        assert_eq!(names.name(Kind::Group, &json!(7)).as_deref(), Some("g-a"));
        names.insert(Kind::Group, &json!(7), "g-b".to_owned());
        assert_eq!(names.name(Kind::Group, &json!(7)).as_deref(), Some("g-b"));
        names.remove(Kind::Group, &json!(7), "g-b");
        assert_eq!(names.name(Kind::Group, &json!(7)), None);
        names.insert(Kind::Group, &json!(7), "g-c".to_owned());
        assert_eq!(names.name(Kind::Group, &json!(7)).as_deref(), Some("g-c"));
    }

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
