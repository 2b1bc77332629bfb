//! Whether a maintenance window silences a check's alerts at a given time
//! (issue 8: no alerts inside a maintenance window).
//!
//! The matching rule (the specification is silent):
//! - A window applies to a check when `silenceAllAlerts` is true, or when
//!   it shares a tag with the check (its `tags` or `silenceAlertsTags`;
//!   the check's tags include its group's). A window without tags that does
//!   not silence all alerts applies to no check.
//! - It covers a time `t` when `startsAt <= t < endsAt`, or when a repeat
//!   of it does: with `repeatUnit` (DAY, WEEK, MONTH) and `repeatInterval`
//!   (default 1), occurrence k starts k * interval units after `startsAt`
//!   and lasts as long as the first, until `repeatEndsAt` (an occurrence
//!   starting after it does not count). Times are taken as written (their
//!   offsets); `timezone` is not applied to repeats.
//! - A maintenance of the window (`/maintenances`, which PATCH can move)
//!   covers its own `startsAt..endsAt` as well.

use chrono::{DateTime, Duration, Months, Utc};
use monform_model::Kind;
use rusqlite::Connection;
use serde_json::Value;

use crate::clock;
use crate::store::Objects;

/// Whether some maintenance window of `account` silences `check` (stored
/// form, group settings applied) at `at` (UNIX ms).
pub fn silences(db: &Connection, account: &str, check: &Value, at: i64) -> rusqlite::Result<bool> {
    let Some(at) = DateTime::from_timestamp_millis(at) else {
        return Ok(false);
    };
    for row in db.all(account, Kind::MaintenanceWindow.section())? {
        if !applies(&row.body, check) {
            continue;
        }
        if covers(&row.body, at) {
            return Ok(true);
        }
        for maintenance in db.records(account, "maintenances", Some(&row.id), i64::MIN, i64::MAX)? {
            if let (Some(start), Some(end)) = (time(&maintenance.body, "startsAt"), time(&maintenance.body, "endsAt"))
                && start <= at
                && at < end
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

fn strings(value: &Value) -> impl Iterator<Item = &str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// Whether `window` applies to `check` (by tags, or silencing all alerts).
pub fn applies(window: &Value, check: &Value) -> bool {
    if window["silenceAllAlerts"] == true {
        return true;
    }
    let tags: Vec<&str> = strings(&check["tags"]).collect();
    strings(&window["tags"])
        .chain(strings(&window["silenceAlertsTags"]))
        .any(|t| tags.contains(&t))
}

fn time(value: &Value, field: &str) -> Option<DateTime<Utc>> {
    value[field].as_str().and_then(clock::parse)
}

/// Whether `window` (or one of its repeats) covers `at`.
pub fn covers(window: &Value, at: DateTime<Utc>) -> bool {
    let (Some(start), Some(end)) = (time(window, "startsAt"), time(window, "endsAt")) else {
        return false;
    };
    if end <= start || at < start {
        return false;
    }
    if at < end {
        return true;
    }
    let length = end - start;
    let interval = window["repeatInterval"].as_i64().filter(|n| *n > 0).unwrap_or(1);
    let repeat_end = time(window, "repeatEndsAt");
    // The latest occurrence starting at or before `at`.
    let latest = match window["repeatUnit"].as_str() {
        Some(unit @ ("DAY" | "WEEK")) => {
            let days = if unit == "DAY" { 1 } else { 7 };
            let period = Duration::days(days * interval);
            let k = (at - start).num_milliseconds() / period.num_milliseconds();
            i32::try_from(k).ok().map(|k| start + period * k)
        }
        Some("MONTH") => {
            let mut latest = None;
            // Months since the start bound the number of occurrences.
            for k in 1.. {
                let Some(next) = u32::try_from(k * interval)
                    .ok()
                    .and_then(|m| start.checked_add_months(Months::new(m)))
                else {
                    break;
                };
                if next > at {
                    break;
                }
                latest = Some(next);
            }
            latest
        }
        _ => None,
    };
    latest.is_some_and(|s| repeat_end.is_none_or(|e| s <= e) && at < s + length)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(text: &str) -> DateTime<Utc> {
        clock::parse(text).unwrap()
    }

    #[test]
    fn one_off_windows() {
        let window = json!({ "startsAt": "2026-03-01T02:00:00Z", "endsAt": "2026-03-01T04:00:00Z" });
        assert!(covers(&window, at("2026-03-01T02:00:00Z")));
        assert!(covers(&window, at("2026-03-01T03:59:59Z")));
        assert!(!covers(&window, at("2026-03-01T04:00:00Z")));
        assert!(!covers(&window, at("2026-03-02T03:00:00Z")));
    }

    #[test]
    fn repeating_windows() {
        let daily = json!({ "startsAt": "2026-03-01T02:00:00Z", "endsAt": "2026-03-01T04:00:00Z",
            "repeatUnit": "DAY", "repeatInterval": 2, "repeatEndsAt": "2026-03-10T00:00:00Z" });
        assert!(covers(&daily, at("2026-03-03T03:00:00Z")));
        assert!(!covers(&daily, at("2026-03-02T03:00:00Z")));
        assert!(!covers(&daily, at("2026-03-03T05:00:00Z")));
        assert!(!covers(&daily, at("2026-03-11T03:00:00Z")));
        let weekly =
            json!({ "startsAt": "2026-03-02T22:00:00Z", "endsAt": "2026-03-03T01:00:00Z", "repeatUnit": "WEEK" });
        assert!(covers(&weekly, at("2026-03-10T00:30:00Z")));
        assert!(!covers(&weekly, at("2026-03-11T00:30:00Z")));
        let monthly =
            json!({ "startsAt": "2026-01-31T10:00:00Z", "endsAt": "2026-01-31T11:00:00Z", "repeatUnit": "MONTH" });
        assert!(covers(&monthly, at("2026-03-31T10:30:00Z")));
        assert!(!covers(&monthly, at("2026-03-30T10:30:00Z")));
    }

    #[test]
    fn windows_apply_by_tags() {
        let check = json!({ "tags": ["api", "prod"] });
        assert!(applies(&json!({ "tags": ["prod"] }), &check));
        assert!(applies(&json!({ "silenceAlertsTags": ["api"] }), &check));
        assert!(applies(&json!({ "silenceAllAlerts": true }), &json!({})));
        assert!(!applies(&json!({ "tags": ["staging"] }), &check));
        assert!(!applies(&json!({}), &check));
    }
}
