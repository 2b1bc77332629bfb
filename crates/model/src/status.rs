//! How one run of a check in one location turned out: the service's run
//! statuses (spec 2.9, 2.16), one enum for the runner that judges a run,
//! the client that reads results and the CLI that reports them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::resources::common::UnknownName;

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
    pub const ALL: &'static [RunStatus] = &[
        RunStatus::Passed,
        RunStatus::Degraded,
        RunStatus::Failed,
        RunStatus::TimedOut,
        RunStatus::Cancelled,
        RunStatus::Running,
    ];
    /// The wire names of [`Self::ALL`], in the same order.
    pub const NAMES: &'static [&'static str] = &["PASSED", "DEGRADED", "FAILED", "TIMED_OUT", "CANCELLED", "RUNNING"];

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

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RunStatus {
    type Err = UnknownName;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        RunStatus::ALL
            .iter()
            .copied()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| UnknownName {
                kind: "RunStatus",
                text: text.to_owned(),
                allowed: RunStatus::NAMES,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_wire_name_is_the_text_name() {
        for (i, &status) in RunStatus::ALL.iter().enumerate() {
            assert_eq!(serde_json::to_value(status).ok(), Some(json!(status.as_str())));
            assert_eq!(RunStatus::NAMES[i], status.as_str());
            assert_eq!(status.as_str().parse::<RunStatus>(), Ok(status));
        }
        assert!("passed".parse::<RunStatus>().is_err());
        assert_eq!(
            RunStatus::of_result(&json!({"status": "TIMED_OUT", "hasErrors": true})),
            RunStatus::TimedOut
        );
        assert!(!RunStatus::Degraded.is_failure());
    }
}
