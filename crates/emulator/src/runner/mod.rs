//! The local runner: executes one run of a check from its stored (API-form)
//! body and decides how it turned out (issue 8, item 1).
//!
//! [`execute`] is the entry point; `routes::sessions` calls it for every run
//! of a check session or test session (when `Config::execute_checks` is on).
//!
//! How a run is judged (choices where the specification is silent):
//! - The whole run is bounded by `maxResponseTime` (default 20000 ms, at
//!   most 300000): a target still busy then makes the run `TIMED_OUT`.
//! - A run failed when the target could not be reached, an assertion
//!   failed, or (URL and API checks) the response status is 400 or above.
//!   `shouldFail` inverts the status rule: a status below 400 fails and an
//!   error status passes; assertions, errors and timeouts still fail.
//! - A run that did not fail but took longer than `degradedResponseTime`
//!   (default 10000 ms) is `DEGRADED`; ICMP also degrades or fails on
//!   `degradedPacketLossThreshold` / `maxPacketLossThreshold`.
//! - BROWSER, MULTI_STEP, PLAYWRIGHT and AGENTIC checks are not executed:
//!   their result is `FAILED` with `executed: false` and an error saying so.
//! - Setup and teardown snippets and scripts are skipped (noted in `notes`).
//! - `{{KEY}}` in the request is replaced by the account variable or the
//!   check's (or group's) environment variable of that key.

pub mod assertions;
pub mod dns;
pub mod heartbeat;
pub mod http;
pub mod icmp;
pub mod retry;
pub mod scheduler;
pub mod tcp;

use std::collections::HashMap;
use std::time::Duration;

use monform_model::Kind;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::app::App;
use crate::store::Objects;
pub use assertions::AssertionResult;

/// Default `degradedResponseTime` (spec 2.1), milliseconds.
pub const DEFAULT_DEGRADED_MS: f64 = 10_000.0;
/// Default `maxResponseTime` (spec 2.1), milliseconds.
pub const DEFAULT_MAX_MS: f64 = 20_000.0;
/// The longest any run may take (spec 2.1 range), milliseconds.
pub const CEILING_MS: f64 = 300_000.0;

/// How one run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RunStatus {
    Passed,
    Failed,
    Degraded,
    TimedOut,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Passed => "PASSED",
            RunStatus::Failed => "FAILED",
            RunStatus::Degraded => "DEGRADED",
            RunStatus::TimedOut => "TIMED_OUT",
        }
    }

    /// Failed or timed out.
    pub fn is_failure(self) -> bool {
        matches!(self, RunStatus::Failed | RunStatus::TimedOut)
    }
}

/// The outcome of one run of a check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub status: RunStatus,
    /// False when the local runner does not execute this check type (or
    /// could not, e.g. no ICMP socket).
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

/// Milliseconds of `check[field]`, or `default`, clamped to 0..=300000.
pub fn threshold(check: &Value, field: &str, default: f64) -> f64 {
    check[field].as_f64().unwrap_or(default).clamp(0.0, CEILING_MS)
}

/// The variables a run sees: the account's (`/v1/variables`), then the
/// check's (and its group's) `environmentVariables`, later ones winning.
/// Also returns the values of secret variables, masked in results.
fn variables(app: &App, account: &str, check: &Value) -> (HashMap<String, String>, Vec<String>) {
    let mut out = HashMap::new();
    let mut secrets = Vec::new();
    let account_variables = app
        .store
        .lock()
        .all(account, Kind::Variable.section())
        .unwrap_or_default();
    let own = check["environmentVariables"].as_array().cloned().unwrap_or_default();
    for variable in account_variables.into_iter().map(|r| r.body).chain(own) {
        if let (Some(key), Some(value)) = (variable["key"].as_str(), variable["value"].as_str()) {
            out.insert(key.to_owned(), value.to_owned());
            if variable["secret"] == true && !value.is_empty() {
                secrets.push(value.to_owned());
            }
        }
    }
    (out, secrets)
}

/// Replaces every secret value in the strings of `value` with `*****`.
fn mask(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => {
            for secret in secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), "*****");
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| mask(v, secrets)),
        _ => {}
    }
}

/// Replaces `{{KEY}}` (spaces inside the braces allowed) with the variable's
/// value in every string of `value`; unknown names are left as they are.
pub fn substitute(value: &mut Value, variables: &HashMap<String, String>) {
    match value {
        Value::String(text) if text.contains("{{") => {
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(open) = rest.find("{{") {
                let Some(close) = rest[open..].find("}}") else { break };
                let name = rest[open + 2..open + close].trim();
                out.push_str(&rest[..open]);
                match variables.get(name) {
                    Some(v) => out.push_str(v),
                    None => out.push_str(&rest[open..open + close + 2]),
                }
                rest = &rest[open + close + 2..];
            }
            out.push_str(rest);
            *text = out;
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, variables)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, variables)),
        _ => {}
    }
}

/// Runs `check` (stored API form, group settings applied) once. Variables
/// (`{{KEY}}`) in its request are replaced first; secret values are masked
/// (`*****`) in what the outcome reports.
pub async fn execute(app: &App, account: &str, check: &Value) -> Outcome {
    let mut resolved = check.clone();
    let (variables, secrets) = variables(app, account, check);
    if let Some(request) = resolved.get_mut("request") {
        substitute(request, &variables);
    }
    let mut outcome = execute_resolved(app, account, &resolved).await;
    if !secrets.is_empty() {
        let mut reported = to_record(&outcome);
        mask(&mut reported, &secrets);
        if let Some(masked) = from_record(&reported) {
            outcome = masked;
        }
    }
    outcome
}

async fn execute_resolved(app: &App, account: &str, check: &Value) -> Outcome {
    let max_ms = threshold(check, "maxResponseTime", DEFAULT_MAX_MS);
    let check_type = check["checkType"].as_str().unwrap_or_default();
    let started = tokio::time::Instant::now();
    let budget = Duration::from_millis(max_ms.max(1.0) as u64);
    let probe = async {
        match check_type {
            "API" | "URL" => http::probe(check).await,
            "TCP" => tcp::probe(check).await,
            "DNS" => dns::probe(check).await,
            "ICMP" => icmp::probe(check).await,
            "HEARTBEAT" => heartbeat::probe(app, account, check),
            other => Probe {
                not_executed: Some(format!(
                    "not executed: the local runner does not execute {} checks",
                    if other.is_empty() { "these" } else { other }
                )),
                ..Probe::default()
            },
        }
    };
    match tokio::time::timeout(budget, probe).await {
        Ok(probe) => judge(check, probe),
        Err(_) => {
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            Outcome {
                status: RunStatus::TimedOut,
                executed: true,
                response_time: round(elapsed),
                error: Some(format!(
                    "timed out: no complete response within maxResponseTime ({max_ms} ms)"
                )),
                has_failures: true,
                has_errors: false,
                over_max_response_time: true,
                assertions: Vec::new(),
                api_result: Value::Null,
                details: Value::Null,
                notes: Vec::new(),
            }
        }
    }
}

fn round(ms: f64) -> f64 {
    (ms * 100.0).round() / 100.0
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

/// An outcome for a run that could not be made at all.
pub fn errored(message: impl Into<String>) -> Outcome {
    Outcome {
        status: RunStatus::Failed,
        executed: false,
        response_time: 0.0,
        error: Some(message.into()),
        has_failures: false,
        has_errors: true,
        over_max_response_time: false,
        assertions: Vec::new(),
        api_result: Value::Null,
        details: Value::Null,
        notes: Vec::new(),
    }
}

/// The outcome as stored between the run and its session settling.
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
    fn variables_are_substituted() {
        let variables = HashMap::from([("HOST".to_owned(), "127.0.0.1".to_owned())]);
        let mut request = json!({"url": "http://{{HOST}}/{{ HOST }}/{{NOPE}}", "headers": [{"value": "{{HOST}}"}]});
        substitute(&mut request, &variables);
        assert_eq!(request["url"], "http://127.0.0.1/127.0.0.1/{{NOPE}}");
        assert_eq!(request["headers"][0]["value"], "127.0.0.1");
    }

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
        let refused = judge(
            &check,
            Probe {
                error: Some("refused".into()),
                ..Probe::default()
            },
        );
        assert!(refused.has_errors && refused.status == RunStatus::Failed);
    }
}
