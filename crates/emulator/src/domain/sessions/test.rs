//! Test sessions: one run of each matching check in one location, with
//! the session's variables and retry strategy; they record no check
//! results and raise no alerts.

use monform_model::{Kind, RunStatus};
use rusqlite::Connection;
use serde_json::{Value, json};

use super::results::error_group;
use super::runs::{RUN_OUTCOMES, lost_at, run_check, spawn_run};
use super::{DEFAULT_LOCATION, PENDING, TEST_SESSIONS, Target, internal, matching_checks};
use crate::app::AppState;
use crate::clock::{iso, now_ms};
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::store::Objects;

/// Finishes a test session once its end time has passed and every result
/// has its outcome ([`run_check`]). Test sessions record no check results
/// and raise no alerts; failures still get error groups. Returns false (and
/// changes nothing) while a run is still going.
pub(super) fn finish_test_session(
    db: &Connection,
    account: &str,
    session: &mut Value,
    now: i64,
) -> rusqlite::Result<bool> {
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
    session["status"] = json!(
        if any_failed {
            RunStatus::Failed
        } else {
            RunStatus::Passed
        }
        .as_str()
    );
    session["errorGroupIds"] = Value::Array(group_ids);
    session["stoppedAt"] = json!(iso(session_stopped));
    session["_internal"]["stoppedAtMs"] = json!(session_stopped);
    Ok(true)
}

/// Starts a test session from a trigger body (`validate` checks it, in the
/// same transaction, and says which checks it targets; 404 when none
/// match) and its runs; returns the stored session.
pub fn trigger(
    app: &AppState,
    account: &str,
    body: &Value,
    validate: impl FnOnce(&Connection) -> ApiResult<Target>,
) -> ApiResult<Value> {
    let duration = app.config.session_duration.as_millis() as i64;
    let execute = app.config.execute_checks;
    let (session, checks) = app.store.transaction(|tx| {
        let target = validate(tx)?;
        let mut checks = matching_checks(tx, account, &target)?;
        if let Some(strategy) = body.get("retryStrategy").filter(|s| s.is_object()) {
            for check in &mut checks {
                check["retryStrategy"] = strategy.clone();
            }
        }
        let started = now_ms();
        let ends = started + duration;
        let id = ids::new();
        let location = body["runLocation"].as_str().unwrap_or(DEFAULT_LOCATION);
        let results: Vec<Value> = checks
            .iter()
            .map(|check| {
                json!({
                    "testSessionResultId": ids::new(),
                    "checkId": check["id"],
                    "checkType": check["checkType"],
                    "name": check["name"],
                    "runLocation": location,
                    "errorGroupIds": [],
                    "resultType": "PENDING",
                    "status": RunStatus::Running.as_str(),
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
            "status": RunStatus::Running.as_str(),
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
        tx.insert(account, TEST_SESSIONS, &id, None, started, &session)?;
        tx.insert(account, PENDING, &id, None, ends, &json!({ "kind": TEST_SESSIONS }))?;
        Ok::<_, ApiError>((session, checks))
    })?;
    if execute {
        let session_id = id_text(&session["testSessionId"]);
        for (result, check) in session["results"].as_array().into_iter().flatten().zip(checks) {
            let location = result["runLocation"].as_str().unwrap_or(DEFAULT_LOCATION);
            spawn_run(
                app,
                account,
                &session_id,
                &id_text(&result["testSessionResultId"]),
                location,
                check,
            );
        }
    }
    Ok(session)
}
