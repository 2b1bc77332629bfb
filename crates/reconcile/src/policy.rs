//! What the reconciler does with each change of a plan (issue 30): drift
//! (the service changed, the files did not) follows the resource's
//! `lifecycle.drift` policy, or `[reconcile] drift`; a change in the files
//! is applied when `apply-changes` is true, else reported. A change that
//! is both (a drifted field and an edited one on one object) is applied
//! only when both parts would be: an update sends the whole object, so it
//! would also revert the drift a `notify` policy wants a person to see.

use monform_config::{Desired, Reconcile};
use monform_engine::{Action, Change, Plan};
use monform_model::{Address, DriftPolicy};
use serde::Serialize;

/// What a change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// Changed (or deleted) outside monform; the files did not change.
    Drift,
    /// Changed in the files.
    Files,
    /// Both.
    Both,
}

/// What the reconciler does about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    Apply,
    Report,
    Ignore,
}

/// One change of the plan, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub address: Address,
    pub action: Action,
    pub origin: Origin,
    pub policy: DriftPolicy,
    pub verdict: Verdict,
}

/// The origin of a change: its reason and its fields' drift marks.
pub fn origin(change: &Change) -> Origin {
    let drifted = change.reason.is_drift() || change.fields.iter().any(|f| f.drift);
    let edited = !change.reason.is_drift() || change.fields.iter().any(|f| !f.drift);
    match (drifted, edited) {
        (true, true) => Origin::Both,
        (true, false) => Origin::Drift,
        _ => Origin::Files,
    }
}

/// Every change that does something, judged.
pub fn decide(plan: &Plan, desired: &Desired, settings: &Reconcile) -> Vec<Decision> {
    plan.ordered()
        .into_iter()
        .map(|change| {
            let policy = desired
                .resources
                .get(&change.address)
                .and_then(|r| r.resource.lifecycle().drift)
                .unwrap_or(settings.drift);
            let origin = origin(change);
            let drift_verdict = match policy {
                DriftPolicy::Revert => Verdict::Apply,
                // Codified on a branch, then reported with its name.
                DriftPolicy::Notify | DriftPolicy::Codify => Verdict::Report,
                DriftPolicy::Ignore => Verdict::Ignore,
            };
            let files_verdict = match settings.apply_changes {
                true => Verdict::Apply,
                false => Verdict::Report,
            };
            let verdict = match origin {
                Origin::Drift => drift_verdict,
                Origin::Files => files_verdict,
                Origin::Both if drift_verdict != Verdict::Report && files_verdict == Verdict::Apply => Verdict::Apply,
                Origin::Both => Verdict::Report,
            };
            Decision {
                address: change.address.clone(),
                action: change.action,
                origin,
                policy,
                verdict,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_engine::{FieldChange, Reason};
    use monform_model::Kind;

    fn field(path: &str, drift: bool) -> FieldChange {
        FieldChange {
            path: path.into(),
            before: Some(1.into()),
            after: Some(2.into()),
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

    fn plan(changes: Vec<Change>) -> Plan {
        Plan {
            project: "p".into(),
            changes,
            ..Plan::default()
        }
    }

    #[test]
    fn drift_follows_the_default_policy_and_file_changes_apply_changes() {
        let plan = plan(vec![
            change("a", Reason::Drift, vec![field("muted", true)]),
            change("b", Reason::ConfigChanged, vec![field("frequency", false)]),
            change(
                "c",
                Reason::Drift,
                vec![field("muted", true), field("frequency", false)],
            ),
        ]);
        let desired = Desired::default();
        let verdicts = |settings: &Reconcile| -> Vec<(Origin, Verdict)> {
            decide(&plan, &desired, settings)
                .iter()
                .map(|d| (d.origin, d.verdict))
                .collect()
        };
        let notify = Reconcile::default();
        assert_eq!(
            verdicts(&notify),
            [
                (Origin::Drift, Verdict::Report),
                (Origin::Files, Verdict::Report),
                (Origin::Both, Verdict::Report)
            ]
        );
        let revert_and_apply = Reconcile {
            drift: DriftPolicy::Revert,
            apply_changes: true,
            ..Reconcile::default()
        };
        assert_eq!(
            verdicts(&revert_and_apply),
            [
                (Origin::Drift, Verdict::Apply),
                (Origin::Files, Verdict::Apply),
                (Origin::Both, Verdict::Apply)
            ]
        );
        let ignore = Reconcile {
            drift: DriftPolicy::Ignore,
            ..Reconcile::default()
        };
        assert_eq!(verdicts(&ignore)[0], (Origin::Drift, Verdict::Ignore));
        // Notify with apply-changes: a mixed change waits for a person.
        let notify_apply = Reconcile {
            apply_changes: true,
            ..Reconcile::default()
        };
        assert_eq!(verdicts(&notify_apply)[2], (Origin::Both, Verdict::Report));
        // Codify: never applied; reported (with the branch it is written to).
        let codify = Reconcile {
            drift: DriftPolicy::Codify,
            apply_changes: true,
            ..Reconcile::default()
        };
        assert_eq!(verdicts(&codify)[0], (Origin::Drift, Verdict::Report));
        assert_eq!(verdicts(&codify)[2], (Origin::Both, Verdict::Report));
    }
}
