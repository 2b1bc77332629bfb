//! The run budget lines of a plan (issue 20): runs a month before and after,
//! and why a plan over `[budget] max-runs-per-month` fails.

use monform_engine::RunBudget;
use monform_engine::ops::OverBudget;
use serde_json::{Value, json};

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

/// The plan JSON's `runsPerMonth` object.
pub fn json(budget: &RunBudget, max: Option<u64>) -> Value {
    let mut value = json!(budget);
    if let Some(max) = max {
        value["max"] = json!(max);
    }
    value
}

/// Why a plan over the run budget fails.
pub fn over(over: &OverBudget) -> String {
    let mut message = format!(
        "the plan runs checks {} times a month, over the budget of {} ([budget] max-runs-per-month in monform.toml); most runs:",
        thousands(over.runs),
        thousands(over.max)
    );
    for (address, runs) in &over.top {
        message.push_str(&format!("\n  {address}: {} runs a month", thousands(*runs)));
    }
    message
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
