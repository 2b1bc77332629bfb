//! Check results and error groups: what a finished run leaves behind.
//! A failed run's error joins an error group of its check (kind
//! [`ERROR_GROUPS`], deduplicated by the hash of the message with numbers
//! replaced by `<n>`); results list its id.

use monform_model::RunStatus;
use monform_model::resources::CheckType;
use rusqlite::Connection;
use serde_json::{Value, json};

use super::runs::{RunOutcome, fnv};
use crate::clock::iso;
use crate::ids::{self, id_text};
use crate::store::Objects;

/// Record kind: check results (parent: the check id).
pub const CHECK_RESULTS: &str = "checkResults";
/// Record kind: error groups (parent: the check id).
pub const ERROR_GROUPS: &str = "errorGroups";

/// The session's entry and the stored check result of one finished run.
pub fn run_result(
    session: &Value,
    run: &Value,
    outcome: Option<&RunOutcome>,
    started: i64,
    stopped: i64,
) -> (Value, String, Value) {
    let result_id = ids::new();
    let check_type = session["checkType"].as_str().unwrap_or_default();
    let is_api = CheckType::of_check(session) == Ok(CheckType::Api);
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
        "status": outcome.map_or(RunStatus::Cancelled, |o| o.status).as_str(),
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

/// Records the earlier tries of a run (`monform_runner::retry`, from its stored
/// outcome) as ATTEMPT check results, numbered by `attempts` from 0.
/// Returns the run as its last try made it (location) and the number of
/// retries.
pub fn record_attempts(
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
pub fn error_group(
    db: &Connection,
    account: &str,
    check_id: &str,
    message: &str,
    now: i64,
) -> rusqlite::Result<String> {
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
    let id = ids::new();
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
