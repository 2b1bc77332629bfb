//! Heartbeat checks: the monitored job pings the service; a run fails when
//! no ping arrived within period + grace. Where pings are recorded is the
//! caller's ([`Heartbeats`]).
//!
//! Choice: the first period starts when the check is created (its
//! `created_at`), so a new check passes until period + grace have gone by
//! without a ping.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::{Heartbeats, Probe};

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

fn created_ms(check: &Value) -> Option<i64> {
    let text = check["created_at"].as_str()?;
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.timestamp_millis())
}

/// Judges a heartbeat check at `now_ms` from its last ping.
pub fn evaluate(check: &Value, last_ping_ms: Option<i64>, now_ms: i64) -> Probe {
    let created = created_ms(check).unwrap_or(now_ms);
    let allowance = allowance_ms(&check["heartbeat"]);
    let since = last_ping_ms.unwrap_or(created);
    let late = now_ms - since > allowance;
    let details = json!({
        "lastPingAt": last_ping_ms
            .and_then(DateTime::<Utc>::from_timestamp_millis)
            .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true)),
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

/// A run of a heartbeat check: reads its last ping from `heartbeats`.
pub fn probe(check: &Value, heartbeats: Option<&dyn Heartbeats>) -> Probe {
    let Some(heartbeats) = heartbeats else {
        return Probe::not_executed("not executed: heartbeat checks are judged from the pings the service receives");
    };
    match heartbeats.last_ping_ms(check) {
        Ok(last) => evaluate(check, last, Utc::now().timestamp_millis()),
        Err(e) => Probe::error(format!("cannot read the pings: {e}")),
    }
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
        let created = created_ms(&check).unwrap();
        assert_eq!(allowance_ms(&check["heartbeat"]), 90_000);
        assert!(evaluate(&check, None, created + 60_000).failure.is_none());
        assert!(evaluate(&check, None, created + 91_000).failure.is_some());
        assert!(
            evaluate(&check, Some(created + 60_000), created + 120_000)
                .failure
                .is_none()
        );
    }

    struct Pinged(Option<i64>);
    impl Heartbeats for Pinged {
        fn last_ping_ms(&self, _: &Value) -> Result<Option<i64>, String> {
            Ok(self.0)
        }
    }

    #[test]
    fn pings_come_from_the_caller() {
        let check = json!({"created_at": "2020-01-01T00:00:00Z", "heartbeat": {"period": 1, "periodUnit": "minutes"}});
        assert!(
            probe(&check, Some(&Pinged(Some(Utc::now().timestamp_millis()))))
                .failure
                .is_none()
        );
        assert!(probe(&check, Some(&Pinged(None))).failure.is_some());
        assert!(probe(&check, None).not_executed.is_some());
    }
}
