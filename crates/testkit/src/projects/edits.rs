//! One random edit of a generated project, and what a plan must show for
//! it: a field changed, added or left out, a default written or left out,
//! a set's items reordered, a resource moved to another file. Whether the
//! edit changes anything is judged on the model's reading of the files
//! (the typed resource, defaults filled in), not the engine's: sets in any
//! order, null, `[]` and absent alike, trailing whitespace ignored
//! (ARCHITECTURE's design decision 3).

use monform_model::facts::{facts, matches};
use monform_model::schema::schemas;
use monform_model::{FieldPath, Kind, Segment};
use serde_json::Value;

use super::project::{Entry, FILES, Project, fit_to_format, inline_scripts, pointer_mut, remove_at};
use super::random::Rng;
use super::values::{Draw, SKIPPED, default_of, is_meta, variant_name};

/// What a plan of the edited project must show.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// No change at all.
    Nothing,
    /// One change, of the resource at `address`, whose fields are all at
    /// `path` (inside it or around it) or in the top-level fields `also`
    /// (what else the edit changes: `[defaults]` no longer filled in, the
    /// public locations a check with private ones does not get).
    Change {
        address: String,
        path: FieldPath,
        also: Vec<String>,
        /// The edit wrote out an object of nothing but default-like values
        /// where there was none (or the reverse): whether that is a change
        /// depends on what the service holds for none, so an empty plan is
        /// right too.
        may_be_nothing: bool,
    },
}

/// One edit of a project.
#[derive(Debug, Clone)]
pub struct Edit {
    /// What was done, for failure messages.
    pub description: String,
    pub expect: Expect,
}

/// A field of a resource that an edit may touch.
struct Location {
    path: Vec<Segment>,
    schema: &'static Value,
    required: bool,
    set: bool,
}

/// `project` with one random edit, and what a plan must show for it;
/// `None` when no valid edit was found.
pub fn edit(project: &Project, rng: &mut Rng) -> Option<(Project, Edit)> {
    if project.entries.is_empty() {
        return None;
    }
    for _ in 0..60 {
        let mut edited = project.clone();
        let index = rng.below(edited.entries.len());
        let before = edited.entries[index].clone();
        if rng.chance(0.08) {
            let to = (before.file + 1 + rng.below(FILES.len() - 1)) % FILES.len();
            let mut after = before.clone();
            after.file = to;
            fit_to_format(&mut after.body, to);
            let expect = expectation(&edited, &before, &after, &[]);
            edited.entries[index] = after;
            let description = format!(
                "{} moved from {} to {}",
                before.address(),
                FILES[before.file].0,
                FILES[to].0
            );
            return Some((edited, Edit { description, expect }));
        }
        let mut found = Vec::new();
        locations(schemas().kind(before.kind), &before.body, &mut Vec::new(), &mut found);
        if found.is_empty() {
            continue;
        }
        let location = &found[rng.below(found.len())];
        let mut body = before.body.clone();
        let what = match apply(&mut edited, &mut body, location, rng) {
            Some(what) => what,
            None => continue,
        };
        if body == before.body
            || monform_model::validate_resource(before.kind, &edited.merged(before.kind, &body)).is_err()
            || edited.clashes(before.kind, &before.id, &body)
        {
            continue;
        }
        let mut after = Entry { body, ..before.clone() };
        fit_to_format(&mut after.body, after.file);
        let expect = expectation(&edited, &before, &after, &location.path);
        edited.entries[index] = after;
        let path = FieldPath(location.path.clone());
        let was = path.get(&before.inline()).map_or("absent".to_owned(), |v| {
            let text = v.to_string();
            text.chars().take(200).collect()
        });
        let description = format!("{} at {path}: {what} (was {was})", before.address());
        return Some((edited, Edit { description, expect }));
    }
    None
}

/// Applies one change at `location` to `body`; says what it did.
fn apply(project: &mut Project, body: &mut Value, location: &Location, rng: &mut Rng) -> Option<String> {
    let current = FieldPath(location.path.clone()).get(body).cloned();
    match current {
        Some(Value::Array(mut items)) if location.set && items.len() > 1 && rng.chance(0.3) => {
            rng.shuffle(&mut items);
            *pointer_mut(body, &location.path)? = Value::Array(items);
            return Some("reordered".into());
        }
        Some(_) if !location.required && rng.chance(0.3) => {
            remove_at(body, &location.path);
            return Some("left out".into());
        }
        None if rng.chance(0.3) => {
            if let Some(default) = default_of(location.schema) {
                set(body, &location.path, default.clone())?;
                return Some(format!("default {default} written"));
            }
        }
        _ => {}
    }
    let ids = project.ids();
    let mut seen = Default::default();
    let field = match location.path.last() {
        Some(Segment::Key(key)) => key.clone(),
        _ => String::new(),
    };
    let mut draw = Draw {
        rng,
        ids: &ids,
        seen: &mut seen,
        scripts: &mut project.scripts,
        optional: 0.5,
    };
    let value = draw.value(location.schema, "", &field, 1)?;
    let shown = inline_scripts(&value).to_string();
    set(body, &location.path, value)?;
    Some(format!("set to {}", shown.chars().take(120).collect::<String>()))
}

fn set(body: &mut Value, path: &[Segment], value: Value) -> Option<()> {
    let (Segment::Key(key), parent) = path.split_last()? else {
        *pointer_mut(body, path)? = value;
        return Some(());
    };
    pointer_mut(body, parent)?.as_object_mut()?.insert(key.clone(), value);
    Some(())
}

/// The fields of `value` (of `schema`) an edit may touch: every field
/// present, and every optional field of an object present.
fn locations(schema: &'static Value, value: &Value, path: &mut Vec<Segment>, out: &mut Vec<Location>) {
    let schema = schemas().resolve(schema);
    if schema.get("x-script").is_some() {
        return;
    }
    for union in ["oneOf", "anyOf"] {
        if let Some(branches) = schema.get(union).and_then(Value::as_array) {
            let usable: Vec<&'static Value> = branches
                .iter()
                .map(|b| schemas().resolve(b))
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null") && !is_substitution(b))
                .collect();
            let chosen = match usable.as_slice() {
                [one] => Some(*one),
                many => many
                    .iter()
                    .find(|b| {
                        let tag = variant_name(b);
                        tag.is_some() && value.as_object().is_some_and(|m| m.values().any(|v| v.as_str() == tag))
                    })
                    .or_else(|| many.iter().find(|b| type_matches(b, value)))
                    .copied(),
            };
            if let Some(branch) = chosen {
                locations(branch, value, path, out);
            }
            return;
        }
    }
    if let (Some(properties), Value::Object(map)) = (schema.get("properties").and_then(Value::as_object), value) {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (name, property) in properties {
            let resolved = schemas().resolve(property);
            if SKIPPED.contains(&name.as_str()) || is_meta(property) || resolved.get("const").is_some() {
                continue;
            }
            path.push(Segment::Key(name.clone()));
            out.push(Location {
                path: path.clone(),
                schema: property,
                required: required.contains(&name.as_str()),
                set: property.get("x-set").is_some() || resolved.get("x-set").is_some(),
            });
            if let Some(child) = map.get(name) {
                locations(property, child, path, out);
            }
            path.pop();
        }
        return;
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for (i, item) in values.iter().enumerate() {
            path.push(Segment::Index(i));
            locations(items, item, path, out);
            path.pop();
        }
    }
}

fn is_substitution(schema: &Value) -> bool {
    schema
        .get("pattern")
        .and_then(Value::as_str)
        .is_some_and(|p| p.contains("\\$\\{"))
}

fn type_matches(schema: &Value, value: &Value) -> bool {
    let wanted = match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::Null => "null",
    };
    match schema.get("type") {
        Some(Value::String(t)) => t == wanted || (t == "integer" && wanted == "number"),
        Some(Value::Array(types)) => types.iter().any(|t| t == wanted),
        _ => false,
    }
}

/// What a plan must show after `before` became `after` by an edit at `path`.
fn expectation(project: &Project, before: &Entry, after: &Entry, path: &[Segment]) -> Expect {
    let kind = before.kind;
    let was = meaning(kind, &project.merged(kind, &before.body));
    let now = meaning(kind, &project.merged(kind, &after.body));
    let strict = changed_fields(&was, &now, false);
    let Some(first) = strict.first() else {
        return Expect::Nothing;
    };
    Expect::Change {
        address: before.address(),
        path: match path {
            [] => FieldPath::root().key(first),
            path => FieldPath(path.to_vec()),
        },
        may_be_nothing: changed_fields(&was, &now, true).is_empty(),
        also: strict,
    }
}

/// The top-level fields whose meaning differs between `was` and `now`.
/// Below the top level, a false, zero or empty value left out of the files
/// is most often the model's default left unwritten: the engine does not
/// clear it (`compare.rs`), nor is it a change here. `loose`: an object of
/// nothing but such values (`apiCheckDefaults: { url: "" }`) may say what
/// leaving it out says (when the service holds it so).
fn changed_fields(was: &Value, now: &Value, loose: bool) -> Vec<String> {
    let (mut was, mut now) = (was.clone(), now.clone());
    if loose {
        for side in [&mut was, &mut now] {
            if let Value::Object(map) = side {
                map.retain(|_, v| !(v.is_object() && vacuous(v)));
            }
        }
    }
    if let (Value::Object(was), Value::Object(now)) = (&mut was, &now) {
        for (key, value) in was.iter_mut() {
            if let Some(now) = now.get(key) {
                forget_unremarkable(value, now);
            }
        }
    }
    let mut changed: Vec<String> = Vec::new();
    for (one, other) in [(&was, &now), (&now, &was)] {
        for (key, value) in one.as_object().into_iter().flatten() {
            if other.get(key) != Some(value) && !changed.contains(key) {
                changed.push(key.clone());
            }
        }
    }
    changed
}

/// What a resource's files say, as the model reads them: the typed
/// resource (defaults filled in), null, `[]` and absent alike, sets
/// sorted, trailing whitespace and monform's own fields left out.
pub fn meaning(kind: Kind, body: &Value) -> Value {
    let typed = match monform_model::validate_resource(kind, body) {
        Ok(resource) => resource.to_json(),
        Err(_) => body.clone(),
    };
    let facts = facts(kind, &typed);
    canonical(
        &typed,
        &FieldPath::root(),
        &|path| facts.sets.iter().any(|p| matches(p, path)),
        &|path| facts.meta.iter().any(|p| matches(p, path)),
    )
}

fn canonical(
    value: &Value,
    at: &FieldPath,
    is_set: &dyn Fn(&FieldPath) -> bool,
    is_meta: &dyn Fn(&FieldPath) -> bool,
) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()) && !is_meta(&at.key(k)))
                .map(|(k, v)| (k.clone(), canonical(v, &at.key(k), is_set, is_meta)))
                .collect(),
        ),
        Value::Array(items) => {
            let mut items: Vec<Value> = items
                .iter()
                .enumerate()
                .map(|(i, v)| canonical(v, &at.index(i), is_set, is_meta))
                .collect();
            if is_set(at) {
                items.sort_by_key(Value::to_string);
            }
            Value::Array(items)
        }
        Value::String(s) => Value::String(s.trim_end().to_owned()),
        Value::Number(n) => n.as_f64().map_or(value.clone(), |f| {
            serde_json::Number::from_f64(f).map_or(value.clone(), Value::Number)
        }),
        other => other.clone(),
    }
}

fn unremarkable(value: &Value) -> bool {
    match value {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// `was` without the fields `now` leaves out whose value is unremarkable.
fn forget_unremarkable(was: &mut Value, now: &Value) {
    match (was, now) {
        (Value::Object(was), Value::Object(now)) => {
            was.retain(|k, v| now.contains_key(k) || !unremarkable(v));
            for (key, value) in was.iter_mut() {
                if let Some(now) = now.get(key) {
                    forget_unremarkable(value, now);
                }
            }
        }
        (Value::Array(was), Value::Array(now)) if was.len() == now.len() => {
            for (was, now) in was.iter_mut().zip(now) {
                forget_unremarkable(was, now);
            }
        }
        _ => {}
    }
}

/// An object whose fields are all unremarkable (or such objects).
fn vacuous(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.values().all(vacuous),
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        other => unremarkable(other),
    }
}
