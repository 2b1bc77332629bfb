//! The check runner: executes one run of a check of any type from its API
//! form and decides how it turned out, with the check's retry strategy.
//! The emulator's sessions and scheduler call it; so can the CLI (checks of
//! the files on this machine) and a private-location agent.
//!
//! **Architecture invariant:** no I/O but the probes themselves (the HTTP
//! request, TCP connection, DNS query or ping a check makes). Whatever
//! else a run needs comes from its caller: the variables ([`Variables`]),
//! where heartbeat pings are recorded ([`Heartbeats`]) and how long a
//! backoff second lasts ([`RunnerConfig`]). Nothing here knows of HTTP
//! routes, databases or sessions.
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
//! - BROWSER, MULTI_STEP and PLAYWRIGHT checks run with Node.js,
//!   playwright-core and Chromium ([`BrowserSetup`], `browser.rs`) when the
//!   runner has them ([`Runner::with_browser`]); the run fails when the
//!   script throws or an `expect` fails, its console output and tests in
//!   `details`. Without them (and AGENTIC checks always) the result is
//!   `FAILED` with `executed: false` and an error saying so.
//! - API checks' `localSetupScript` / `localTearDownScript` run with Node
//!   when the runner has it; snippets referenced by id are inlined by the
//!   caller ([`inline_snippets`]), else skipped and noted in `notes`.
//! - Every script (and a suite's `testCommand`) runs with an environment
//!   built from nothing (`script_env.rs`: [`script_env::INHERITED`],
//!   [`script_env::SET`]), the run's variables and the names the caller
//!   passes on purpose ([`Runner::with_passed_env`]): never the rest of
//!   the runner's own environment (a CI job's API key and tokens).
//! - `{{KEY}}` in the request is replaced by the variable of that key.
//!
//! # Code map
//!
//! Executes one run of a check from its API form and judges it: `Runner`
//! (`execute`: one try; `run`: the tries of a run with the check's retry
//! strategy, each an `Attempt` with its location and times) over a `Job` (the
//! check, its `Variables`, where heartbeat pings come from, the location).
//! `http.rs` (URL and API checks with reqwest, rustls), `tcp.rs`, `dns.rs`
//! (messages built and read by hickory-proto; the UDP or TCP exchange is a
//! few lines of tokio so no resolver cache or retry gets between the check
//! and its name server), `icmp.rs` (an unprivileged echo socket; a clear error
//! where the kernel refuses one), `heartbeat.rs` (late after period + grace,
//! from the last ping the caller's `Heartbeats` reports), `assertions.rs`,
//! `outcome.rs` (thresholds, `shouldFail`, `PASSED` / `FAILED` / `DEGRADED` /
//! `TIMED_OUT` at `maxResponseTime`), `retry.rs` (FIXED, LINEAR, EXPONENTIAL,
//! SINGLE_RETRY, `doubleCheck`; `RunnerConfig::backoff_second` is how long a
//! nominal backoff second really waits, `max_wait` caps each wait), and
//! `variables.rs` (`{{KEY}}` substitution, secret values masked as `*****` in
//! every outcome). `browser.rs` runs BROWSER, MULTI_STEP and PLAYWRIGHT checks
//! and API checks' `localSetupScript` / `localTearDownScript` with Node.js
//! through `harness.js` (shipped with `include_str!`, written with the script
//! into a fresh temporary folder per run; the child is killed when
//! `maxResponseTime` runs out): playwright-core against the system Chromium,
//! launched headless with `--no-sandbox` and friends from
//! `MONFORM_CHROMIUM`. `BrowserSetup::discover` finds Node, Chromium and a
//! `node_modules` with playwright-core; the caller opts in with
//! `Runner::with_browser` (without it, and for AGENTIC checks always, those
//! checks say they are not executed). `Runner::with_artifacts(DIR)` (only
//! `test --local --artifacts`) gives each browser run a folder `DIR/run-N`
//! (`MONFORM_ARTIFACTS` to the harness): a failed test's context, traced from
//! its start (`tracing.start`, screenshots and snapshots), keeps a full-page
//! screenshot and the trace there, listed in `details.artifacts`; the CLI
//! renames the run's folder after the check and location and removes those
//! of retried attempts. `details.at` is where the user's code failed: the
//! harness takes the stack at each `expect()` call (its own failures carry
//! only harness frames) and finds the first frame of the script (an `eval at
//! runScript` frame, its line less the 3 lines the `AsyncFunction` wrapper
//! adds) or of a suite's file; `browser.rs` adds that line's text.
//! `browser/playwright_project.rs`: a PLAYWRIGHT check with `playwright` (an
//! existing Playwright project) has its `codeBundle` written into the run's
//! folder and run with `@playwright/test` under `playwright_config.ts` (the
//! project's config with the system Chromium, a JSON report, traces of
//! failures); each test of the report is an entry of `details.tests`.
//! `snippets.rs` (`inline_snippets`):
//! snippets named by `setupSnippetId` / `tearDownSnippetId` become part of
//! the setup and teardown scripts; the caller looks them up (the emulator in
//! its store, so agents receive the scripts too; `test --local`, through
//! `ops::local_checks`, in the files). Outcomes and attempts serialize as JSON (what the
//! emulator stores, and what an agent would send). Its unit tests run every
//! type against loopback targets (an axum server, a TCP listener, a name
//! server answering with hickory-proto messages, 127.0.0.1).
//!
//! **Architecture invariant:** no I/O but the probes themselves (for browser
//! checks the probe is a Node.js process and its temporary folder). Every
//! process a run starts gets the environment `script_env.rs` builds from
//! nothing (`PATH`, `LANG`, `LC_ALL`, `TZ`, the run's folder as `HOME` and
//! `TMPDIR`, the run's variables, the names the caller passes on purpose:
//! `Runner::with_passed_env`), never the runner's own: the scripts are a pull
//! request's code (issue 43). It knows no
//! HTTP routes, database or sessions: variables, heartbeat pings and backoff
//! timing come from the caller (`Variables`, `Heartbeats`, `RunnerConfig`).

pub mod assertions;
mod browser;
#[cfg(test)]
mod browser_loopback;
mod browser_setup;
mod dns;
mod heartbeat;
pub mod http;
mod icmp;
#[cfg(test)]
mod loopback;
mod outcome;
pub mod retry;
pub mod script_env;
mod tcp;
mod variables;

use std::time::Duration;

use serde_json::Value;

pub use assertions::AssertionResult;
pub use browser_setup::{BrowserSetup, INSTALL_HINT};
pub use monform_model::effective::inline_snippets;
pub use outcome::{Outcome, RunStatus, errored, from_record, to_record};
pub(crate) use outcome::{Probe, judge, threshold};
pub use retry::Attempt;
pub use variables::{Variables, substitute};

use monform_model::resources::CheckType;
use monform_model::resources::check::{
    DEFAULT_DEGRADED_RESPONSE_TIME_MS, DEFAULT_MAX_RESPONSE_TIME_MS, MAX_RESPONSE_TIME_MS,
};

/// Default `degradedResponseTime` (the model's), milliseconds.
pub const DEFAULT_DEGRADED_MS: f64 = DEFAULT_DEGRADED_RESPONSE_TIME_MS as f64;
/// Default `maxResponseTime` (the model's), milliseconds.
pub const DEFAULT_MAX_MS: f64 = DEFAULT_MAX_RESPONSE_TIME_MS as f64;
/// The longest any run may take (the model's range), milliseconds.
pub const CEILING_MS: f64 = MAX_RESPONSE_TIME_MS as f64;

/// Where the last ping of a heartbeat check is recorded: the service
/// receives pings (`/ping/{token}`), so only its side can tell.
pub trait Heartbeats: Send + Sync {
    /// Milliseconds since the epoch of the last ping of `check` (API form,
    /// with its `id`), `None` when it never pinged, or why it cannot tell.
    fn last_ping_ms(&self, check: &Value) -> Result<Option<i64>, String>;
}

/// What differs between the runner's callers.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerConfig {
    /// How long one second of a retry strategy's backoff really waits: a
    /// second for real runs; the emulator and tests shorten it.
    pub backoff_second: Duration,
    /// The longest one backoff really waits, if capped.
    pub max_wait: Option<Duration>,
}

impl Default for RunnerConfig {
    fn default() -> RunnerConfig {
        RunnerConfig {
            backoff_second: Duration::from_secs(1),
            max_wait: None,
        }
    }
}

/// One run to make: a check in its API form (group settings applied) and
/// what it reads.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    pub check: &'a Value,
    pub variables: &'a Variables,
    /// `None`: heartbeat checks are not executed (nothing records pings here).
    pub heartbeats: Option<&'a dyn Heartbeats>,
    /// The location the run is made in (a label; retries may move on to the
    /// check's next location).
    pub location: &'a str,
}

/// Numbers the runs' artifact folders (`run-N`) in this process.
static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Executes check runs. Cheap to clone; one per process is enough.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    config: RunnerConfig,
    /// Node.js and Chromium for browser-type checks and scripts; without
    /// them those are not executed.
    browser: Option<std::sync::Arc<BrowserSetup>>,
    /// Where failed browser runs leave their screenshot and trace (a folder
    /// of their own below it each); `None`: nowhere.
    artifacts: Option<std::sync::Arc<std::path::PathBuf>>,
    /// Names of this process's environment scripts see on purpose, with
    /// their values (`[project] pass-env`); nothing else of it reaches them.
    passed_env: script_env::Passed,
}

impl Runner {
    pub fn new(config: RunnerConfig) -> Runner {
        Runner {
            config,
            browser: None,
            artifacts: None,
            passed_env: script_env::Passed::default(),
        }
    }

    /// This runner, giving every script (and `testCommand`) these
    /// environment variables too, besides [`script_env::INHERITED`], the
    /// run's variables and [`script_env::SET`]: the caller reads them
    /// (`[project] pass-env`), so the runner never chooses what of its own
    /// environment a script sees.
    pub fn with_passed_env(mut self, passed: impl IntoIterator<Item = (String, std::ffi::OsString)>) -> Runner {
        self.passed_env = script_env::Passed(passed.into_iter().collect());
        self
    }

    /// This runner, keeping a screenshot and a Playwright trace of each
    /// failed browser run in a new folder below `dir` (`run-N`, named
    /// in the outcome's `details.artifacts`).
    pub fn with_artifacts(mut self, dir: std::path::PathBuf) -> Runner {
        self.artifacts = Some(std::sync::Arc::new(dir));
        self
    }

    /// This runner, executing BROWSER, MULTI_STEP and PLAYWRIGHT checks and
    /// API checks' setup/teardown scripts with `setup`.
    pub fn with_browser(mut self, setup: BrowserSetup) -> Runner {
        self.browser = Some(std::sync::Arc::new(setup));
        self
    }

    /// Whether browser-type checks and API scripts run (each in a Node.js
    /// process), so a caller can bound how many run at once.
    pub fn runs_browsers(&self) -> bool {
        self.browser.is_some()
    }

    pub fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// One try of `job`, without retries. Variables (`{{KEY}}`) in the
    /// request are replaced first; secret values are masked (`*****`) in
    /// what the outcome reports.
    pub async fn execute(&self, job: Job<'_>) -> Outcome {
        let mut resolved = job.check.clone();
        if let Some(request) = resolved.get_mut("request") {
            substitute(request, job.variables.values());
        }
        let artifacts = self.artifacts.as_deref().map(|dir| {
            dir.join(format!(
                "run-{}",
                RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ))
        });
        let browser = self.browser.as_deref().map(|setup| browser::Context {
            setup,
            variables: job.variables,
            passed: &self.passed_env.0,
        });
        let outcome = execute_resolved(&resolved, job.heartbeats, browser, artifacts.as_deref()).await;
        job.variables.mask(outcome)
    }

    /// The run of `job`: tries it, retrying per the check's [`Policy`]; the
    /// last attempt is the run's outcome, the earlier ones its retried tries.
    pub async fn run(&self, job: Job<'_>) -> Vec<Attempt> {
        retry::run(self, job).await
    }

    /// The longest a run of `check` may take with its retries, in real
    /// milliseconds (for a caller's lost-run deadline).
    pub fn worst_case_ms(&self, check: &Value) -> i64 {
        retry::worst_case_ms(check, threshold(check, "maxResponseTime", DEFAULT_MAX_MS), self)
    }
}

async fn execute_resolved(
    check: &Value,
    heartbeats: Option<&dyn Heartbeats>,
    browser: Option<browser::Context<'_>>,
    artifacts: Option<&std::path::Path>,
) -> Outcome {
    // Parsed once; the match below is exhaustive, so a new check type does
    // not compile until the runner says what it does with it.
    let check_type = match CheckType::of_check(check) {
        Ok(check_type) => check_type,
        Err(unknown) => return outcome::errored(format!("cannot run this check: {unknown}")),
    };
    let max_ms = threshold(check, "maxResponseTime", DEFAULT_MAX_MS);
    let started = tokio::time::Instant::now();
    let budget = Duration::from_millis(max_ms.max(1.0) as u64);
    let probe = async {
        match check_type {
            CheckType::Api => match browser {
                Some(cx) if has_scripts(check) => browser::api_with_scripts(check, cx).await,
                _ => http::probe(check).await,
            },
            CheckType::Url => http::probe(check).await,
            CheckType::Agentic => Probe::not_executed(
                "not executed: AGENTIC checks cannot run locally (only the service's agent runs them)",
            ),
            CheckType::Tcp => tcp::probe(check).await,
            CheckType::Dns => dns::probe(check).await,
            CheckType::Icmp => icmp::probe(check).await,
            CheckType::Heartbeat => heartbeat::probe(check, heartbeats),
            CheckType::Browser | CheckType::MultiStep | CheckType::Playwright => match browser {
                Some(cx) => browser::probe(check, cx, artifacts).await,
                None => Probe::not_executed(format!(
                    "not executed: the local runner does not execute {check_type} checks"
                )),
            },
        }
    };
    match tokio::time::timeout(budget, probe).await {
        Ok(probe) => judge(check, probe),
        Err(_) => outcome::timed_out(started.elapsed().as_secs_f64() * 1000.0, max_ms),
    }
}

fn has_scripts(check: &Value) -> bool {
    ["localSetupScript", "localTearDownScript"]
        .iter()
        .any(|f| check[*f].as_str().is_some_and(|s| !s.trim().is_empty()))
}
