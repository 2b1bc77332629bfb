//! Ids: new ones, and ids of stored bodies as text.

/// A new random id (a uuid).
pub fn new() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub use monform_model::wire::id_text;
