//! Simulated outages (test-only, not part of the service): a check (by
//! its id or its name) fails, or is slow, from a start for a length. Given
//! to `monform serve --simulate-outage` (every account) or `POST
//! /-/outages` (the caller's account); kept in the `simulated_outages`
//! table. A check session's run that starts inside one turns out as it
//! says (`sessions::runs::run_check`), executed or not; clock jumps
//! (`simulate`) play them too. A slow-down's runs take its response time
//! and are judged against the check's `degradedResponseTime` and
//! `maxResponseTime`.

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::clock::{self, iso};
use crate::ids::id_text;

/// The error of a run failed by an outage.
pub const OUTAGE_ERROR: &str = "simulated outage (monform serve --simulate-outage)";

/// A window in which a check fails (or is slow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// The check's id or name.
    pub check: String,
    pub starts_ms: i64,
    pub ends_ms: i64,
    /// A slow-down: runs pass in this many milliseconds (judged against
    /// the check's thresholds); `None`: runs fail.
    pub response_ms: Option<u32>,
}

impl Outage {
    /// `CHECK:START:DURATION[:RESPONSE_MS]`: START an ISO 8601 date-time
    /// (or date), or `+DURATION` after `clock_start` (UNIX ms); DURATION
    /// such as `45m`; RESPONSE_MS makes it a slow-down. CHECK is what comes
    /// before the first colon, so START may hold colons.
    pub fn parse(text: &str, clock_start: i64) -> Result<Outage, String> {
        let form = "expected CHECK:START:DURATION (e.g. checkout:+2d:45m or checkout:2026-11-02T10:00:00Z:1h)";
        let (check, rest) = text
            .split_once(':')
            .filter(|(check, _)| !check.trim().is_empty())
            .ok_or_else(|| format!("`{text}`: {form}"))?;
        let (rest, response_ms) = match rest.rsplit_once(':') {
            Some((front, last)) if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = last
                    .parse::<u32>()
                    .map_err(|_| format!("`{text}`: response time {last} is too large"))?;
                (front, Some(ms))
            }
            _ => (rest, None),
        };
        let (start, duration) = rest.rsplit_once(':').ok_or_else(|| format!("`{text}`: {form}"))?;
        let length = clock::parse_duration_ms(duration)
            .filter(|ms| *ms > 0)
            .ok_or_else(|| format!("`{text}`: `{duration}` is not a duration such as 30s, 45m, 6h or 2d"))?;
        let starts_ms = start_ms(start, clock_start).ok_or_else(|| {
            format!("`{text}`: start `{start}` is neither a date-time (2026-11-02T10:00:00Z) nor +DURATION after the clock's start")
        })?;
        Ok(Outage {
            check: check.trim().to_owned(),
            starts_ms,
            ends_ms: starts_ms.saturating_add(length),
            response_ms,
        })
    }

    pub fn covers(&self, at: i64) -> bool {
        (self.starts_ms..self.ends_ms).contains(&at)
    }

    /// The admin API's form.
    pub fn to_json(&self) -> Value {
        json!({
            "check": self.check,
            "startsAt": iso(self.starts_ms),
            "endsAt": iso(self.ends_ms),
            "responseTime": self.response_ms,
        })
    }
}

/// Whether a run of `ms` is degraded and whether it fails, by the check's
/// thresholds (the service's defaults: 10 s degraded, 20 s failed).
pub fn slow_verdict(check: Option<&Value>, ms: u32) -> (bool, bool) {
    let field = |name: &str, default: u64| check.and_then(|c| c[name].as_u64()).unwrap_or(default);
    let degraded = field("degradedResponseTime", 10_000);
    let max = field("maxResponseTime", 20_000);
    (u64::from(ms) > degraded, u64::from(ms) > max)
}

fn start_ms(text: &str, clock_start: i64) -> Option<i64> {
    match text.strip_prefix('+') {
        Some(after) => clock::parse_duration_ms(after).map(|ms| clock_start.saturating_add(ms)),
        None => clock::parse(text).map(|t| t.timestamp_millis()),
    }
}

/// Stores an outage, for `account` or (`None`) every account.
pub fn add_outage(db: &Connection, account: Option<&str>, outage: &Outage) -> rusqlite::Result<()> {
    db.execute(
        "INSERT INTO simulated_outages (account_id, check_ref, starts_ms, ends_ms, response_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![account, outage.check, outage.starts_ms, outage.ends_ms, outage.response_ms],
    )?;
    Ok(())
}

/// Replaces the outages of every account (those given at start-up: a
/// restart with other flags has other outages) with `outages`.
pub fn set_startup_outages(db: &Connection, outages: &[Outage]) -> rusqlite::Result<()> {
    db.execute("DELETE FROM simulated_outages WHERE account_id IS NULL", [])?;
    for outage in outages {
        add_outage(db, None, outage)?;
    }
    Ok(())
}

/// The outages `account` sees (its own and every account's), by start.
pub fn outages(db: &Connection, account: &str) -> rusqlite::Result<Vec<Outage>> {
    let mut statement = db.prepare_cached(
        "SELECT check_ref, starts_ms, ends_ms, response_ms FROM simulated_outages
         WHERE account_id IS NULL OR account_id = ?1 ORDER BY starts_ms, id",
    )?;
    statement
        .query_map([account], |r| {
            Ok(Outage {
                check: r.get(0)?,
                starts_ms: r.get(1)?,
                ends_ms: r.get(2)?,
                response_ms: r.get(3)?,
            })
        })?
        .collect()
}

/// The outages of `check` (by id or name) that overlap `from..to`.
pub fn outages_of(
    db: &Connection,
    account: &str,
    check: &Value,
    (from, to): (i64, i64),
) -> rusqlite::Result<Vec<Outage>> {
    let id = id_text(&check["id"]);
    let name = check["name"].as_str().unwrap_or_default();
    Ok(outages(db, account)?
        .into_iter()
        .filter(|o| (o.check == id || o.check == name) && o.starts_ms < to && o.ends_ms > from)
        .collect())
}

/// The outage covering a run of `check` started at `at`, if any.
pub fn outage_at(db: &Connection, account: &str, check: &Value, at: i64) -> rusqlite::Result<Option<Outage>> {
    Ok(outages_of(db, account, check, (at, at.saturating_add(1)))?
        .into_iter()
        .next())
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: i64 = 1_700_000_000_000;

    #[test]
    fn outages_parse() {
        let outage = Outage::parse("checkout:+2d:45m", START).unwrap();
        assert_eq!(
            outage,
            Outage {
                check: "checkout".into(),
                starts_ms: START + 2 * 86_400_000,
                ends_ms: START + 2 * 86_400_000 + 45 * 60_000,
                response_ms: None,
            }
        );
        let outage = Outage::parse("Checkout API:2026-11-02T10:00:00Z:1h:2500", START).unwrap();
        assert_eq!(outage.check, "Checkout API");
        assert_eq!(
            outage.starts_ms,
            clock::parse("2026-11-02T10:00:00Z").unwrap().timestamp_millis()
        );
        assert_eq!(outage.ends_ms - outage.starts_ms, 3_600_000);
        assert_eq!(outage.response_ms, Some(2500));
        assert!(outage.covers(outage.starts_ms) && !outage.covers(outage.ends_ms));
        for bad in [
            "checkout",
            ":+1d:5m",
            "checkout:+1d",
            "checkout:+1d:5",
            "checkout:yesterday:5m",
            "c:+1d:0m",
        ] {
            assert!(Outage::parse(bad, START).is_err(), "{bad}");
        }
    }

    #[test]
    fn slow_downs_are_judged_by_the_check() {
        let check = json!({"degradedResponseTime": 1000, "maxResponseTime": 3000});
        assert_eq!(slow_verdict(Some(&check), 900), (false, false));
        assert_eq!(slow_verdict(Some(&check), 2000), (true, false));
        assert_eq!(slow_verdict(Some(&check), 3001), (true, true));
        assert_eq!(slow_verdict(None, 15_000), (true, false));
    }
}
