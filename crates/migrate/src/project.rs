//! The walked definitions as a monform project: each resource mapped to
//! the model's shape, completed from the state where the configuration
//! leaves a value to the provider's default (which is not always
//! monform's), its secrets as `${env:NAME}`, and one `import` entry per
//! instance of the state, so the first plan adopts instead of creating.

use std::collections::{BTreeMap, BTreeSet};

use monform_model::{FieldPath, Kind, Resource, Segment};
use serde_json::{Map, Value};

use crate::convert::{Definition, Walked};
use crate::expr::{FILE_MARKER, Repeat};
use crate::mapping::{Refs, Unmapped, is_empty, map_resource};
use crate::state::{Instance, TfState};
use crate::{EnvNeed, Import, Note};

mod secrets;
mod variables;
use secrets::{held_fingerprints, secrets, with_sentinels};
use variables::variables;

/// The project's resource files and what the report lists.
#[derive(Debug, Default)]
pub struct Assembled {
    /// Output file (relative) to section to logical id to value.
    pub files: BTreeMap<String, BTreeMap<Kind, Map<String, Value>>>,
    /// Script files read by `file()`: output path to text.
    pub scripts: BTreeMap<String, String>,
    pub imports: Vec<Import>,
    pub env: Vec<EnvNeed>,
    pub notes: Vec<Note>,
    /// `[vars]` entries that held a secret: taken out of monform.toml.
    pub secret_vars: BTreeSet<String>,
    pub definitions: usize,
    /// A check's fields taken from the state (not written in its HCL).
    filled: BTreeMap<String, BTreeSet<String>>,
}

pub fn assemble(walked: &Walked, state: Option<&TfState>) -> Assembled {
    let mut out = Assembled::default();
    let empty_state = TfState::default();
    let state = state.unwrap_or(&empty_state);
    // The service's ids (and private locations' slugs) to migrated addresses.
    let mut remote: BTreeMap<(Kind, String), String> = BTreeMap::new();
    for definition in &walked.definitions {
        for instance in state.get(&definition.module, &definition.tf_type, &definition.tf_name) {
            let id = item_id(definition, instance);
            remote.insert((definition.kind, instance.id.clone()), id.clone());
            if let Some(slug) = instance.values.get("slug_name").and_then(Value::as_str) {
                remote.insert((definition.kind, slug.to_owned()), id);
            }
        }
    }
    let resolve = |kind: Kind, id: &str| remote.get(&(kind, id.to_owned())).cloned();
    let from_state = Refs {
        from_state: true,
        resolve: &resolve,
    };
    let no_lookup = |_: Kind, _: &str| None;
    let from_hcl = Refs {
        from_state: false,
        resolve: &no_lookup,
    };
    let mut migrated: BTreeSet<(String, String, String)> = BTreeSet::new();
    for definition in &walked.definitions {
        migrated.insert((
            definition.module.clone(),
            definition.tf_type.clone(),
            definition.tf_name.clone(),
        ));
        let instances: Vec<Instance> = state
            .get(&definition.module, &definition.tf_type, &definition.tf_name)
            .iter()
            .map(|i| Instance {
                values: with_sentinels(&i.values, &i.sensitive, &mut Vec::new()),
                ..i.clone()
            })
            .collect();
        if definition.kind == Kind::Variable {
            let raw = state.get(&definition.module, &definition.tf_type, &definition.tf_name);
            variables(definition, &instances, raw, &from_hcl, &mut out);
            continue;
        }
        let mut definition_notes = Vec::new();
        let mut body = definition.body.clone();
        let mut for_each = definition.for_each.clone();
        fall_back(definition, &instances, &mut body, &mut for_each, &mut definition_notes);
        let mapped = map_resource(&definition.tf_type, &body, &from_hcl);
        for unmapped in &mapped.unmapped {
            definition_notes.push(unmapped_note(definition, unmapped));
        }
        let mut value = mapped.value;
        let states: Vec<Map<String, Value>> = instances
            .iter()
            .filter_map(|i| i.values.as_object())
            .map(|values| map_resource(&definition.tf_type, values, &from_state).value)
            .collect();
        let written: BTreeSet<String> = value.keys().cloned().collect();
        let mut differing = Vec::new();
        fill(
            definition.kind,
            &mut value,
            &states,
            &normals(definition.kind, &states),
            &mut Vec::new(),
            &mut differing,
        );
        if definition.kind == Kind::Check {
            let filled = value.keys().filter(|k| !written.contains(*k)).cloned().collect();
            out.filled.insert(definition.id.clone(), filled);
        }
        for path in differing {
            definition_notes.push(Note::new(
                definition.place.clone(),
                format!(
                    "{}: `{path}` is not set in the configuration and differs between its items in the state: left out; set it per item by hand",
                    address(definition)
                ),
            ));
        }
        let output_file = output_file(&definition.source_file);
        let mut value = Value::Object(value);
        scripts(definition, &mut value, &output_file, &mut out.scripts);
        secrets(definition, &mut value, &mut out);
        let Value::Object(mut object) = value else { continue };
        if definition.prevent_destroy {
            object.insert("preventDestroy".into(), Value::Bool(true));
        }
        lifecycle(definition, &mut object);
        if let Some(items) = for_each {
            let mut with_for_each = Map::new();
            with_for_each.insert("forEach".into(), items);
            with_for_each.extend(object);
            object = with_for_each;
        }
        let written = Value::Object(object.clone());
        for raw in state.get(&definition.module, &definition.tf_type, &definition.tf_name) {
            let held = raw
                .values
                .as_object()
                .map(|values| Value::Object(map_resource(&definition.tf_type, values, &from_state).value))
                .unwrap_or_default();
            let prints = held_fingerprints(definition.kind, &written, &held);
            imports_for(definition, raw, prints, &mut out);
        }
        if instances.is_empty() && !state.instances.is_empty() {
            definition_notes.push(Note::new(
                definition.place.clone(),
                format!(
                    "{}: not in the state, so not imported: the first plan creates it",
                    address(definition)
                ),
            ));
        }
        out.notes.extend(definition_notes);
        out.definitions += 1;
        out.files
            .entry(output_file)
            .or_default()
            .entry(definition.kind)
            .or_default()
            .insert(definition.id.clone(), Value::Object(object));
    }
    for ((module, kind, name), instances) in &state.instances {
        if migrated.contains(&(module.clone(), kind.clone(), name.clone())) || walked.skipped_modules.contains(module) {
            continue;
        }
        let prefix = if module.is_empty() {
            String::new()
        } else {
            format!("{module}.")
        };
        out.notes.push(Note::unplaced(format!(
            "{prefix}{kind}.{name} ({} in the state) is not in the configuration: not adopted",
            instances.len()
        )));
    }
    for address in &state.others {
        out.notes.push(Note::unplaced(format!(
            "{address} (in the state) is not a resource monform migrates: not adopted"
        )));
    }
    drop_group_overrides(&mut out);
    out
}

/// A check's alert settings (locations, runtime...) taken from the state
/// where its group sets them: the service runs the group's, so monform
/// would warn that the check's are ignored. Written in the HCL, they stay.
fn drop_group_overrides(out: &mut Assembled) {
    let groups: BTreeMap<String, Value> = out
        .files
        .values()
        .filter_map(|sections| sections.get(&Kind::Group))
        .flat_map(|groups| groups.iter().map(|(id, value)| (id.clone(), value.clone())))
        .collect();
    for sections in out.files.values_mut() {
        let Some(checks) = sections.get_mut(&Kind::Check) else {
            continue;
        };
        for (id, check) in checks.iter_mut() {
            let Some(filled) = out.filled.get(id) else { continue };
            let Some(group) = check.get("group").and_then(Value::as_str).and_then(|g| groups.get(g)) else {
                continue;
            };
            for field in monform_model::group_rules::GROUP_OVERRIDES {
                if filled.contains(*field)
                    && monform_model::group_rules::group_overrides(group, field)
                    && let Some(object) = check.as_object_mut()
                {
                    object.remove(*field);
                }
            }
        }
    }
}

/// `lifecycle { ignore_changes }` as `lifecycle: { ignoreChanges }`.
fn lifecycle(definition: &Definition, object: &mut Map<String, Value>) {
    if !definition.ignore_changes.is_empty() {
        let paths = definition.ignore_changes.iter().cloned().map(Value::String).collect();
        object.insert(
            "lifecycle".into(),
            Value::Object(Map::from_iter([("ignoreChanges".to_owned(), Value::Array(paths))])),
        );
    }
}

fn address(definition: &Definition) -> String {
    format!("{}.{}", definition.kind.section(), definition.id)
}

/// The logical id of an instance: `id` or `id[key]`.
fn item_id(definition: &Definition, instance: &Instance) -> String {
    match (&instance.key, definition.repeat) {
        (Some(key), Repeat::ForEach | Repeat::Count) => format!("{}[{key}]", definition.id),
        _ => definition.id.clone(),
    }
}

/// `main.tf` is written as `main.yaml`; a module's files keep their folder.
pub fn output_file(source: &str) -> String {
    let mut parts: Vec<&str> = source.split('/').filter(|p| *p != ".." && *p != ".").collect();
    let last = parts.pop().unwrap_or("main.tf");
    let stem = last.strip_suffix(".tf").unwrap_or(last);
    parts.push(stem);
    format!("{}.yaml", parts.join("/"))
}

/// Where the configuration did not translate: the state's value when
/// every instance has the same (`for_each` / `count`: the state's keys).
fn fall_back(
    definition: &Definition,
    instances: &[Instance],
    body: &mut Map<String, Value>,
    for_each: &mut Option<Value>,
    notes: &mut Vec<Note>,
) {
    for failed in &definition.failed {
        let head = format!(
            "{}: `{}` = `{}`: {} is not translated",
            address(definition),
            failed.path.join("."),
            failed.text,
            failed.reason
        );
        if failed.path == ["for_each"] || failed.path == ["count"] {
            if instances.is_empty() {
                notes.push(Note::new(
                    failed.place.clone(),
                    format!("{head}; no instances in the state: written without items, edit by hand"),
                ));
                *for_each = Some(Value::Array(Vec::new()));
            } else {
                let keys = instances
                    .iter()
                    .filter_map(|i| i.key.clone())
                    .map(Value::String)
                    .collect();
                notes.push(Note::new(
                    failed.place.clone(),
                    format!(
                        "{head}; written as the state's item keys (`each.value` may not read as in Terraform: check it)"
                    ),
                ));
                *for_each = Some(Value::Array(keys));
            }
            continue;
        }
        let values: Vec<Option<&Value>> = instances.iter().map(|i| get_tf(&i.values, &failed.path)).collect();
        let first = values.first().copied().flatten();
        match first {
            Some(value) if values.iter().all(|v| *v == Some(value)) => {
                set_tf(body, &failed.path, value.clone());
                notes.push(Note::new(
                    failed.place.clone(),
                    format!("{head}; written as the state's value (edit by hand to keep it computed)"),
                ));
            }
            _ => notes.push(Note::new(
                failed.place.clone(),
                format!("{head}; left out (the state has no one value for it): write it by hand"),
            )),
        }
    }
}

fn get_tf<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, step| match v {
        Value::Object(map) => map.get(step),
        Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

fn set_tf(body: &mut Map<String, Value>, path: &[String], new: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        body.insert(first.clone(), new);
        return;
    }
    let mut at = body.entry(first.clone()).or_insert(Value::Null);
    for (i, step) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        at = match at {
            Value::Array(items) => match step.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(item) => item,
                None => return,
            },
            Value::Object(map) => map.entry(step.clone()).or_insert(Value::Null),
            _ => return,
        };
        if last {
            *at = new;
            return;
        }
    }
}

fn unmapped_note(definition: &Definition, unmapped: &Unmapped) -> Note {
    // The line of the attribute, else of its nearest enclosing block.
    let mut path = unmapped.path.clone();
    let place = loop {
        if let Some(place) = definition.lines.get(&path.join(".")) {
            break place.clone();
        }
        if path.pop().is_none() {
            break definition.place.clone();
        }
    };
    Note::new(
        place,
        format!("{}: {}: not migrated", address(definition), unmapped.reason),
    )
}

/// The canonical form of a state value, when it reads as a monform resource.
fn normal(kind: Kind, value: &Map<String, Value>) -> Option<Value> {
    Resource::from_json(kind, Value::Object(value.clone()))
        .ok()
        .map(|r| r.to_json())
}

fn normals(kind: Kind, states: &[Map<String, Value>]) -> Vec<Option<Value>> {
    states.iter().map(|s| normal(kind, s)).collect()
}

/// Fields the configuration leaves unset but the state holds with a value
/// other than monform's default (the provider's defaults differ: a check's
/// response times, `double_check`): written, so the plan finds nothing to
/// change. The same value in every instance, else listed in `differing`.
fn fill(
    kind: Kind,
    value: &mut Map<String, Value>,
    states: &[Map<String, Value>],
    normals: &[Option<Value>],
    path: &mut Vec<String>,
    differing: &mut Vec<String>,
) {
    let at = |state: &Map<String, Value>| -> Option<Map<String, Value>> {
        get_tf(&Value::Object(state.clone()), path)
            .and_then(Value::as_object)
            .cloned()
    };
    let mut keys: Vec<String> = Vec::new();
    for state in states {
        for key in at(state)
            .into_iter()
            .flat_map(|m| m.keys().cloned().collect::<Vec<_>>())
        {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    for key in keys {
        path.push(key.clone());
        match value.get_mut(&key) {
            Some(Value::Object(inner)) => fill(kind, inner, states, normals, path, differing),
            Some(_) => {}
            None => {
                let mut candidates: Vec<Option<Value>> = Vec::new();
                for (state, normal_form) in states.iter().zip(normals) {
                    let state_value = Value::Object(state.clone());
                    let found = get_tf(&state_value, path).filter(|v| !is_empty(v)).cloned();
                    let Some(found) = found else {
                        candidates.push(None);
                        continue;
                    };
                    let default = normal_form.as_ref().is_some_and(|whole| {
                        let mut without = state.clone();
                        remove_tf(&mut without, path);
                        let field = FieldPath(path.iter().map(|k| segment(k)).collect());
                        normal(kind, &without).is_some_and(|n| {
                            let unset = field.get(&n);
                            // The provider records an unset optional number or flag as 0 or
                            // false: where monform leaves the field out, that is no value.
                            unset == field.get(whole) || (unset.is_none() && is_zero(&found))
                        })
                    });
                    candidates.push((!default).then_some(found));
                }
                if candidates.iter().any(Option::is_some) {
                    let first = &candidates[0];
                    if candidates.iter().all(|c| c == first) {
                        if let Some(found) = first {
                            value.insert(key.clone(), found.clone());
                        }
                    } else {
                        differing.push(path.join("."));
                    }
                }
            }
        }
        path.pop();
    }
}

fn is_zero(value: &Value) -> bool {
    matches!(value, Value::Bool(false)) || value.as_f64() == Some(0.0)
}

fn segment(key: &str) -> Segment {
    match key.parse::<usize>() {
        Ok(i) => Segment::Index(i),
        Err(_) => Segment::Key(key.to_owned()),
    }
}

fn remove_tf(body: &mut Map<String, Value>, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = body;
    for step in parents {
        match at.get_mut(step) {
            Some(Value::Object(map)) => at = map,
            _ => return,
        }
    }
    at.remove(last);
}

/// `file()` values: a script field's text written as a file of its own
/// (`{ file: scripts/NAME }`), any other field's inline.
fn scripts(definition: &Definition, value: &mut Value, output_file: &str, files: &mut BTreeMap<String, String>) {
    fn walk(value: &mut Value, key: &str, up: &str, files: &mut BTreeMap<String, String>) {
        match value {
            Value::Object(map) if map.contains_key(FILE_MARKER) => {
                let text = map.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                let source = map
                    .get(FILE_MARKER)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let is_script = key.to_lowercase().contains("script") || key == "template" || key == "prompt";
                if is_script {
                    let name = std::path::Path::new(&source)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| "script.js".into());
                    let mut target = format!("scripts/{name}");
                    let mut n = 2;
                    while files.get(&target).is_some_and(|t| *t != text) {
                        target = format!("scripts/{n}-{name}");
                        n += 1;
                    }
                    files.insert(target.clone(), text);
                    *value = serde_json::json!({ "file": format!("{up}{target}") });
                } else {
                    *value = Value::String(monform_config::literal::escape(&text).into_owned());
                }
            }
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    walk(v, k, up, files);
                }
            }
            Value::Array(items) => {
                for item in items {
                    walk(item, key, up, files);
                }
            }
            _ => {}
        }
    }
    let _ = definition;
    let up = "../".repeat(output_file.matches('/').count());
    walk(value, "", &up, files);
}

fn imports_for(
    definition: &Definition,
    instance: &Instance,
    secret_fingerprints: BTreeMap<String, String>,
    out: &mut Assembled,
) {
    if instance.id.is_empty() {
        return;
    }
    let to = format!("{}.{}", definition.kind.section(), item_id(definition, instance));
    if let Some(key) = &instance.key
        && !monform_model::is_valid_address_id(&format!("{}[{key}]", definition.id))
    {
        out.notes.push(Note::new(
            definition.place.clone(),
            format!(
                "{to}: the item key `{key}` is not a valid monform key (letters, digits, `-`, `_`): rename it by hand"
            ),
        ));
    }
    out.imports.push(Import {
        to,
        id: instance.id.clone(),
        secret_fingerprints,
    });
}
