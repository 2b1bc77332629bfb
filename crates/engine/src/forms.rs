//! Desired and actual values in the forms a plan compares: the desired
//! JSON without monform-only fields, field lookups, fingerprints, and
//! actual objects read as the files would write them (`forms/actual.rs`).

use std::collections::BTreeMap;

use monform_model::facts::facts;
use monform_model::sensitive::{holds_mask, holds_url_credential, redact_paths};
use monform_model::{FieldPath, Kind, Segment};
use serde_json::Value;

use crate::state::{Fingerprints, ResourceState, State};

mod actual;
mod desired;
pub(crate) use actual::ActualView;
pub use actual::{Names, file_form};
pub(crate) use desired::DesiredForm;

/// The desired JSON without monform-only fields.
pub(crate) fn managed(kind: Kind, mut json: Value) -> Value {
    let facts = facts(kind, &json);
    if let Some(object) = json.as_object_mut() {
        for name in desired::meta_fields(facts) {
            object.remove(name);
        }
    }
    json
}

/// Sensitive field paths of a desired value: by the model's rule, and the
/// paths the loader marked (`DesiredResource::sensitive`: text from `${env:}`).
pub(crate) fn sensitive_paths(kind: Kind, desired: &Value, extra: &[FieldPath]) -> Vec<FieldPath> {
    let mut paths = monform_model::sensitive::sensitive_paths(kind, desired);
    for path in extra {
        if !paths.contains(path) && lookup(desired, path).is_some() {
            paths.push(path.clone());
        }
    }
    paths
}

pub fn lookup<'v>(value: &'v Value, path: &FieldPath) -> Option<&'v Value> {
    let mut current = value;
    for segment in path.segments() {
        current = match segment {
            Segment::Key(k) => current.get(k)?,
            Segment::Index(i) => current.get(*i)?,
        };
    }
    Some(current)
}

/// Short salted fingerprints of a desired value's fields as a plan shows
/// them (objects opened up, lists whole), secrets masked and left out: what
/// the state records as last applied, to tell drift from file edits. Twelve
/// hex digits are plenty to see a change, and keep a large state small.
pub fn field_fingerprints(kind: Kind, desired: &Value, extra: &[FieldPath], state: &State) -> Fingerprints {
    let sensitive = sensitive_paths(kind, desired, extra);
    leaves(desired, &FieldPath::root())
        .into_iter()
        .filter(|(path, _)| !sensitive.contains(path))
        .map(|(path, value)| {
            // A URL's token is in the print (not masked as shown): a
            // token edited in the files is the files' change, not drift.
            let print = field_print(state, &redact_paths(value, &path, &sensitive));
            (path.to_string(), print)
        })
        .collect()
}

/// How long every field print's compared part is (a snapshot joins them).
pub(crate) const PRINT_WIDTH: usize = 12;

/// The longest text (in characters) a print keeps as itself; longer text
/// (a script, a long body) only as its fingerprint.
const TEXT_LIMIT: usize = 256;

/// A field's print as the state records it, so that a plan can say what
/// was applied when the files and the service both changed it (issue 45):
/// a number or a boolean as itself (`=5000`, padded to the width); plain
/// text as its short salted fingerprint followed by the text as a JSON
/// string (`0a1b2c3d4e5f"Login"`); anything else (lists, objects, long
/// text) as the fingerprint alone. Only the first [`PRINT_WIDTH`]
/// characters are compared. Never given a secret: callers leave sensitive
/// fields out, and text an output would mask (a URL with a credential in
/// its query) stays a fingerprint.
pub(crate) fn field_print(state: &State, value: &Value) -> String {
    if let Some(literal) = literal_print(value) {
        return literal;
    }
    let mut print = hashed_print(state, value);
    if let Value::String(text) = value
        && text.chars().count() <= TEXT_LIMIT
        && !holds_mask(value)
        && !holds_url_credential(text)
        && let Ok(quoted) = serde_json::to_string(text)
    {
        print.push_str(&quoted);
    }
    print
}

fn hashed_print(state: &State, value: &Value) -> String {
    let mut print = state.fingerprint(value);
    print.truncate(PRINT_WIDTH);
    print
}

fn literal_print(value: &Value) -> Option<String> {
    let text = match value {
        Value::Bool(b) => b.to_string(),
        // The fingerprint's number form: 10 and 10.0 print the same.
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| format!("{f}")),
        _ => return None,
    };
    (text.len() < PRINT_WIDTH).then(|| format!("={text:<width$}", width = PRINT_WIDTH - 1))
}

/// The part of a print two prints are compared by: a literal, or the
/// fingerprint (the text kept after it says the same).
fn compared(print: &str) -> &str {
    print.get(..PRINT_WIDTH).unwrap_or(print)
}

/// The number or boolean a print records as itself.
pub(crate) fn literal_value(print: &str) -> Option<Value> {
    let text = print.strip_prefix('=')?.trim_end();
    serde_json::from_str(text).ok()
}

/// The value a print records, when it records one: a number or a boolean,
/// or plain text (a state written before text was kept has only its
/// fingerprint: `None`).
pub(crate) fn printed_value(print: &str) -> Option<Value> {
    literal_value(print).or_else(|| {
        let text = print.get(PRINT_WIDTH..).filter(|t| !t.is_empty())?;
        serde_json::from_str::<String>(text).ok().map(Value::String)
    })
}

/// Whether two prints are of the same value: equal, or one the value the
/// other hashes (a state written before values were recorded).
pub(crate) fn same_print(state: &State, a: &str, b: &str) -> bool {
    let (a, b) = (compared(a), compared(b));
    if a == b {
        return true;
    }
    match (literal_value(a), literal_value(b)) {
        (Some(value), None) => hashed_print(state, &value) == b,
        (None, Some(value)) => a == hashed_print(state, &value),
        _ => false,
    }
}

/// Whether the secret `value` at `path` differs from what the state
/// recorded at the last apply (by salted fingerprint: secrets are never
/// read back).
pub(crate) fn secret_changed(path: &FieldPath, value: &Value, recorded: Option<&ResourceState>, state: &State) -> bool {
    recorded
        .and_then(|r| r.secrets.get(&path.to_string()))
        .is_none_or(|f| *f != state.fingerprint(value))
}

/// Whether the secret `value` at `path` is to be set: it differs from what
/// the state recorded at the last apply or, before monform applied the
/// object (no state entry), from what an `import` entry says the object
/// holds (`secretFingerprints`, written by a migration).
pub(crate) fn secret_to_set(
    path: &FieldPath,
    value: &Value,
    recorded: Option<&ResourceState>,
    held: Option<&BTreeMap<String, String>>,
    state: &State,
) -> bool {
    match (recorded, held.and_then(|h| h.get(&path.to_string()))) {
        (None, Some(print)) => !holds_fingerprint(print, value),
        _ => secret_changed(path, value, recorded, state),
    }
}

/// A secret's fingerprint for an `import` entry's `secretFingerprints`:
/// `salt:digest`, with a salt of its own (the project has no state yet to
/// lend one). What a migration writes instead of the value.
pub fn import_fingerprint(value: &Value) -> String {
    let salt: String = uuid::Uuid::new_v4().simple().to_string()[..16].to_owned();
    format!("{salt}:{}", crate::state::fingerprint(&salt, value))
}

/// Whether `print` (`salt:digest`) is the fingerprint of `value`.
fn holds_fingerprint(print: &str, value: &Value) -> bool {
    print
        .split_once(':')
        .is_some_and(|(salt, digest)| crate::state::fingerprint(salt, value) == digest)
}

/// The fingerprints of a desired value's secrets, by path.
pub fn secret_fingerprints(
    kind: Kind,
    desired: &Value,
    extra: &[FieldPath],
    state: &State,
) -> BTreeMap<String, String> {
    sensitive_paths(kind, desired, extra)
        .into_iter()
        .filter_map(|path| lookup(desired, &path).map(|v| (path.to_string(), state.fingerprint(v))))
        .collect()
}

/// The fields of a value to show one per line: objects are opened up,
/// lists and scalars are shown whole.
pub(crate) fn leaves<'v>(value: &'v Value, at: &FieldPath) -> Vec<(FieldPath, &'v Value)> {
    match value {
        Value::Object(map) if !map.is_empty() => map.iter().flat_map(|(k, v)| leaves(v, &at.key(k))).collect(),
        other => vec![(at.clone(), other)],
    }
}
