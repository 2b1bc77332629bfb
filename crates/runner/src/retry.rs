//! Retries of failed runs: `retryStrategy` (spec 2.3) or the deprecated
//! `doubleCheck` (issue 8).
//!
//! A run that failed or timed out is made again per the check's strategy
//! (with group settings applied, so a group's strategy wins unless it is
//! `FALLBACK`); every try is an [`Attempt`], the last one the run's outcome
//! (the service records the earlier ones as `ATTEMPT` results).
//!
//! Choices where the specification is silent:
//! - No `retryStrategy` and `doubleCheck` true (the check's default): one
//!   retry at once (no backoff), in another of the check's locations when it
//!   has one. `doubleCheck` false and no strategy: no retry.
//! - Backoff before retry n (1-based): FIXED and SINGLE_RETRY
//!   `baseBackoffSeconds`, LINEAR `base * n`, EXPONENTIAL `base * 2^(n-1)`.
//!   `maxRetries` defaults to 2 (SINGLE_RETRY: 1), `maxDurationSeconds` to
//!   600: no retry starts once the run's time so far (tries plus nominal
//!   backoffs) and the next backoff would pass it.
//! - A backoff second really waits `RunnerConfig::backoff_second`, each
//!   wait at most `RunnerConfig::max_wait` (the emulator shortens both so
//!   retried sessions stay quick); `maxDurationSeconds` is measured in
//!   nominal seconds.
//! - `onlyOn: [NETWORK_ERROR]` retries only runs that could not reach their
//!   target (`hasErrors`) or timed out, not assertion or status failures.
//! - `sameRegion` false (and `doubleCheck`): a retry runs in the next of
//!   the check's locations after the one that failed (locations are labels
//!   here); the FINAL result names the location of the last try.
//! - Runs the local runner does not execute (BROWSER...) are never retried:
//!   another try would say the same.

use std::time::Duration;

use monform_model::resources::common::{RetryOnlyOn, RetryStrategy, RetryType};
use serde_json::{Value, json};

use crate::{Job, Outcome, RunStatus, Runner};
/// `maxRetries` when a strategy names none (spec silent).
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// `maxDurationSeconds` when a strategy names none (the model's maximum).
pub const DEFAULT_MAX_DURATION_S: f64 = 600.0;

/// How the failed runs of one check are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub kind: RetryType,
    pub base_backoff_s: f64,
    pub max_retries: u32,
    pub max_duration_s: f64,
    pub only_network_errors: bool,
    pub same_region: bool,
}

impl Policy {
    /// The policy of `check` (stored API form, group settings applied):
    /// its `retryStrategy`, else one immediate retry for `doubleCheck`.
    pub fn of(check: &Value) -> Option<Policy> {
        let strategy = check.get("retryStrategy").filter(|s| s.is_object());
        if let Some(strategy) = strategy.and_then(|s| serde_json::from_value::<RetryStrategy>(s.clone()).ok()) {
            return Some(Policy::from_strategy(&strategy));
        }
        (check["doubleCheck"] == true).then_some(Policy {
            kind: RetryType::SingleRetry,
            base_backoff_s: 0.0,
            max_retries: 1,
            max_duration_s: DEFAULT_MAX_DURATION_S,
            only_network_errors: false,
            same_region: false,
        })
    }

    fn from_strategy(strategy: &RetryStrategy) -> Policy {
        let max_retries = match strategy.kind {
            RetryType::SingleRetry => 1,
            _ => strategy.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
        };
        Policy {
            kind: strategy.kind,
            base_backoff_s: f64::from(strategy.base_backoff_seconds),
            max_retries,
            max_duration_s: strategy.max_duration_seconds.map_or(DEFAULT_MAX_DURATION_S, f64::from),
            only_network_errors: strategy
                .only_on
                .as_ref()
                .is_some_and(|o| o.contains(&RetryOnlyOn::NetworkError)),
            same_region: strategy.same_region,
        }
    }

    /// Nominal seconds to wait before retry `n` (1-based).
    pub fn backoff_s(&self, n: u32) -> f64 {
        let base = self.base_backoff_s;
        match self.kind {
            RetryType::Fixed | RetryType::SingleRetry => base,
            RetryType::Linear => base * f64::from(n),
            RetryType::Exponential => base * 2f64.powi(n.saturating_sub(1).min(30) as i32),
        }
    }

    /// Whether `outcome` (after `retries` retries, `elapsed_s` nominal
    /// seconds into the run) is tried again.
    pub fn retries(&self, outcome: &Outcome, retries: u32, elapsed_s: f64) -> bool {
        if !outcome.status.is_failure() || !outcome.executed || retries >= self.max_retries {
            return false;
        }
        if self.only_network_errors && !(outcome.has_errors || outcome.status == RunStatus::TimedOut) {
            return false;
        }
        elapsed_s + self.backoff_s(retries + 1) <= self.max_duration_s
    }
}

/// The longest a run of `check` may take with its retries, in real
/// milliseconds: every try takes `max_response_ms` and every backoff its
/// longest wait.
pub(crate) fn worst_case_ms(check: &Value, max_response_ms: f64, runner: &Runner) -> i64 {
    let Some(policy) = Policy::of(check) else {
        return max_response_ms as i64;
    };
    let waits: Duration = (1..=policy.max_retries).map(|n| wait(runner, &policy, n)).sum();
    (f64::from(policy.max_retries + 1) * max_response_ms + waits.as_millis() as f64) as i64
}

/// How long the backoff before retry `n` really waits.
fn wait(runner: &Runner, policy: &Policy, n: u32) -> Duration {
    let config = runner.config();
    let wait = config.backoff_second.mul_f64(policy.backoff_s(n));
    config.max_wait.map_or(wait, |max| wait.min(max))
}

/// One try of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub outcome: Outcome,
    pub location: String,
    pub started_ms: i64,
    pub finished_ms: i64,
}

/// The location of retry `n` of a run that started in `first`.
fn retry_location(check: &Value, first: &str, n: u32, same_region: bool) -> String {
    if same_region {
        return first.to_owned();
    }
    let mut locations: Vec<String> = Vec::new();
    for field in ["locations", "privateLocations"] {
        for location in check[field].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !locations.iter().any(|l| l == location) {
                locations.push(location.to_owned());
            }
        }
    }
    match locations.iter().position(|l| l == first) {
        Some(at) if locations.len() > 1 => locations[(at + n as usize) % locations.len()].clone(),
        _ => first.to_owned(),
    }
}

/// Runs `job`, retrying per its check's [`Policy`]; the last try is the
/// run's outcome.
pub(crate) async fn run(runner: &Runner, job: Job<'_>) -> Vec<Attempt> {
    let (check, location) = (job.check, job.location);
    let policy = Policy::of(check);
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut elapsed_s = 0.0;
    loop {
        let n = attempts.len() as u32;
        let here = match &policy {
            Some(p) if n > 0 => retry_location(check, location, n, p.same_region),
            _ => location.to_owned(),
        };
        let started_ms = now_ms();
        let outcome = runner.execute(job).await;
        let finished_ms = now_ms();
        elapsed_s += (finished_ms - started_ms) as f64 / 1000.0;
        let again = policy.as_ref().is_some_and(|p| p.retries(&outcome, n, elapsed_s));
        attempts.push(Attempt {
            outcome,
            location: here,
            started_ms,
            finished_ms,
        });
        let Some(policy) = policy.as_ref().filter(|_| again) else {
            return attempts;
        };
        elapsed_s += policy.backoff_s(n + 1);
        let wait = wait(runner, policy, n + 1);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A run's tries as JSON (how the service stores them and an agent would
/// send them): the last one as `outcome`, the earlier ones under `attempts`.
pub fn to_record(attempts: &[Attempt]) -> Value {
    let Some((last, earlier)) = attempts.split_last() else {
        return json!({});
    };
    json!({
        "outcome": crate::to_record(&last.outcome),
        "finishedAtMs": last.finished_ms,
        "location": last.location,
        "attempts": earlier.iter().map(|a| json!({
            "outcome": crate::to_record(&a.outcome),
            "location": a.location,
            "startedAtMs": a.started_ms,
            "finishedAtMs": a.finished_ms,
        })).collect::<Vec<_>>(),
    })
}

/// The earlier tries in a stored record (none for records without them).
pub fn earlier_attempts(record: &Value) -> Vec<Attempt> {
    record["attempts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            Some(Attempt {
                outcome: crate::from_record(&a["outcome"])?,
                location: a["location"].as_str()?.to_owned(),
                started_ms: a["startedAtMs"].as_i64()?,
                finished_ms: a["finishedAtMs"].as_i64()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(has_errors: bool) -> Outcome {
        let mut outcome = crate::errored("boom");
        outcome.executed = true;
        outcome.has_errors = has_errors;
        outcome.has_failures = !has_errors;
        outcome
    }

    #[test]
    fn policies_come_from_the_strategy_or_double_check() {
        let check = json!({ "doubleCheck": true });
        let p = Policy::of(&check).unwrap();
        assert_eq!((p.max_retries, p.base_backoff_s, p.same_region), (1, 0.0, false));
        assert_eq!(Policy::of(&json!({ "doubleCheck": false })), None);
        let check = json!({ "doubleCheck": true, "retryStrategy": {
            "type": "EXPONENTIAL", "baseBackoffSeconds": 10, "maxRetries": 4, "sameRegion": true,
            "onlyOn": ["NETWORK_ERROR"] } });
        let p = Policy::of(&check).unwrap();
        assert_eq!(p.kind, RetryType::Exponential);
        assert_eq!(p.max_retries, 4);
        assert!(p.only_network_errors && p.same_region);
        assert_eq!(
            (1..=4).map(|n| p.backoff_s(n)).collect::<Vec<_>>(),
            [10.0, 20.0, 40.0, 80.0]
        );
        let linear = Policy::of(&json!({ "retryStrategy": { "type": "LINEAR", "baseBackoffSeconds": 5 } })).unwrap();
        assert_eq!((linear.backoff_s(3), linear.max_retries), (15.0, DEFAULT_MAX_RETRIES));
        let single = Policy::of(&json!({ "retryStrategy": { "type": "SINGLE_RETRY" } })).unwrap();
        assert_eq!((single.max_retries, single.backoff_s(1)), (1, 60.0));
    }

    #[test]
    fn what_is_retried() {
        let p = Policy::of(&json!({ "retryStrategy": {
            "type": "FIXED", "baseBackoffSeconds": 30, "maxRetries": 3, "maxDurationSeconds": 70 } }))
        .unwrap();
        assert!(p.retries(&failed(false), 0, 0.0));
        assert!(p.retries(&failed(false), 1, 35.0));
        // The next backoff would pass maxDurationSeconds.
        assert!(!p.retries(&failed(false), 1, 45.0));
        assert!(!p.retries(&failed(false), 3, 0.0));
        let mut passed = failed(false);
        passed.status = RunStatus::Passed;
        assert!(!p.retries(&passed, 0, 0.0));
        let mut not_executed = failed(true);
        not_executed.executed = false;
        assert!(!p.retries(&not_executed, 0, 0.0));
        let network =
            Policy::of(&json!({ "retryStrategy": { "type": "FIXED", "onlyOn": ["NETWORK_ERROR"] } })).unwrap();
        assert!(network.retries(&failed(true), 0, 0.0));
        assert!(!network.retries(&failed(false), 0, 0.0));
        let mut timed_out = failed(false);
        timed_out.status = RunStatus::TimedOut;
        assert!(network.retries(&timed_out, 0, 0.0));
    }

    #[test]
    fn retries_move_to_other_locations_unless_same_region() {
        let check = json!({ "locations": ["eu-west-1", "us-east-1", "ap-south-1"] });
        assert_eq!(retry_location(&check, "us-east-1", 1, false), "ap-south-1");
        assert_eq!(retry_location(&check, "us-east-1", 2, false), "eu-west-1");
        assert_eq!(retry_location(&check, "us-east-1", 1, true), "us-east-1");
        assert_eq!(retry_location(&json!({}), "us-east-1", 1, false), "us-east-1");
    }

    #[test]
    fn records_round_trip() {
        let attempt = |status| Attempt {
            outcome: Outcome {
                status,
                ..failed(false)
            },
            location: "eu-west-1".into(),
            started_ms: 1,
            finished_ms: 2,
        };
        let record = to_record(&[attempt(RunStatus::Failed), attempt(RunStatus::Passed)]);
        assert_eq!(record["outcome"]["status"], "PASSED");
        let earlier = earlier_attempts(&record);
        assert_eq!(earlier.len(), 1);
        assert_eq!(earlier[0].outcome.status, RunStatus::Failed);
        assert!(earlier_attempts(&json!({ "outcome": {} })).is_empty());
    }
}
