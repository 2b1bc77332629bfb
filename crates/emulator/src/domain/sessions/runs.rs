//! Runs: executing them through `monform-runner` in the background, with
//! the account's variables and the pings `/ping/{token}` recorded
//! ([`crate::domain::heartbeats`]), retry backoffs shortened by
//! `Config::backoff_second` and capped at [`MAX_WAIT`] so retried sessions
//! stay quick; and the one place that decides how a run turned out
//! ([`run_check`]).

use std::time::Duration;

use monform_model::Kind;
use monform_model::resources::CheckType;
use monform_runner::{Attempt, BrowserSetup, Job, Runner, RunnerConfig, Variables};
use rusqlite::Connection;
use serde_json::{Value, json};

pub use monform_runner::{Outcome, RunStatus};

use super::pool;
use super::{CHANGED, CHECK_SESSIONS, DEFAULT_LOCATION, PENDING, TEST_SESSIONS, internal, is_final};
use crate::app::{App, AppState, Config};
use crate::clock::now_ms;
use crate::domain::agents;
use crate::domain::checks::effective_check;
use crate::domain::heartbeats::StoredPings;
use crate::domain::outages::{self, OUTAGE_ERROR, Outage, slow_verdict};
use crate::ids::id_text;
use crate::store::Objects;

/// The longest one backoff really waits in the emulator.
pub const MAX_WAIT: Duration = Duration::from_secs(2);

/// The runner of an emulator started with `config`: browser-type checks
/// run where Node.js, playwright-core and Chromium are found, else they
/// stay "not executed".
pub fn runner(config: &Config) -> Runner {
    let runner = Runner::new(RunnerConfig {
        backoff_second: config.backoff_second,
        max_wait: Some(MAX_WAIT),
    });
    let browser = config.browser.clone().unwrap_or_else(|| BrowserSetup::discover(None));
    match browser.missing(true) {
        None => runner.with_browser(browser),
        Some(why) => {
            tracing::debug!("browser checks are not executed: {why}");
            runner
        }
    }
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
    let pings = StoredPings { app, account };
    app.runner.execute(job(check, &variables, &pings, "")).await
}

/// The run of `check` in `location`, with its retries; the last attempt
/// is the run's outcome.
pub async fn run(app: &App, account: &str, check: &Value, location: &str) -> Vec<Attempt> {
    let variables = variables(app, account, check);
    let pings = StoredPings { app, account };
    app.runner.run(job(check, &variables, &pings, location)).await
}

fn job<'a>(check: &'a Value, variables: &'a Variables, pings: &'a StoredPings<'a>, location: &'a str) -> Job<'a> {
    Job {
        check,
        variables,
        heartbeats: Some(pings),
        location,
    }
}

/// What one run of a check in one location produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub has_failures: bool,
    pub has_errors: bool,
    pub is_degraded: bool,
    pub over_max_response_time: bool,
    /// Milliseconds.
    pub response_time: f64,
    /// `apiCheckResult` for API checks, else null.
    pub api_result: Value,
    /// `browserCheckResult` for browser checks, else null.
    pub browser_result: Value,
    /// Passed, Failed, Degraded or TimedOut.
    pub status: RunStatus,
    /// Why the run failed (null when it passed).
    pub error: Option<String>,
    /// The runner's own account of the run (assertions, details, notes), or null.
    pub run_result: Value,
}

impl RunOutcome {
    /// The form of a run `monform-runner` produced.
    pub fn from_runner(outcome: &Outcome) -> RunOutcome {
        RunOutcome {
            has_failures: outcome.has_failures,
            has_errors: outcome.has_errors,
            is_degraded: outcome.status == RunStatus::Degraded,
            over_max_response_time: outcome.over_max_response_time,
            response_time: outcome.response_time,
            api_result: outcome.api_result.clone(),
            browser_result: Value::Null,
            status: outcome.status,
            error: outcome.error.clone(),
            run_result: json!({
                "executed": outcome.executed,
                "status": outcome.status.as_str(),
                "assertions": outcome.assertions,
                "details": outcome.details,
                "notes": outcome.notes,
            }),
        }
    }

    pub fn failed(&self) -> bool {
        self.has_failures || self.has_errors
    }
}

/// How a run of `check` (of type `check_type`) in `location` turns out when
/// checks are not executed (`Config::execute_checks` off): every run passes,
/// with a plausible response time derived from `seed` (stable for a run).
pub fn simulate_run(check_type: Option<CheckType>, check: Option<&Value>, location: &str, seed: &str) -> RunOutcome {
    let hash = fnv(seed) ^ fnv(location);
    let response_time = 40.0 + (hash % 36_000) as f64 / 100.0; // 40..400 ms
    let part = |share: f64| (response_time * share * 100.0).round() / 100.0;
    let api_result = if check_type == Some(CheckType::Api) {
        let request = check.map(|c| &c["request"]).unwrap_or(&Value::Null);
        json!({
            "assertions": [],
            "request": {
                "method": request["method"].as_str().unwrap_or("GET"),
                "url": request["url"].as_str().unwrap_or(""),
                "data": request["body"].as_str().unwrap_or(""),
                "headers": {},
                "params": {},
            },
            "response": {
                "status": 200,
                "statusText": "OK",
                "body": "",
                "headers": {},
                "timings": {},
                "timingPhases": {
                    "wait": part(0.05), "dns": part(0.1), "tcp": part(0.15),
                    "firstByte": part(0.5), "download": part(0.2), "total": response_time,
                },
            },
            "requestError": null,
            "jobLog": null,
            "jobAssets": null,
        })
    } else {
        Value::Null
    };
    let browser_result = if check_type == Some(CheckType::Browser) {
        json!({
            "type": "PLAYWRIGHT",
            "traceSummary": { "consoleErrors": 0, "networkErrors": 0, "userScriptErrors": 0, "documentErrors": 0 },
            "pages": [{
                "url": "",
                "webVitals": {
                    "TTFB": { "value": part(0.2) }, "FCP": { "value": part(0.5) }, "LCP": { "value": part(0.8) },
                    "CLS": { "value": 0.01 }, "TBT": { "value": part(0.1) },
                },
            }],
            "playwrightTestVideos": [],
            "errors": [],
            "runtimeVersion": check.and_then(|c| c["runtimeId"].as_str()).unwrap_or("2026.04"),
            "jobLog": null,
            "jobAssets": null,
            "playwrightTestTraces": [],
        })
    } else {
        Value::Null
    };
    RunOutcome {
        has_failures: false,
        has_errors: false,
        is_degraded: false,
        over_max_response_time: false,
        response_time,
        api_result,
        browser_result,
        status: RunStatus::Passed,
        error: None,
        run_result: Value::Null,
    }
}

/// Record kind: what the runner produced for one run (id: the run's
/// `sequenceId` or `testSessionResultId`; parent: the session id), kept
/// until the session settles.
pub const RUN_OUTCOMES: &str = "runOutcomes";

/// A run with no outcome this long after its session's end (the emulator
/// stopped while it ran) is recorded as lost.
const LOST_AFTER_MS: i64 = 10_000;

/// How the run `key` of `session` turned out: the one place that decides.
///
/// Sessions triggered with execution on (`_internal.execute`) take the
/// outcome the runner stored ([`spawn_run`]); `None` while it still runs.
/// A run whose outcome never came (lost in a restart) is an error. Other
/// sessions use [`simulate_run`]. A check session's run that started in a
/// simulated outage of its check (`domain::simulate`) turns out as the
/// outage says, whatever the probe found.
pub fn run_check(
    db: &Connection,
    account: &str,
    session: &Value,
    key: &str,
    check: Option<&Value>,
    location: &str,
    now: i64,
) -> rusqlite::Result<Option<(RunOutcome, i64)>> {
    let Some((outcome, stopped)) = probe_outcome(db, account, session, key, check, location, now)? else {
        return Ok(None);
    };
    let outage = match check {
        Some(check) if session.get("checkSessionId").is_some() => {
            outages::outage_at(db, account, check, internal(session, "startedAtMs"))?
        }
        _ => None,
    };
    Ok(Some(match outage {
        Some(outage) => (outage_outcome(&outage, check, outcome), stopped),
        None => (outcome, stopped),
    }))
}

/// The outcome of a run `outage` covers, from the one it would have had.
fn outage_outcome(outage: &Outage, check: Option<&Value>, base: RunOutcome) -> RunOutcome {
    match outage.response_ms {
        None => RunOutcome {
            has_failures: true,
            has_errors: false,
            is_degraded: false,
            over_max_response_time: false,
            api_result: Value::Null,
            browser_result: Value::Null,
            status: RunStatus::Failed,
            error: Some(OUTAGE_ERROR.to_owned()),
            run_result: json!({"executed": false, "status": RunStatus::Failed.as_str(), "notes": [OUTAGE_ERROR]}),
            ..base
        },
        Some(ms) => {
            let (degraded, failed) = slow_verdict(check, ms);
            RunOutcome {
                response_time: f64::from(ms),
                has_failures: failed,
                is_degraded: degraded && !failed,
                over_max_response_time: failed,
                status: if failed {
                    RunStatus::Failed
                } else if degraded {
                    RunStatus::Degraded
                } else {
                    base.status
                },
                error: failed.then(|| format!("response time {ms} ms is over maxResponseTime (simulated slow-down)")),
                ..base
            }
        }
    }
}

/// [`run_check`] as the probe (or the simulation) found it.
fn probe_outcome(
    db: &Connection,
    account: &str,
    session: &Value,
    key: &str,
    check: Option<&Value>,
    location: &str,
    now: i64,
) -> rusqlite::Result<Option<(RunOutcome, i64)>> {
    if session["_internal"]["execute"] != true {
        let check_type = CheckType::of_check(session).ok();
        let stopped = internal(session, "endsAtMs");
        return Ok(Some((simulate_run(check_type, check, location, key), stopped)));
    }
    if let Some(record) = db.get(account, RUN_OUTCOMES, key)?
        && let Some(outcome) = monform_runner::from_record(&record["outcome"])
    {
        let stopped = record["finishedAtMs"].as_i64().unwrap_or(now);
        return Ok(Some((RunOutcome::from_runner(&outcome), stopped)));
    }
    if now < internal(session, "lostAtMs") {
        return Ok(None);
    }
    if let Some(unreported) = agents::unreported(db, account, key)? {
        return Ok(Some((RunOutcome::from_runner(&unreported), now)));
    }
    let lost = monform_runner::errored("the run was lost: the emulator stopped before it finished");
    Ok(Some((RunOutcome::from_runner(&lost), now)))
}

/// Runs `check` in `location` in the background (with its retries,
/// `monform_runner::retry`) and stores the outcome under `key` (kind
/// [`RUN_OUTCOMES`]), then wakes the session's waiters. A run still going
/// when the server stops is abandoned; [`resume_runs`] restarts it. A run
/// in a private location (`location` is its slug) is not executed here but
/// queued for the location's agents ([`agents::enqueue`]).
pub fn spawn_run(app: &AppState, account: &str, session_id: &str, key: &str, location: &str, check: Value) {
    let queued = app.store.transaction(|tx| {
        let private = agents::private_location(tx, account, location)?;
        if private.is_some() {
            agents::enqueue(tx, account, session_id, key, location, &check)?;
        }
        Ok::<_, rusqlite::Error>(private.is_some())
    });
    match queued {
        Ok(true) => return,
        Ok(false) => {}
        Err(e) => tracing::warn!(%key, "cannot queue a run for a private location: {e}"),
    }
    let (app, account, session_id, key) = (app.clone(), account.to_owned(), session_id.to_owned(), key.to_owned());
    let location = location.to_owned();
    tokio::spawn(async move {
        let mut stopped = app.stopped.subscribe();
        let queued = needs_slot(&app.runner, &check).then(|| app.browser_pool.enter(pool::queue_limit(&check)));
        let attempts = tokio::select! {
            attempts = slotted(&app, &account, &check, &location, queued) => attempts,
            _ = stopped.wait_for(|s| *s) => return,
        };
        let record = monform_runner::retry::to_record(&attempts);
        let finished = record["finishedAtMs"].as_i64().unwrap_or_else(now_ms);
        if let Err(e) = app
            .store
            .transaction(|tx| store_outcome(tx, &account, &session_id, &key, finished, &record))
        {
            tracing::warn!(%key, "cannot store the outcome of a run: {e}");
        }
        outcome_stored();
    });
}

/// Whether a run of `check` takes one of the pool's slots: it starts a
/// process (only when this runner executes browser-type checks at all).
fn needs_slot(runner: &Runner, check: &Value) -> bool {
    runner.runs_browsers() && pool::needs_process(check)
}

/// The run, once `queued` (a wait for a pool slot, when it needs one)
/// gives it a slot, held until the run ends; a run that got none in time
/// is one timed-out attempt.
async fn slotted(
    app: &App,
    account: &str,
    check: &Value,
    location: &str,
    queued: Option<impl Future<Output = Result<tokio::sync::OwnedSemaphorePermit, Outcome>>>,
) -> Vec<Attempt> {
    let started = now_ms();
    let _slot = match queued {
        None => None,
        Some(wait) => match wait.await {
            Ok(permit) => Some(permit),
            Err(outcome) => {
                return vec![Attempt {
                    outcome,
                    location: location.to_owned(),
                    started_ms: started,
                    finished_ms: now_ms(),
                }];
            }
        },
    };
    run(app, account, check, location).await
}

/// Stores the outcome `record` (the runner's `retry::to_record` form) of
/// the run `key` of `session_id`, unless the session is over (cancelled or
/// deleted meanwhile: it needs no outcome). Call [`outcome_stored`] after
/// the transaction.
pub fn store_outcome(
    db: &Connection,
    account: &str,
    session_id: &str,
    key: &str,
    finished: i64,
    record: &Value,
) -> rusqlite::Result<()> {
    for kind in [CHECK_SESSIONS, TEST_SESSIONS] {
        if let Some(session) = db.get(account, kind, session_id)? {
            if !is_final(kind, &session) && db.get(account, RUN_OUTCOMES, key)?.is_none() {
                db.insert(account, RUN_OUTCOMES, key, Some(session_id), finished, record)?;
            }
            break;
        }
    }
    Ok(())
}

/// Wakes the waiters of sessions once an outcome is stored.
pub fn outcome_stored() {
    CHANGED.notify_waiters();
}

/// Restarts the runs of executing sessions that have no outcome yet (the
/// emulator stopped while they ran), giving them a new lost deadline.
/// Called once by `start`.
pub fn resume_runs(app: &AppState) -> rusqlite::Result<()> {
    let pending: Vec<(String, String, String)> = {
        let db = app.store.lock();
        let mut statement = db.prepare("SELECT account_id, id, body FROM objects WHERE kind = ?1")?;
        statement
            .query_map([PENDING], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    for (account, id, marker) in pending {
        let kind = serde_json::from_str::<Value>(&marker)
            .ok()
            .and_then(|m| m["kind"].as_str().map(str::to_owned))
            .unwrap_or_else(|| CHECK_SESSIONS.to_owned());
        let kind = if kind == TEST_SESSIONS {
            TEST_SESSIONS
        } else {
            CHECK_SESSIONS
        };
        let runs = app.store.transaction(|tx| {
            let Some(mut session) = tx.get(&account, kind, &id)? else {
                return Ok::<_, rusqlite::Error>(Vec::new());
            };
            if session["_internal"]["execute"] != true || is_final(kind, &session) {
                return Ok(Vec::new());
            }
            let items: Vec<(String, String, String)> = if kind == CHECK_SESSIONS {
                session["_internal"]["runs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|r| r["cancelled"] != true)
                    .map(|r| {
                        let location = r["location"].as_str().unwrap_or(DEFAULT_LOCATION).to_owned();
                        (id_text(&r["sequenceId"]), id_text(&session["checkId"]), location)
                    })
                    .collect()
            } else {
                session["results"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let location = r["runLocation"].as_str().unwrap_or(DEFAULT_LOCATION).to_owned();
                        (id_text(&r["testSessionResultId"]), id_text(&r["checkId"]), location)
                    })
                    .collect()
            };
            let mut runs = Vec::new();
            for (key, check_id, location) in items {
                if tx.get(&account, RUN_OUTCOMES, &key)?.is_some() {
                    continue;
                }
                if let Some(check) = tx.get(&account, Kind::Check.section(), &check_id)? {
                    let mut check = effective_check(tx, &account, check)?;
                    if kind == TEST_SESSIONS {
                        test_session_strategy(&session, &mut check);
                    }
                    runs.push((key, location, check));
                }
            }
            if !runs.is_empty() {
                let checks: Vec<&Value> = runs.iter().map(|(_, _, c)| c).collect();
                let now = now_ms();
                session["_internal"]["lostAtMs"] = json!(lost_at(&app.runner, now, now, &checks));
                tx.replace(&account, kind, &id, &session)?;
            }
            Ok(runs)
        })?;
        for (key, location, check) in runs {
            spawn_run(app, &account, &id, &key, &location, check);
        }
    }
    Ok(())
}

/// A test session's `retryStrategy`, when given, replaces the check's.
pub(super) fn test_session_strategy(session: &Value, check: &mut Value) {
    let strategy = &session["_internal"]["retryStrategy"];
    if strategy.is_object() {
        check["retryStrategy"] = strategy.clone();
    }
}

/// When a session of `checks` started at `started` counts its missing runs
/// as lost: after the longest run (maxResponseTime, with retries), plus a
/// margin.
pub(super) fn lost_at(runner: &Runner, started: i64, ends: i64, checks: &[&Value]) -> i64 {
    // A run that queues for a pool slot may wait its queue limit first.
    let longest = checks
        .iter()
        .map(|c| {
            let queue = if needs_slot(runner, c) {
                pool::queue_limit(c).as_millis() as i64
            } else {
                0
            };
            runner.worst_case_ms(c) + queue
        })
        .max()
        .unwrap_or(0);
    ends.max(started + longest) + LOST_AFTER_MS
}

pub(crate) fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------
// Time and small helpers.
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_stable_and_pass() {
        let a = simulate_run(Some(CheckType::Api), None, "eu-west-1", "seed");
        assert_eq!(a, simulate_run(Some(CheckType::Api), None, "eu-west-1", "seed"));
        assert!(!a.has_failures && (40.0..400.0).contains(&a.response_time));
        assert!(a.api_result["response"]["timingPhases"]["dns"].is_number());
        assert!(
            simulate_run(Some(CheckType::Icmp), None, "eu-west-1", "seed")
                .api_result
                .is_null()
        );
    }
}
