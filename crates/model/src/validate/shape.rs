//! Walks a JSON value alongside the generated schema of its kind. Reports
//! every mismatch, and collects the references and `{ file }` scripts it
//! passes so the loader can resolve them. Every value a message quotes
//! goes through `Wording` (`crate::sensitive::word`): a sensitive one is
//! named by where it came from, never shown nor suggested from.

use serde_json::{Map, Value};

use super::Violation;
use super::compiled::{Additional, Alternatives, Node, NodeId};
use crate::schema::{Schemas, schemas};
use crate::sensitive::{Wording, mask_url, show_number};
use crate::suggest::{join_or, suggest};
use crate::{FieldPath, Kind, Segment};

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
    walk_shape(schemas, kind, value, &Wording::new(kind, value, &[]))
}

/// `check_shape` of a resource whose messages word its values as
/// `wording` says (the loader's: values of `${env:}` hidden too).
pub fn check_shape_worded(kind: Kind, value: &Value, wording: &Wording<'_>) -> Shape {
    walk_shape(schemas(), kind, value, wording)
}

fn walk_shape(schemas: &Schemas, kind: Kind, value: &Value, wording: &Wording<'_>) -> Shape {
    let compiled = schemas.compiled();
    let mut walker = Walker {
        nodes: &compiled.nodes,
        shape: Shape::default(),
        path: FieldPath::root(),
        wording,
    };
    walker.walk(compiled.kind(kind), value);
    walker.shape
}

/// Enumerations up to this long are listed in the message itself.
const SHORT_ENUM: usize = 16;

struct Walker<'s> {
    nodes: &'s [Node],
    shape: Shape,
    /// Where the walk is; pushed and popped rather than copied per value,
    /// and cloned only into what is reported.
    path: FieldPath,
    wording: &'s Wording<'s>,
}

impl<'s> Walker<'s> {
    /// The value being walked, as a message may quote it.
    fn quoted(&self, value: &Value) -> String {
        self.wording.value(&self.path, value)
    }

    /// `a string ("...")`: the value's JSON type and, when it may be
    /// shown, the value (a long one cut).
    fn type_found(&self, value: &Value) -> String {
        let shown = match (value, self.wording.hidden(&self.path)) {
            (Value::Null | Value::Array(_) | Value::Object(_), _) => None,
            (_, Some(hidden)) => Some(hidden.describe()),
            (Value::String(s), None) => Some(format!("\"{}\"", mask_url(&truncate(s, 40)))),
            (other, None) => Some(other.to_string()),
        };
        let name = match value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "a list",
            Value::Object(_) => "a map",
        };
        match shown {
            Some(shown) => format!("{name} ({shown})"),
            None => name.to_owned(),
        }
    }

    fn walk(&mut self, id: NodeId, value: &Value) {
        let nodes = self.nodes;
        let schema = &nodes[id];
        if let Some((target, soft)) = schema.reference {
            self.collect_refs(target, soft, value);
        }
        if schema.script
            && let Some(file) = value.get("file").and_then(Value::as_str)
        {
            self.shape.scripts.push(ScriptSite {
                path: self.path.clone(),
                file: file.to_owned(),
            });
        }
        match &schema.alternatives {
            Alternatives::Tagged { tag, branches } => return self.walk_tagged(tag, branches, value),
            Alternatives::Untagged(branches) => return self.walk_alternatives(branches, value),
            Alternatives::None => {}
        }
        if !self.check_type(schema, value) {
            return;
        }
        self.check_enum(schema, value);
        match value {
            Value::Object(map) => self.walk_object(schema, map),
            Value::Array(items) => self.walk_array(schema, items),
            Value::String(text) => self.check_string(schema, text),
            Value::Number(_) => self.check_number(schema, value),
            _ => {}
        }
    }

    fn report(&mut self, message: String) {
        self.report_violation(Violation::new(self.path.clone(), message));
    }

    fn report_violation(&mut self, violation: Violation) {
        self.shape.violations.push(violation);
    }

    /// Walks `value` at `segment` below the current path.
    fn walk_at(&mut self, segment: Segment, id: NodeId, value: &Value) {
        self.path.0.push(segment);
        self.walk(id, value);
        self.path.0.pop();
    }

    fn collect_refs(&mut self, target: Kind, soft: bool, value: &Value) {
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
            Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| push(v, self.path.index(i))),
            other => push(other, self.path.clone()),
        }
    }

    /// `oneOf`/`anyOf` without a tag: the JSON type picks the branch;
    /// otherwise the closest branch is reported.
    fn walk_alternatives(&mut self, branches: &[NodeId], value: &Value) {
        let nodes = self.nodes;
        let candidates: Vec<NodeId> = branches.iter().copied().filter(|&b| nodes[b].accepts(value)).collect();
        match candidates.as_slice() {
            [] => {
                // A `null` branch (an optional field) adds nothing to say: it would read "a value".
                let expected: Vec<String> = branches
                    .iter()
                    .map(|&b| &nodes[b])
                    .filter(|b| b.types != ["null"])
                    .map(Node::describe_type)
                    .collect();
                let message = format!("expected {}, found {}", join_or(&expected), self.type_found(value));
                self.report(message);
            }
            [only] => self.walk(*only, value),
            several => {
                let mut best: Option<Shape> = None;
                for &branch in several {
                    let mut trial = Walker {
                        nodes,
                        shape: Shape::default(),
                        path: self.path.clone(),
                        wording: self.wording,
                    };
                    trial.walk(branch, value);
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
    }

    /// A tag property (`checkType`, `type`) picks the branch.
    fn walk_tagged(&mut self, tag: &str, branches: &[(Value, NodeId)], value: &Value) {
        let Value::Object(map) = value else {
            let message = format!("expected an object, found {}", self.type_found(value));
            return self.report(message);
        };
        let allowed = || branches.iter().filter_map(|(v, _)| v.as_str());
        match map.get(tag) {
            None => {
                let violation = Violation::new(self.path.clone(), format!("missing required field `{tag}`"))
                    .with_help(format!("one of {}", allowed().collect::<Vec<_>>().join(", ")));
                self.report_violation(violation);
            }
            Some(given) => match branches.iter().find(|(v, _)| v == given) {
                Some((_, branch)) => self.walk(*branch, value),
                None => {
                    let path = self.path.key(tag);
                    let shown = self.wording.value(&path, given);
                    let text = given.as_str().map_or_else(|| given.to_string(), str::to_owned);
                    let suggestion = self.wording.suggest(&path, &text, allowed());
                    let mut violation = Violation::new(
                        path,
                        format!(
                            "{shown} is not a valid {tag}; expected one of {}",
                            allowed().collect::<Vec<_>>().join(", ")
                        ),
                    );
                    if let Some(s) = suggestion {
                        violation = violation.with_help(format!("did you mean `{s}`?"));
                    }
                    self.report_violation(violation);
                }
            },
        }
    }

    fn check_type(&mut self, schema: &Node, value: &Value) -> bool {
        if !schema.typed || schema.accepts(value) {
            return true;
        }
        let message = format!("expected {}, found {}", schema.describe_type(), self.type_found(value));
        self.report(message);
        false
    }

    fn check_enum(&mut self, schema: &Node, value: &Value) {
        if let Some(constant) = &schema.constant
            && constant != value
        {
            self.report(format!("must be {constant}"));
        }
        let Some(allowed) = &schema.enumeration else {
            return;
        };
        if value.is_null() || allowed.iter().any(|a| numbers_or_values_equal(a, value)) {
            return;
        }
        let names: Vec<String> = allowed.iter().filter(|a| !a.is_null()).map(show_value).collect();
        let shown = self.quoted(value);
        let suggestion = value.as_str().and_then(|text| {
            self.wording
                .suggest(&self.path, text, allowed.iter().filter_map(Value::as_str))
        });
        let path = self.path.clone();
        // Long lists go to the help, and only when there is no likely typo to point out.
        let violation = match (names.len() <= SHORT_ENUM, suggestion) {
            (true, Some(s)) => Violation::new(
                path,
                format!("{shown} is not allowed; expected one of {}", names.join(", ")),
            )
            .with_help(format!("did you mean `{s}`?")),
            (true, None) => Violation::new(
                path,
                format!("{shown} is not allowed; expected one of {}", names.join(", ")),
            ),
            (false, Some(s)) => {
                Violation::new(path, format!("{shown} is not allowed")).with_help(format!("did you mean `{s}`?"))
            }
            (false, None) => Violation::new(path, format!("{shown} is not allowed"))
                .with_help(format!("expected one of {}", names.join(", "))),
        };
        self.report_violation(violation);
    }

    fn walk_object(&mut self, schema: &Node, map: &Map<String, Value>) {
        for name in &schema.required {
            if !map.contains_key(name) {
                self.report(format!("missing required field `{name}`"));
            }
        }
        for (key, child) in map {
            if let Some(&child_schema) = schema.property_index.get(key) {
                self.walk_at(Segment::Key(key.clone()), child_schema, child);
            } else {
                match schema.additional {
                    Additional::Forbidden => {
                        let known = schema.properties.iter().map(|(name, _)| name.as_str());
                        let violation = unknown_field(self.path.key(key), key, known);
                        self.report_violation(violation);
                    }
                    Additional::Schema(extra) => self.walk_at(Segment::Key(key.clone()), extra, child),
                    Additional::Any => {}
                }
            }
        }
    }

    fn walk_array(&mut self, schema: &Node, items: &[Value]) {
        if let Some(max) = schema.max_items
            && items.len() as u64 > max
        {
            self.report(format!("has {} entries; at most {max} are allowed", items.len()));
        }
        if let Some(min) = schema.min_items
            && (items.len() as u64) < min
        {
            self.report(format!("has {} entries; at least {min} are required", items.len()));
        }
        if let Some(item_schema) = schema.items {
            for (i, item) in items.iter().enumerate() {
                self.walk_at(Segment::Index(i), item_schema, item);
            }
        }
    }

    fn check_string(&mut self, schema: &Node, text: &str) {
        if schema.max_length.is_some() || schema.min_length.is_some() {
            let length = text.chars().count() as u64;
            // A sensitive value is named, and its exact length not told.
            let hidden = self.wording.hidden(&self.path).map(|h| h.describe());
            if let Some(max) = schema.max_length
                && length > max
            {
                self.report(match &hidden {
                    Some(hidden) => format!("{hidden} is longer than the {max} characters allowed"),
                    None => format!("is {length} characters long; at most {max} are allowed"),
                });
            }
            if let Some(min) = schema.min_length
                && length < min
            {
                let message = if min == 1 {
                    "must not be empty".to_owned()
                } else {
                    format!("must be at least {min} characters long")
                };
                self.report(match &hidden {
                    Some(hidden) => format!("{hidden} {message}"),
                    None => message,
                });
            }
        }
        if let Some(pattern) = &schema.pattern
            && !crate::rules::matches_pattern(pattern, text)
        {
            let shown = self.quoted(&Value::String(text.to_owned()));
            self.report(format!("{shown} does not match the pattern {pattern}"));
        }
    }

    fn check_number(&mut self, schema: &Node, value: &Value) {
        let Some(n) = value.as_f64() else { return };
        let (min, max) = (schema.minimum, schema.maximum);
        let out_of_range = min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m);
        if out_of_range && schema.enumeration.is_none() {
            let shown = self.quoted(value);
            let message = match (min, max) {
                (Some(a), Some(b)) => format!("{shown} is out of range {}..{}", show_number(a), show_number(b)),
                (Some(a), None) => format!("{shown} is below the minimum {}", show_number(a)),
                (_, b) => format!("{shown} is above the maximum {}", show_number(b.unwrap_or_default())),
            };
            self.report(message);
        }
        if let Some(exclusive) = schema.exclusive_minimum
            && n <= exclusive
        {
            self.report(format!(
                "{} must be greater than {}",
                self.quoted(value),
                show_number(exclusive)
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

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

/// A value of the schema's (an enumeration's): never sensitive.
fn show_value(value: &Value) -> String {
    crate::sensitive::word(value, None)
}

fn numbers_or_values_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
