//! Request bodies checked with the model: the same shape walker and rules
//! the loader uses, on the API's form (`wire::wire_schemas`). Returns the
//! body as stored: defaults filled in, references as sent.

use monform_model::facts::facts;
use monform_model::wire::{IdType, from_wire, to_wire, wire_schemas};
use monform_model::{FieldPath, Kind, Segment, Violation, check_shape_in, into_resource};
use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult};

/// The API's quirk fields for one operation: taken out before validation
/// and kept as sent; `required` ones must be present.
#[derive(Debug, Clone, Copy, Default)]
pub struct FreeForm<'a> {
    pub allowed: &'a [&'a str],
    pub required: &'a [&'a str],
}

/// Validates `body` as a `kind` and returns its canonical stored form.
pub fn canonical(kind: Kind, body: &Value, free_form: FreeForm<'_>) -> ApiResult<Value> {
    let mut body = body.clone();
    let Some(object) = body.as_object_mut() else {
        return Err(ApiError::invalid("body", "must be a JSON object"));
    };
    let variant = monform_model::facts::variant_of(kind, &Value::Object(object.clone()));
    let known = wire_schemas().variant(kind, &variant)["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let missing = free_form
        .required
        .iter()
        .filter(|name| !object.contains_key(**name))
        .map(|name| Violation::new(FieldPath::root().key(name), format!("missing required field `{name}`")));
    let missing: Vec<Violation> = missing.collect();
    let extras: Map<String, Value> = free_form
        .allowed
        .iter()
        .filter(|name| !known.contains_key(**name))
        .filter_map(|name| object.remove(*name).map(|v| ((*name).to_owned(), v)))
        .collect();

    let mut shape = check_shape_in(wire_schemas(), kind, &body);
    if !shape.violations.is_empty() || !missing.is_empty() {
        let mut violations: Vec<Violation> = shape.violations.drain(..).map(at_missing_field).collect();
        violations.extend(missing);
        return Err(ApiError::validation(&violations));
    }
    let file_form = from_wire(kind, &body, &|_, _| None);
    let resource = into_resource(kind, file_form)
        .map_err(|violations| ApiError::validation(&to_wire_paths(kind, &body, violations)))?;
    let mut stored = to_wire(kind, &resource.to_json(), &|target, id| Some(remote_id(target, id)));
    if let (Some(stored), Some(sent)) = (stored.as_object_mut(), body.as_object()) {
        // References are kept exactly as sent (inactive subscriptions too).
        for field in facts(kind, &body).refs.iter().filter(|f| f.parent.is_empty()) {
            if let Some(value) = sent.get(&field.wire_name) {
                stored.insert(field.wire_name.clone(), value.clone());
            }
        }
        stored.extend(extras);
    }
    Ok(stored)
}

/// A missing field is reported under its own path (`name`,
/// `request.hostname`), not its parent's: the API's `attributes` name the
/// offending field.
fn at_missing_field(mut violation: Violation) -> Violation {
    if let Some(field) = violation.missing_field().map(str::to_owned) {
        violation.path = violation.path.key(&field);
    }
    violation
}

/// The id as the API writes it: a number for kinds with numeric ids.
fn remote_id(kind: Kind, id: &str) -> Value {
    match kind.id_type() {
        IdType::Integer => id
            .parse::<i64>()
            .map_or_else(|_| Value::String(id.to_owned()), Value::from),
        _ => Value::String(id.to_owned()),
    }
}

/// Rule violations name fields in the files' form; the API names references differently.
fn to_wire_paths(kind: Kind, body: &Value, violations: Vec<Violation>) -> Vec<Violation> {
    let refs = &facts(kind, body).refs;
    violations
        .into_iter()
        .map(|mut v| {
            if let Some(Segment::Key(first)) = v.path.segments().first()
                && let Some(field) = refs.iter().find(|f| f.parent.is_empty() && &f.name == first)
            {
                let mut segments = v.path.segments().to_vec();
                segments[0] = Segment::Key(field.wire_name.clone());
                v.path = FieldPath(segments);
            }
            v
        })
        .collect()
}

/// Applies an update body to a stored object: fields present replace the
/// stored ones, `null` clears, omitted fields are kept.
pub fn merge(stored: &Value, update: &Value) -> Value {
    let mut merged = stored.clone();
    if let (Some(target), Some(changes)) = (merged.as_object_mut(), update.as_object()) {
        for (key, value) in changes {
            if value.is_null() {
                target.remove(key);
            } else {
                target.insert(key.clone(), value.clone());
            }
        }
    }
    merged
}

/// Fields the service adds to a stored object; not part of a request body.
pub const SERVER_FIELDS: &[&str] = &["id", "created_at", "updated_at", "alertChannels"];

/// A stored object without its server-side fields, for re-validation.
pub fn without_server_fields(stored: &Value, extra: &[&str]) -> Value {
    let mut body = stored.clone();
    if let Some(object) = body.as_object_mut() {
        for field in SERVER_FIELDS.iter().chain(extra) {
            object.remove(*field);
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fills_defaults_and_keeps_references() {
        let body = json!({
            "checkType": "ICMP", "name": "Ping", "groupId": 4,
            "alertChannelSubscriptions": [{"alertChannelId": 2, "activated": false}],
            "request": {"hostname": "example.com"}, "heartbeat": {}, "script": ""
        });
        let free_form = FreeForm {
            allowed: &["heartbeat", "script"],
            required: &["heartbeat", "script"],
        };
        let stored = canonical(Kind::Check, &body, free_form).unwrap();
        assert_eq!(stored["frequency"], 10);
        assert_eq!(stored["request"]["pingCount"], 10);
        assert_eq!(stored["groupId"], 4);
        assert_eq!(stored["alertChannelSubscriptions"][0]["activated"], false);
        assert_eq!(stored["heartbeat"], json!({}));
        assert_eq!(stored["script"], "");
    }

    #[test]
    fn reports_every_violation_under_the_api_field_names() {
        let body =
            json!({"checkType": "ICMP", "name": "", "request": {"hostname": "h", "pingCount": 0}, "frequency": 7});
        let free_form = FreeForm {
            allowed: &["heartbeat", "script"],
            required: &["heartbeat", "script"],
        };
        let error = canonical(Kind::Check, &body, free_form).unwrap_err();
        assert_eq!(error.status, 400);
        let mut keys: Vec<&str> = error.attributes.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["frequency", "heartbeat", "name", "request.pingCount", "script"]);
    }

    #[test]
    fn missing_fields_are_named_by_their_own_path() {
        let body = json!({"checkType": "ICMP", "request": {"pingCount": 3}});
        let error = canonical(Kind::Check, &body, FreeForm::default()).unwrap_err();
        let mut keys: Vec<&str> = error.attributes.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["name", "request.hostname"]);
    }

    #[test]
    fn merge_replaces_present_fields_and_clears_nulls() {
        let merged = merge(&json!({"a": 1, "b": 2, "c": 3}), &json!({"b": 20, "c": null}));
        assert_eq!(merged, json!({"a": 1, "b": 20}));
    }
}
