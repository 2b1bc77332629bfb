//! `apply --format json` and `--format markdown` (issue 32, item 7): what
//! an apply did, for pipelines and pull requests. JSON is one object per
//! line (Terraform's `apply -json`): the plan, each event as it happens,
//! what verification found, and last a result object. Nothing here holds a
//! secret: events carry addresses, actions and the service's errors; the
//! plan's values are not repeated.

use std::collections::BTreeMap;

use monform_engine::{Action, Event, Plan, Report, State, Verification};
use serde_json::{Value, json};

/// The first line: what is about to be applied.
pub fn plan_line(plan: &Plan) -> Value {
    let changes: Vec<Value> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Noop)
        .map(|c| json!({"address": c.address.to_string(), "action": c.action, "remoteId": c.remote_id}))
        .collect();
    json!({"type": "plan", "summary": plan.summary(), "changes": changes})
}

/// One event as a line.
pub fn event_line(event: &Event) -> Value {
    match event {
        Event::Started { address, action } => {
            json!({"type": "started", "address": address.to_string(), "action": action})
        }
        Event::Done { address, action } => json!({"type": "done", "address": address.to_string(), "action": action}),
        Event::Failed { address, action, error } => {
            json!({"type": "failed", "address": address.to_string(), "action": action, "error": error})
        }
        Event::Skipped {
            address,
            action,
            because,
        } => json!({"type": "skipped", "address": address.to_string(), "action": action, "because": because}),
        Event::NotKept { address, fields } => {
            json!({"type": "notKept", "address": address.to_string(), "fields": fields})
        }
        Event::Adopted { address } => json!({"type": "adopted", "address": address.to_string()}),
        Event::Moved { address, from } => json!({"type": "moved", "address": address.to_string(), "from": from}),
    }
}

/// What reading back found, one line per object compared.
pub fn verified_lines(report: &Report, verification: &Result<Verification, monform_api::Error>) -> Vec<Value> {
    match verification {
        Ok(v) => report
            .done
            .iter()
            .filter(|(_, action)| !matches!(action, Action::Delete | Action::Forget))
            .map(|(address, _)| match v.failures.iter().find(|(a, _)| a == address) {
                Some((_, problem)) => {
                    json!({"type": "verified", "address": address.to_string(), "ok": false, "problem": problem})
                }
                None => json!({"type": "verified", "address": address.to_string(), "ok": true}),
            })
            .collect(),
        Err(error) => vec![json!({"type": "verified", "ok": false, "error": error.to_string()})],
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
pub fn result_line(plan: &Plan, report: &Report, state: Option<&State>, complete: bool, exit_code: u8) -> Value {
    let resources: Vec<Value> = outcomes(plan, report, state)
        .into_iter()
        .map(|(address, (action, outcome, remote_id))| {
            json!({"address": address, "action": action, "outcome": outcome, "remoteId": remote_id})
        })
        .collect();
    json!({
        "type": "result",
        "complete": complete,
        "counts": {"done": report.done.len(), "failed": report.failed.len(), "skipped": report.skipped.len()},
        "resources": resources,
        "exitCode": exit_code,
    })
}

/// The last line when the apply did not start (refused, or the files or
/// the service failed): why, in the words the human output uses.
pub fn refused_line(message: &str) -> Value {
    json!({"type": "result", "complete": false, "error": message, "counts": {"done": 0, "failed": 0, "skipped": 0},
           "resources": [], "exitCode": 1})
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
