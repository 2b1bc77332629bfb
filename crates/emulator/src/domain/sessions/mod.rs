//! Check sessions and test sessions (api-contract.md, "Sessions, results and
//! reports"; shapes from the reference's `CheckSessionsV2*` and
//! `*TestSession*` schemas).
//!
//! A triggered session is stored at once (kind `checkSessions` with the check
//! id as parent, or `testSessions`) together with a `pendingSessions` marker
//! holding its end time. With `Config::execute_checks` (the default) every
//! run is executed in the background by `monform-runner` ([`runs::spawn_run`]),
//! which stores its outcome (kind [`runs::RUN_OUTCOMES`]). A session is
//! *settled* (finished, see [`runs::run_check`]) by the first request that
//! reads it once its end time has passed and every run has its outcome, or
//! that lists results, analytics or reports ([`lifecycle::settle_due`]).
//! Everything lives in SQLite, so a session triggered before a restart
//! finishes after it: runs cut short by the stop start again
//! ([`runs::resume_runs`]). Without execution every run passes
//! ([`runs::simulate_run`]).
//!
//! A failed run is retried per the check's retry strategy
//! (`monform_runner::retry`): the earlier tries become ATTEMPT check results of the
//! run's `sequenceId`; a session's `results` list the FINAL ones, with
//! `attempts` = the number of retries. A finished check session (not a test
//! session) moves the check's alert state (`domain::alerts`), which may
//! raise alerts and notifications (`domain::notify`).
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
//!
//! Modules: [`runs`] (executing runs and their outcomes), [`results`]
//! (check results and error groups), [`check`] and [`mod@test`] (starting and
//! finishing each kind of session), [`lifecycle`] (settling, awaiting and
//! cancelling). This file holds what they share.

pub mod check;
pub mod lifecycle;
pub mod pool;
pub mod results;
pub mod runs;
pub mod test;

use std::sync::LazyLock;

use monform_model::resources::CheckType;
use monform_model::{Kind, RunStatus};
use rusqlite::Connection;
use serde_json::Value;
use tokio::sync::Notify;

use crate::domain::checks::{effective_check, has_tags};
use crate::error::{ApiError, ApiResult};
use crate::store::Objects;

/// Record kinds.
pub const CHECK_SESSIONS: &str = "checkSessions";

pub const TEST_SESSIONS: &str = "testSessions";

/// Sessions not final yet (ts: when they end), so settling need not scan all.
const PENDING: &str = "pendingSessions";

/// Used when a check names no location (the model's, as monform's).
pub(crate) const DEFAULT_LOCATION: &str = monform_model::resources::Location::DEFAULT.as_str();

/// Wakes completion waiters when a session changes (cancel).
static CHANGED: LazyLock<Notify> = LazyLock::new(Notify::new);

pub fn internal(session: &Value, field: &str) -> i64 {
    session["_internal"][field].as_i64().unwrap_or(0)
}

pub fn is_final(kind: &str, session: &Value) -> bool {
    let Some(Ok(status)) = session["status"].as_str().map(str::parse::<RunStatus>) else {
        return false;
    };
    let check_session = kind == CHECK_SESSIONS;
    // A test session ends passed, failed or cancelled; a check session
    // also degraded or timed out (spec 2.9, 2.16).
    match status {
        RunStatus::Passed | RunStatus::Failed | RunStatus::Cancelled => true,
        RunStatus::Degraded | RunStatus::TimedOut => check_session,
        RunStatus::Running => false,
    }
}

pub fn noun(kind: &str) -> &'static str {
    if kind == CHECK_SESSIONS {
        "check session"
    } else {
        "test session"
    }
}

// ---------------------------------------------------------------------------
// Settling: finishing sessions whose time is up.
// ---------------------------------------------------------------------------

/// Which checks a trigger runs (`target` of a trigger body).
#[derive(Debug, Default)]
pub struct Target {
    pub check_ids: Option<Vec<String>>,
    pub match_tags: Option<Vec<Vec<String>>>,
    pub allow_deactivated: bool,
}

/// The checks a trigger runs (with group settings applied), or 404.
pub fn matching_checks(db: &Connection, account: &str, target: &Target) -> ApiResult<Vec<Value>> {
    let mut matched = Vec::new();
    let mut skipped = Vec::new();
    for row in db.all(account, Kind::Check.section())? {
        let named = target.check_ids.as_ref().map(|ids| ids.contains(&row.id));
        if named == Some(false) {
            continue;
        }
        // Only for the checks that can match: it reads the group and the
        // snippets, and a trigger holds the store while it runs.
        let check = effective_check(db, account, row.body)?;
        if let Some(groups) = &target.match_tags
            && !groups.is_empty()
            && !groups.iter().any(|g| has_tags(&check, g))
        {
            if named == Some(true) {
                skipped.push(format!("check {} has none of the tag groups of matchTags", row.id));
            }
            continue;
        }
        if CheckType::of_check(&check).is_ok_and(CheckType::is_pinged) {
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
        return Err(ApiError::missing(message));
    }
    Ok(matched)
}

// ---------------------------------------------------------------------------
// Check sessions.
// ---------------------------------------------------------------------------
