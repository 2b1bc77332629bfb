//! The run budget lines of a plan (issue 20): runs a month before and after,
//! and why a plan over `[budget] max-runs-per-month` fails.

use monform_engine::RunBudget;
use serde_json::{Value, json};

/// How many checks a failed budget names.
const TOP: usize = 5;

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

/// Why the plan fails, when it runs the checks more than `max` times a month.
pub fn exceeded(budget: &RunBudget, max: Option<u64>) -> Option<String> {
    let max = max.filter(|max| budget.after > *max)?;
    let mut message = format!(
        "the plan runs checks {} times a month, over the budget of {} ([budget] max-runs-per-month in monform.toml); most runs:",
        thousands(budget.after),
        thousands(max)
    );
    for (address, runs) in budget.top(TOP) {
        message.push_str(&format!("\n  {address}: {} runs a month", thousands(runs)));
    }
    Some(message)
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
