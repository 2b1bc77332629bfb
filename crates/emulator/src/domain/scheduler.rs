//! The scheduler: a background task (started by `start` when
//! `Config::run_scheduler` is on, stopped with the server) that runs every
//! activated check at its frequency, as a check session with `runSource`
//! SCHEDULER, and settles due sessions so their results are recorded.
//!
//! Choices: a check runs at the first tick after it is seen (or activated),
//! then every `frequency` minutes; frequency 0 (sub-minute, API and TCP)
//! runs every `frequencyOffset` seconds (10, 20 or 30; default 10).
//! Heartbeat checks are judged at least every minute. Group settings
//! (activation, locations) apply. Due times live in memory: after a restart
//! every check runs once at the first tick.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use monform_model::Kind;
use monform_model::resources::CheckType;
use serde_json::Value;

use crate::app::AppState;
use crate::clock::now_ms;
use crate::domain::checks::effective_check;
use crate::domain::sessions::check::start_scheduled;
use crate::domain::sessions::lifecycle::settle_due;
use crate::store::Objects;

/// How often the scheduler looks for due checks.
pub const TICK: Duration = Duration::from_millis(250);

/// Milliseconds between two scheduled runs of `check` (the model's
/// period; a heartbeat is judged at least every minute).
pub fn period_ms(check: &Value) -> i64 {
    let seconds = monform_model::runs::period_seconds(check);
    let period = i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
    if CheckType::of_check(check).is_ok_and(CheckType::is_pinged) {
        period.min(60_000)
    } else {
        period
    }
}

/// Accounts that have checks.
fn accounts(app: &AppState) -> rusqlite::Result<Vec<String>> {
    let db = app.store.lock();
    let mut statement = db.prepare_cached("SELECT DISTINCT account_id FROM objects WHERE kind = ?1")?;
    statement.query_map([Kind::Check.section()], |r| r.get(0))?.collect()
}

/// The checks due at `now`, with their account; updates `next`.
fn due(app: &AppState, next: &mut HashMap<String, i64>, now: i64) -> rusqlite::Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for account in accounts(app)? {
        let db = app.store.lock();
        for row in db.all(&account, Kind::Check.section())? {
            let check = effective_check(&db, &account, row.body)?;
            if check["activated"] == false {
                next.remove(&row.id);
                continue;
            }
            let when = next.entry(row.id.clone()).or_insert(now);
            if *when <= now {
                *when = now + period_ms(&check);
                out.push((account.clone(), check));
            }
        }
    }
    Ok(out)
}

/// Runs until the server stops.
pub async fn run(app: AppState) {
    let mut stopped = app.stopped.subscribe();
    let mut next: HashMap<String, i64> = HashMap::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        if app.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        let checks = match due(&app, &mut next, now_ms()) {
            Ok(checks) => checks,
            Err(e) => {
                tracing::warn!("scheduler cannot read the checks: {e}");
                continue;
            }
        };
        for (account, check) in checks {
            if let Err(e) = start_scheduled(&app, &account, &check) {
                tracing::warn!("scheduler cannot start a run: {}", e.message);
            }
        }
        let Ok(accounts) = accounts(&app) else { continue };
        for account in accounts {
            if let Err(e) = app.store.transaction(|tx| settle_due(tx, &account)) {
                tracing::warn!("scheduler cannot settle sessions: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn periods() {
        assert_eq!(period_ms(&json!({})), 600_000);
        assert_eq!(period_ms(&json!({"frequency": 1})), 60_000);
        assert_eq!(period_ms(&json!({"frequency": 0, "frequencyOffset": 20})), 20_000);
        assert_eq!(period_ms(&json!({"frequency": 60, "checkType": "HEARTBEAT"})), 60_000);
    }
}
