//! Values cut to the fields of the resource-file schema.

use monform_model::schema::Schemas;
use monform_model::{FieldPath, Segment};
use serde_json::{Map, Value};

/// Keeps only what the schema allows, recursively; drops nulls.
pub(super) fn prune(schemas: &Schemas, schema: &Value, value: &mut Value, depth: usize) {
    if depth > 32 {
        return;
    }
    let schema = schemas.resolve(schema);
    match value {
        Value::Object(map) => {
            let mut allowed: Map<String, Value> = Map::new();
            let mut open = false;
            collect_properties(schemas, schema, &mut allowed, &mut open, 0);
            if allowed.is_empty() && open {
                map.retain(|_, v| !v.is_null());
                return;
            }
            map.retain(|k, v| !v.is_null() && allowed.contains_key(k));
            for (key, child) in map.iter_mut() {
                if let Some(property) = allowed.get(key) {
                    prune(schemas, property, child, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = items_schema(schemas, schema, 0) {
                for item in items.iter_mut() {
                    prune(schemas, item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn collect_properties(schemas: &Schemas, schema: &Value, into: &mut Map<String, Value>, open: &mut bool, depth: usize) {
    if depth > 8 {
        return;
    }
    let schema = schemas.resolve(schema);
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in properties {
            into.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(_) => *open = true,
        None if schema.get("properties").is_none() => *open = true,
        None => {}
    }
    for key in ["anyOf", "oneOf"] {
        for alternative in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            collect_properties(schemas, alternative, into, open, depth + 1);
        }
    }
}

fn items_schema<'a>(schemas: &'a Schemas, schema: &'a Value, depth: usize) -> Option<&'a Value> {
    if depth > 8 {
        return None;
    }
    let schema = schemas.resolve(schema);
    if let Some(items) = schema.get("items") {
        return Some(items);
    }
    ["anyOf", "oneOf"].iter().find_map(|key| {
        schema
            .get(*key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|a| items_schema(schemas, a, depth + 1))
    })
}

/// Sets the value at `path`, adding the last key when its parent exists.
pub(super) fn set_at(value: &mut Value, path: &FieldPath, new: Value) {
    let Some((last, parent)) = path.segments().split_last() else {
        return;
    };
    let mut current = value;
    for segment in parent {
        let next = match segment {
            Segment::Key(k) => current.get_mut(k),
            Segment::Index(i) => current.get_mut(*i),
        };
        match next {
            Some(next) => current = next,
            None => return,
        }
    }
    match (last, current) {
        (Segment::Key(k), Value::Object(map)) => {
            map.insert(k.clone(), new);
        }
        (Segment::Index(i), Value::Array(items)) if *i < items.len() => items[*i] = new,
        _ => {}
    }
}
