//! How the emulator runs checks: through `monform-runner`, with the
//! account's variables and the pings `/ping/{token}` recorded
//! ([`heartbeat`]); retry backoffs shortened by `Config::backoff_second`
//! and capped at [`MAX_WAIT`] so retried sessions stay quick.
//! `routes::sessions` calls [`run`] for every run of a check session or
//! test session (when `Config::execute_checks` is on).

pub mod heartbeat;
pub mod scheduler;

use std::time::Duration;

use monform_model::Kind;
use monform_runner::{Attempt, Job, Runner, RunnerConfig, Variables};
use serde_json::Value;

pub use monform_runner::{Outcome, RunStatus};

use crate::app::{App, Config};
use crate::store::Objects;

/// The longest one backoff really waits in the emulator.
pub const MAX_WAIT: Duration = Duration::from_secs(2);

/// The runner of an emulator started with `config`.
pub fn runner(config: &Config) -> Runner {
    Runner::new(RunnerConfig {
        backoff_second: config.backoff_second,
        max_wait: Some(MAX_WAIT),
    })
}

/// The variables a run sees: the account's (`/v1/variables`), then the
/// check's (and its group's) `environmentVariables`, later ones winning.
fn variables(app: &App, account: &str, check: &Value) -> Variables {
    let account_variables = app
        .store
        .lock()
        .all(account, Kind::Variable.section())
        .unwrap_or_default();
    Variables::for_check(account_variables.into_iter().map(|r| r.body), check)
}

/// One try of `check` (stored API form, group settings applied), without
/// retries.
pub async fn execute(app: &App, account: &str, check: &Value) -> Outcome {
    let variables = variables(app, account, check);
    let pings = heartbeat::StoredPings { app, account };
    app.runner.execute(job(check, &variables, &pings, "")).await
}

/// The run of `check` in `location`, with its retries; the last attempt
/// is the run's outcome.
pub async fn run(app: &App, account: &str, check: &Value, location: &str) -> Vec<Attempt> {
    let variables = variables(app, account, check);
    let pings = heartbeat::StoredPings { app, account };
    app.runner.run(job(check, &variables, &pings, location)).await
}

fn job<'a>(
    check: &'a Value,
    variables: &'a Variables,
    pings: &'a heartbeat::StoredPings<'a>,
    location: &'a str,
) -> Job<'a> {
    Job {
        check,
        variables,
        heartbeats: Some(pings),
        location,
    }
}
