//! A response's JSON Schema as the assertions the service can check
//! (`JSON_BODY`, a simple path `$.name`, spec 2.1's comparisons). The
//! service has no "is a string" test, so what is asserted is what the
//! comparisons can say of the top level:
//!
//! - a required property whose type excludes null: `$.name NOT_NULL`
//!   (present, not null); any other required one (nullable, no type, or a
//!   name a simple path cannot hold): `$ HAS_KEY name`;
//! - its type's bounds where a comparison says them exactly: a `const` or
//!   single `enum` value `EQUALS`; an integer's `minimum`/`maximum` as
//!   `GREATER_THAN min-1` / `LESS_THAN max+1`, `exclusiveMinimum` /
//!   `exclusiveMaximum` of any number as they are; a string's `minLength`
//!   or an array's `minItems` of at least 1 as `NOT_EMPTY`;
//! - a top-level array with `minItems` of at least 1: `$ NOT_EMPTY`.
//!
//! `allOf` parts are merged; `oneOf`/`anyOf` say nothing certain and are
//! left out. At most [`MAX`] assertions per check.

use oas3::Spec;
use oas3::spec::{ObjectOrReference, ObjectSchema, Schema, SchemaType as Type, SchemaTypeSet as TypeSet};
use serde_json::{Value, json};

/// Assertions per check from the schema, besides the status.
pub const MAX: usize = 20;
/// `$ref`s followed from one schema (a cycle ends here).
const MAX_REFS: usize = 16;

/// `schema` as an object schema, following `#/components/schemas/NAME`
/// references at most [`MAX_REFS`] times (oas3's own `resolve` recurses
/// without a bound, and a cycle would overflow the stack).
pub fn object(spec: &Spec, schema: &Schema) -> Option<ObjectSchema> {
    let mut current = schema.clone();
    for _ in 0..MAX_REFS {
        match current {
            Schema::Boolean(_) => return None,
            Schema::Object(boxed) => match *boxed {
                ObjectOrReference::Object(object) => return Some(object),
                ObjectOrReference::Ref { ref_path, .. } => {
                    let name = ref_path.strip_prefix("#/components/schemas/")?;
                    current = spec.components.as_ref()?.schemas.get(name)?.clone();
                }
            },
        }
    }
    None
}

/// The assertions `schema` (a response body's) allows.
pub fn assertions(spec: &Spec, schema: &Schema) -> Vec<Value> {
    let Some(top) = merged(spec, schema) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if is(&top, Type::Array) && top.min_items.unwrap_or(0) >= 1 {
        out.push(assertion("$", "NOT_EMPTY", ""));
    }
    for name in &top.required {
        let property = top.properties.get(name).and_then(|p| merged(spec, p));
        let simple = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        // No type said: null is allowed too.
        let nullable = property.as_ref().is_none_or(|p| p.is_nullable() != Some(false));
        if nullable || !simple {
            out.push(assertion("$", "HAS_KEY", name));
            continue;
        }
        let path = format!("$.{name}");
        out.push(assertion(&path, "NOT_NULL", ""));
        if let Some(property) = &property {
            out.extend(bounds(property).into_iter().map(|(c, t)| assertion(&path, c, &t)));
        }
    }
    out.truncate(MAX);
    out
}

/// The object schema of `schema` with its `allOf` parts' properties and
/// required names merged in (one level: enough for the usual
/// `allOf: [{$ref: Base}, {properties: ...}]`).
fn merged(spec: &Spec, schema: &Schema) -> Option<ObjectSchema> {
    let mut top = object(spec, schema)?;
    for part in std::mem::take(&mut top.all_of) {
        let Some(part) = object(spec, &part) else { continue };
        for (name, property) in part.properties {
            if !top.properties.contains_key(&name) {
                top.properties.insert(name, property);
            }
        }
        for name in part.required {
            if !top.required.contains(&name) {
                top.required.push(name);
            }
        }
        if top.schema_type.is_none() {
            top.schema_type = part.schema_type;
        }
    }
    Some(top)
}

fn is(schema: &ObjectSchema, wanted: Type) -> bool {
    match &schema.schema_type {
        Some(TypeSet::Single(t)) => *t == wanted,
        Some(TypeSet::Multiple(set)) => set.iter().all(|t| *t == wanted || *t == Type::Null) && set.contains(&wanted),
        None => false,
    }
}

/// What a property's schema bounds that a comparison says exactly.
fn bounds(schema: &ObjectSchema) -> Vec<(&'static str, String)> {
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let fixed = schema.const_value.as_ref().or(match schema.enum_values.as_slice() {
        [only] => Some(only),
        _ => None,
    });
    if let Some(target) = fixed.and_then(scalar) {
        return vec![("EQUALS", target)];
    }
    let mut out = Vec::new();
    let integer = is(schema, Type::Integer);
    if integer || is(schema, Type::Number) {
        if let Some(limit) = &schema.exclusive_minimum {
            out.push(("GREATER_THAN", limit.to_string()));
        } else if let Some(min) = schema.minimum.as_ref().and_then(|n| n.as_i64()).filter(|_| integer) {
            out.push(("GREATER_THAN", (min.saturating_sub(1)).to_string()));
        }
        if let Some(limit) = &schema.exclusive_maximum {
            out.push(("LESS_THAN", limit.to_string()));
        } else if let Some(max) = schema.maximum.as_ref().and_then(|n| n.as_i64()).filter(|_| integer) {
            out.push(("LESS_THAN", (max.saturating_add(1)).to_string()));
        }
    }
    if (is(schema, Type::String) && schema.min_length.unwrap_or(0) >= 1)
        || (is(schema, Type::Array) && schema.min_items.unwrap_or(0) >= 1)
    {
        out.push(("NOT_EMPTY", String::new()));
    }
    out
}

fn assertion(property: &str, comparison: &str, target: &str) -> Value {
    json!({ "source": "JSON_BODY", "property": property, "comparison": comparison, "target": target })
}
