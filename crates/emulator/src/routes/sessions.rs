//! Check sessions and test sessions (api-contract.md, "Sessions, results and
//! reports"; shapes from the reference's `CheckSessionsV2*` and
//! `*TestSession*` schemas).
//!
//! A triggered session is stored at once (kind `checkSessions` with the check
//! id as parent, or `testSessions`) together with a `pendingSessions` marker
//! holding its end time. With `Config::execute_checks` (the default) every
//! run is executed in the background by the local runner ([`spawn_run`],
//! `crate::runner`), which stores its outcome (kind [`RUN_OUTCOMES`]). A
//! session is *settled* (finished, see [`run_check`]) by the first request
//! that reads it once its end time has passed and every run has its
//! outcome, or that lists results, analytics or reports ([`settle_due`]).
//! Everything lives in SQLite, so a session triggered before a restart
//! finishes after it: runs cut short by the stop start again
//! ([`resume_runs`]). Without execution every run passes ([`simulate_run`]).
//!
//! A failed run is retried per the check's retry strategy
//! (`runner::retry`): the earlier tries become ATTEMPT check results of the
//! run's `sequenceId`; a session's `results` list the FINAL ones, with
//! `attempts` = the number of retries. A finished check session (not a test
//! session) moves the check's alert state (`crate::alerts`), which may
//! raise alerts and notifications (`crate::notify`).
//!
//! Outcomes: a session is CANCELLED if any run was cancelled, else FAILED if
//! a run failed, else TIMED_OUT if a run timed out (maxResponseTime), else
//! DEGRADED if a run was degraded, else PASSED. A test session is FAILED
//! when any run failed or timed out (its results carry the run's status).
//! A failed run's error joins an error group of its check (kind
//! `errorGroups`, deduplicated by the hash of the message with numbers
//! replaced by `<n>`); results and test sessions list its id.
//!
//! Choices where the specification is silent:
//! - A trigger that matches no check answers **404** ("no checks match the
//!   target", with the reason for every check named in `target.checkId`).
//! - Deactivated checks never match a check session, nor a test session
//!   unless `target.allowDeactivated`; heartbeat checks never match (they are
//!   pinged, not run). Group settings apply (tags, locations, activation).
//! - `target.checkId` and `target.matchTags` are both filters: a check must
//!   pass each one given. `matchTags` is an OR of AND-groups.
//! - A check session runs in every location of its check when `runParallel`
//!   is set, otherwise in one location chosen round-robin; a check without
//!   locations runs in `us-east-1`.
//! - Non-final check session status: `STARTED` in the trigger response,
//!   `PROGRESS` when read later. `results` stays empty until runs finish.
//! - Cancelling a session that is already final is an idempotent **204** and
//!   changes nothing. Cancelling a running one makes it `CANCELLED` at once,
//!   with one `FINAL` result per location marked `isCancelled: true` (also
//!   recorded as check results). `sequenceId` in the body cancels only those
//!   runs (400 for ids not in the session); the session is then `CANCELLED`
//!   when it ends.
//! - `timeElapsed` is in milliseconds. Links point at the emulator's own API
//!   (`/v2/check-sessions/{id}`, `/v1/test-sessions/{id}`; a result's link is
//!   its session's link with `#<resultId>`).
//! - Test sessions require `name` and `runLocation` (as the reference does);
//!   they record no check results and raise no alerts.

use std::sync::LazyLock;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use monform_model::resources::{CheckType, Location};
use monform_model::{FieldPath, Kind, Violation};
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use super::Route;
use super::checks::apply_group;
use super::objects::id_text;
use super::reads::ERROR_GROUPS;
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::{JsonBody, Params};
use crate::error::{ApiError, ApiResult};
use crate::runner::{self, RunStatus};
use crate::store::Objects;
use crate::{alerts, clock};
use monform_runner::Runner;

/// Record kinds.
pub const CHECK_SESSIONS: &str = "checkSessions";
pub const TEST_SESSIONS: &str = "testSessions";
/// Check results (parent: check id; ts: when the run stopped).
pub const CHECK_RESULTS: &str = "checkResults";
/// Sessions not final yet (ts: when they end), so settling need not scan all.
const PENDING: &str = "pendingSessions";

/// The longest a completion call waits (spec 8).
pub const MAX_WAIT_SECONDS: i64 = 30;
/// Waiters re-read the session at least this often (a cancel from another
/// process sharing the file is seen this way).
const POLL: Duration = Duration::from_millis(250);
/// Used when a check names no location.
const DEFAULT_LOCATION: &str = "us-east-1";

const FINAL_CHECK_STATUSES: &[&str] = &["PASSED", "FAILED", "DEGRADED", "TIMED_OUT", "CANCELLED"];
const FINAL_TEST_STATUSES: &[&str] = &["PASSED", "FAILED", "CANCELLED"];

/// Wakes completion waiters when a session changes (cancel).
static CHANGED: LazyLock<Notify> = LazyLock::new(Notify::new);

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "POST",
            "/v2/check-sessions/trigger",
            "Trigger a check session for each matching check (404 if none match)",
            post(trigger_check_sessions),
        ),
        Route::new(
            "GET",
            "/v2/check-sessions/{checkSessionId}",
            "Get a check session and its results",
            get(get_check_session),
        ),
        Route::new(
            "GET",
            "/v2/check-sessions/{checkSessionId}/completion",
            "Await a check session (maxWaitSeconds 1..30, default 30; 408 while running)",
            get(await_check_session),
        ),
        Route::new(
            "POST",
            "/v1/check-sessions/{checkSessionId}/cancel",
            "Cancel a check session (204; idempotent on final sessions)",
            post(cancel_check_session),
        ),
        Route::new(
            "POST",
            "/v1/test-sessions/trigger",
            "Trigger a test session of the matching checks (404 if none match)",
            post(trigger_test_session),
        ),
        Route::new(
            "GET",
            "/v1/test-sessions/{testSessionId}",
            "Get a test session",
            get(get_test_session),
        ),
        Route::new(
            "GET",
            "/v1/test-sessions/{testSessionId}/completion",
            "Await a test session (maxWaitSeconds 1..30, default 30; 408 while running)",
            get(await_test_session),
        ),
    ]
}

// ---------------------------------------------------------------------------
// Running: the one place that decides how a run turns out.
// ---------------------------------------------------------------------------

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
    /// PASSED, FAILED, DEGRADED or TIMED_OUT.
    pub status: &'static str,
    /// Why the run failed (null when it passed).
    pub error: Option<String>,
    /// The runner's own account of the run (assertions, details, notes), or null.
    pub run_result: Value,
}

impl RunOutcome {
    /// The form of a run the local runner ([`runner::execute`]) produced.
    pub fn from_runner(outcome: &runner::Outcome) -> RunOutcome {
        RunOutcome {
            has_failures: outcome.has_failures,
            has_errors: outcome.has_errors,
            is_degraded: outcome.status == RunStatus::Degraded,
            over_max_response_time: outcome.over_max_response_time,
            response_time: outcome.response_time,
            api_result: outcome.api_result.clone(),
            browser_result: Value::Null,
            status: outcome.status.as_str(),
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

    fn failed(&self) -> bool {
        self.has_failures || self.has_errors
    }
}

/// How a run of `check` (of type `check_type`) in `location` turns out when
/// checks are not executed (`Config::execute_checks` off): every run passes,
/// with a plausible response time derived from `seed` (stable for a run).
pub fn simulate_run(check_type: &str, check: Option<&Value>, location: &str, seed: &str) -> RunOutcome {
    let hash = fnv(seed) ^ fnv(location);
    let response_time = 40.0 + (hash % 36_000) as f64 / 100.0; // 40..400 ms
    let part = |share: f64| (response_time * share * 100.0).round() / 100.0;
    let api_result = if check_type == "API" {
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
    let browser_result = if check_type == "BROWSER" {
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
        status: "PASSED",
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
/// sessions use [`simulate_run`].
pub fn run_check(
    db: &Connection,
    account: &str,
    session: &Value,
    key: &str,
    check: Option<&Value>,
    location: &str,
    now: i64,
) -> rusqlite::Result<Option<(RunOutcome, i64)>> {
    let check_type = session["checkType"].as_str().unwrap_or_default();
    if session["_internal"]["execute"] != true {
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
    let lost = monform_runner::errored("the run was lost: the emulator stopped before it finished");
    Ok(Some((RunOutcome::from_runner(&lost), now)))
}

/// Runs `check` in `location` in the background (with its retries,
/// `runner::retry`) and stores the outcome under `key` (kind
/// [`RUN_OUTCOMES`]), then wakes the session's waiters. A run still going
/// when the server stops is abandoned; [`resume_runs`] restarts it.
pub fn spawn_run(app: &AppState, account: &str, session_id: &str, key: &str, location: &str, check: Value) {
    let (app, account, session_id, key) = (app.clone(), account.to_owned(), session_id.to_owned(), key.to_owned());
    let location = location.to_owned();
    tokio::spawn(async move {
        let mut stopped = app.stopped.subscribe();
        let attempts = tokio::select! {
            attempts = runner::run(&app, &account, &check, &location) => attempts,
            _ = stopped.wait_for(|s| *s) => return,
        };
        let record = monform_runner::retry::to_record(&attempts);
        let finished = record["finishedAtMs"].as_i64().unwrap_or_else(now_ms);
        let stored = app.store.transaction(|tx| {
            // A session cancelled (or deleted) meanwhile needs no outcome.
            for kind in [CHECK_SESSIONS, TEST_SESSIONS] {
                if let Some(session) = tx.get(&account, kind, &session_id)? {
                    if !is_final(kind, &session) {
                        tx.insert(&account, RUN_OUTCOMES, &key, Some(&session_id), finished, &record)?;
                    }
                    break;
                }
            }
            Ok::<_, rusqlite::Error>(())
        });
        if let Err(e) = stored {
            tracing::warn!(%key, "cannot store the outcome of a run: {e}");
        }
        CHANGED.notify_waiters();
    });
}

/// Restarts the runs of executing sessions that have no outcome yet (the
/// emulator stopped while they ran), giving them a new lost deadline.
/// Called once by `start`.
pub(crate) fn resume_runs(app: &AppState) -> rusqlite::Result<()> {
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
fn test_session_strategy(session: &Value, check: &mut Value) {
    let strategy = &session["_internal"]["retryStrategy"];
    if strategy.is_object() {
        check["retryStrategy"] = strategy.clone();
    }
}

/// When a session of `checks` started at `started` counts its missing runs
/// as lost: after the longest run (maxResponseTime, with retries), plus a
/// margin.
fn lost_at(runner: &Runner, started: i64, ends: i64, checks: &[&Value]) -> i64 {
    let longest = checks.iter().map(|c| runner.worst_case_ms(c)).max().unwrap_or(0);
    ends.max(started + longest) + LOST_AFTER_MS
}

/// Hash of a cleaned error message, for error groups (spec 2.17).
fn error_hash(cleaned: &str) -> String {
    format!("{:016x}", fnv(cleaned))
}

/// An error message without what changes from run to run (numbers, ids).
pub fn clean_error(message: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push_str("<n>");
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// The error group of `message` for `check_id` (created, or its lastSeen
/// updated); returns its id.
fn error_group(db: &Connection, account: &str, check_id: &str, message: &str, now: i64) -> rusqlite::Result<String> {
    let cleaned = clean_error(message);
    let hash = error_hash(&cleaned);
    for row in db.records(account, ERROR_GROUPS, Some(check_id), i64::MIN, i64::MAX)? {
        if row.body["errorHash"] == hash.as_str() {
            let mut group = row.body;
            group["lastSeen"] = json!(iso(now));
            group["rawErrorMessage"] = json!(message);
            group["archivedUntilNextEvent"] = json!(false);
            db.replace(account, ERROR_GROUPS, &row.id, &group)?;
            return Ok(row.id);
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let group = json!({
        "id": id,
        "checkId": check_id,
        "errorHash": hash,
        "rawErrorMessage": message,
        "cleanedErrorMessage": cleaned,
        "firstSeen": iso(now),
        "lastSeen": iso(now),
        "archivedUntilNextEvent": false,
        "rootCauseAnalyses": [],
    });
    db.insert(account, ERROR_GROUPS, &id, Some(check_id), now, &group)?;
    Ok(id)
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------
// Time and small helpers.
// ---------------------------------------------------------------------------

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// An ISO 8601 date-time for UNIX milliseconds.
pub fn iso(ms: i64) -> String {
    clock::format(chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default())
}

/// The emulator's own address as the client reached it, for links.
pub fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

fn internal(session: &Value, field: &str) -> i64 {
    session["_internal"][field].as_i64().unwrap_or(0)
}

fn is_final(kind: &str, session: &Value) -> bool {
    let statuses = if kind == CHECK_SESSIONS {
        FINAL_CHECK_STATUSES
    } else {
        FINAL_TEST_STATUSES
    };
    session["status"].as_str().is_some_and(|s| statuses.contains(&s))
}

fn noun(kind: &str) -> &'static str {
    if kind == CHECK_SESSIONS {
        "check session"
    } else {
        "test session"
    }
}

// ---------------------------------------------------------------------------
// Settling: finishing sessions whose time is up.
// ---------------------------------------------------------------------------

/// Finishes `session` if its end time has passed. Returns whether it changed.
fn settle(db: &Connection, account: &str, kind: &str, session: &mut Value, now: i64) -> rusqlite::Result<bool> {
    if is_final(kind, session) || internal(session, "endsAtMs") > now {
        return Ok(false);
    }
    let finished = if kind == CHECK_SESSIONS {
        finish_check_session(db, account, session, now)?
    } else {
        finish_test_session(db, account, session, now)?
    };
    if !finished {
        return Ok(false);
    }
    let id_field = if kind == CHECK_SESSIONS {
        "checkSessionId"
    } else {
        "testSessionId"
    };
    let id = id_text(&session[id_field]);
    db.replace(account, kind, &id, session)?;
    db.delete(account, PENDING, &id)?;
    Ok(true)
}

/// Finishes every session of `account` whose end time has passed, so that
/// result listings, analytics and reports see their results.
pub fn settle_due(db: &Connection, account: &str) -> rusqlite::Result<()> {
    let now = now_ms();
    crate::retention::maybe_sweep(db, now)?;
    for pending in db.records(account, PENDING, None, i64::MIN, now.saturating_add(1))? {
        let kind = pending.body["kind"].as_str().unwrap_or(CHECK_SESSIONS);
        match db.get(account, kind, &pending.id)? {
            Some(mut session) => {
                settle(db, account, kind, &mut session, now)?;
            }
            None => {
                db.delete(account, PENDING, &pending.id)?;
            }
        }
    }
    Ok(())
}

/// Reads a session (settling it first), or answers 404.
fn load_settled(app: &AppState, account: &str, kind: &str, id: &str) -> ApiResult<Value> {
    app.store.transaction(|tx| {
        let mut session = tx
            .get(account, kind, id)?
            .ok_or_else(|| ApiError::not_found(noun(kind), id))?;
        settle(tx, account, kind, &mut session, now_ms())?;
        Ok(session)
    })
}

/// Waits until the session is final (200) or `max_wait` has passed (408,
/// also at once when the server begins to stop).
async fn await_final(app: &AppState, account: &str, kind: &str, id: &str, max_wait: Duration) -> ApiResult<Value> {
    let deadline = tokio::time::Instant::now() + max_wait;
    loop {
        // Registered before reading, so a cancel in between still wakes us.
        let notified = CHANGED.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let session = load_settled(app, account, kind, id)?;
        if is_final(kind, &session) {
            return Ok(session);
        }
        let now = tokio::time::Instant::now();
        // Graceful shutdown waits for requests in flight: do not hold it up.
        if app.shutting_down.load(Ordering::SeqCst) {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "{} {id} is still running and the server is stopping; repeat the call",
                    noun(kind)
                ),
            ));
        }
        if now >= deadline {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "{} {id} is still running after {} s; repeat the call to keep waiting",
                    noun(kind),
                    max_wait.as_secs_f64()
                ),
            ));
        }
        // Past its end a session waits for its runs: their outcomes notify.
        let left = internal(&session, "endsAtMs") - now_ms();
        let until_end = if left >= 0 {
            Duration::from_millis(left as u64 + 1)
        } else {
            POLL
        };
        let wake = deadline.min(now + until_end).min(now + POLL);
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            _ = &mut notified => {}
        }
    }
}

// ---------------------------------------------------------------------------
// Targets: which checks a trigger runs.
// ---------------------------------------------------------------------------

#[derive(Debug, Default)]
struct Target {
    check_ids: Option<Vec<String>>,
    match_tags: Option<Vec<Vec<String>>>,
    allow_deactivated: bool,
}

fn parse_target(value: Option<&Value>, test_session: bool, violations: &mut Vec<Violation>) -> Target {
    let mut target = Target::default();
    let path = FieldPath::root().key("target");
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return target;
    };
    let allowed: &[&str] = if test_session {
        &["checkId", "matchTags", "allowDeactivated"]
    } else {
        &["checkId", "matchTags"]
    };
    let Some(object) = expect_object(value, &path, allowed, violations) else {
        return target;
    };
    if let Some(ids) = object.get("checkId") {
        let ids_path = path.key("checkId");
        match ids.as_array() {
            Some(list) => {
                let mut out = Vec::new();
                for (i, id) in list.iter().enumerate() {
                    match id.as_str() {
                        Some(text) if uuid::Uuid::parse_str(text).is_ok() => out.push(text.to_owned()),
                        _ => violations.push(Violation::new(
                            ids_path.index(i),
                            format!("{id} is not a check id (a uuid)"),
                        )),
                    }
                }
                target.check_ids = Some(out);
            }
            None => violations.push(Violation::new(ids_path, "must be an array of check ids")),
        }
    }
    if let Some(groups) = object.get("matchTags") {
        let tags_path = path.key("matchTags");
        match groups.as_array() {
            Some(list) => {
                let mut out = Vec::new();
                for (i, group) in list.iter().enumerate() {
                    let tags: Option<Vec<String>> = group
                        .as_array()
                        .and_then(|g| g.iter().map(|t| t.as_str().map(str::to_owned)).collect());
                    match tags {
                        Some(tags) => out.push(tags),
                        None => violations.push(Violation::new(
                            tags_path.index(i),
                            "must be an array of tags (strings); matchTags is an OR of AND-groups",
                        )),
                    }
                }
                target.match_tags = Some(out);
            }
            None => violations.push(Violation::new(
                tags_path,
                "must be an array of arrays of tags, e.g. [[\"prod\", \"api\"], [\"smoke\"]]",
            )),
        }
    }
    if let Some(flag) = object.get("allowDeactivated") {
        match flag.as_bool() {
            Some(b) => target.allow_deactivated = b,
            None => violations.push(Violation::new(path.key("allowDeactivated"), "must be true or false")),
        }
    }
    target
}

/// A check as it runs: with its group's settings applied.
pub fn effective_check(db: &Connection, account: &str, check: Value) -> rusqlite::Result<Value> {
    let group_id = &check["groupId"];
    if group_id.is_null() {
        return Ok(check);
    }
    match db.get(account, Kind::Group.section(), &id_text(group_id))? {
        Some(group) => Ok(apply_group(check, &group)),
        None => Ok(check),
    }
}

/// Whether `check` carries every tag of some group of `match_tags`.
pub fn has_tags(check: &Value, tags: &[String]) -> bool {
    let own = check["tags"].as_array();
    tags.iter()
        .all(|t| own.is_some_and(|list| list.iter().any(|x| x.as_str() == Some(t))))
}

/// The checks a trigger runs (with group settings applied), or 404.
fn matching_checks(db: &Connection, account: &str, target: &Target) -> ApiResult<Vec<Value>> {
    let mut matched = Vec::new();
    let mut skipped = Vec::new();
    for row in db.all(account, Kind::Check.section())? {
        let check = effective_check(db, account, row.body)?;
        let named = target.check_ids.as_ref().map(|ids| ids.contains(&row.id));
        if named == Some(false) {
            continue;
        }
        if let Some(groups) = &target.match_tags
            && !groups.is_empty()
            && !groups.iter().any(|g| has_tags(&check, g))
        {
            if named == Some(true) {
                skipped.push(format!("check {} has none of the tag groups of matchTags", row.id));
            }
            continue;
        }
        if check["checkType"] == "HEARTBEAT" {
            if named == Some(true) {
                skipped.push(format!(
                    "check {} is a heartbeat check, which cannot be triggered",
                    row.id
                ));
            }
            continue;
        }
        if check["activated"] == false && !target.allow_deactivated {
            if named == Some(true) {
                skipped.push(format!("check {} is deactivated", row.id));
            }
            continue;
        }
        matched.push(check);
    }
    if matched.is_empty() {
        for id in target.check_ids.iter().flatten() {
            if db.get(account, Kind::Check.section(), id)?.is_none() {
                skipped.push(format!("check {id} not found"));
            }
        }
        let mut message = "no checks match the target".to_owned();
        if !skipped.is_empty() {
            message.push_str(": ");
            message.push_str(&skipped.join("; "));
        }
        return Err(ApiError::new(StatusCode::NOT_FOUND, message));
    }
    Ok(matched)
}

// ---------------------------------------------------------------------------
// Check sessions.
// ---------------------------------------------------------------------------

async fn trigger_check_sessions(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let mut violations = Vec::new();
    if let Some(object) = expect_object(&body, &FieldPath::root(), &["target", "refreshCache"], &mut violations) {
        expect_bool(object, &FieldPath::root(), "refreshCache", &mut violations);
    }
    let target = parse_target(body.get("target"), false, &mut violations);
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    let duration = app.config.session_duration.as_millis() as i64;
    let execute = app.config.execute_checks;
    let account = caller.account.clone();
    let (sessions, checks) = app.store.transaction(|tx| {
        let checks = matching_checks(tx, &account, &target)?;
        let started = now_ms();
        let mut sessions = Vec::new();
        for check in &checks {
            sessions.push(start_check_session(
                &app.runner,
                tx,
                &account,
                check,
                started,
                started + duration,
                execute,
                "TRIGGER_API",
            )?);
        }
        Ok::<_, ApiError>((sessions, checks))
    })?;
    if execute {
        for (session, check) in sessions.iter().zip(checks) {
            let session_id = id_text(&session["checkSessionId"]);
            for run in session["_internal"]["runs"].as_array().into_iter().flatten() {
                let location = run["location"].as_str().unwrap_or(DEFAULT_LOCATION);
                spawn_run(
                    &app,
                    &account,
                    &session_id,
                    &id_text(&run["sequenceId"]),
                    location,
                    check.clone(),
                );
            }
        }
    }
    let base = base_url(&headers);
    let now = now_ms();
    let sessions: Vec<Value> = sessions
        .iter()
        .map(|s| {
            let mut body = present_check_session(s, &base, now, false);
            if let Some(object) = body.as_object_mut() {
                object.remove("results");
            }
            body
        })
        .collect();
    Ok((StatusCode::CREATED, axum::Json(json!({ "sessions": sessions }))).into_response())
}

/// Where a triggered check runs: every location if `runParallel`, else one
/// (round-robin over the check's locations and private locations).
fn run_locations(db: &Connection, account: &str, check: &Value) -> rusqlite::Result<Vec<String>> {
    let mut candidates: Vec<String> = Vec::new();
    for field in ["locations", "privateLocations"] {
        for location in check[field].as_array().into_iter().flatten() {
            if let Some(text) = location.as_str()
                && !candidates.iter().any(|c| c == text)
            {
                candidates.push(text.to_owned());
            }
        }
    }
    if candidates.is_empty() {
        return Ok(vec![DEFAULT_LOCATION.to_owned()]);
    }
    if check["runParallel"] == true || candidates.len() == 1 {
        return Ok(candidates);
    }
    let turn = db.next_number(account, &format!("roundRobin:{}", id_text(&check["id"])))?;
    let index = (turn - 1).rem_euclid(candidates.len() as i64) as usize;
    Ok(vec![candidates[index].clone()])
}

fn start_check_session(
    runner: &Runner,
    db: &Connection,
    account: &str,
    check: &Value,
    started: i64,
    ends: i64,
    execute: bool,
    run_source: &str,
) -> ApiResult<Value> {
    let id = uuid::Uuid::new_v4().to_string();
    let check_id = id_text(&check["id"]);
    let locations = run_locations(db, account, check)?;
    let mut runs = Vec::new();
    for location in &locations {
        runs.push(json!({
            "location": location,
            "sequenceId": uuid::Uuid::new_v4().to_string(),
            "checkRunId": db.next_number(account, "checkRuns")?,
            "cancelled": false,
        }));
    }
    let session = json!({
        "checkSessionId": id,
        "checkId": check_id,
        "checkType": check["checkType"],
        "name": check["name"],
        "status": "STARTED",
        "startedAt": iso(started),
        "stoppedAt": null,
        "runLocations": locations,
        "runSource": run_source,
        "results": [],
        "_internal": {
            "startedAtMs": started, "endsAtMs": ends, "stoppedAtMs": null, "runs": runs,
            "execute": execute, "lostAtMs": lost_at(runner, started, ends, &[check]),
        },
    });
    db.insert(account, CHECK_SESSIONS, &id, Some(&check_id), started, &session)?;
    db.insert(account, PENDING, &id, None, ends, &json!({ "kind": CHECK_SESSIONS }))?;
    Ok(session)
}

/// Starts a check session of `check` for the scheduler (`runSource`
/// SCHEDULER) and its runs; it settles like any other session.
pub(crate) fn start_scheduled(app: &AppState, account: &str, check: &Value) -> ApiResult<()> {
    let duration = app.config.session_duration.as_millis() as i64;
    let session = app.store.transaction(|tx| {
        let started = now_ms();
        start_check_session(
            &app.runner,
            tx,
            account,
            check,
            started,
            started + duration,
            true,
            "SCHEDULER",
        )
    })?;
    let session_id = id_text(&session["checkSessionId"]);
    for run in session["_internal"]["runs"].as_array().into_iter().flatten() {
        let location = run["location"].as_str().unwrap_or(DEFAULT_LOCATION);
        spawn_run(
            app,
            account,
            &session_id,
            &id_text(&run["sequenceId"]),
            location,
            check.clone(),
        );
    }
    Ok(())
}

/// The API form of a stored check session.
fn present_check_session(stored: &Value, base: &str, now: i64, reading: bool) -> Value {
    let mut body = stored.clone();
    let started = internal(stored, "startedAtMs");
    let done = is_final(CHECK_SESSIONS, stored);
    let elapsed = if done {
        internal(stored, "stoppedAtMs") - started
    } else {
        (now - started).max(0)
    };
    let link = format!("{base}/v2/check-sessions/{}", id_text(&stored["checkSessionId"]));
    if let Some(object) = body.as_object_mut() {
        object.remove("_internal");
        if reading && !done {
            object.insert("status".into(), json!("PROGRESS"));
        }
        let mut out = Map::new();
        for (key, value) in std::mem::take(object) {
            if key == "checkSessionId" {
                out.insert(key, value);
                out.insert("checkSessionLink".into(), json!(link));
            } else if key == "runLocations" {
                out.insert("timeElapsed".into(), json!(elapsed));
                out.insert(key, value);
            } else {
                out.insert(key, value);
            }
        }
        *object = out;
    }
    if let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) {
        for result in results {
            let result_link = format!("{link}#{}", id_text(&result["checkResultId"]));
            if let Some(object) = result.as_object_mut() {
                let mut out = Map::new();
                for (key, value) in std::mem::take(object) {
                    let is_id = key == "checkResultId";
                    out.insert(key, value);
                    if is_id {
                        out.insert("checkResultLink".into(), json!(result_link));
                    }
                }
                *object = out;
            }
        }
    }
    body
}

/// The session's entry and the stored check result of one finished run.
fn run_result(
    session: &Value,
    run: &Value,
    outcome: Option<&RunOutcome>,
    started: i64,
    stopped: i64,
) -> (Value, String, Value) {
    let result_id = uuid::Uuid::new_v4().to_string();
    let check_type = session["checkType"].as_str().unwrap_or_default();
    let is_api = check_type == "API";
    let cancelled = outcome.is_none();
    let response_time = outcome.map_or((stopped - started) as f64, |o| o.response_time);
    let entry = json!({
        "checkResultId": result_id,
        "checkId": session["checkId"],
        "checkType": check_type,
        "name": session["name"],
        "runLocation": run["location"],
        "resultType": "FINAL",
        "hasErrors": outcome.is_some_and(|o| o.has_errors),
        "hasFailures": outcome.is_some_and(|o| o.has_failures),
        "isDegraded": outcome.is_some_and(|o| o.is_degraded),
        "aborted": false,
        "isCancelled": cancelled,
        "responseTime": if cancelled { Value::Null } else { json!(response_time) },
        "status": outcome.map_or("CANCELLED", |o| o.status),
        "error": outcome.and_then(|o| o.error.clone()),
        "errorGroupIds": [],
        "startedAt": iso(started),
        "stoppedAt": iso(stopped),
    });
    let record = json!({
        "id": result_id,
        "name": session["name"],
        "checkId": session["checkId"],
        "hasFailures": outcome.is_some_and(|o| o.has_failures),
        "hasErrors": outcome.is_some_and(|o| o.has_errors),
        "isDegraded": if is_api { json!(outcome.is_some_and(|o| o.is_degraded)) } else { Value::Null },
        "isCancelled": cancelled,
        "overMaxResponseTime": if is_api { json!(outcome.is_some_and(|o| o.over_max_response_time)) } else { Value::Null },
        "runLocation": run["location"],
        "startedAt": iso(started),
        "stoppedAt": iso(stopped),
        "created_at": iso(stopped),
        "responseTime": response_time,
        "apiCheckResult": outcome.map_or(Value::Null, |o| o.api_result.clone()),
        "browserCheckResult": outcome.map_or(Value::Null, |o| o.browser_result.clone()),
        "multiStepCheckResult": null,
        "agenticCheckResult": null,
        "playwrightCheckResult": null,
        "checkRunId": run["checkRunId"],
        "attempts": 0,
        "resultType": "FINAL",
        "sequenceId": run["sequenceId"],
        "traceId": null,
        "errorGroupIds": [],
        "error": outcome.and_then(|o| o.error.clone()),
        "runResult": outcome.map_or(Value::Null, |o| o.run_result.clone()),
        // Not part of the API form; `reads` strips them.
        "checkType": check_type,
        "checkSessionId": session["checkSessionId"],
    });
    (entry, result_id, record)
}

/// Fields of a stored check result that are not part of its API form.
pub const RESULT_INTERNAL_FIELDS: &[&str] = &["checkType", "checkSessionId"];

/// Finishes a check session once its end time has passed and every run not
/// cancelled has its outcome ([`run_check`]): records the results (with
/// their error groups) and sets the status. Returns false (and changes
/// nothing) while a run is still going.
fn finish_check_session(db: &Connection, account: &str, session: &mut Value, now: i64) -> rusqlite::Result<bool> {
    let started = internal(session, "startedAtMs");
    let check_id = id_text(&session["checkId"]);
    let check = db.get(account, Kind::Check.section(), &check_id)?;
    let runs = session["_internal"]["runs"].as_array().cloned().unwrap_or_default();
    let mut outcomes = Vec::new();
    for run in &runs {
        if run["cancelled"] == true {
            outcomes.push(None);
            continue;
        }
        let key = id_text(&run["sequenceId"]);
        let location = run["location"].as_str().unwrap_or_default();
        match run_check(db, account, session, &key, check.as_ref(), location, now)? {
            Some(outcome) => outcomes.push(Some(outcome)),
            None => return Ok(false),
        }
    }
    let mut entries = session["results"].as_array().cloned().unwrap_or_default();
    let (mut any_cancelled, mut any_failed, mut any_timed_out, mut any_degraded) = (false, false, false, false);
    let mut session_stopped = internal(session, "endsAtMs");
    let mut finished: Vec<(&'static str, Value)> = Vec::new();
    for (run, outcome) in runs.iter().zip(outcomes) {
        let Some((outcome, stopped)) = outcome else {
            any_cancelled = true;
            continue;
        };
        let stored = db.get(account, RUN_OUTCOMES, &id_text(&run["sequenceId"]))?;
        let (run, retries) = record_attempts(db, account, session, run, stored.as_ref())?;
        session_stopped = session_stopped.max(stopped);
        if outcome.status == "TIMED_OUT" {
            any_timed_out = true;
        } else {
            any_failed |= outcome.failed();
        }
        any_degraded |= outcome.is_degraded;
        let (mut entry, result_id, mut record) = run_result(session, &run, Some(&outcome), started, stopped);
        entry["attempts"] = json!(retries);
        record["attempts"] = json!(retries);
        if let Some(message) = outcome.error.as_deref().filter(|_| outcome.failed()) {
            let group = error_group(db, account, &check_id, message, stopped)?;
            entry["errorGroupIds"] = json!([group]);
            record["errorGroupIds"] = json!([group]);
        }
        db.insert(account, CHECK_RESULTS, &result_id, Some(&check_id), stopped, &record)?;
        db.delete(account, RUN_OUTCOMES, &id_text(&run["sequenceId"]))?;
        entries.push(entry);
        finished.push((outcome.status, record));
    }
    let status = if any_cancelled {
        "CANCELLED"
    } else if any_failed {
        "FAILED"
    } else if any_timed_out {
        "TIMED_OUT"
    } else if any_degraded {
        "DEGRADED"
    } else {
        "PASSED"
    };
    session["status"] = json!(status);
    session["stoppedAt"] = json!(iso(session_stopped));
    session["results"] = Value::Array(entries);
    session["_internal"]["stoppedAtMs"] = json!(session_stopped);
    if !any_cancelled {
        let runs: Vec<_> = finished
            .iter()
            .map(|(status, result)| alerts::FinishedRun { status, result })
            .collect();
        alerts::after_run(db, account, &check_id, &runs, session_stopped)?;
    }
    Ok(true)
}

/// Records the earlier tries of a run (`runner::retry`, from its stored
/// outcome) as ATTEMPT check results, numbered by `attempts` from 0.
/// Returns the run as its last try made it (location) and the number of
/// retries.
fn record_attempts(
    db: &Connection,
    account: &str,
    session: &Value,
    run: &Value,
    stored: Option<&Value>,
) -> rusqlite::Result<(Value, usize)> {
    let mut run = run.clone();
    let Some(stored) = stored else {
        return Ok((run, 0));
    };
    let check_id = id_text(&session["checkId"]);
    let attempts = monform_runner::retry::earlier_attempts(stored);
    for (n, attempt) in attempts.iter().enumerate() {
        let mut tried = run.clone();
        tried["location"] = json!(attempt.location);
        let outcome = RunOutcome::from_runner(&attempt.outcome);
        let (_, id, mut record) = run_result(session, &tried, Some(&outcome), attempt.started_ms, attempt.finished_ms);
        record["resultType"] = json!("ATTEMPT");
        record["attempts"] = json!(n);
        if let Some(message) = outcome.error.as_deref().filter(|_| outcome.failed()) {
            record["errorGroupIds"] = json!([error_group(db, account, &check_id, message, attempt.finished_ms)?]);
        }
        db.insert(
            account,
            CHECK_RESULTS,
            &id,
            Some(&check_id),
            attempt.finished_ms,
            &record,
        )?;
    }
    if let Some(location) = stored["location"].as_str() {
        run["location"] = json!(location);
    }
    Ok((run, attempts.len()))
}

async fn get_check_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let session = load_settled(&app, &caller.account, CHECK_SESSIONS, &id)?;
    Ok(axum::Json(present_check_session(&session, &base_url(&headers), now_ms(), true)).into_response())
}

async fn await_check_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let seconds = params.int("maxWaitSeconds", MAX_WAIT_SECONDS, 1, MAX_WAIT_SECONDS)?;
    let wait = Duration::from_secs(seconds as u64);
    let session = await_final(&app, &caller.account, CHECK_SESSIONS, &id, wait).await?;
    Ok(axum::Json(present_check_session(&session, &base_url(&headers), now_ms(), true)).into_response())
}

/// The optional cancel body: `{sequenceId?: [uuid]}`; an empty body cancels all.
fn cancel_filter(headers: &HeaderMap, bytes: &[u8]) -> ApiResult<Option<Vec<String>>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !(media.eq_ignore_ascii_case("application/json") || media.ends_with("+json")) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON with `Content-Type: application/json`",
        ));
    }
    let body: Value = serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
    let mut violations = Vec::new();
    let object = expect_object(&body, &FieldPath::root(), &["sequenceId"], &mut violations);
    let mut ids = None;
    if let Some(list) = object.and_then(|o| o.get("sequenceId")) {
        let path = FieldPath::root().key("sequenceId");
        match list.as_array() {
            Some(list) => {
                let mut out = Vec::new();
                for (i, id) in list.iter().enumerate() {
                    match id.as_str().filter(|t| uuid::Uuid::parse_str(t).is_ok()) {
                        Some(text) => out.push(text.to_owned()),
                        None => violations.push(Violation::new(path.index(i), format!("{id} is not a uuid"))),
                    }
                }
                ids = Some(out);
            }
            None => violations.push(Violation::new(path, "must be an array of sequence ids")),
        }
    }
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    Ok(ids)
}

async fn cancel_check_session(
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    bytes: axum::body::Bytes,
) -> ApiResult<Response> {
    let only = cancel_filter(&headers, &bytes)?;
    let account = caller.account.clone();
    app.store.transaction(|tx| {
        let mut session = tx
            .get(&account, CHECK_SESSIONS, &id)?
            .ok_or_else(|| ApiError::not_found("check session", &id))?;
        let now = now_ms();
        settle(tx, &account, CHECK_SESSIONS, &mut session, now)?;
        if is_final(CHECK_SESSIONS, &session) {
            return Ok(());
        }
        let mut runs = session["_internal"]["runs"].as_array().cloned().unwrap_or_default();
        if let Some(only) = &only {
            let unknown: Vec<&String> = only
                .iter()
                .filter(|s| !runs.iter().any(|r| r["sequenceId"].as_str() == Some(s.as_str())))
                .collect();
            if !unknown.is_empty() {
                return Err(ApiError::invalid(
                    "sequenceId",
                    format!(
                        "not a run of check session {id}: {}",
                        unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        let started = internal(&session, "startedAtMs");
        let check_id = id_text(&session["checkId"]);
        let mut entries = session["results"].as_array().cloned().unwrap_or_default();
        for run in runs.iter_mut() {
            let chosen = only
                .as_ref()
                .is_none_or(|o| o.iter().any(|s| run["sequenceId"].as_str() == Some(s.as_str())));
            if !chosen || run["cancelled"] == true {
                continue;
            }
            run["cancelled"] = json!(true);
            let (entry, result_id, record) = run_result(&session, run, None, started, now);
            tx.insert(&account, CHECK_RESULTS, &result_id, Some(&check_id), now, &record)?;
            entries.push(entry);
        }
        let all_cancelled = runs.iter().all(|r| r["cancelled"] == true);
        session["results"] = Value::Array(entries);
        session["_internal"]["runs"] = Value::Array(runs);
        if all_cancelled {
            session["status"] = json!("CANCELLED");
            session["stoppedAt"] = json!(iso(now));
            session["_internal"]["stoppedAtMs"] = json!(now);
            tx.delete(&account, PENDING, &id)?;
        }
        tx.replace(&account, CHECK_SESSIONS, &id, &session)?;
        Ok::<_, ApiError>(())
    })?;
    CHANGED.notify_waiters();
    Ok(StatusCode::NO_CONTENT.into_response())
}

// ---------------------------------------------------------------------------
// Test sessions.
// ---------------------------------------------------------------------------

const TEST_SESSION_FIELDS: &[&str] = &[
    "name",
    "runLocation",
    "target",
    "environmentVariables",
    "retryStrategy",
    "refreshCache",
    "metadata",
];

/// Checks a `TriggerTestSessionRequest` body (all violations at once).
fn check_test_session_body(db: &Connection, account: &str, body: &Value) -> ApiResult<Target> {
    let root = FieldPath::root();
    let mut violations = Vec::new();
    let Some(object) = expect_object(body, &root, TEST_SESSION_FIELDS, &mut violations) else {
        return Err(ApiError::validation(&violations));
    };
    match object.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        Some(Value::String(_)) => violations.push(Violation::new(root.key("name"), "must not be empty")),
        Some(other) => violations.push(Violation::new(root.key("name"), format!("{other} is not a string"))),
        None => violations.push(Violation::new(root.key("name"), "missing required field `name`")),
    }
    match object.get("runLocation") {
        Some(Value::String(location)) => {
            let public = Location::ALL.iter().any(|l| l.as_str() == location);
            let private = !public
                && db
                    .all(account, Kind::PrivateLocation.section())?
                    .iter()
                    .any(|r| r.body["slugName"].as_str() == Some(location.as_str()));
            if !public && !private {
                violations.push(Violation::new(
                    root.key("runLocation"),
                    format!("`{location}` is neither a data-center location nor a private location's slug"),
                ));
            }
        }
        Some(other) => violations.push(Violation::new(
            root.key("runLocation"),
            format!("{other} is not a string"),
        )),
        None => violations.push(Violation::new(
            root.key("runLocation"),
            "missing required field `runLocation` (a data-center location or a private location's slug)",
        )),
    }
    expect_bool(object, &root, "refreshCache", &mut violations);
    if let Some(variables) = object.get("environmentVariables") {
        check_environment_variables(variables, &root.key("environmentVariables"), &mut violations);
    }
    if let Some(strategy) = object.get("retryStrategy") {
        check_retry_strategy(strategy, &root.key("retryStrategy"), &mut violations);
    }
    if let Some(metadata) = object.get("metadata") {
        check_metadata(metadata, &root.key("metadata"), &mut violations);
    }
    let target = parse_target(object.get("target"), true, &mut violations);
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    Ok(target)
}

fn check_environment_variables(value: &Value, path: &FieldPath, violations: &mut Vec<Violation>) {
    let Some(list) = value.as_array() else {
        violations.push(Violation::new(
            path.clone(),
            "must be an array of {key, value, locked, secret}",
        ));
        return;
    };
    for (i, item) in list.iter().enumerate() {
        let item_path = path.index(i);
        let Some(object) = expect_object(item, &item_path, &["key", "value", "locked", "secret"], violations) else {
            continue;
        };
        match object.get("key") {
            Some(Value::String(key)) if !key.is_empty() => {}
            Some(_) => violations.push(Violation::new(item_path.key("key"), "must be a non-empty string")),
            None => violations.push(Violation::new(item_path.key("key"), "missing required field `key`")),
        }
        match object.get("value") {
            Some(Value::String(_) | Value::Null) => {}
            Some(other) => violations.push(Violation::new(
                item_path.key("value"),
                format!("{other} is not a string"),
            )),
            None => violations.push(Violation::new(item_path.key("value"), "missing required field `value`")),
        }
        expect_bool(object, &item_path, "locked", violations);
        expect_bool(object, &item_path, "secret", violations);
    }
}

fn check_retry_strategy(value: &Value, path: &FieldPath, violations: &mut Vec<Violation>) {
    if value.is_null() {
        return;
    }
    let fields = [
        "type",
        "baseBackoffSeconds",
        "sameRegion",
        "onlyOn",
        "maxRetries",
        "maxDurationSeconds",
    ];
    let Some(object) = expect_object(value, path, &fields, violations) else {
        return;
    };
    let kind = object.get("type").and_then(Value::as_str);
    match kind {
        Some("FIXED" | "LINEAR" | "EXPONENTIAL" | "SINGLE_RETRY") => {}
        Some(other) => violations.push(Violation::new(
            path.key("type"),
            format!("`{other}` is not one of FIXED, LINEAR, EXPONENTIAL, SINGLE_RETRY"),
        )),
        None => violations.push(Violation::new(path.key("type"), "missing required field `type`")),
    }
    expect_number(object, path, "baseBackoffSeconds", 0.0, f64::MAX, violations);
    expect_bool(object, path, "sameRegion", violations);
    if let Some(only_on) = object.get("onlyOn")
        && !only_on
            .as_array()
            .is_some_and(|l| l.iter().all(|x| x == "NETWORK_ERROR"))
    {
        violations.push(Violation::new(path.key("onlyOn"), "must be an array of NETWORK_ERROR"));
    }
    for (field, min, max) in [("maxRetries", 1.0, 10.0), ("maxDurationSeconds", 0.0, 600.0)] {
        if kind == Some("SINGLE_RETRY") && object.contains_key(field) {
            violations.push(Violation::new(path.key(field), "not allowed with type SINGLE_RETRY"));
        } else {
            expect_number(object, path, field, min, max, violations);
        }
    }
}

fn check_metadata(value: &Value, path: &FieldPath, violations: &mut Vec<Violation>) {
    let fields = [
        "environment",
        "repoUrl",
        "commitId",
        "commitOwner",
        "commitMessage",
        "branchName",
        "github",
    ];
    let Some(object) = expect_object(value, path, &fields, violations) else {
        return;
    };
    for (field, nullable) in [
        ("environment", false),
        ("repoUrl", true),
        ("commitId", true),
        ("commitOwner", true),
        ("commitMessage", true),
        ("branchName", true),
    ] {
        expect_text(object, path, field, nullable, violations);
    }
    if let Some(github) = object.get("github") {
        let github_path = path.key("github");
        let fields = [
            "reporting",
            "repository",
            "sha",
            "runId",
            "runAttempt",
            "workflow",
            "job",
            "eventName",
            "ref",
            "headRef",
            "baseRef",
            "serverUrl",
        ];
        if let Some(github) = expect_object(github, &github_path, &fields, violations) {
            match github.get("reporting") {
                Some(Value::Bool(_)) => {}
                Some(_) => violations.push(Violation::new(github_path.key("reporting"), "must be true or false")),
                None => violations.push(Violation::new(
                    github_path.key("reporting"),
                    "missing required field `reporting`",
                )),
            }
            for field in &fields[1..] {
                expect_text(github, &github_path, field, true, violations);
            }
        }
    }
}

async fn trigger_test_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let duration = app.config.session_duration.as_millis() as i64;
    let execute = app.config.execute_checks;
    let account = caller.account.clone();
    let (session, checks) = app.store.transaction(|tx| {
        let target = check_test_session_body(tx, &account, &body)?;
        let mut checks = matching_checks(tx, &account, &target)?;
        if let Some(strategy) = body.get("retryStrategy").filter(|s| s.is_object()) {
            for check in &mut checks {
                check["retryStrategy"] = strategy.clone();
            }
        }
        let started = now_ms();
        let ends = started + duration;
        let id = uuid::Uuid::new_v4().to_string();
        let location = body["runLocation"].as_str().unwrap_or(DEFAULT_LOCATION);
        let results: Vec<Value> = checks
            .iter()
            .map(|check| {
                json!({
                    "testSessionResultId": uuid::Uuid::new_v4().to_string(),
                    "checkId": check["id"],
                    "checkType": check["checkType"],
                    "name": check["name"],
                    "runLocation": location,
                    "errorGroupIds": [],
                    "resultType": "PENDING",
                    "status": "RUNNING",
                    "hasErrors": false,
                    "hasFailures": false,
                    "isDegraded": false,
                    "aborted": false,
                    "responseTime": null,
                    "startedAt": iso(started),
                    "stoppedAt": null,
                })
            })
            .collect();
        let mut session = json!({
            "testSessionId": id,
            "name": body["name"],
            "status": "RUNNING",
            "errorGroupIds": [],
            "startedAt": iso(started),
            "stoppedAt": null,
        });
        if let Some(metadata) = body.get("metadata").filter(|m| !m.is_null()) {
            session["metadata"] = metadata.clone();
        }
        session["results"] = Value::Array(results);
        session["_internal"] = json!({
            "startedAtMs": started,
            "endsAtMs": ends,
            "stoppedAtMs": null,
            "runLocation": location,
            "environmentVariables": body.get("environmentVariables").cloned().unwrap_or(json!([])),
            "retryStrategy": body.get("retryStrategy").cloned().unwrap_or(Value::Null),
            "execute": execute,
            "lostAtMs": lost_at(&app.runner, started, ends, &checks.iter().collect::<Vec<_>>()),
        });
        tx.insert(&account, TEST_SESSIONS, &id, None, started, &session)?;
        tx.insert(&account, PENDING, &id, None, ends, &json!({ "kind": TEST_SESSIONS }))?;
        Ok::<_, ApiError>((session, checks))
    })?;
    if execute {
        let session_id = id_text(&session["testSessionId"]);
        for (result, check) in session["results"].as_array().into_iter().flatten().zip(checks) {
            let location = result["runLocation"].as_str().unwrap_or(DEFAULT_LOCATION);
            spawn_run(
                &app,
                &account,
                &session_id,
                &id_text(&result["testSessionResultId"]),
                location,
                check,
            );
        }
    }
    let body = present_test_session(&session, &base_url(&headers), now_ms());
    Ok((StatusCode::CREATED, axum::Json(body)).into_response())
}

/// Finishes a test session once its end time has passed and every result
/// has its outcome ([`run_check`]). Test sessions record no check results
/// and raise no alerts; failures still get error groups. Returns false (and
/// changes nothing) while a run is still going.
fn finish_test_session(db: &Connection, account: &str, session: &mut Value, now: i64) -> rusqlite::Result<bool> {
    let mut results = session["results"].as_array().cloned().unwrap_or_default();
    let mut outcomes = Vec::new();
    for result in &results {
        let check = db.get(account, Kind::Check.section(), &id_text(&result["checkId"]))?;
        let key = id_text(&result["testSessionResultId"]);
        let location = result["runLocation"].as_str().unwrap_or_default();
        match run_check(db, account, session, &key, check.as_ref(), location, now)? {
            Some(outcome) => outcomes.push(outcome),
            None => return Ok(false),
        }
    }
    let mut any_failed = false;
    let mut session_stopped = internal(session, "endsAtMs");
    let mut group_ids: Vec<Value> = Vec::new();
    for (result, (outcome, stopped)) in results.iter_mut().zip(outcomes) {
        let failed = outcome.failed();
        any_failed |= failed;
        session_stopped = session_stopped.max(stopped);
        result["resultType"] = json!("FINAL");
        result["status"] = json!(outcome.status);
        result["hasErrors"] = json!(outcome.has_errors);
        result["hasFailures"] = json!(outcome.has_failures);
        result["isDegraded"] = json!(outcome.is_degraded);
        result["responseTime"] = json!(outcome.response_time);
        result["error"] = json!(outcome.error);
        result["stoppedAt"] = json!(iso(stopped));
        if !outcome.run_result.is_null() {
            result["runResult"] = outcome.run_result.clone();
        }
        let key = id_text(&result["testSessionResultId"]);
        let stored = db.get(account, RUN_OUTCOMES, &key)?;
        result["attempts"] = json!(
            stored
                .as_ref()
                .map_or(0, |r| monform_runner::retry::earlier_attempts(r).len())
        );
        if let Some(message) = outcome.error.as_deref().filter(|_| failed) {
            let check_id = id_text(&result["checkId"]);
            let group = json!(error_group(db, account, &check_id, message, stopped)?);
            result["errorGroupIds"] = json!([group.clone()]);
            if !group_ids.contains(&group) {
                group_ids.push(group);
            }
        }
        db.delete(account, RUN_OUTCOMES, &key)?;
    }
    session["results"] = Value::Array(results);
    session["status"] = json!(if any_failed { "FAILED" } else { "PASSED" });
    session["errorGroupIds"] = Value::Array(group_ids);
    session["stoppedAt"] = json!(iso(session_stopped));
    session["_internal"]["stoppedAtMs"] = json!(session_stopped);
    Ok(true)
}

/// The API form of a stored test session.
fn present_test_session(stored: &Value, base: &str, now: i64) -> Value {
    let started = internal(stored, "startedAtMs");
    let elapsed = if is_final(TEST_SESSIONS, stored) {
        internal(stored, "stoppedAtMs") - started
    } else {
        (now - started).max(0)
    };
    let link = format!("{base}/v1/test-sessions/{}", id_text(&stored["testSessionId"]));
    let mut out = Map::new();
    for (key, value) in stored.as_object().into_iter().flatten() {
        match key.as_str() {
            "_internal" => {}
            "testSessionId" => {
                out.insert(key.clone(), value.clone());
                out.insert("testSessionLink".into(), json!(link));
            }
            "stoppedAt" => {
                out.insert(key.clone(), value.clone());
                out.insert("timeElapsed".into(), json!(elapsed));
            }
            "results" => {
                let results = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let mut entry = Map::new();
                        for (k, v) in r.as_object().into_iter().flatten() {
                            entry.insert(k.clone(), v.clone());
                            if k == "testSessionResultId" {
                                entry.insert("testSessionResultLink".into(), json!(format!("{link}#{}", id_text(v))));
                            }
                        }
                        Value::Object(entry)
                    })
                    .collect();
                out.insert(key.clone(), Value::Array(results));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

async fn get_test_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let session = load_settled(&app, &caller.account, TEST_SESSIONS, &id)?;
    Ok(axum::Json(present_test_session(&session, &base_url(&headers), now_ms())).into_response())
}

async fn await_test_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    // A number here (the check session's is an integer).
    let seconds = match params.one("maxWaitSeconds") {
        None => MAX_WAIT_SECONDS as f64,
        Some(text) => match text.parse::<f64>() {
            Ok(n) if (1.0..=MAX_WAIT_SECONDS as f64).contains(&n) => n,
            Ok(n) => {
                return Err(ApiError::invalid(
                    "maxWaitSeconds",
                    format!("{n} is out of range 1..{MAX_WAIT_SECONDS}"),
                ));
            }
            Err(_) => {
                return Err(ApiError::invalid("maxWaitSeconds", format!("`{text}` is not a number")));
            }
        },
    };
    let session = await_final(
        &app,
        &caller.account,
        TEST_SESSIONS,
        &id,
        Duration::from_secs_f64(seconds),
    )
    .await?;
    Ok(axum::Json(present_test_session(&session, &base_url(&headers), now_ms())).into_response())
}

// ---------------------------------------------------------------------------
// Body checks.
// ---------------------------------------------------------------------------

/// `value` as an object whose keys are all in `allowed`, else violations.
fn expect_object<'a>(
    value: &'a Value,
    path: &FieldPath,
    allowed: &[&str],
    violations: &mut Vec<Violation>,
) -> Option<&'a Map<String, Value>> {
    let Some(object) = value.as_object() else {
        violations.push(Violation::new(path.clone(), "must be an object"));
        return None;
    };
    for key in object.keys().filter(|k| !allowed.contains(&k.as_str())) {
        violations.push(Violation::new(path.key(key), format!("unknown field `{key}`")));
    }
    Some(object)
}

fn expect_bool(object: &Map<String, Value>, path: &FieldPath, field: &str, violations: &mut Vec<Violation>) {
    if let Some(value) = object.get(field)
        && !value.is_boolean()
    {
        violations.push(Violation::new(path.key(field), format!("{value} is not true or false")));
    }
}

fn expect_text(
    object: &Map<String, Value>,
    path: &FieldPath,
    field: &str,
    nullable: bool,
    violations: &mut Vec<Violation>,
) {
    match object.get(field) {
        None | Some(Value::String(_)) => {}
        Some(Value::Null) if nullable => {}
        Some(other) => violations.push(Violation::new(path.key(field), format!("{other} is not a string"))),
    }
}

fn expect_number(
    object: &Map<String, Value>,
    path: &FieldPath,
    field: &str,
    min: f64,
    max: f64,
    violations: &mut Vec<Violation>,
) {
    match object.get(field).map(|v| (v, v.as_f64())) {
        None => {}
        Some((_, Some(n))) if (min..=max).contains(&n) => {}
        Some((_, Some(n))) => violations.push(Violation::new(
            path.key(field),
            format!("{n} is out of range {min}..{max}"),
        )),
        Some((value, None)) => violations.push(Violation::new(path.key(field), format!("{value} is not a number"))),
    }
}

/// Every check type's wire name, for messages and filters.
pub fn check_type_names() -> Vec<&'static str> {
    CheckType::ALL.iter().map(|t| t.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_stable_and_pass() {
        let a = simulate_run("API", None, "eu-west-1", "seed");
        assert_eq!(a, simulate_run("API", None, "eu-west-1", "seed"));
        assert!(!a.has_failures && (40.0..400.0).contains(&a.response_time));
        assert!(a.api_result["response"]["timingPhases"]["dns"].is_number());
        assert!(simulate_run("ICMP", None, "eu-west-1", "seed").api_result.is_null());
    }

    #[test]
    fn tags_match_every_tag_of_a_group() {
        let check = json!({ "tags": ["a", "b"] });
        assert!(has_tags(&check, &["a".into(), "b".into()]));
        assert!(!has_tags(&check, &["a".into(), "c".into()]));
        assert!(has_tags(&check, &[]));
    }
}
