//! Test-only controls of time and failure: simulated outages and clock
//! jumps, so an objective's 30 days (its budget, burn rates and alerts)
//! are played in seconds. Reached through `monform serve --clock-start`
//! and `--simulate-outage`, and the admin routes `/-/clock` and
//! `/-/outages` (`routes/admin.rs`); none of this is part of the service.
//!
//! - **Outages**: `outages.rs`.
//! - **Clock jumps** ([`fast_forward`]). Moving the clock forward plays
//!   every activated check's runs over the skipped time, at its frequency
//!   and from its locations (every one with `runParallel`, else taking
//!   turns), each passing with a made-up response time unless an outage
//!   says otherwise. They are stored compacted (`compact`), so 30 days of
//!   a check running every minute take a fraction of a second. The check
//!   alert state machine sees them as it sees scheduled runs (alerts,
//!   notifications: a webhook really receives the outage's failure and
//!   recovery), at each change of verdict and each failing run. Runs are
//!   played on the check's period aligned to the epoch, strictly before
//!   the target time; the scheduler runs each check at the new time.
//!   Heartbeat checks pass (the world is healthy but for outages).

use monform_model::{Kind, RunStatus};
use rusqlite::Connection;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::clock::{self, iso, now_ms};
use crate::domain::alerts;
use crate::domain::checks::effective_check;
use crate::domain::compact::{self, CompactRun};
use crate::domain::outages::{OUTAGE_ERROR, outages_of, slow_verdict};
use crate::domain::scheduler::period_ms;
use crate::domain::sessions::DEFAULT_LOCATION;
use crate::domain::sessions::runs::fnv;
use crate::error::{ApiError, ApiResult};
use crate::store::Objects;

/// What a clock jump did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jump {
    pub from_ms: i64,
    pub to_ms: i64,
    /// Runs played over the skipped time.
    pub runs: u64,
}

/// The longest jump at once: 31 days (a rolling month and more is what
/// objectives look at; results older than 30 days are rolled up anyway).
pub const MAX_JUMP_MS: i64 = 31 * 86_400_000;

/// Moves the clock forward to `to` (UNIX ms), playing every activated
/// check's runs over the skipped time (see the module's header). A time
/// not after now is a 400, as is a jump longer than [`MAX_JUMP_MS`].
pub fn fast_forward(app: &AppState, to: i64) -> ApiResult<Jump> {
    let from = now_ms();
    if to <= from {
        return Err(ApiError::invalid(
            "to",
            format!(
                "{} is not after the clock's now, {}: the clock only moves forward",
                iso(to),
                iso(from)
            ),
        ));
    }
    if to - from > MAX_JUMP_MS {
        return Err(ApiError::invalid(
            "advance",
            "a jump is at most 31 days; jump again for more",
        ));
    }
    let accounts: Vec<String> = {
        let db = app.store.lock();
        let mut statement = db.prepare_cached("SELECT DISTINCT account_id FROM objects WHERE kind = ?1")?;
        statement
            .query_map([Kind::Check.section()], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut runs = 0;
    for account in accounts {
        let ids: Vec<String> = {
            let db = app.store.lock();
            db.all(&account, Kind::Check.section())?
                .into_iter()
                .map(|r| r.id)
                .collect()
        };
        // One check a transaction: requests get the store in between.
        for id in ids {
            runs += app.store.transaction(|tx| play_check(tx, &account, &id, (from, to)))?;
        }
    }
    clock::advance_to(to);
    Ok(Jump {
        from_ms: from,
        to_ms: to,
        runs,
    })
}

/// Where a check runs: its locations and private locations, in order.
fn locations(check: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for field in ["locations", "privateLocations"] {
        for location in check[field].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !out.iter().any(|l| l == location) {
                out.push(location.to_owned());
            }
        }
    }
    if out.is_empty() {
        out.push(DEFAULT_LOCATION.to_owned());
    }
    out
}

/// Plays one check's runs in `from..to`; returns how many.
fn play_check(db: &Connection, account: &str, id: &str, (from, to): (i64, i64)) -> ApiResult<u64> {
    let Some(body) = db.get(account, Kind::Check.section(), id)? else {
        return Ok(0);
    };
    let check = effective_check(db, account, body)?;
    if check["activated"] == false {
        return Ok(0);
    }
    let period = period_ms(&check);
    if period <= 0 {
        return Ok(0);
    }
    let outages = outages_of(db, account, &check, (from, to))?;
    let places = locations(&check);
    let parallel = check["runParallel"] == true;
    let mut played = Vec::new();
    let mut was_failing = None;
    let mut tick = from.div_euclid(period) + 1;
    while tick * period < to {
        let at = tick * period;
        let here: Vec<&String> = if parallel {
            places.iter().collect()
        } else {
            vec![&places[tick.rem_euclid(places.len() as i64) as usize]]
        };
        let outage = outages.iter().find(|o| o.covers(at));
        let mut tick_runs = Vec::new();
        for location in here {
            let seed = format!("{id}\u{0}{at}\u{0}{location}");
            let ms = 40.0 + (fnv(&seed) % 36_000) as f64 / 100.0;
            let mut run = CompactRun {
                location: location.clone(),
                stopped_ms: at + ms.round() as i64,
                has_failures: false,
                has_errors: false,
                is_degraded: false,
                response_ms: ms,
            };
            if let Some(outage) = outage {
                let (degraded, failed) = match outage.response_ms {
                    None => (false, true),
                    Some(slow) => {
                        run.response_ms = f64::from(slow);
                        run.stopped_ms = at + i64::from(slow);
                        slow_verdict(Some(&check), slow)
                    }
                };
                run.has_failures = failed;
                run.is_degraded = degraded && !failed;
            }
            tick_runs.push(run);
        }
        let failing = tick_runs.iter().any(|r| r.has_failures);
        // The alert state machine moves on a change of verdict and on
        // failing runs (reminders); passing runs in a row change nothing.
        if failing || was_failing != Some(false) {
            let records: Vec<Value> = tick_runs
                .iter()
                .map(|r| {
                    let mut record = r.record(id, &check);
                    if r.has_failures && outage.is_some_and(|o| o.response_ms.is_none()) {
                        record["error"] = json!(OUTAGE_ERROR);
                    }
                    record
                })
                .collect();
            let finished: Vec<alerts::FinishedRun<'_>> = tick_runs
                .iter()
                .zip(&records)
                .map(|(run, result)| alerts::FinishedRun {
                    status: if run.has_failures {
                        RunStatus::Failed
                    } else if run.is_degraded {
                        RunStatus::Degraded
                    } else {
                        RunStatus::Passed
                    },
                    result,
                })
                .collect();
            let stopped = tick_runs.iter().map(|r| r.stopped_ms).max().unwrap_or(at);
            alerts::after_run(db, account, id, &finished, stopped)?;
        }
        was_failing = Some(failing);
        played.extend(tick_runs);
        tick += 1;
    }
    compact::add(db, account, id, &played)?;
    Ok(played.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_run_from_their_locations_in_turn() {
        assert_eq!(locations(&json!({})), [DEFAULT_LOCATION]);
        let check = json!({"locations": ["eu-west-1", "us-east-1"], "privateLocations": ["lab", "eu-west-1"]});
        assert_eq!(locations(&check), ["eu-west-1", "us-east-1", "lab"]);
    }
}
