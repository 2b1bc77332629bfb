//! Settling (finishing sessions whose time is up), awaiting and
//! cancelling sessions.

use std::sync::atomic::Ordering;
use std::time::Duration;

use monform_model::RunStatus;
use rusqlite::Connection;
use serde_json::{Value, json};

use super::check::finish_check_session;
use super::results::{CHECK_RESULTS, run_result};
use super::test::finish_test_session;
use super::{CHANGED, CHECK_SESSIONS, PENDING, internal, is_final, noun};
use crate::app::AppState;
use crate::clock::{iso, now_ms};
use crate::domain::retention;
use crate::error::{ApiError, ApiResult};
use crate::ids::id_text;
use crate::store::Objects;

/// Waiters re-read the session at least this often (a cancel from another
/// process sharing the file is seen this way).
const POLL: Duration = Duration::from_millis(250);

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
    retention::maybe_sweep(db, now)?;
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

/// How often the background settler looks for sessions whose time is up.
const SETTLE_EVERY: Duration = Duration::from_millis(100);

/// Settles due sessions of every account in the background, one session
/// a transaction, as their time comes and their runs report. Reads still
/// settle what is due (`settle_due`), but find little left: before, the
/// first read after a fuzzer triggered 400 sessions settled them all (and
/// wrote 50,000 notifications) in one transaction, and every other request
/// waited behind it for over a minute.
pub async fn settle_in_background(app: AppState) {
    let mut stopped = app.stopped.subscribe();
    loop {
        let due: rusqlite::Result<Vec<(String, String, String)>> = {
            let db = app.store.lock();
            db.prepare_cached("SELECT account_id, id, body FROM objects WHERE kind = ?1 AND ts <= ?2 ORDER BY ts")
                .and_then(|mut statement| {
                    statement
                        .query_map(rusqlite::params![PENDING, now_ms()], |r| {
                            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                        })?
                        .collect()
                })
        };
        for (account, id, marker) in due.unwrap_or_else(|e| {
            tracing::warn!("cannot read the sessions due: {e}");
            Vec::new()
        }) {
            let marker: Value = serde_json::from_str(&marker).unwrap_or_default();
            let kind = if marker["kind"] == super::TEST_SESSIONS {
                super::TEST_SESSIONS
            } else {
                CHECK_SESSIONS
            };
            let settled = app.store.transaction(|tx| match tx.get(&account, kind, &id)? {
                Some(mut session) => settle(tx, &account, kind, &mut session, now_ms()),
                None => tx.delete(&account, PENDING, &id),
            });
            if let Err(e) = settled {
                tracing::warn!(%id, "cannot settle a session: {e}");
            }
            // Let the requests waiting for the store in between.
            tokio::task::yield_now().await;
        }
        tokio::select! {
            _ = tokio::time::sleep(SETTLE_EVERY) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
    }
}

/// Reads a session (settling it first), or answers 404.
pub fn load_settled(app: &AppState, account: &str, kind: &str, id: &str) -> ApiResult<Value> {
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
pub async fn await_final(app: &AppState, account: &str, kind: &str, id: &str, max_wait: Duration) -> ApiResult<Value> {
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
            return Err(ApiError::still_running(format!(
                "{} {id} is still running and the server is stopping; repeat the call",
                noun(kind)
            )));
        }
        if now >= deadline {
            return Err(ApiError::still_running(format!(
                "{} {id} is still running after {} s; repeat the call to keep waiting",
                noun(kind),
                max_wait.as_secs_f64()
            )));
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

/// Cancels the runs of a running check session that `only` names (all
/// when `None`): each gets a FINAL result marked `isCancelled`; the session
/// is CANCELLED once all are. A final session is left as it is.
pub fn cancel_check_session(app: &AppState, account: &str, id: &str, only: Option<&[String]>) -> ApiResult<()> {
    app.store.transaction(|tx| {
        let mut session = tx
            .get(account, CHECK_SESSIONS, id)?
            .ok_or_else(|| ApiError::not_found("check session", id))?;
        let now = now_ms();
        settle(tx, account, CHECK_SESSIONS, &mut session, now)?;
        if is_final(CHECK_SESSIONS, &session) {
            return Ok(());
        }
        let mut runs = session["_internal"]["runs"].as_array().cloned().unwrap_or_default();
        if let Some(only) = only {
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
            tx.insert(account, CHECK_RESULTS, &result_id, Some(&check_id), now, &record)?;
            entries.push(entry);
        }
        let all_cancelled = runs.iter().all(|r| r["cancelled"] == true);
        session["results"] = Value::Array(entries);
        session["_internal"]["runs"] = Value::Array(runs);
        if all_cancelled {
            session["status"] = json!(RunStatus::Cancelled.as_str());
            session["stoppedAt"] = json!(iso(now));
            session["_internal"]["stoppedAtMs"] = json!(now);
            tx.delete(account, PENDING, id)?;
        }
        tx.replace(account, CHECK_SESSIONS, id, &session)?;
        Ok::<_, ApiError>(())
    })?;
    CHANGED.notify_waiters();
    Ok(())
}
