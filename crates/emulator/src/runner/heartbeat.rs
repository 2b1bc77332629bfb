//! Heartbeat checks: the monitored job calls `GET|POST /ping/{token}` (the
//! check's `heartbeat.pingUrl`, served without a key); a run fails when no
//! ping arrived within period + grace.
//!
//! Choices: the first period starts when the check is created, so a new
//! check passes until period + grace have gone by without a ping. Each ping
//! replaces the check's `heartbeatPings` record (id: the check id) holding
//! the last ping time and a count.

use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

use super::Probe;
use crate::app::App;
use crate::clock;
use crate::store::Objects;

/// Record kind: the last ping of a heartbeat check (id and parent: check id).
pub const PINGS: &str = "heartbeatPings";

/// Seconds in one `unit` (seconds, minutes, hours, days).
fn unit_seconds(unit: &str) -> i64 {
    match unit {
        "minutes" => 60,
        "hours" => 3600,
        "days" => 86_400,
        _ => 1,
    }
}

/// Period + grace in milliseconds.
pub fn allowance_ms(heartbeat: &Value) -> i64 {
    let part = |value: &str, unit: &str| {
        heartbeat[value].as_i64().unwrap_or(0) * unit_seconds(heartbeat[unit].as_str().unwrap_or("seconds"))
    };
    (part("period", "periodUnit") + part("grace", "graceUnit")) * 1000
}

/// Records a ping for `token`. Returns the check id, or `None` for an
/// unknown token.
pub fn record_ping(app: &App, token: &str) -> rusqlite::Result<Option<String>> {
    app.store.transaction(|tx| {
        let found: Option<(String, String)> = tx
            .query_row(
                "SELECT account_id, id FROM objects WHERE kind = 'checks'
                 AND json_extract(body, '$.heartbeat.pingToken') = ?1",
                params![token],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((account, check_id)) = found else {
            return Ok(None);
        };
        let now = clock::now();
        let count = tx
            .get(&account, PINGS, &check_id)?
            .and_then(|p| p["count"].as_i64())
            .unwrap_or(0)
            + 1;
        let record = json!({
            "checkId": check_id,
            "lastPingAt": clock::format(now),
            "lastPingAtMs": now.timestamp_millis(),
            "count": count,
        });
        if !tx.replace(&account, PINGS, &check_id, &record)? {
            tx.insert(
                &account,
                PINGS,
                &check_id,
                Some(&check_id),
                now.timestamp_millis(),
                &record,
            )?;
        }
        Ok(Some(check_id))
    })
}

/// Judges a heartbeat check at `now_ms` from its last ping.
pub fn evaluate(check: &Value, last_ping_ms: Option<i64>, now_ms: i64) -> Probe {
    let created = check["created_at"]
        .as_str()
        .and_then(clock::parse)
        .map_or(now_ms, |t| t.timestamp_millis());
    let allowance = allowance_ms(&check["heartbeat"]);
    let since = last_ping_ms.unwrap_or(created);
    let late = now_ms - since > allowance;
    let details = json!({
        "lastPingAt": last_ping_ms.and_then(chrono::DateTime::from_timestamp_millis).map(clock::format),
        "allowanceMs": allowance,
    });
    let failure = late.then(|| match last_ping_ms {
        Some(_) => format!(
            "no ping within period + grace ({} s): last ping {} s ago",
            allowance / 1000,
            (now_ms - since) / 1000
        ),
        None => format!(
            "no ping received since the check was created ({} s ago; period + grace is {} s)",
            (now_ms - since) / 1000,
            allowance / 1000
        ),
    });
    Probe {
        failure,
        details,
        ..Probe::default()
    }
}

/// A run of a heartbeat check: reads its last ping.
pub fn probe(app: &App, account: &str, check: &Value) -> Probe {
    let check_id = check["id"].as_str().unwrap_or_default();
    let last = match app.store.lock().get(account, PINGS, check_id) {
        Ok(record) => record.and_then(|r| r["lastPingAtMs"].as_i64()),
        Err(e) => {
            return Probe {
                error: Some(format!("cannot read the pings: {e}")),
                ..Probe::default()
            };
        }
    };
    evaluate(check, last, chrono::Utc::now().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_pings_fail() {
        let check = json!({
            "created_at": "2026-01-01T00:00:00.000Z",
            "heartbeat": {"period": 1, "periodUnit": "minutes", "grace": 30, "graceUnit": "seconds"},
        });
        let created = clock::parse("2026-01-01T00:00:00.000Z").unwrap().timestamp_millis();
        assert_eq!(allowance_ms(&check["heartbeat"]), 90_000);
        assert!(evaluate(&check, None, created + 60_000).failure.is_none());
        assert!(evaluate(&check, None, created + 91_000).failure.is_some());
        assert!(
            evaluate(&check, Some(created + 60_000), created + 120_000)
                .failure
                .is_none()
        );
    }
}
