//! What a run observed ([`Probe`]) and how it turned out ([`Outcome`]).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::assertions::AssertionResult;
use crate::{CEILING_MS, DEFAULT_DEGRADED_MS, DEFAULT_MAX_MS};

pub use monform_model::RunStatus;

/// The outcome of one run of a check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub status: RunStatus,
    /// False when the runner does not execute this check type (or could
    /// not, e.g. no ICMP socket).
    pub executed: bool,
    /// Milliseconds.
    pub response_time: f64,
    /// Why the run failed or could not be made (null when it passed).
    pub error: Option<String>,
    /// The target was reached but the run failed (assertion, status) rather
    /// than erring (unreachable, not executed).
    pub has_failures: bool,
    pub has_errors: bool,
    pub over_max_response_time: bool,
    pub assertions: Vec<AssertionResult>,
    /// `apiCheckResult` for URL and API checks, else null.
    pub api_result: Value,
    /// What other check types observed (TCP data, DNS answers, pings...).
    pub details: Value,
    /// Things the runner skipped.
    pub notes: Vec<String>,
}

/// What a probe (one protocol) observed, before thresholds are applied.
#[derive(Debug, Default)]
pub struct Probe {
    pub response_time: f64,
    /// Could not be made (unreachable, refused, bad address...).
    pub error: Option<String>,
    /// The target answered but the answer is a failure (e.g. HTTP 500).
    pub failure: Option<String>,
    pub assertions: Vec<AssertionResult>,
    pub api_result: Value,
    pub details: Value,
    pub notes: Vec<String>,
    /// ICMP: packet loss percent.
    pub packet_loss: Option<f64>,
    /// Not executed by this runner (the message says why).
    pub not_executed: Option<String>,
}

impl Probe {
    /// A probe that could not be made.
    pub fn error(message: impl Into<String>) -> Probe {
        Probe {
            error: Some(message.into()),
            ..Probe::default()
        }
    }

    pub fn not_executed(message: impl Into<String>) -> Probe {
        Probe {
            not_executed: Some(message.into()),
            ..Probe::default()
        }
    }
}

/// Milliseconds of `check[field]`, or `default`, clamped to 0..=300000.
pub fn threshold(check: &Value, field: &str, default: f64) -> f64 {
    check[field].as_f64().unwrap_or(default).clamp(0.0, CEILING_MS)
}

pub(crate) fn round(ms: f64) -> f64 {
    (ms * 100.0).round() / 100.0
}

/// The outcome of a run cut short by `maxResponseTime` after `elapsed_ms`.
pub(crate) fn timed_out(elapsed_ms: f64, max_ms: f64) -> Outcome {
    Outcome {
        status: RunStatus::TimedOut,
        executed: true,
        response_time: round(elapsed_ms),
        error: Some(format!(
            "timed out: no complete response within maxResponseTime ({max_ms} ms)"
        )),
        has_failures: true,
        over_max_response_time: true,
        ..errored_base()
    }
}

/// Applies assertions, thresholds and `shouldFail` to what a probe observed.
pub fn judge(check: &Value, probe: Probe) -> Outcome {
    let degraded_ms = threshold(check, "degradedResponseTime", DEFAULT_DEGRADED_MS);
    let max_ms = threshold(check, "maxResponseTime", DEFAULT_MAX_MS);
    let response_time = round(probe.response_time);
    let mut outcome = Outcome {
        status: RunStatus::Passed,
        executed: probe.not_executed.is_none(),
        response_time,
        error: None,
        has_failures: false,
        has_errors: false,
        over_max_response_time: false,
        assertions: probe.assertions,
        api_result: probe.api_result,
        details: probe.details,
        notes: probe.notes,
    };
    if let Some(message) = probe.not_executed.or(probe.error) {
        outcome.status = RunStatus::Failed;
        outcome.has_errors = true;
        outcome.error = Some(message);
        return outcome;
    }
    let mut problems: Vec<String> = probe.failure.into_iter().collect();
    problems.extend(
        outcome
            .assertions
            .iter()
            .filter(|a| !a.passed)
            .map(AssertionResult::describe),
    );
    if response_time > max_ms {
        outcome.over_max_response_time = true;
        problems.push(format!(
            "response time {response_time} ms is above maxResponseTime ({max_ms} ms)"
        ));
    }
    let mut degraded = response_time > degraded_ms;
    if let Some(loss) = probe.packet_loss {
        let degraded_loss = check["degradedPacketLossThreshold"].as_f64().unwrap_or(10.0);
        let max_loss = check["maxPacketLossThreshold"].as_f64().unwrap_or(20.0);
        if loss >= max_loss {
            problems.push(format!(
                "packet loss {loss}% reached maxPacketLossThreshold ({max_loss}%)"
            ));
        } else if loss >= degraded_loss {
            degraded = true;
        }
    }
    if !problems.is_empty() {
        outcome.status = RunStatus::Failed;
        outcome.has_failures = true;
        outcome.error = Some(problems.join("; "));
    } else if degraded {
        outcome.status = RunStatus::Degraded;
    }
    outcome
}

fn errored_base() -> Outcome {
    Outcome {
        status: RunStatus::Failed,
        executed: false,
        response_time: 0.0,
        error: None,
        has_failures: false,
        has_errors: false,
        over_max_response_time: false,
        assertions: Vec::new(),
        api_result: Value::Null,
        details: Value::Null,
        notes: Vec::new(),
    }
}

/// An outcome for a run that could not be made at all.
pub fn errored(message: impl Into<String>) -> Outcome {
    Outcome {
        error: Some(message.into()),
        has_errors: true,
        ..errored_base()
    }
}

/// The outcome as JSON (how callers store or send it).
pub fn to_record(outcome: &Outcome) -> Value {
    serde_json::to_value(outcome).unwrap_or_else(|_| json!({}))
}

pub fn from_record(record: &Value) -> Option<Outcome> {
    serde_json::from_value(record.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_should_fail() {
        let check = json!({"degradedResponseTime": 100, "maxResponseTime": 1000});
        let probe = |ms: f64| Probe {
            response_time: ms,
            ..Probe::default()
        };
        assert_eq!(judge(&check, probe(50.0)).status, RunStatus::Passed);
        assert_eq!(judge(&check, probe(500.0)).status, RunStatus::Degraded);
        let slow = judge(&check, probe(1500.0));
        assert_eq!(slow.status, RunStatus::Failed);
        assert!(slow.over_max_response_time);
        let refused = judge(&check, Probe::error("refused"));
        assert!(refused.has_errors && refused.status == RunStatus::Failed);
        let record = to_record(&refused);
        assert_eq!(from_record(&record), Some(refused));
    }
}
