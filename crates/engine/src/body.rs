//! The API body for a desired resource: the files' form turned into the
//! wire form, with the ownership tag and the variable key added.

use monform_config::DesiredResource;
use monform_model::wire::to_wire;
use monform_model::{Address, Kind};
use serde_json::Value;

use crate::identity::{ownership_tag, uses_tags};

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
