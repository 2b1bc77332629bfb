//! The service's normal forms (issue 20, item 5): a value the service holds
//! in another form than the one written (another letter case, another order
//! of the same items) is the same setting, not a change that did not land.
//! Verification records it once in the state entry, by field path, as the
//! fingerprints of what was written and what the service holds; a plan that
//! finds exactly that pair again shows no difference, so a rewrite never
//! becomes a permanent diff. Only fingerprints are kept here: the state
//! holds no text value (field prints keep numbers and booleans only).
//!
//! A default the service fills in where the files leave a field out is not
//! compared at all (a plan compares the fields the files set), so it needs
//! no record.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use monform_model::Address;
use serde_json::Value;

use crate::state::{Delta, ResourceState, State, StateBackend, StateError};

/// Whether `held` is `written` as the service rewrote it: the same text in
/// another letter case, or the same items in another order.
pub fn equivalent(written: &Value, held: &Value) -> bool {
    match (written, held) {
        (Value::String(w), Value::String(h)) => w != h && w.to_lowercase() == h.to_lowercase(),
        (Value::Array(w), Value::Array(h)) => w != h && w.len() == h.len() && sorted(w) == sorted(h),
        _ => false,
    }
}

fn sorted(items: &[Value]) -> Vec<String> {
    let mut texts: Vec<String> = items.iter().map(Value::to_string).collect();
    texts.sort();
    texts
}

/// What a state entry records for one rewritten field.
pub fn record(state: &State, written: &Value, held: &Value) -> String {
    format!("{}:{}", state.fingerprint(written), state.fingerprint(held))
}

/// Whether the entry of `address` records that the service holds `written`
/// at `path` as `held`.
pub fn is_normal_form(state: &State, address: &str, path: &str, written: &Value, held: &Value) -> bool {
    state
        .resources
        .get(address)
        .and_then(|entry| entry.normal.get(path))
        .is_some_and(|recorded| *recorded == record(state, written, held))
}

/// One rewritten field found by verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalForm {
    pub address: Address,
    pub path: String,
    /// `record`'s text for it.
    pub record: String,
}

/// Writes `found` into the state's entries (one durable write) and returns
/// the state with them.
pub fn save(backend: &dyn StateBackend, mut state: State, found: &[NormalForm]) -> Result<State, StateError> {
    let mut set: BTreeMap<String, ResourceState> = BTreeMap::new();
    for form in found {
        let entry = match set.entry(form.address.to_string()) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(free) => match state.resources.get(free.key()) {
                Some(entry) => free.insert(entry.clone()),
                None => continue,
            },
        };
        entry.normal.insert(form.path.clone(), form.record.clone());
    }
    if set.is_empty() {
        return Ok(state);
    }
    let delta = Delta {
        target: None,
        serial: state.serial + 1,
        remove: Vec::new(),
        set,
    };
    let mut writer = backend.writer(&state)?;
    writer.write(std::slice::from_ref(&delta))?;
    state.apply(&delta);
    writer.finish(&state)?;
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn case_and_order_are_rewrites_other_values_are_not() {
        assert!(equivalent(
            &json!("https://Example.COM/a"),
            &json!("https://example.com/a")
        ));
        assert!(equivalent(&json!(["b", "a"]), &json!(["a", "b"])));
        assert!(!equivalent(&json!("a"), &json!("a")));
        assert!(!equivalent(&json!("https://a.com/x"), &json!("https://a.com/y")));
        assert!(!equivalent(&json!(["a", "b"]), &json!(["a", "a"])));
        assert!(!equivalent(&json!(60), &json!(120)));
    }
}
