//! Secrets as export writes them: `${env:NAME}` by the model's rule and
//! by what the state marked sensitive; the values themselves never kept.

use std::collections::BTreeMap;

use monform_engine::ops;
use monform_model::{Address, FieldPath, Kind, Segment};
use serde_json::Value;

use super::Assembled;
use crate::EnvNeed;
use crate::convert::Definition;
use crate::state::marked_sensitive;

/// What the state's sensitive values become before mapping: never
/// written, turned into `${env:NAME}` with the other secrets.
const SENSITIVE: &str = "\u{1}sensitive";

/// The state's values with every value `sensitive_values` marks replaced
/// by [`SENSITIVE`]. Paths are collected for nothing but recursion.
pub(super) fn with_sentinels(values: &Value, sensitive: &Value, path: &mut Vec<String>) -> Value {
    match values {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    path.push(k.clone());
                    let v = with_sentinels(v, sensitive, path);
                    path.pop();
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    path.push(i.to_string());
                    let v = with_sentinels(v, sensitive, path);
                    path.pop();
                    v
                })
                .collect(),
        ),
        Value::Null => Value::Null,
        scalar if marked_sensitive(sensitive, path) => {
            let _ = scalar;
            Value::String(SENSITIVE.into())
        }
        scalar => scalar.clone(),
    }
}

/// The model's secrecy rule, as export applies it: every sensitive value
/// (and every value the state marked sensitive) as `${env:NAME}`, unless
/// it already is one or only names the service's variables (`{{TOKEN}}`).
pub(super) fn secrets(definition: &Definition, value: &mut Value, out: &mut Assembled) {
    let address = Address::new(definition.kind, definition.id.clone());
    let mut paths: Vec<FieldPath> = monform_model::sensitive::sensitive_paths(definition.kind, value);
    sentinel_paths(value, &FieldPath::root(), &mut paths);
    paths.sort();
    paths.dedup();
    for path in paths {
        let Some(current) = path.get(value).cloned() else {
            continue;
        };
        let text = match &current {
            Value::String(s) => s.clone(),
            Value::Null => continue,
            other => other.to_string(),
        };
        if (text.starts_with("${env:") && text.ends_with('}') && text.matches("${").count() == 1)
            || ops::names_service_variables(&text)
        {
            continue;
        }
        for name in var_names(&text) {
            out.secret_vars.insert(name);
        }
        let base = ops::env_name(&address, &path.to_string());
        let mut name = base.clone();
        let mut n = 2;
        while out.env.iter().any(|e| e.name == name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        set_path(value, &path, Value::String(format!("${{env:{name}}}")));
        out.env.push(EnvNeed {
            name,
            what: format!("{address} `{path}`"),
        });
    }
}

fn sentinel_paths(value: &Value, at: &FieldPath, paths: &mut Vec<FieldPath>) {
    match value {
        Value::String(s) if s.contains(SENSITIVE) => paths.push(at.clone()),
        Value::Object(map) => map.iter().for_each(|(k, v)| sentinel_paths(v, &at.key(k), paths)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| sentinel_paths(v, &at.index(i), paths)),
        _ => {}
    }
}

/// The `[vars]` names a text substitutes (`${var:NAME}`).
fn var_names(text: &str) -> Vec<String> {
    text.split("${var:")
        .skip(1)
        .filter_map(|rest| rest.split(['}', ':']).next())
        .map(str::to_owned)
        .collect()
}

fn set_path(value: &mut Value, path: &FieldPath, new: Value) {
    let mut at = value;
    for segment in path.segments() {
        at = match (segment, at) {
            (Segment::Key(k), Value::Object(map)) => match map.get_mut(k) {
                Some(v) => v,
                None => return,
            },
            (Segment::Index(i), Value::Array(items)) => match items.get_mut(*i) {
                Some(v) => v,
                None => return,
            },
            _ => return,
        };
    }
    *at = new;
}

/// The fingerprints of the secrets one object holds by the Terraform state
/// (`held`: its values mapped to the model's shape), at every secret path
/// of the written value `written` (the model's rule, and `${env:}` text):
/// what its `import` entry records so the first plan compares the files'
/// secrets with them. Only fingerprints leave here, never a value.
pub(super) fn held_fingerprints(kind: Kind, written: &Value, held: &Value) -> BTreeMap<String, String> {
    let mut paths: Vec<FieldPath> = monform_model::sensitive::sensitive_paths(kind, written);
    env_paths(written, &FieldPath::root(), &mut paths);
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| {
            let value = path.get(held).filter(|v| !v.is_null())?;
            // The state's sentinel would be fingerprinted, not the secret.
            if value.as_str().is_some_and(|s| s.contains(SENSITIVE)) {
                return None;
            }
            Some((path.to_string(), ops::import_fingerprint(value)))
        })
        .collect()
}

fn env_paths(value: &Value, at: &FieldPath, paths: &mut Vec<FieldPath>) {
    match value {
        Value::String(s) if s.contains("${env:") => paths.push(at.clone()),
        Value::Object(map) => map.iter().for_each(|(k, v)| env_paths(v, &at.key(k), paths)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| env_paths(v, &at.index(i), paths)),
        _ => {}
    }
}
