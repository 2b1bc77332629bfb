//! Walks a JSON value alongside the generated schema of its kind. Reports
//! every mismatch, and collects the references and `{ file }` scripts it
//! passes so the loader can resolve them.

use serde_json::{Map, Value};

use super::Violation;
use crate::schema::{Schemas, schemas};
use crate::{FieldPath, Kind};

/// A reference to another resource by logical id, found at `path`.
#[derive(Debug, Clone, PartialEq)]
pub struct RefSite {
    pub path: FieldPath,
    pub target: Kind,
    pub id: String,
    /// May also name an object that exists only remotely (private location slugs).
    pub soft: bool,
}

/// A `{ file: ... }` script at `path`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSite {
    pub path: FieldPath,
    pub file: String,
}

/// What walking one resource found.
#[derive(Debug, Default)]
pub struct Shape {
    pub violations: Vec<Violation>,
    pub refs: Vec<RefSite>,
    pub scripts: Vec<ScriptSite>,
}

pub fn check_shape(kind: Kind, value: &Value) -> Shape {
    check_shape_in(schemas(), kind, value)
}

/// `check_shape` against another schema set (the API's: `wire::wire_schemas`).
pub fn check_shape_in(schemas: &Schemas, kind: Kind, value: &Value) -> Shape {
    let mut walker = Walker {
        schemas,
        shape: Shape::default(),
    };
    walker.walk(schemas.kind(kind), value, &FieldPath::root());
    walker.shape
}

/// Enumerations up to this long are listed in the message itself.
const SHORT_ENUM: usize = 16;

struct Walker<'s> {
    schemas: &'s Schemas,
    shape: Shape,
}

impl<'s> Walker<'s> {
    fn walk(&mut self, schema: &'s Value, value: &Value, path: &FieldPath) {
        let schema = self.schemas.resolve(schema);
        if let Some(target) = schema.get("x-ref").and_then(Value::as_str) {
            self.collect_refs(schema, target, value, path);
        }
        if schema.get("x-script").is_some()
            && let Some(file) = value.get("file").and_then(Value::as_str)
        {
            self.shape.scripts.push(ScriptSite {
                path: path.clone(),
                file: file.to_owned(),
            });
        }
        if let Some(branches) = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
        {
            return self.walk_alternatives(schema, branches, value, path);
        }
        if !self.check_type(schema, value, path) {
            return;
        }
        self.check_enum(schema, value, path);
        match value {
            Value::Object(map) => self.walk_object(schema, map, path),
            Value::Array(items) => self.walk_array(schema, items, path),
            Value::String(text) => self.check_string(schema, text, path),
            Value::Number(_) => self.check_number(schema, value, path),
            _ => {}
        }
    }

    fn report(&mut self, violation: Violation) {
        self.shape.violations.push(violation);
    }

    fn collect_refs(&mut self, schema: &Value, target: &str, value: &Value, path: &FieldPath) {
        let Some(target) = Kind::from_section(target) else {
            return;
        };
        let soft = schema.get("x-ref-soft").and_then(Value::as_bool).unwrap_or(false);
        let mut push = |id: &Value, path: FieldPath| {
            if let Some(id) = id.as_str() {
                self.shape.refs.push(RefSite {
                    path,
                    target,
                    id: id.to_owned(),
                    soft,
                });
            }
        };
        match value {
            Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| push(v, path.index(i))),
            other => push(other, path.clone()),
        }
    }

    /// `oneOf`/`anyOf`: a tag property (`checkType`, `type`) picks the branch;
    /// otherwise the JSON type does; otherwise the closest branch is reported.
    fn walk_alternatives(&mut self, schema: &'s Value, branches: &'s [Value], value: &Value, path: &FieldPath) {
        let branches: Vec<&'s Value> = branches.iter().map(|b| self.schemas.resolve(b)).collect();
        if let Some(tag) = discriminator(&branches) {
            return self.walk_tagged(&branches, &tag, value, path);
        }
        let candidates: Vec<&'s Value> = branches.iter().copied().filter(|b| type_accepts(b, value)).collect();
        match candidates.as_slice() {
            [] => {
                // A `null` branch (an optional field) adds nothing to say: it would read "a value".
                let expected: Vec<String> = branches
                    .iter()
                    .filter(|b| type_names(b) != ["null"])
                    .map(|b| describe_type(b))
                    .collect();
                let message = format!("expected {}, found {}", join_or(&expected), json_type_name(value));
                self.report(Violation::new(path.clone(), message));
            }
            [only] => self.walk(only, value, path),
            several => {
                let mut best: Option<Shape> = None;
                for branch in several {
                    let mut trial = Walker {
                        schemas: self.schemas,
                        shape: Shape::default(),
                    };
                    trial.walk(branch, value, path);
                    let better = best
                        .as_ref()
                        .is_none_or(|b| trial.shape.violations.len() < b.violations.len());
                    if better {
                        best = Some(trial.shape);
                    }
                    if best.as_ref().is_some_and(|b| b.violations.is_empty()) {
                        break;
                    }
                }
                if let Some(best) = best {
                    self.shape.violations.extend(best.violations);
                    self.shape.refs.extend(best.refs);
                    self.shape.scripts.extend(best.scripts);
                }
            }
        }
        let _ = schema;
    }

    fn walk_tagged(&mut self, branches: &[&'s Value], tag: &str, value: &Value, path: &FieldPath) {
        let Value::Object(map) = value else {
            let message = format!("expected an object, found {}", json_type_name(value));
            return self.report(Violation::new(path.clone(), message));
        };
        let allowed: Vec<&str> = branches
            .iter()
            .filter_map(|b| b["properties"][tag]["const"].as_str())
            .collect();
        match map.get(tag) {
            None => self.report(
                Violation::new(path.clone(), format!("missing required field `{tag}`"))
                    .with_help(format!("one of {}", allowed.join(", "))),
            ),
            Some(given) => {
                let branch = branches.iter().find(|b| b["properties"][tag]["const"] == *given);
                match branch {
                    Some(branch) => self.walk(branch, value, path),
                    None => {
                        let shown = given.as_str().map_or_else(|| given.to_string(), str::to_owned);
                        let mut violation = Violation::new(
                            path.key(tag),
                            format!("`{shown}` is not a valid {tag}; expected one of {}", allowed.join(", ")),
                        );
                        if let Some(s) = suggest(&shown, allowed.iter().copied()) {
                            violation = violation.with_help(format!("did you mean `{s}`?"));
                        }
                        self.report(violation);
                    }
                }
            }
        }
    }

    fn check_type(&mut self, schema: &Value, value: &Value, path: &FieldPath) -> bool {
        if schema.get("type").is_none() || type_accepts(schema, value) {
            return true;
        }
        let message = format!("expected {}, found {}", describe_type(schema), json_type_name(value));
        self.report(Violation::new(path.clone(), message));
        false
    }

    fn check_enum(&mut self, schema: &Value, value: &Value, path: &FieldPath) {
        if let Some(constant) = schema.get("const")
            && constant != value
        {
            self.report(Violation::new(path.clone(), format!("must be {constant}")));
        }
        let Some(allowed) = schema.get("enum").and_then(Value::as_array) else {
            return;
        };
        if value.is_null() || allowed.iter().any(|a| numbers_or_values_equal(a, value)) {
            return;
        }
        let names: Vec<String> = allowed.iter().filter(|a| !a.is_null()).map(show_value).collect();
        let shown = show_value(value);
        let suggestion = value
            .as_str()
            .and_then(|text| suggest(text, allowed.iter().filter_map(Value::as_str)));
        // Long lists go to the help, and only when there is no likely typo to point out.
        let violation = match (names.len() <= SHORT_ENUM, suggestion) {
            (true, Some(s)) => Violation::new(
                path.clone(),
                format!("{shown} is not allowed; expected one of {}", names.join(", ")),
            )
            .with_help(format!("did you mean `{s}`?")),
            (true, None) => Violation::new(
                path.clone(),
                format!("{shown} is not allowed; expected one of {}", names.join(", ")),
            ),
            (false, Some(s)) => Violation::new(path.clone(), format!("{shown} is not allowed"))
                .with_help(format!("did you mean `{s}`?")),
            (false, None) => Violation::new(path.clone(), format!("{shown} is not allowed"))
                .with_help(format!("expected one of {}", names.join(", "))),
        };
        self.report(violation);
    }

    fn walk_object(&mut self, schema: &'s Value, map: &Map<String, Value>, path: &FieldPath) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    self.report(Violation::new(path.clone(), format!("missing required field `{name}`")));
                }
            }
        }
        let additional = schema.get("additionalProperties");
        for (key, child) in map {
            let child_path = path.key(key);
            if let Some(child_schema) = properties.and_then(|p| p.get(key)) {
                self.walk(child_schema, child, &child_path);
            } else {
                match additional {
                    Some(Value::Bool(false)) => {
                        let known = properties.into_iter().flat_map(|p| p.keys().map(String::as_str));
                        self.report(unknown_field(child_path, key, known));
                    }
                    Some(extra @ Value::Object(_)) => self.walk(extra, child, &child_path),
                    _ => {}
                }
            }
        }
    }

    fn walk_array(&mut self, schema: &'s Value, items: &[Value], path: &FieldPath) {
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && items.len() as u64 > max
        {
            self.report(Violation::new(
                path.clone(),
                format!("has {} entries; at most {max} are allowed", items.len()),
            ));
        }
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < min
        {
            self.report(Violation::new(
                path.clone(),
                format!("has {} entries; at least {min} are required", items.len()),
            ));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.walk(item_schema, item, &path.index(i));
            }
        }
    }

    fn check_string(&mut self, schema: &Value, text: &str, path: &FieldPath) {
        let length = text.chars().count() as u64;
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && length > max
        {
            self.report(Violation::new(
                path.clone(),
                format!("is {length} characters long; at most {max} are allowed"),
            ));
        }
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && length < min
        {
            let message = if min == 1 {
                "must not be empty".to_owned()
            } else {
                format!("must be at least {min} characters long")
            };
            self.report(Violation::new(path.clone(), message));
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && !crate::rules::matches_pattern(pattern, text)
        {
            self.report(Violation::new(
                path.clone(),
                format!("`{text}` does not match the pattern {pattern}"),
            ));
        }
    }

    fn check_number(&mut self, schema: &Value, value: &Value, path: &FieldPath) {
        let Some(n) = value.as_f64() else { return };
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
        let (min, max) = (bound("minimum"), bound("maximum"));
        let out_of_range = min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m);
        if out_of_range && schema.get("enum").is_none() {
            let shown = show_value(value);
            let message = match (min, max) {
                (Some(a), Some(b)) => format!("{shown} is out of range {}..{}", show_number(a), show_number(b)),
                (Some(a), None) => format!("{shown} is below the minimum {}", show_number(a)),
                (_, b) => format!("{shown} is above the maximum {}", show_number(b.unwrap_or_default())),
            };
            self.report(Violation::new(path.clone(), message));
        }
        if let Some(exclusive) = bound("exclusiveMinimum")
            && n <= exclusive
        {
            self.report(Violation::new(
                path.clone(),
                format!("{} must be greater than {}", show_value(value), show_number(exclusive)),
            ));
        }
    }
}

fn unknown_field<'a>(path: FieldPath, key: &str, known: impl Iterator<Item = &'a str> + Clone) -> Violation {
    let violation = Violation::new(path, format!("unknown field `{key}`")).at_key();
    match suggest(key, known.clone()) {
        Some(s) => violation.with_help(format!("did you mean `{s}`?")),
        None => {
            let mut names: Vec<&str> = known.collect();
            names.sort_unstable();
            violation.with_help(format!("expected one of {}", names.join(", ")))
        }
    }
}

/// The closest candidate, if close enough to be a likely typo.
pub fn suggest<'a>(given: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let given_lower = given.to_lowercase();
    candidates
        .map(|c| (strsim::jaro_winkler(&given_lower, &c.to_lowercase()), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The property whose `const` tells the branches of a tagged union apart.
fn discriminator(branches: &[&Value]) -> Option<String> {
    let first = branches.first()?.get("properties")?.as_object()?;
    first
        .iter()
        .find(|(name, prop)| {
            prop.get("const").is_some()
                && branches
                    .iter()
                    .all(|b| b["properties"][name.as_str()].get("const").is_some())
        })
        .map(|(name, _)| name.clone())
}

fn type_names(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("enum").is_some() || schema.get("const").is_some() => {
            let values = schema
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| vec![schema["const"].clone()]);
            let mut names: Vec<&str> = values.iter().map(json_type_keyword).collect();
            names.dedup();
            names
        }
        _ => Vec::new(),
    }
}

fn type_accepts(schema: &Value, value: &Value) -> bool {
    let names = type_names(schema);
    if names.is_empty() {
        return true;
    }
    names.iter().any(|t| match *t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    })
}

fn describe_type(schema: &Value) -> String {
    let names: Vec<String> = type_names(schema)
        .into_iter()
        .filter(|t| *t != "null")
        .map(|t| match t {
            "integer" => "an integer".to_owned(),
            "array" => "a list".to_owned(),
            "object" => "a map".to_owned(),
            other => format!("a {other}"),
        })
        .collect();
    if names.is_empty() {
        "a value".to_owned()
    } else {
        join_or(&names)
    }
}

fn json_type_keyword(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn json_type_name(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(_) => format!("a number ({value})"),
        Value::String(s) => format!("a string (\"{}\")", truncate(s, 40)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a map".to_owned(),
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn show_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{s}`"),
        Value::Number(_) => value.as_f64().map_or_else(|| value.to_string(), show_number),
        other => other.to_string(),
    }
}

fn show_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

fn numbers_or_values_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
