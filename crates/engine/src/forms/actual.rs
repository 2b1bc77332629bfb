//! Actual objects read as the files would write them.

use std::borrow::Cow;

use monform_api::Remote;
use monform_model::Kind;
use monform_model::wire::{from_wire, from_wire_overlay};
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
pub(crate) struct ActualView {
    wire: Value,
    overlay: serde_json::Map<String, Value>,
    replaced: Vec<String>,
}

impl ActualView {
    pub fn new(kind: Kind, remote: &Remote, names: &Names) -> ActualView {
        let mut wire = remote.body();
        let (mut overlay, mut replaced) = from_wire_overlay(kind, &wire, &|k, id| names.name(k, id));
        // Moved, not copied: the view reads them from the overlay only.
        if let Some(mut tags) = wire.as_object_mut().and_then(|fields| fields.remove("tags")) {
            strip_ownership_tags(&mut tags);
            overlay.insert("tags".to_owned(), tags);
            replaced.push("tags".to_owned());
        }
        ActualView {
            wire,
            overlay,
            replaced,
        }
    }

    /// The object's `updated_at`, as [`Remote::version`] reads it, from
    /// the body already parsed.
    pub fn version(&self) -> Option<String> {
        self.wire.get("updated_at").and_then(Value::as_str).map(str::to_owned)
    }

    pub fn get(&self, field: &str) -> Option<&Value> {
        // The overlay holds a few fields: a scan beats hashing the name.
        if let Some((_, value)) = self.overlay.iter().find(|(name, _)| *name == field) {
            Some(value)
        } else if self.replaced.iter().any(|r| r == field) {
            None
        } else {
            self.wire.get(field)
        }
    }
}

pub(super) fn strip_ownership_tags(tags: &mut Value) {
    if let Some(tags) = tags.as_array_mut() {
        tags.retain(|t| !t.as_str().is_some_and(is_ownership_tag));
    }
}
