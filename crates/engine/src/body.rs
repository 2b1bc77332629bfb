//! The API body for a desired resource: the files' form turned into the
//! wire form, with the ownership tag and the variable key added; for an
//! update, without the fields `lifecycle.ignoreChanges` names.

use monform_config::DesiredResource;
use monform_model::facts::facts;
use monform_model::wire::to_wire;
use monform_model::{Address, FieldPath, Kind, Segment};
use serde_json::Value;

use crate::identity::{is_ownership_tag, ownership_tag, uses_tags};

/// `resolve` maps a referenced logical id to its remote id (or slug).
pub fn wire_body(project: &str, resource: &DesiredResource, resolve: &dyn Fn(Kind, &str) -> Option<Value>) -> Value {
    let address: &Address = &resource.address;
    let file = crate::forms::managed(address.kind, resource.resource.to_json());
    let mut body = to_wire(address.kind, &file, resolve);
    if uses_tags(address.kind) {
        let mut tags: Vec<Value> = body.get("tags").and_then(Value::as_array).cloned().unwrap_or_default();
        tags.push(Value::String(ownership_tag(project, &address.id)));
        body["tags"] = Value::Array(tags);
    }
    if address.kind == Kind::Variable {
        body["key"] = Value::String(address.id.clone());
    }
    body
}

/// Whether an update of `resource` needs the account's object to leave its
/// ignored fields alone: a nested ignored field (the service replaces a
/// top-level field whole, so its siblings are sent with the account's
/// value there) or ignored `tags` (the ownership tag must still be written).
pub fn update_needs_remote(resource: &DesiredResource, ignored: &[FieldPath]) -> bool {
    ignored
        .iter()
        .any(|p| p.segments().len() > 1 || (uses_tags(resource.address.kind) && *p == FieldPath::root().key("tags")))
}

/// Takes the ignored fields out of an update's `body` (wire form): a
/// top-level field is left out (updates keep what a body leaves out); a
/// nested one gets the account's value (`remote`, the object's wire body)
/// or is left out of its parent when the account has none. Ignored `tags`
/// are the account's, with this resource's ownership tag.
pub fn drop_ignored(
    project: &str,
    resource: &DesiredResource,
    ignored: &[FieldPath],
    body: &mut Value,
    remote: Option<&Value>,
) {
    let kind = resource.address.kind;
    let desired = resource.resource.to_json();
    let facts = facts(kind, &desired);
    for path in ignored {
        let mut wire: Vec<String> = path
            .segments()
            .iter()
            .filter_map(|s| match s {
                Segment::Key(k) => Some(k.clone()),
                Segment::Index(_) => None,
            })
            .collect();
        let Some(first) = wire.first_mut() else { continue };
        // A top-level reference has its own name on the wire (group -> groupId).
        if let Some(reference) = facts.refs.iter().find(|r| r.parent.is_empty() && r.name == *first) {
            *first = reference.wire_name.clone();
        }
        if wire.len() == 1 && !(uses_tags(kind) && wire[0] == "tags") {
            if let Some(object) = body.as_object_mut() {
                object.remove(&wire[0]);
            }
            continue;
        }
        let kept = remote.and_then(|r| wire.iter().try_fold(r, |v, k| v.get(k))).cloned();
        set_or_remove(body, &wire, kept);
    }
    if uses_tags(kind) && ignored.contains(&FieldPath::root().key("tags")) {
        let mut tags: Vec<Value> = remote
            .and_then(|r| r.get("tags"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|t| !t.as_str().is_some_and(is_ownership_tag))
            .cloned()
            .collect();
        tags.push(Value::String(ownership_tag(project, &resource.address.id)));
        body["tags"] = Value::Array(tags);
    }
}

fn set_or_remove(body: &mut Value, path: &[String], value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = body;
    for key in parents {
        match current.get_mut(key) {
            Some(next) if next.is_object() => current = next,
            // The body does not set the parent: nothing of it is sent.
            _ => return,
        }
    }
    if let Some(object) = current.as_object_mut() {
        match value {
            Some(value) => {
                object.insert(last.clone(), value);
            }
            None => {
                object.remove(last);
            }
        }
    }
}
