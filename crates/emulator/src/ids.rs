//! Ids: new ones, and ids of stored bodies as text.

use serde_json::Value;

/// A new random id (a uuid).
pub fn new() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// An id field (a string, or a number for numeric ids) as text.
pub fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
