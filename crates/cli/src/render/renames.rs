//! The plan's rename suggestions and the results its deletes of checks
//! discard (issue 20, item 3), kept apart from the rest of the plan's
//! rendering: one line each, the same words in every format.

use monform_engine::discards::{Discard, Discarded, RANGE};

use super::budget::thousands;
use monform_engine::{Plan, SuggestedMove};
use monform_model::Kind;
use serde_json::{Value, json};

/// The advice of one suggestion, with backticks for Markdown and terminals alike.
pub fn sentence(suggestion: &SuggestedMove) -> String {
    let SuggestedMove { from, to, .. } = suggestion;
    let keep = if to.kind == Kind::Check {
        "to keep its results"
    } else {
        "to update it in place"
    };
    format!("`{to}` looks like `{from}` renamed: add `moved: [{{ from: {from}, to: {to} }}]` {keep}")
}

/// What the deletes of checks discard, one sentence each.
fn discards(plan: &Plan) -> Vec<String> {
    match &plan.discarded {
        Discarded::Nothing => Vec::new(),
        Discarded::Unknown(error) => vec![format!(
            "the results of the last 30 days the deleted checks discard are unknown (the report failed: {error})"
        )],
        Discarded::Known(lines) => lines
            .iter()
            .map(|Discard { address, report, estimated }| match report {
                None => format!("deleting `{address}` discards no results (none in the last 30 days)"),
                Some(e) => format!(
                    "deleting `{address}` discards about {} result{} of the last 30 days (estimated from its schedule; success {:.2}%, average {:.0} ms, p95 {:.0} ms)",
                    thousands(*estimated),
                    if *estimated == 1 { "" } else { "s" },
                    e.success_ratio.unwrap_or(0.0) * 100.0,
                    e.avg.unwrap_or(0.0),
                    e.p95.unwrap_or(0.0)
                ),
            })
            .collect(),
    }
}

/// The block a terminal plan shows before its summary, or nothing.
pub fn human(plan: &Plan) -> String {
    let suggestions = plan
        .suggested_moves
        .iter()
        .map(|s| format!("Suggestion: {} ({}).\n", sentence(s), s.reason));
    let discards = discards(plan).into_iter().map(|d| format!("Results: {d}.\n"));
    suggestions.chain(discards).collect()
}

/// The Markdown section, or nothing.
pub fn markdown(plan: &Plan) -> String {
    if plan.suggested_moves.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n#### Possible renames\n\n");
    for s in &plan.suggested_moves {
        out.push_str(&format!("- {} ({}).\n", sentence(s), s.reason));
    }
    out
}

/// The Markdown section on discarded results, or nothing.
pub fn markdown_discards(plan: &Plan) -> String {
    let lines = discards(plan);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n#### Results discarded\n\n");
    for line in lines {
        out.push_str(&format!("- {line}.\n"));
    }
    out
}

/// `discardedResults` of the plan's JSON: `None` when it deletes no check.
pub fn json_discards(plan: &Plan) -> Option<Value> {
    match &plan.discarded {
        Discarded::Nothing => None,
        Discarded::Unknown(error) => Some(json!({"range": RANGE, "known": false, "error": error})),
        Discarded::Known(lines) => {
            let checks: Vec<Value> = lines
                .iter()
                .map(
                    |Discard {
                         address,
                         report,
                         estimated,
                     }| {
                        json!({
                            "address": address.to_string(),
                            "hasResults": report.is_some(),
                            "estimatedResults": estimated,
                            "successRatio": report.as_ref().and_then(|e| e.success_ratio),
                            "avg": report.as_ref().and_then(|e| e.avg),
                            "p95": report.as_ref().and_then(|e| e.p95),
                        })
                    },
                )
                .collect();
            Some(json!({"range": RANGE, "known": true, "checks": checks}))
        }
    }
}

/// `suggestedMoves` of the plan's JSON.
pub fn json(plan: &Plan) -> Value {
    plan.suggested_moves
        .iter()
        .map(|s| json!({"from": s.from.to_string(), "to": s.to.to_string(), "reason": s.reason}))
        .collect()
}
