//! The run budget lines of a plan (issue 20): runs a month before and after,
//! and why a plan over `[budget] max-runs-per-month` fails.

use monform_engine::RunBudget;
use monform_engine::ops::OverBudget;

/// `1234567` as `1,234,567`.
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The line after the plan's summary.
pub fn line(budget: &RunBudget) -> String {
    let delta = budget.after as i128 - budget.before as i128;
    let sign = if delta < 0 { "-" } else { "+" };
    format!(
        "Check runs a month (30 days): {} -> {} ({sign}{}).",
        thousands(budget.before),
        thousands(budget.after),
        thousands(delta.unsigned_abs() as u64)
    )
}

/// The plan JSON's `runsPerMonth` object: the engine's figures, and the
/// budget when monform.toml sets one.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct RunsPerMonth {
    #[serde(flatten)]
    pub budget: RunBudget,
    /// `[budget] max-runs-per-month`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

/// The plan JSON's `runsPerMonth` object.
pub fn json(budget: &RunBudget, max: Option<u64>) -> RunsPerMonth {
    RunsPerMonth {
        budget: budget.clone(),
        max,
    }
}

/// Why a plan over the run budget fails.
pub fn over(over: &OverBudget) -> String {
    let mut message = format!(
        "the plan runs checks {} times a month, over the budget of {} ([budget] max-runs-per-month in monform.toml); most runs:",
        thousands(over.runs),
        thousands(over.max)
    );
    push_top(&mut message, over);
    message
}

/// The closing line of a plan that changes nothing while the project, as
/// applied, is over its run budget: "No changes." then a failure would
/// read as a contradiction.
pub const UNCHANGED_OVER: &str =
    "No changes, but the checks as applied already run more often than the run budget allows.";

/// Why such a plan fails: the budget, not a change, and what would pass.
pub fn over_unchanged(over: &OverBudget) -> String {
    let mut message = format!(
        "the project's checks run {} times a month as they are, over the budget of {} ([budget] max-runs-per-month in monform.toml), although this plan changes nothing; most runs:",
        thousands(over.runs),
        thousands(over.max)
    );
    push_top(&mut message, over);
    message.push_str(
        "\n\nhint: run those checks less often or in fewer locations, or raise max-runs-per-month to at least the figure above",
    );
    message
}

fn push_top(message: &mut String, over: &OverBudget) {
    for (address, runs) in &over.top {
        message.push_str(&format!("\n  {address}: {} runs a month", thousands(*runs)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(129_600), "129,600");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
