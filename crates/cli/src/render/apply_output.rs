//! `apply --format json` and `--format markdown` (issue 32, item 7): what
//! an apply did, for pipelines and pull requests. JSON is one object per
//! line (Terraform's `apply -json`): the plan, each event as it happens,
//! what verification found, and last a result object. Nothing here holds a
//! secret: events carry addresses, actions and the service's errors; the
//! plan's values are not repeated.

use std::collections::BTreeMap;

use monform_engine::{Action, Event, Plan, Report, State, Summary, Verification};
use monform_model::Address;

/// One line of `apply --format json` (and `destroy --format json`): what
/// it is by `type`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[schemars(rename = "ApplyLine")]
pub enum Line {
    /// The first line: what is about to be applied.
    Plan { summary: Summary, changes: Vec<Planned> },
    /// A change began.
    Started { address: String, action: Action },
    /// A change is done (and recorded in the state).
    Done { address: String, action: Action },
    /// A change failed: the service's error.
    Failed {
        address: String,
        action: Action,
        error: String,
    },
    /// A change not attempted: what it waited on failed.
    Skipped {
        address: String,
        action: Action,
        because: String,
    },
    /// The service did not keep what was sent for these fields.
    NotKept { address: String, fields: Vec<String> },
    /// A create's outcome was unknown; the object was found and adopted.
    Adopted { address: String },
    /// The ownership tag was rewritten (`from`: the logical id it named).
    Moved { address: String, from: Option<String> },
    /// What reading an object back found; without `address`, reading back failed (`error`).
    Verified {
        #[serde(skip_serializing_if = "Option::is_none")]
        address: Option<String>,
        ok: bool,
        /// What differs from what was written.
        #[serde(skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The last line, also when the apply never started (`error`).
    Result {
        /// Every change done.
        complete: bool,
        /// Why the apply did not start (refused, or the files or the service failed).
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        counts: Counts,
        resources: Vec<Outcome>,
        /// The code the process exits with (the exit-code table's).
        exit_code: u8,
    },
}

impl std::fmt::Display for Line {
    /// One line of compact JSON.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| std::fmt::Error)?)
    }
}

/// A change of the plan line.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    address: String,
    action: Action,
    remote_id: Option<String>,
}

/// How many changes were done, failed, skipped.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Counts {
    done: usize,
    failed: usize,
    skipped: usize,
}

/// An address the plan touched: its outcome and remote id.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    address: String,
    action: Action,
    /// `done`, `failed`, `skipped` or `not started`.
    outcome: &'static str,
    remote_id: Option<String>,
}

/// The first line: what is about to be applied.
pub fn plan_line(plan: &Plan) -> Line {
    let changes = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Noop)
        .map(|c| Planned {
            address: c.address.to_string(),
            action: c.action,
            remote_id: c.remote_id.clone(),
        })
        .collect();
    Line::Plan {
        summary: plan.summary(),
        changes,
    }
}

/// One event as a line.
pub fn event_line(event: &Event) -> Line {
    match event {
        Event::Started { address, action } => Line::Started {
            address: address.to_string(),
            action: *action,
        },
        Event::Done { address, action } => Line::Done {
            address: address.to_string(),
            action: *action,
        },
        Event::Failed { address, action, error } => Line::Failed {
            address: address.to_string(),
            action: *action,
            error: error.clone(),
        },
        Event::Skipped {
            address,
            action,
            because,
        } => Line::Skipped {
            address: address.to_string(),
            action: *action,
            because: because.clone(),
        },
        Event::NotKept { address, fields } => Line::NotKept {
            address: address.to_string(),
            fields: fields.clone(),
        },
        Event::Adopted { address } => Line::Adopted {
            address: address.to_string(),
        },
        Event::Moved { address, from } => Line::Moved {
            address: address.to_string(),
            from: from.clone(),
        },
    }
}

/// What reading back found, one line per object compared.
pub fn verified_lines(report: &Report, verification: &Result<Verification, monform_api::Error>) -> Vec<Line> {
    let verified = |address: &Address, problem: Option<&String>| Line::Verified {
        address: Some(address.to_string()),
        ok: problem.is_none(),
        problem: problem.cloned(),
        error: None,
    };
    match verification {
        Ok(v) => report
            .done
            .iter()
            .filter(|(_, action)| !matches!(action, Action::Delete | Action::Forget))
            .map(|(address, _)| verified(address, v.failures.iter().find(|(a, _)| a == address).map(|(_, p)| p)))
            .collect(),
        Err(error) => vec![Line::Verified {
            address: None,
            ok: false,
            problem: None,
            error: Some(error.to_string()),
        }],
    }
}

/// Each address the plan touched: its outcome and, where the service has
/// it, its remote id (from the state the apply wrote).
fn outcomes(
    plan: &Plan,
    report: &Report,
    state: Option<&State>,
) -> BTreeMap<String, (Action, &'static str, Option<String>)> {
    let mut out = BTreeMap::new();
    for change in plan.changes.iter().filter(|c| c.action != Action::Noop) {
        out.insert(
            change.address.to_string(),
            (change.action, "not started", change.remote_id.clone()),
        );
    }
    let mut set = |address: String, action: Action, outcome: &'static str| {
        let entry = out.entry(address).or_insert((action, outcome, None));
        entry.1 = outcome;
    };
    for (address, action) in &report.done {
        set(address.to_string(), *action, "done");
    }
    for (address, action, _) in &report.failed {
        set(address.to_string(), *action, "failed");
    }
    for (address, action, _) in &report.skipped {
        set(address.to_string(), *action, "skipped");
    }
    if let Some(state) = state {
        for (address, (_, _, remote_id)) in out.iter_mut() {
            if let Some(entry) = state.resources.get(address) {
                *remote_id = Some(entry.remote_id.clone());
            }
        }
    }
    out
}

/// The last line: counts, each address with its outcome and remote id,
/// and the exit code the process ends with.
pub fn result_line(plan: &Plan, report: &Report, state: Option<&State>, complete: bool, exit_code: u8) -> Line {
    let resources = outcomes(plan, report, state)
        .into_iter()
        .map(|(address, (action, outcome, remote_id))| Outcome {
            address,
            action,
            outcome,
            remote_id,
        })
        .collect();
    Line::Result {
        complete,
        error: None,
        counts: Counts {
            done: report.done.len(),
            failed: report.failed.len(),
            skipped: report.skipped.len(),
        },
        resources,
        exit_code,
    }
}

/// The last line when the apply did not start (refused, or the files or
/// the service failed): why, in the words the human output uses.
pub fn refused_line(message: &str) -> Line {
    Line::Result {
        complete: false,
        error: Some(message.to_owned()),
        counts: Counts {
            done: 0,
            failed: 0,
            skipped: 0,
        },
        resources: Vec::new(),
        exit_code: crate::exit::FAILURE,
    }
}

/// A summary for the pull request: what was applied, failed and skipped.
pub fn markdown(plan: &Plan, report: &Report, state: Option<&State>, complete: bool) -> String {
    let mut out = format!(
        "## monform apply: {}\n\n{} done, {} failed, {} skipped.\n",
        if complete { "complete" } else { "incomplete" },
        report.done.len(),
        report.failed.len(),
        report.skipped.len()
    );
    let outcomes = outcomes(plan, report, state);
    if !outcomes.is_empty() {
        out.push_str("\n| address | action | outcome | remote id |\n|---|---|---|---|\n");
        for (address, (action, outcome, remote_id)) in &outcomes {
            out.push_str(&format!(
                "| `{address}` | {} | {outcome} | {} |\n",
                format!("{action:?}").to_lowercase(),
                remote_id.as_deref().map(|id| format!("`{id}`")).unwrap_or_default()
            ));
        }
    }
    for (address, _, error) in &report.failed {
        out.push_str(&format!("\n- **failed** `{address}`: {}", error.replace('\n', " ")));
    }
    for (address, _, because) in &report.skipped {
        out.push_str(&format!("\n- **skipped** `{address}`: {}", because.replace('\n', " ")));
    }
    if !report.failed.is_empty() || !report.skipped.is_empty() {
        out.push('\n');
    }
    out
}
