//! How one run of a check in one location turned out: the service's run
//! statuses (spec 2.9, 2.16), one enum for the runner that judges a run,
//! the client that reads results and the CLI that reports them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RunStatus {
    Passed,
    Degraded,
    Failed,
    TimedOut,
    /// Stopped before it ended (a result the service reports; a runner
    /// never judges a run so).
    Cancelled,
    /// Not final yet (likewise only reported).
    Running,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Passed => "PASSED",
            RunStatus::Degraded => "DEGRADED",
            RunStatus::Failed => "FAILED",
            RunStatus::TimedOut => "TIMED_OUT",
            RunStatus::Cancelled => "CANCELLED",
            RunStatus::Running => "RUNNING",
        }
    }

    /// A run that did not pass (degraded still counts as passing).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            RunStatus::Failed | RunStatus::TimedOut | RunStatus::Cancelled | RunStatus::Running
        )
    }

    /// From a result's flags (`hasFailures`, `hasErrors`, `isDegraded`,
    /// `aborted` / `isCancelled`) and, when present, its `status`
    /// (`TIMED_OUT` has no flag of its own).
    pub fn of_result(result: &Value) -> RunStatus {
        let flag = |name: &str| result.get(name).and_then(Value::as_bool).unwrap_or(false);
        let status = result.get("status").and_then(Value::as_str).unwrap_or("");
        if status == "TIMED_OUT" {
            RunStatus::TimedOut
        } else if flag("aborted") || flag("isCancelled") || status == "CANCELLED" {
            RunStatus::Cancelled
        } else if flag("hasFailures") || flag("hasErrors") || status == "FAILED" {
            RunStatus::Failed
        } else if status == "RUNNING" || result.get("resultType").and_then(Value::as_str) == Some("PENDING") {
            RunStatus::Running
        } else if flag("isDegraded") || status == "DEGRADED" {
            RunStatus::Degraded
        } else {
            RunStatus::Passed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wire_name_is_the_text_name() {
        for status in [
            RunStatus::Passed,
            RunStatus::Degraded,
            RunStatus::Failed,
            RunStatus::TimedOut,
            RunStatus::Cancelled,
            RunStatus::Running,
        ] {
            assert_eq!(serde_json::to_value(status).ok(), Some(json!(status.as_str())));
        }
        assert_eq!(
            RunStatus::of_result(&json!({"status": "TIMED_OUT", "hasErrors": true})),
            RunStatus::TimedOut
        );
        assert!(!RunStatus::Degraded.is_failure());
    }
}
