//! Guards before anything is deleted (design decision 7): `preventDestroy`
//! and the mass-delete threshold; and before a change made outside monform
//! is overwritten by a file edit of the same field (a conflict, issue 45).

use monform_config::Desired;
use monform_model::{Address, DriftPolicy};

use crate::plan::{Action, Plan};
use crate::state::State;

/// More than this many deletes...
pub const MASS_DELETE_COUNT: usize = 10;
/// ...that are also more than this share of the project need `--allow-mass-delete`.
pub const MASS_DELETE_SHARE: f64 = 0.30;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SafetyError {
    #[error("{0} has preventDestroy: true and would be {1}")]
    PreventDestroy(String, &'static str),
    #[error(
        "this would delete {deletes} of the project's {total} objects; pass --allow-mass-delete if that is intended"
    )]
    MassDelete { deletes: usize, total: usize },
}

/// Every reason the plan may not run as is.
pub fn check(plan: &Plan, desired: &Desired, state: &State, allow_mass_delete: bool) -> Vec<SafetyError> {
    let mut problems = Vec::new();
    for change in &plan.changes {
        let verb = match change.action {
            Action::Delete => "deleted",
            Action::Replace => "replaced (deleted and created again)",
            _ => continue,
        };
        let in_files = desired
            .resources
            .get(&change.address)
            .is_some_and(|r| r.resource.prevent_destroy());
        let in_state = state
            .resources
            .get(&change.address.to_string())
            .is_some_and(|r| r.prevent_destroy);
        if in_files || in_state {
            problems.push(SafetyError::PreventDestroy(change.address.to_string(), verb));
        }
    }
    let deletes = plan
        .changes
        .iter()
        .filter(|c| matches!(c.action, Action::Delete | Action::Replace))
        .count();
    let total = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Create)
        .count()
        .max(1);
    if !allow_mass_delete && deletes > MASS_DELETE_COUNT && deletes as f64 > MASS_DELETE_SHARE * total as f64 {
        problems.push(SafetyError::MassDelete { deletes, total });
    }
    problems
}

/// A field a plan overwrites although the service changed it since the
/// last apply (a conflict the files changed too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overwrite {
    pub address: Address,
    pub path: String,
}

impl std::fmt::Display for Overwrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.address, self.path)
    }
}

/// The conflicts an apply may not overwrite without a person's yes (or
/// `--allow-conflicts`): every conflict but those of resources whose
/// `lifecycle.drift` is `revert`, which says the files always win. The one
/// rule every front end (the CLI, the reconciler) applies by.
pub fn conflicts_to_approve(plan: &Plan, desired: &Desired) -> Vec<Overwrite> {
    plan.changes
        .iter()
        .filter(|change| {
            desired
                .resources
                .get(&change.address)
                .is_none_or(|r| r.resource.lifecycle().drift != Some(DriftPolicy::Revert))
        })
        .flat_map(|change| {
            change
                .fields
                .iter()
                .filter(|f| f.conflict.is_some())
                .map(|f| Overwrite {
                    address: change.address.clone(),
                    path: f.path.clone(),
                })
        })
        .collect()
}
