//! Conflicts (issue 45): a field the files changed since the last apply
//! that the service changed too. Applying overwrites the service's change,
//! so the plan says so with the three values (applied, service, files).
//!
//! The service changed a field when its value no longer matches the print
//! the state recorded at the last apply. The object's version is asked
//! first: an object the service has not touched since (the same
//! `updated_at`, to the second) has no conflict, whatever form its values
//! take, so a conflict is only ever claimed for an object someone edited.

use monform_model::sensitive::{MASK_CHANGED, redact_paths};
use monform_model::{FieldPath, Kind};
use serde_json::Value;

use crate::forms::{ActualView, field_print, literal_value, lookup, printed_value, same_print};
use crate::plan::{Conflict, FieldChange};
use crate::state::{Fingerprints, ResourceState, State};

/// The prints of `prints` at `path` or under it (`path.x`, `path[0]`).
pub(super) fn under<'p>(prints: &'p Fingerprints, path: &'p str) -> impl Iterator<Item = (&'p str, &'p str)> {
    prints.iter().filter(move |(key, _)| {
        key.strip_prefix(path)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// One object as the service holds it, and what the state recorded of it.
pub(super) struct Service<'a> {
    pub actual: &'a ActualView<'a>,
    /// The field prints recorded at the last apply.
    pub applied: &'a Fingerprints,
    /// The object's `updated_at` recorded at the last apply.
    pub recorded: Option<&'a str>,
    pub state: &'a State,
    /// The state's key of the object (its address).
    pub address: &'a str,
    /// The files' sensitive paths: the prints were taken with them masked.
    pub sensitive: &'a [FieldPath],
    pub kind: Kind,
    /// The files' value of the object (managed form).
    pub desired: &'a Value,
}

impl Service<'_> {
    /// The conflict of a field the files changed, when the service changed
    /// it too. `field` is the plan's change of it (masked).
    pub fn conflict(&self, field: &FieldChange) -> Option<Conflict> {
        if self.untouched() {
            return None;
        }
        let prints: Vec<(&str, &str)> = under(self.applied, &field.path).collect();
        // Not managed at the last apply: nothing monform applied there to
        // have been changed.
        if prints.is_empty() {
            return None;
        }
        let changed = prints.iter().any(|(path, print)| {
            let path = FieldPath::parse(path);
            !self.holds(&path, print)
        });
        if !changed {
            return None;
        }
        let applied = match prints[..] {
            [(path, print)] if path == field.path => printed_value(print),
            _ => None,
        };
        let files = field.after.clone().unwrap_or(Value::Null);
        Some(Conflict {
            applied,
            service: field.before.clone(),
            files_default: files.is_null() || self.is_default(&field.path, &files),
            files,
        })
    }

    /// Whether `files` is what the model gives the field at `path` when the
    /// files leave it out (`maxResponseTime` taken out: 20000). Asked only
    /// of a conflict, so the object is parsed again only then.
    fn is_default(&self, path: &str, files: &Value) -> bool {
        let path = FieldPath::parse(path);
        let Some((monform_model::Segment::Key(name), parent)) = path.segments().split_last() else {
            return false;
        };
        let mut without = self.desired.clone();
        let removed = lookup_mut(&mut without, &FieldPath(parent.to_vec()))
            .and_then(Value::as_object_mut)
            .and_then(|object| object.remove(name));
        if removed.is_none() {
            return false;
        }
        monform_model::Resource::from_json(self.kind, without)
            .ok()
            .map(|resource| resource.to_json())
            .is_some_and(|json| lookup(&json, &path) == Some(files))
    }

    /// Whether the object's version says nobody changed it since the last
    /// apply. A date without a time (some kinds' `updated_at`) says nothing
    /// about an edit made the same day.
    fn untouched(&self) -> bool {
        match (self.recorded, self.actual.version()) {
            (Some(recorded), Some(now)) => recorded == now && now.contains('T'),
            _ => false,
        }
    }

    /// Whether the service still holds at `path` what the state's `print`
    /// recorded as applied there.
    fn holds(&self, path: &FieldPath, print: &str) -> bool {
        let value = self.at(path).unwrap_or(&Value::Null);
        if let Some(applied) = literal_value(print) {
            return same_scalar(&applied, value);
        }
        let held = field_print(self.state, &redact_paths(value, path, self.sensitive));
        if same_print(self.state, &held, print) {
            return true;
        }
        // The service's own form of what was written (`normal.rs`): what
        // verification saw it hold after the apply.
        self.state
            .resources
            .get(self.address)
            .and_then(|entry| entry.normal.get(&path.to_string()))
            .and_then(|record| record.split_once(':'))
            .is_some_and(|(_, normal)| *normal == self.state.fingerprint(value))
    }

    /// The service's value at `path`, in the files' form.
    fn at(&self, path: &FieldPath) -> Option<&Value> {
        let (first, rest) = path.segments().split_first()?;
        let monform_model::Segment::Key(name) = first else {
            return None;
        };
        lookup(self.actual.get(name)?, &FieldPath(rest.to_vec()))
    }
}

/// The secrets of one object, for those the service never returns (a
/// secret variable's value): a plan cannot compare them, but the object's
/// version moving past the one applied, with no other field changed in the
/// service, says one was set outside monform (rotated in the web UI).
pub(super) struct Secrets<'a> {
    pub sensitive: &'a [FieldPath],
    pub desired: &'a Value,
    pub actual: &'a ActualView<'a>,
    pub recorded: Option<&'a ResourceState>,
    pub state: &'a State,
}

impl Secrets<'_> {
    /// Marks each unreadable secret drift ("changed in the service; value
    /// not readable"), or a conflict when the files changed it too (its
    /// values as fingerprints). Called only when the version moved and no
    /// readable field explains it.
    pub fn rotated(&self, fields: &mut Vec<FieldChange>) {
        for path in self.sensitive {
            let Some(value) = lookup(self.desired, path) else {
                continue;
            };
            if self.held(path).is_some_and(|v| !v.is_null()) {
                continue;
            }
            let key = path.to_string();
            match fields.iter_mut().find(|f| f.sensitive && f.path == key) {
                // Set in the files too: both moved.
                Some(field) => {
                    let applied = self.recorded.and_then(|r| r.secrets.get(&key));
                    field.conflict = Some(Conflict {
                        applied: applied.map(|print| Conflict::secret(print)),
                        service: None,
                        files: Conflict::secret(&self.state.fingerprint(value)),
                        files_default: false,
                    });
                }
                None => fields.push(FieldChange {
                    path: key,
                    before: None,
                    after: None,
                    sensitive: true,
                    drift: true,
                    known_after_apply: false,
                    cleared: false,
                    conflict: None,
                }),
            }
        }
    }
}

impl Secrets<'_> {
    /// Lists whose items differ only inside what is masked (a credential
    /// header set in the web UI shows `(sensitive)` on both sides): the
    /// items whose secret the service changed since the last apply (by the
    /// state's fingerprint of it) show [`MASK_CHANGED`] as the service's, so
    /// the changed item is the one shown, by name. A list whose only
    /// change is a secret the files changed is left to that secret's own
    /// field (returns false: drop it).
    pub fn changed_items(&self, field: &mut FieldChange, secret_fields: &[String]) -> bool {
        let Some(mut before) = field.before.clone().filter(Value::is_array) else {
            return true;
        };
        let base = FieldPath::parse(&field.path);
        let mut changed = Vec::new();
        let mut all_recorded = true;
        for path in self.sensitive.iter().filter(|p| p.starts_with(&base) && **p != base) {
            let key = path.to_string();
            let Some(recorded) = self.recorded.and_then(|r| r.secrets.get(&key)) else {
                all_recorded = false;
                continue;
            };
            if self.held(path).map(|v| self.state.fingerprint(v)).as_ref() != Some(recorded) {
                changed.push(key);
                let inner = FieldPath(path.segments()[base.segments().len()..].to_vec());
                if let Some(slot) = lookup_mut(&mut before, &inner) {
                    *slot = Value::String(MASK_CHANGED.to_owned());
                }
            }
        }
        if changed.is_empty() {
            // Nothing the service changed: the files' secret edit (its own
            // field), or a state too old to tell (shown as before).
            return !all_recorded;
        }
        field.before = Some(before);
        if changed.iter().any(|c| secret_fields.contains(c)) {
            field.drift = false;
            field.conflict = Some(Conflict {
                applied: None,
                service: field.before.clone(),
                files: field.after.clone().unwrap_or(Value::Null),
                files_default: false,
            });
        } else {
            field.drift = true;
        }
        true
    }

    /// The service's value at `path`, in the files' form.
    fn held(&self, path: &FieldPath) -> Option<&Value> {
        match path.segments().split_first() {
            Some((monform_model::Segment::Key(name), rest)) => {
                self.actual.get(name).and_then(|v| lookup(v, &FieldPath(rest.to_vec())))
            }
            _ => None,
        }
    }
}

fn lookup_mut<'v>(value: &'v mut Value, path: &FieldPath) -> Option<&'v mut Value> {
    let mut current = value;
    for segment in path.segments() {
        current = match segment {
            monform_model::Segment::Key(k) => current.get_mut(k)?,
            monform_model::Segment::Index(i) => current.get_mut(*i)?,
        };
    }
    Some(current)
}

/// A number or boolean compared as the differ does (10 and 10.0 are one).
fn same_scalar(applied: &Value, held: &Value) -> bool {
    match (applied, held) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forms::{field_fingerprints, printed_value};
    use monform_model::Kind;
    use serde_json::json;

    #[test]
    fn numbers_booleans_and_plain_text_are_recorded_as_themselves() {
        let state = State::new("p");
        let prints = field_fingerprints(
            Kind::Check,
            &json!({"checkType": "API", "maxResponseTime": 5000, "activated": true, "name": "Login"}),
            &[],
            &state,
        );
        assert_eq!(prints.get("maxResponseTime"), Some("=5000       "));
        assert_eq!(
            printed_value(prints.get("maxResponseTime").unwrap_or_default()),
            Some(json!(5000))
        );
        assert_eq!(
            printed_value(prints.get("activated").unwrap_or_default()),
            Some(json!(true))
        );
        let name = prints.get("name").unwrap_or_default();
        assert_eq!(&name[12..], "\"Login\"", "the text after its fingerprint");
        assert_eq!(printed_value(name), Some(json!("Login")));
        // A print from before text was kept is the same print.
        assert!(same_print(&state, name, &name[..12]));
    }

    /// What the state must not hold as text: secrets (by the model, and
    /// text from `${env:}`), a URL with a credential in its query, and long
    /// text; each is a fingerprint alone.
    #[test]
    fn secrets_credential_urls_and_long_text_are_fingerprints_alone() {
        let state = State::new("p");
        let check = json!({"checkType": "API", "name": "Login ${env}", "description": "x".repeat(257),
            "request": {"method": "GET", "url": "https://api.test/login?apikey=MARKER",
                "basicAuth": {"username": "u", "password": "MARKER"}}});
        let prints = field_fingerprints(Kind::Check, &check, &[FieldPath::parse("name")], &state);
        let text = format!("{prints:?}");
        assert!(!text.contains("MARKER") && !text.contains("Login"), "{text}");
        for path in ["request.url", "description"] {
            assert_eq!(prints.get(path).map(str::len), Some(12), "{path}: {text}");
        }
        assert_eq!(prints.get("name"), None);
        assert_eq!(prints.get("request.basicAuth.password"), None);
        assert_eq!(
            printed_value(prints.get("request.method").unwrap_or_default()),
            Some(json!("GET"))
        );
    }

    #[test]
    fn a_recorded_value_matches_the_fingerprint_an_older_state_kept() {
        let state = State::new("p");
        let mut old = state.fingerprint(&json!(5000));
        old.truncate(12);
        assert!(same_print(&state, "=5000       ", &old));
        assert!(same_print(&state, &old, "=5000       "));
        assert!(!same_print(&state, "=7000       ", &old));
    }
}
