//! The plan's rename suggestions (issue 20, item 3), kept apart from the
//! rest of the plan's rendering: one line per suggestion, the same words in
//! every format.

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

/// The block a terminal plan shows before its summary, or nothing.
pub fn human(plan: &Plan) -> String {
    plan.suggested_moves
        .iter()
        .map(|s| format!("Suggestion: {} ({}).\n", sentence(s), s.reason))
        .collect()
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

/// `suggestedMoves` of the plan's JSON.
pub fn json(plan: &Plan) -> Value {
    plan.suggested_moves
        .iter()
        .map(|s| json!({"from": s.from.to_string(), "to": s.to.to_string(), "reason": s.reason}))
        .collect()
}
