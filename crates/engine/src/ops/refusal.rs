//! Why an operation does not go on: typed, so each front end words it (the
//! CLI as text with hints, JSON for pipelines, a diagnostic in an editor).

use monform_config::Desired;
use monform_config::declare::Import;
use monform_config::source::Span;
use monform_model::Address;

use crate::actual::Actual;
use crate::budget::RunBudget;
use crate::declared::MoveConflict;
use crate::execute::ApplyError;
use crate::lock::LockError;
use crate::safety::SafetyError;
use crate::saved::StalePlan;
use crate::state::StateError;

#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("{0}")]
    State(StateError),
    /// The project declares environments and none is chosen: the bare
    /// project name would be a third ownership scope, with a state of its own.
    #[error("{project} declares environments ({}): choose one", .environments.join(", "))]
    NoEnvironment { project: String, environments: Vec<String> },
    /// The account could not be read.
    #[error("cannot read the account: {0}")]
    Fetch(monform_api::Error),
    #[error("{0}")]
    Lock(LockError),
    /// The files claim objects of other projects (each line one).
    #[error("the files claim objects of other projects")]
    Clashes(Vec<String>),
    /// `moved` or `import` entries that cannot be planned, at their spans.
    #[error("declared entries cannot be planned")]
    Entries {
        problems: Vec<(Span, String)>,
        help: &'static str,
    },
    /// Changes that wait on each other: no order applies them.
    #[error("the changes of {} wait on each other (a dependency cycle)", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Cycle(Vec<Address>),
    /// An apply asked not to read the account (`--refresh=none`).
    #[error(
        "an apply reads what it changes: --refresh=none is for plans only\n\nhint: use --refresh=changed to read only what the files changed"
    )]
    OfflineApply,
    #[error("the saved plan is stale: {0}")]
    Stale(StalePlan),
    /// The project's policies deny the plan (or cannot be evaluated).
    #[error("the plan breaks the project's policies")]
    Policy(super::PolicyOutcome),
    #[error("the plan runs checks {} times a month, over the budget of {}", .0.runs, .0.max)]
    OverBudget(OverBudget),
    /// Changes made outside monform the plan would overwrite (conflicts),
    /// unattended: nobody approved them, no `--allow-conflicts`.
    #[error(
        "the plan overwrites {} made outside monform that the files change too (a conflict): {}\n\nhint: apply in a terminal to be asked, pass --allow-conflicts, set `lifecycle.drift: revert` on the resource, or put the service's value in the files (`monform codify`)",
        if .0.len() == 1 { "a change".to_owned() } else { format!("{} changes", .0.len()) },
        .0.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    Conflicts(Vec<crate::safety::Overwrite>),
    /// Deletes the guards stop: `preventDestroy`, the mass-delete threshold.
    #[error("the plan deletes what the safety guards protect")]
    Unsafe(Vec<SafetyError>),
    /// The apply itself failed (its state could not be written).
    #[error("{0}")]
    Apply(ApplyError),
    /// An address the state has no entry for (`suggestion`: a close one).
    #[error("{address} is not in the state")]
    NotInState {
        address: Address,
        suggestion: Option<String>,
    },
    /// A `state mv` that cannot be made, and why.
    #[error("{0}")]
    InvalidMove(String),
    /// The object of an address could not be read or changed.
    #[error("cannot {doing} {address}: {error}")]
    Object {
        address: Address,
        doing: &'static str,
        error: Box<monform_api::Error>,
    },
    #[error("{0}")]
    Import(super::ImportRefusal),
    /// Checks cannot be tested.
    #[error("{0}")]
    Test(super::TestRefusal),
    /// The figures of `status` cannot be read.
    #[error("{0}")]
    Status(super::StatusRefusal),
    /// `export` or `import --all-unmanaged` cannot go on.
    #[error("{0}")]
    Export(super::ExportRefusal),
    /// `init` cannot start a project.
    #[error("{0}")]
    Init(super::InitRefusal),
    /// `state migrate` from a backend that holds no state (named).
    #[error("there is no state to copy at {0}")]
    NoState(String),
    /// `state migrate` onto a state at the same serial or a newer one.
    #[error(
        "{target} holds a state at serial {target_serial}, not older than the one to copy (serial {serial}): refusing to overwrite it"
    )]
    NewerTarget {
        target: String,
        target_serial: u64,
        serial: u64,
    },
}

/// A plan over `[budget] max-runs-per-month`.
#[derive(Debug, Clone, PartialEq)]
pub struct OverBudget {
    pub runs: u64,
    pub max: u64,
    /// The checks that run most, most first.
    pub top: Vec<(Address, u64)>,
}

impl OverBudget {
    /// The refusal when `runs` is over `max` (no budget: never).
    pub fn of(runs: &RunBudget, max: Option<u64>) -> Option<OverBudget> {
        let max = max.filter(|max| runs.after > *max)?;
        Some(OverBudget {
            runs: runs.after,
            max,
            top: runs.busiest.clone(),
        })
    }
}

pub(super) fn moved_conflicts(conflicts: &[MoveConflict<'_>]) -> Result<(), Refusal> {
    let problems: Vec<(Span, String)> = conflicts
        .iter()
        .map(|(entry, to, remote_id)| {
            (
                entry.span,
                format!(
                    "moved: {to} already has an object (remote id {remote_id}), so {} cannot move there",
                    entry.from
                ),
            )
        })
        .collect();
    entries(problems, "\nremove the entry, or `monform state rm` one of the two")
}

pub(super) fn import_problems(problems: &[(&Import, String)]) -> Result<(), Refusal> {
    let problems = problems
        .iter()
        .map(|(entry, problem)| (entry.span, format!("import of {} as {}: {problem}", entry.id, entry.to)))
        .collect();
    entries(problems, "")
}

fn entries(problems: Vec<(Span, String)>, help: &'static str) -> Result<(), Refusal> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Refusal::Entries { problems, help })
    }
}

/// Objects another project owns are never adopted, changed or deleted:
/// files claiming one (by natural key, or a state entry) stop the plan.
pub(super) fn clashes(project: &str, desired: &Desired, actual: &Actual) -> Result<(), Refusal> {
    use crate::ownership::{RECORD_PREFIX, is_record, record_key};
    let key = record_key(project);
    let mut problems: Vec<String> = actual.clashes.iter().map(ToString::to_string).collect();
    for address in desired.resources.keys() {
        let claimed = actual.clashes.iter().any(|c| &c.address == address);
        if is_record(address.kind, &address.id) && !claimed {
            problems.push(format!(
                "{address}: variables named {RECORD_PREFIX}* are monform's ownership records; rename it"
            ));
        }
    }
    if let Some(other) = actual
        .owners
        .records
        .values()
        .find(|r| r.project != project && record_key(&r.project) == key)
    {
        problems.push(format!(
            "projects `{project}` and `{}` would keep one ownership record ({key}): rename one of them",
            other.project
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Refusal::Clashes(problems))
    }
}
