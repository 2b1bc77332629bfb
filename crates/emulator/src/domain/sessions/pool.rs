//! The bounded pool of runs that need a process (issue 28 item 7):
//! BROWSER, MULTI_STEP and PLAYWRIGHT checks and API checks with local
//! scripts each run a Node.js process (and Chromium). Started as they came,
//! an OpenAPI fuzzer's creates and triggers ran 82 of them at once on two
//! cores and the API stopped answering; here at most
//! `Config::max_browser_runs` run at once and the others queue. A queued
//! run that gets no slot within its check's `maxResponseTime` times out
//! (TIMED_OUT), as a run of the service that cannot finish in time does;
//! it never runs late.

use std::sync::Arc;
use std::time::{Duration, Instant};

use monform_model::resources::CheckType;
use monform_runner::{Outcome, RunStatus, errored};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The default size: one run per core.
pub fn default_size() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Slots for runs that need a process.
#[derive(Debug, Clone)]
pub struct BrowserPool {
    slots: Arc<Semaphore>,
    size: usize,
}

impl BrowserPool {
    /// A pool of `size` slots (at least one).
    pub fn new(size: usize) -> BrowserPool {
        let size = size.max(1);
        BrowserPool {
            slots: Arc::new(Semaphore::new(size)),
            size,
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Waits for a slot at most `limit`; the slot is held until the permit
    /// drops. `Err` carries the outcome of a run that timed out queued.
    pub async fn enter(&self, limit: Duration) -> Result<OwnedSemaphorePermit, Outcome> {
        let started = Instant::now();
        match tokio::time::timeout(limit, self.slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; a closed one would mean no slot ever.
            Ok(Err(_)) | Err(_) => Err(queued_too_long(started.elapsed(), limit, self.size)),
        }
    }
}

/// Whether a run of `check` (API form) starts a process when the runner
/// executes browser-type checks.
pub fn needs_process(check: &Value) -> bool {
    match CheckType::of_check(check) {
        Ok(check_type) if check_type.runs_in_browser() => true,
        Ok(CheckType::Api) => ["localSetupScript", "localTearDownScript"]
            .iter()
            .any(|f| check[*f].as_str().is_some_and(|s| !s.trim().is_empty())),
        _ => false,
    }
}

/// The longest a run of `check` waits for a slot: its `maxResponseTime`
/// (20 s by default, as the runner's).
pub fn queue_limit(check: &Value) -> Duration {
    let max_ms = check["maxResponseTime"]
        .as_f64()
        .unwrap_or(monform_runner::DEFAULT_MAX_MS)
        .max(1.0);
    Duration::from_millis(max_ms as u64)
}

fn queued_too_long(waited: Duration, limit: Duration, size: usize) -> Outcome {
    let mut outcome = errored(format!(
        "timed out: waited {} ms for one of the {size} browser-run slots (--max-browser-runs) \
         and did not start within maxResponseTime ({} ms)",
        waited.as_millis(),
        limit.as_millis()
    ));
    outcome.status = RunStatus::TimedOut;
    outcome.executed = false;
    outcome.response_time = waited.as_millis() as f64;
    outcome.has_failures = true;
    outcome.has_errors = false;
    outcome.over_max_response_time = true;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn browser_types_and_api_scripts_need_a_process() {
        assert!(needs_process(&json!({ "checkType": "BROWSER" })));
        assert!(needs_process(&json!({ "checkType": "PLAYWRIGHT" })));
        assert!(needs_process(
            &json!({ "checkType": "API", "localSetupScript": "console.log(1)" })
        ));
        assert!(!needs_process(&json!({ "checkType": "API", "localSetupScript": " " })));
        assert!(!needs_process(&json!({ "checkType": "TCP" })));
    }

    #[tokio::test]
    async fn a_full_pool_times_a_queued_run_out() {
        let pool = BrowserPool::new(1);
        let held = pool.enter(Duration::from_secs(1)).await.expect("a free slot");
        let queued = pool.enter(Duration::from_millis(50)).await.expect_err("no slot");
        assert_eq!(queued.status, RunStatus::TimedOut);
        assert!(queued.has_failures && !queued.executed);
        assert!(
            queued
                .error
                .as_deref()
                .is_some_and(|e| e.contains("--max-browser-runs"))
        );
        drop(held);
        assert!(pool.enter(Duration::from_millis(50)).await.is_ok());
    }
}
