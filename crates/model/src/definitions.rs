//! Reading a generated schema document: a kind's schema and `$ref`s
//! followed to their definitions. Shared by `schema` and the validator's
//! compiled form (`validate::compiled`), which `schema` caches.

use serde_json::Value;

use crate::Kind;

/// The schema of one resource of `kind` in a resource-file document (a `$ref`).
pub fn kind_schema(root: &Value, kind: Kind) -> &Value {
    &root["properties"][kind.section()]["additionalProperties"]
}

/// Follows `$ref`s until a schema with content.
pub fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default();
        match root["definitions"].get(name) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}
