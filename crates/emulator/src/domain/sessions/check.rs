//! Check sessions: starting them (triggered or scheduled) and finishing
//! them once their runs have outcomes.

use monform_model::{Kind, RunStatus};
use rusqlite::Connection;
use serde_json::{Value, json};

use super::results::{CHECK_RESULTS, error_group, record_attempts, run_result};
use super::runs::{RUN_OUTCOMES, lost_at, run_check, spawn_run};
use super::{CHECK_SESSIONS, DEFAULT_LOCATION, PENDING, Target, internal, matching_checks};
use crate::app::AppState;
use crate::clock::{iso, now_ms};
use crate::domain::alerts;
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::store::Objects;

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

/// Stores a check session of `check` started at `started` (ending after
/// `Config::session_duration`) and its pending marker.
fn start_check_session(
    app: &AppState,
    db: &Connection,
    account: &str,
    check: &Value,
    started: i64,
    execute: bool,
    run_source: &str,
) -> ApiResult<Value> {
    let ends = started + app.config.session_duration.as_millis() as i64;
    let id = ids::new();
    let check_id = id_text(&check["id"]);
    let locations = run_locations(db, account, check)?;
    let mut runs = Vec::new();
    for location in &locations {
        runs.push(json!({
            "location": location,
            "sequenceId": ids::new(),
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
            "execute": execute, "lostAtMs": lost_at(&app.runner, started, ends, &[check]),
        },
    });
    db.insert(account, CHECK_SESSIONS, &id, Some(&check_id), started, &session)?;
    db.insert(account, PENDING, &id, None, ends, &json!({ "kind": CHECK_SESSIONS }))?;
    Ok(session)
}

/// Starts a check session of `check` for the scheduler (`runSource`
/// SCHEDULER) and its runs; it settles like any other session.
pub fn start_scheduled(app: &AppState, account: &str, check: &Value) -> ApiResult<()> {
    start(app, account, |_| Ok(vec![check.clone()]), true, "SCHEDULER").map(drop)
}

/// Starts a check session (`runSource` TRIGGER_API) of every check
/// `target` matches (404 when none does) and their runs; returns the
/// stored sessions.
pub fn trigger(app: &AppState, account: &str, target: &Target) -> ApiResult<Vec<Value>> {
    let execute = app.config.execute_checks;
    start(
        app,
        account,
        |tx| matching_checks(tx, account, target),
        execute,
        "TRIGGER_API",
    )
}

/// Starts one check session of each check `checks` reads (in the same
/// transaction) and, when `execute`, their runs in the background.
fn start(
    app: &AppState,
    account: &str,
    checks: impl FnOnce(&Connection) -> ApiResult<Vec<Value>>,
    execute: bool,
    run_source: &str,
) -> ApiResult<Vec<Value>> {
    let (sessions, checks) = app.store.transaction(|tx| {
        let checks = checks(tx)?;
        let started = now_ms();
        let mut sessions = Vec::new();
        for check in &checks {
            sessions.push(start_check_session(
                app, tx, account, check, started, execute, run_source,
            )?);
        }
        Ok::<_, ApiError>((sessions, checks))
    })?;
    if execute {
        for (session, check) in sessions.iter().zip(&checks) {
            let session_id = id_text(&session["checkSessionId"]);
            for run in session["_internal"]["runs"].as_array().into_iter().flatten() {
                let location = run["location"].as_str().unwrap_or(DEFAULT_LOCATION);
                let key = id_text(&run["sequenceId"]);
                spawn_run(app, account, &session_id, &key, location, check.clone());
            }
        }
    }
    Ok(sessions)
}

/// Finishes a check session once its end time has passed and every run not
/// cancelled has its outcome ([`run_check`]): records the results (with
/// their error groups) and sets the status. Returns false (and changes
/// nothing) while a run is still going.
pub(super) fn finish_check_session(
    db: &Connection,
    account: &str,
    session: &mut Value,
    now: i64,
) -> rusqlite::Result<bool> {
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
    let mut finished: Vec<(RunStatus, Value)> = Vec::new();
    for (run, outcome) in runs.iter().zip(outcomes) {
        let Some((outcome, stopped)) = outcome else {
            any_cancelled = true;
            continue;
        };
        let stored = db.get(account, RUN_OUTCOMES, &id_text(&run["sequenceId"]))?;
        let (run, retries) = record_attempts(db, account, session, run, stored.as_ref())?;
        session_stopped = session_stopped.max(stopped);
        if outcome.status == RunStatus::TimedOut {
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
        RunStatus::Cancelled
    } else if any_failed {
        RunStatus::Failed
    } else if any_timed_out {
        RunStatus::TimedOut
    } else if any_degraded {
        RunStatus::Degraded
    } else {
        RunStatus::Passed
    };
    session["status"] = json!(status.as_str());
    session["stoppedAt"] = json!(iso(session_stopped));
    session["results"] = Value::Array(entries);
    session["_internal"]["stoppedAtMs"] = json!(session_stopped);
    if !any_cancelled {
        let runs: Vec<_> = finished
            .iter()
            .map(|(status, result)| alerts::FinishedRun {
                status: *status,
                result,
            })
            .collect();
        alerts::after_run(db, account, &check_id, &runs, session_stopped)?;
    }
    Ok(true)
}
