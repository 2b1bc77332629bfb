//! The API's form of a resource: references as remote ids under the API's
//! field names, no monform-only fields. Derived from the field facts, both
//! ways, and as a schema for the emulator to validate request bodies with.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::facts::{Facts, RefField, Step, WireShape, expand, facts};
use crate::schema::{Schemas, schemas};
use crate::{FieldPath, Kind, Segment};

/// What identifies an object of a kind in the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdType {
    /// A number the service assigns.
    Integer,
    /// A UUID the service assigns.
    Uuid,
    /// A string the service assigns (dashboards).
    Text,
    /// The resource's own key (variables).
    Key,
}

impl Kind {
    /// The field of an API object that holds its id.
    pub fn id_field(self) -> &'static str {
        match self {
            Kind::Dashboard => "dashboardId",
            Kind::Variable => "key",
            _ => "id",
        }
    }

    pub fn id_type(self) -> IdType {
        match self {
            Kind::Group | Kind::Snippet | Kind::AlertChannel | Kind::MaintenanceWindow => IdType::Integer,
            Kind::Check | Kind::StatusPage | Kind::StatusPageService | Kind::PrivateLocation => IdType::Uuid,
            Kind::Dashboard => IdType::Text,
            // A local kind's "remote id" is its logical id (the state's key).
            Kind::Variable | Kind::Slo => IdType::Key,
        }
    }
}

/// The API body for a resource in its file form (`Resource::to_json`).
/// `resolve` maps a referenced logical id to the remote id to send (for
/// private locations: the slug); unresolved soft references are sent as
/// written (a remote slug), unresolved others are left out.
pub fn to_wire(kind: Kind, value: &Value, resolve: &dyn Fn(Kind, &str) -> Option<Value>) -> Value {
    let mut out = value.clone();
    let facts = facts(kind, value);
    for pattern in &facts.meta {
        for path in expand(pattern, value) {
            remove_at(&mut out, &path);
        }
    }
    for field in &facts.refs {
        for parent in expand(&field.parent, value) {
            let Some(object) = object_at(&mut out, &parent) else {
                continue;
            };
            let Some(written) = object.remove(&field.name) else {
                continue;
            };
            let resolve_one = |id: &Value| -> Option<Value> {
                let id = id.as_str()?;
                resolve(field.target, id).or_else(|| field.soft.then(|| Value::String(id.to_owned())))
            };
            let wire = match (&written, field.many) {
                (Value::Array(ids), true) => Value::Array(
                    ids.iter()
                        .filter_map(resolve_one)
                        .map(|id| shape_one(field, id))
                        .collect(),
                ),
                (Value::Null, _) => Value::Null,
                (id, _) => resolve_one(id).unwrap_or(Value::Null),
            };
            object.insert(field.wire_name.clone(), wire);
        }
    }
    out
}

fn shape_one(field: &RefField, id: Value) -> Value {
    match field.shape {
        WireShape::Id => id,
        WireShape::Subscriptions => json!({ "alertChannelId": id, "activated": true }),
        WireShape::IdObjects => json!({ "id": id }),
    }
}

/// The file form of an API object: remote ids under the API's names become
/// logical ids (through `name_of`) under monform's names. Subscriptions that
/// are not activated are dropped. Ids `name_of` does not know are kept as
/// their text, so nothing is silently lost.
pub fn from_wire(kind: Kind, wire: &Value, name_of: &dyn Fn(Kind, &Value) -> Option<String>) -> Value {
    with_names(facts(kind, wire), wire, wire.clone(), name_of)
}

/// The top-level fields where `from_wire` differs from `wire`: those holding
/// references, in the files' form and under the files' names (a reference
/// the API left out or null is absent), and the wire names they replace.
/// Every other field reads the same in both: comparing through this
/// overlay spares copying the whole object.
pub fn from_wire_overlay(
    kind: Kind,
    wire: &Value,
    name_of: &dyn Fn(Kind, &Value) -> Option<String>,
) -> (Map<String, Value>, Vec<String>) {
    let facts = facts(kind, wire);
    let replaced: Vec<String> = reference_tops(facts).into_iter().map(str::to_owned).collect();
    let copied: Map<String, Value> = replaced
        .iter()
        .filter_map(|key| Some((key.clone(), wire.get(key)?.clone())))
        .collect();
    match with_names(facts, wire, Value::Object(copied), name_of) {
        Value::Object(overlay) => (overlay, replaced),
        _ => (Map::new(), replaced),
    }
}

/// The top-level fields of the API's form that hold references (or hold
/// objects that do), each once: those `from_wire_overlay` replaces.
pub fn reference_tops(facts: &Facts) -> Vec<&str> {
    let mut tops: Vec<&str> = Vec::new();
    for field in &facts.refs {
        let top = match field.parent.first() {
            Some(Step::Key(key)) => key.as_str(),
            _ => field.wire_name.as_str(),
        };
        if !tops.contains(&top) {
            tops.push(top);
        }
    }
    tops
}

/// `out` (a copy of `wire`, or of some of its fields) with references
/// renamed and named as in the files.
fn with_names(facts: &Facts, wire: &Value, mut out: Value, name_of: &dyn Fn(Kind, &Value) -> Option<String>) -> Value {
    for field in &facts.refs {
        for parent in expand(&field.parent, wire) {
            let Some(object) = object_at(&mut out, &parent) else {
                continue;
            };
            let Some(written) = object.remove(&field.wire_name) else {
                continue;
            };
            let name = |id: &Value| -> Option<Value> {
                let text = name_of(field.target, id).or_else(|| match id {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })?;
                Some(Value::String(text))
            };
            let ids = |items: &[Value]| -> Vec<Value> {
                items
                    .iter()
                    .filter_map(|item| match field.shape {
                        WireShape::Id => Some(item),
                        WireShape::Subscriptions => (item.get("activated") != Some(&Value::Bool(false)))
                            .then(|| item.get("alertChannelId"))
                            .flatten(),
                        WireShape::IdObjects => item.get("id"),
                    })
                    .filter_map(name)
                    .collect()
            };
            let value = match written {
                Value::Array(items) => Value::Array(ids(&items)),
                Value::Null => Value::Null,
                id => name(&id).unwrap_or(Value::Null),
            };
            object.insert(field.name.clone(), value);
        }
    }
    out
}

/// Every remote id a wire body references: (field path, target kind, id).
/// Soft references (private location slugs) are included with their slug.
pub fn referenced_ids(kind: Kind, wire: &Value) -> Vec<(FieldPath, Kind, Value)> {
    let mut found = Vec::new();
    for field in &facts(kind, wire).refs {
        for parent in expand(&field.parent, wire) {
            let path = parent.key(&field.wire_name);
            let Some(value) = parent.get(wire).and_then(|o| o.get(&field.wire_name)) else {
                continue;
            };
            let mut push = |at: FieldPath, item: &Value| {
                let id = match field.shape {
                    WireShape::Id => Some(item),
                    WireShape::Subscriptions => item.get("alertChannelId"),
                    WireShape::IdObjects => item.get("id"),
                };
                if let Some(id) = id.filter(|id| !id.is_null()) {
                    found.push((at, field.target, id.clone()));
                }
            };
            match value {
                Value::Array(items) => items.iter().enumerate().for_each(|(i, item)| push(path.index(i), item)),
                single => push(path.clone(), single),
            }
        }
    }
    found
}

fn object_at<'v>(value: &'v mut Value, path: &FieldPath) -> Option<&'v mut Map<String, Value>> {
    let mut current = value;
    for segment in path.segments() {
        current = match segment {
            Segment::Key(k) => current.get_mut(k)?,
            Segment::Index(i) => current.get_mut(*i)?,
        };
    }
    current.as_object_mut()
}

fn remove_at(value: &mut Value, path: &FieldPath) {
    let Some((Segment::Key(last), parent)) = path.segments().split_last() else {
        return;
    };
    if let Some(object) = object_at(value, &FieldPath(parent.to_vec())) {
        object.remove(last);
    }
}

/// The schemas of API request bodies: the file schema with references
/// retyped and renamed, scripts as plain strings, monform-only fields gone.
pub fn wire_schemas() -> &'static Schemas {
    static WIRE: OnceLock<Schemas> = OnceLock::new();
    WIRE.get_or_init(|| {
        let mut document = schemas().document().clone();
        to_wire_schema(&mut document);
        Schemas::from_document(document)
    })
}

fn to_wire_schema(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("x-script").is_some() {
                let description = map.get("description").cloned();
                map.clear();
                map.insert("type".into(), json!("string"));
                if let Some(description) = description {
                    map.insert("description".into(), description);
                }
                return;
            }
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                let mut renames = Vec::new();
                let names: Vec<String> = properties.keys().cloned().collect();
                for name in names {
                    let Some(property) = properties.get(&name) else {
                        continue;
                    };
                    if property.get("x-meta").is_some() {
                        properties.remove(&name);
                        continue;
                    }
                    if let Some(target) = property
                        .get("x-ref")
                        .and_then(Value::as_str)
                        .and_then(Kind::from_section)
                    {
                        let wire_name = property
                            .get("x-wire")
                            .and_then(Value::as_str)
                            .unwrap_or(&name)
                            .to_owned();
                        let wire = ref_schema(property, target);
                        properties.remove(&name);
                        properties.insert(wire_name.clone(), wire);
                        renames.push((name, wire_name));
                    }
                }
                if let Some(Value::Array(required)) = map.get_mut("required") {
                    required.retain(|r| r.as_str().is_none_or(|r| r != "preventDestroy"));
                    for entry in required.iter_mut() {
                        if let Some((_, wire)) = renames.iter().find(|(from, _)| entry == from) {
                            *entry = Value::String(wire.clone());
                        }
                    }
                }
            }
            map.values_mut().for_each(to_wire_schema);
        }
        Value::Array(items) => items.iter_mut().for_each(to_wire_schema),
        _ => {}
    }
}

fn ref_schema(property: &Value, target: Kind) -> Value {
    let soft = property.get("x-ref-soft").and_then(Value::as_bool).unwrap_or(false);
    let id = if soft {
        json!({ "type": "string" })
    } else {
        match target.id_type() {
            IdType::Integer => json!({ "type": "integer", "minimum": 1 }),
            _ => json!({ "type": "string", "minLength": 1 }),
        }
    };
    let many = matches!(property.get("type"), Some(Value::Array(t)) if t.contains(&json!("array")))
        || property.get("type") == Some(&json!("array"));
    let nullable = matches!(property.get("type"), Some(Value::Array(t)) if t.contains(&json!("null")));
    let item = match property.get("x-wire-shape").and_then(Value::as_str) {
        Some("subscriptions") => json!({
            "type": "object",
            "properties": { "alertChannelId": id, "activated": { "type": "boolean" } },
            "required": ["alertChannelId", "activated"],
            "additionalProperties": false
        }),
        Some("id-objects") => json!({
            "type": "object",
            "properties": { "id": id },
            "required": ["id"],
            "additionalProperties": false
        }),
        _ => id,
    };
    let mut schema = if many {
        json!({ "type": "array", "items": item })
    } else {
        item
    };
    if nullable && let Some(t) = schema.get("type").cloned() {
        schema["type"] = json!([t, "null"]);
    }
    if let Some(description) = property.get("description") {
        schema["description"] = description.clone();
    }
    schema
}

/// An id as the API writes it (a string, or a number for numeric ids) as
/// text; no id (`null`) is empty text. One reading for the client, the
/// engine and the emulator.
pub fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_as_text_and_no_id_as_none() {
        assert_eq!(id_text(&json!("abc")), "abc");
        assert_eq!(id_text(&json!(12)), "12");
        assert_eq!(id_text(&Value::Null), "");
    }

    fn resolve(kind: Kind, id: &str) -> Option<Value> {
        match (kind, id) {
            (Kind::Group, "production") => Some(json!(7)),
            (Kind::AlertChannel, "oncall") => Some(json!(3)),
            (Kind::StatusPageService, "shop") => Some(json!("2b3c")),
            _ => None,
        }
    }

    #[test]
    fn to_wire_renames_and_resolves_references() {
        let file = json!({
            "checkType": "API", "name": "x", "group": "production", "alertChannels": ["oncall"],
            "privateLocations": ["office-ams"], "preventDestroy": true,
            "triggerIncident": {"service": "shop", "severity": "MAJOR", "name": "n", "description": "d", "notifySubscribers": false},
            "request": {"url": "https://e.com"}
        });
        let wire = to_wire(Kind::Check, &file, &resolve);
        assert_eq!(wire["groupId"], 7);
        assert_eq!(
            wire["alertChannelSubscriptions"],
            json!([{"alertChannelId": 3, "activated": true}])
        );
        assert_eq!(wire["privateLocations"], json!(["office-ams"]));
        assert_eq!(wire["triggerIncident"]["serviceId"], "2b3c");
        assert!(wire.get("group").is_none() && wire.get("preventDestroy").is_none());
    }

    #[test]
    fn from_wire_inverts_to_wire() {
        let file = json!({"name": "Shop", "url": "shop", "cards": [{"name": "c", "services": ["shop"]}]});
        let wire = to_wire(Kind::StatusPage, &file, &resolve);
        assert_eq!(wire["cards"][0]["services"], json!([{"id": "2b3c"}]));
        let back = from_wire(Kind::StatusPage, &wire, &|_, id| {
            (id == "2b3c").then(|| "shop".to_owned())
        });
        assert_eq!(back, file);
    }

    #[test]
    fn wire_schema_types_references_as_remote_ids() {
        let schemas = wire_schemas();
        let check = schemas.resolve(schemas.kind(Kind::Check));
        let api = check["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["properties"]["checkType"]["const"] == "API")
            .unwrap();
        assert_eq!(api["properties"]["groupId"]["type"], json!(["integer", "null"]));
        assert!(api["properties"].get("group").is_none());
        assert!(api["properties"].get("preventDestroy").is_none());
        let script = &api["properties"]["localSetupScript"]["anyOf"][0];
        assert_eq!(schemas.resolve(script)["type"], "string");
    }
}
