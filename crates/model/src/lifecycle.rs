//! `lifecycle: { ignoreChanges, drift }` (issue 30): reading it from a
//! resource's JSON, and checking that every ignored path names a field of
//! the resource's kind (and check or channel type).

use serde_json::Value;

use crate::facts::variant_tag;
use crate::resources::common::Lifecycle;
use crate::schema::{Schemas, schemas};
use crate::sensitive::Wording;
use crate::suggest::suggest;
use crate::{FieldPath, Kind, Resource, Violation};

/// The lifecycle of a resource given in its files' JSON form (default when
/// absent or malformed: a malformed one is the shape check's diagnostic).
pub fn of(json: &Value) -> Lifecycle {
    json.get("lifecycle")
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default()
}

impl Resource {
    /// The resource's `lifecycle`, default when it sets none.
    pub fn lifecycle(&self) -> Lifecycle {
        of(&self.to_json())
    }
}

impl Lifecycle {
    /// The ignored fields as paths (only well-formed ones: the loader
    /// refuses the others).
    pub fn ignored_paths(&self) -> Vec<FieldPath> {
        self.ignore_changes
            .iter()
            .filter(|p| parse_keys(p).is_some())
            .map(|p| FieldPath::parse(p))
            .collect()
    }
}

/// Whether `path` is an ignored path or lies below one.
pub fn is_ignored(path: &FieldPath, ignored: &[FieldPath]) -> bool {
    ignored.iter().any(|i| path.starts_with(i))
}

/// `a.b.c` as keys; `None` for an empty segment or a list index, which
/// cannot be ignored on its own (list items have no stable identity).
fn parse_keys(text: &str) -> Option<Vec<&str>> {
    let keys: Vec<&str> = text.split('.').collect();
    keys.iter()
        .all(|k| !k.is_empty() && !k.contains(['[', ']']))
        .then_some(keys)
}

/// A violation for every `lifecycle.ignoreChanges` entry of `value` (a
/// resource of `kind`, files' form) that names no field of its kind;
/// `wording` says which entries are sensitive (named, never quoted).
pub fn check_ignore_changes(kind: Kind, value: &Value, wording: &Wording<'_>) -> Vec<Violation> {
    let Some(entries) = value.pointer("/lifecycle/ignoreChanges").and_then(Value::as_array) else {
        return Vec::new();
    };
    let schemas = schemas();
    let variant = variant_tag(kind)
        .and_then(|tag| value.get(tag)?.as_str())
        .unwrap_or_default();
    let root = schemas.variant(kind, variant);
    let mut violations = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(text) = entry.as_str() else { continue };
        let at = FieldPath::root().key("lifecycle").key("ignoreChanges").index(i);
        if let Some(problem) = unknown_path(schemas, root, text) {
            violations.push(match wording.hidden(&at) {
                // Which key is unknown, and what it is like, would tell.
                Some(hidden) => Violation::new(
                    at,
                    format!("{} is not a field path of this resource", hidden.describe()),
                ),
                None => problem.into_violation(at, text),
            });
        }
    }
    violations
}

enum Problem {
    Malformed,
    Unknown { key: String, suggestion: Option<String> },
    MonformOnly(String),
}

impl Problem {
    fn into_violation(self, at: FieldPath, text: &str) -> Violation {
        match self {
            Problem::Malformed => Violation::new(
                at,
                format!("`{text}` is not a field path: write keys separated by dots, without list indexes"),
            )
            .with_help("ignore a whole list (e.g. `request.headers`), not one of its items"),
            Problem::Unknown { key, suggestion } => {
                let violation = Violation::new(at, format!("`{text}` names no field: `{key}` is unknown here"));
                match suggestion {
                    Some(s) => violation.with_help(format!("did you mean `{s}`?")),
                    None => violation,
                }
            }
            Problem::MonformOnly(key) => Violation::new(
                at,
                format!("`{key}` is a monform setting, never sent to the service: it cannot drift"),
            ),
        }
    }
}

/// What is wrong with `text` as a path in `root`'s schema, if anything.
fn unknown_path(schemas: &Schemas, root: &Value, text: &str) -> Option<Problem> {
    let Some(keys) = parse_keys(text) else {
        return Some(Problem::Malformed);
    };
    let mut schema = root;
    for (depth, key) in keys.iter().enumerate() {
        let properties = properties(schemas, schema);
        let Some(property) = properties.iter().find(|(name, _)| name == key).map(|(_, p)| *p) else {
            let names = properties.iter().map(|(n, _)| n.as_str()).filter(|n| *n != "lifecycle");
            let prefix = keys[..depth].join(".");
            let suggestion = suggest(key, names).map(|s| {
                if prefix.is_empty() {
                    s.to_owned()
                } else {
                    format!("{prefix}.{s}")
                }
            });
            return Some(Problem::Unknown {
                key: (*key).to_owned(),
                suggestion,
            });
        };
        if property.get("x-meta").is_some() {
            return Some(Problem::MonformOnly((*key).to_owned()));
        }
        schema = property;
    }
    None
}

/// The properties of an object schema, through `$ref`s and the branches
/// of `anyOf` / `oneOf` (an optional field is `anyOf: [T, null]`).
fn properties<'s>(schemas: &'s Schemas, schema: &'s Value) -> Vec<(&'s String, &'s Value)> {
    let mut found = Vec::new();
    let mut pending = vec![(schema, 0)];
    while let Some((schema, depth)) = pending.pop() {
        if depth > 8 {
            continue;
        }
        let schema = schemas.resolve(schema);
        if let Some(map) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in map {
                if !found.iter().any(|(n, _)| *n == name) {
                    found.push((name, property));
                }
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
                pending.push((branch, depth + 1));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(kind: Kind, value: Value) -> Vec<(String, String, Option<String>)> {
        check_ignore_changes(kind, &value, &Wording::new(kind, &value, &[]))
            .into_iter()
            .map(|v| (v.path.to_string(), v.message, v.help))
            .collect()
    }

    #[test]
    fn known_paths_of_the_variant_pass() {
        let check = json!({"checkType": "API", "lifecycle": {"ignoreChanges":
            ["muted", "locations", "request.headers", "alertSettings.reminders.amount", "group"]}});
        assert_eq!(problems(Kind::Check, check), []);
        let channel = json!({"type": "WEBHOOK", "lifecycle": {"ignoreChanges": ["config.url", "sendRecovery"]}});
        assert_eq!(problems(Kind::AlertChannel, channel), []);
    }

    #[test]
    fn unknown_paths_say_where_and_suggest() {
        let check = json!({"checkType": "API", "lifecycle": {"ignoreChanges":
            ["mutd", "request.hedaers", "request.headers[0]", "preventDestroy", "request.zzz"]}});
        let found = problems(Kind::Check, check);
        assert_eq!(found.len(), 5, "{found:?}");
        assert_eq!(found[0].0, "lifecycle.ignoreChanges[0]");
        assert_eq!(found[0].2.as_deref(), Some("did you mean `muted`?"));
        assert_eq!(found[1].2.as_deref(), Some("did you mean `request.headers`?"));
        assert!(found[2].1.contains("without list indexes"), "{}", found[2].1);
        assert!(found[3].1.contains("monform setting"), "{}", found[3].1);
        assert_eq!(found[4].2, None);
    }

    #[test]
    fn a_field_of_another_check_type_is_unknown() {
        // `request.hostname` is an ICMP/TCP field, not an API check's.
        let check = json!({"checkType": "API", "lifecycle": {"ignoreChanges": ["request.hostname"]}});
        assert_eq!(problems(Kind::Check, check).len(), 1);
        let icmp = json!({"checkType": "ICMP", "lifecycle": {"ignoreChanges": ["request.hostname"]}});
        assert_eq!(problems(Kind::Check, icmp), []);
    }

    #[test]
    fn ignored_paths_cover_what_lies_below() {
        let lifecycle = of(&json!({"lifecycle": {"ignoreChanges": ["request.headers", "muted"], "drift": "ignore"}}));
        let ignored = lifecycle.ignored_paths();
        assert!(is_ignored(&FieldPath::parse("request.headers[1].value"), &ignored));
        assert!(is_ignored(&FieldPath::parse("muted"), &ignored));
        assert!(!is_ignored(&FieldPath::parse("request.url"), &ignored));
        assert_eq!(lifecycle.drift, Some(crate::resources::common::DriftPolicy::Ignore));
    }
}
