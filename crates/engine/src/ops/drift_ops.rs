//! What changed outside monform, read off a plan: for `monform codify`
//! (issue 33) and anything else that wants the service's side of drift
//! without a second fetch and diff.

use monform_model::Address;
use monform_model::sensitive::holds_mask;
use serde_json::Value;

use crate::plan::{Conflict, Plan};

/// A resource changed (or deleted) in the service while its files still
/// say what was last applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Drifted {
    pub address: Address,
    /// Deleted in the service: there is no value to take.
    pub deleted: bool,
    pub fields: Vec<DriftedField>,
}

/// One drifted field, as the plan names it (`request.url`, `tags`: objects
/// opened up, lists whole).
#[derive(Debug, Clone, PartialEq)]
pub struct DriftedField {
    pub path: String,
    /// The service's value, in the files' form (references as logical
    /// ids); `None` when it is or holds a secret, which never leaves the plan.
    pub service: Option<Value>,
    /// Changed in the files too since the last apply (issue 45): what was
    /// applied and what the files say, masked as the plan masks them. The
    /// files' change is theirs to keep unless told to take the service's.
    pub conflict: Option<Conflict>,
}

/// The drift of `plan`: every change with a field changed outside monform,
/// with only those fields, and the fields changed in both places
/// (conflicts, marked). Secrets are `None`, never their masked text.
pub fn drifted(plan: &Plan) -> Vec<Drifted> {
    plan.changes
        .iter()
        .filter_map(|change| {
            if change.reason == crate::plan::Reason::DeletedRemotely {
                return Some(Drifted {
                    address: change.address.clone(),
                    deleted: true,
                    fields: Vec::new(),
                });
            }
            let fields: Vec<DriftedField> = change
                .fields
                .iter()
                // A field the files took out is theirs to clear, unless the
                // service changed it too (a conflict).
                .filter(|f| (f.drift && !f.cleared) || f.conflict.is_some())
                .map(|f| DriftedField {
                    path: f.path.clone(),
                    service: f.before.clone().filter(|v| !f.sensitive && !holds_mask(v)),
                    conflict: f.conflict.clone(),
                })
                .collect();
            (!fields.is_empty()).then(|| Drifted {
                address: change.address.clone(),
                deleted: false,
                fields,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Action, Change, FieldChange, Reason};
    use monform_model::Kind;
    use monform_model::sensitive::MASK;
    use serde_json::json;

    fn field(path: &str, before: Value, drift: bool) -> FieldChange {
        FieldChange {
            path: path.into(),
            before: Some(before),
            after: Some(json!("files")),
            sensitive: false,
            drift,
            known_after_apply: false,
            cleared: false,
            conflict: None,
        }
    }

    fn change(id: &str, reason: Reason, fields: Vec<FieldChange>) -> Change {
        Change {
            address: Address::new(Kind::Check, id),
            action: Action::Update,
            remote_id: Some("1".into()),
            from: None,
            reason,
            fields,
            unchanged: 0,
            remote_version: None,
            deferred: None,
        }
    }

    #[test]
    fn keeps_drifted_fields_only_and_never_a_masked_value() {
        let plan = Plan {
            changes: vec![
                change(
                    "web",
                    Reason::Drift,
                    vec![
                        field("frequency", json!(5), true),
                        field("name", json!("Edited"), false),
                        field("request.headers", json!([{"key": "Cookie", "value": MASK}]), true),
                    ],
                ),
                change("files", Reason::ConfigChanged, vec![field("name", json!("x"), false)]),
            ],
            ..Plan::default()
        };
        let drifted = drifted(&plan);
        assert_eq!(drifted.len(), 1);
        assert_eq!(drifted[0].address.to_string(), "checks.web");
        assert_eq!(
            drifted[0].fields,
            vec![
                DriftedField {
                    path: "frequency".into(),
                    service: Some(json!(5)),
                    conflict: None,
                },
                DriftedField {
                    path: "request.headers".into(),
                    service: None,
                    conflict: None,
                },
            ]
        );
    }
}
