//! The clock, the one home of timestamps. `updated_at` must change on every update, even two in the
//! same millisecond, because clients use it as a version.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

static LAST_MILLIS: AtomicI64 = AtomicI64::new(0);

/// Now, strictly later than any earlier call in this process.
pub fn now() -> DateTime<Utc> {
    let wall = Utc::now().timestamp_millis();
    let mut last = LAST_MILLIS.load(Ordering::Relaxed);
    loop {
        let next = wall.max(last + 1);
        match LAST_MILLIS.compare_exchange(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return DateTime::from_timestamp_millis(next).unwrap_or_else(Utc::now),
            Err(actual) => last = actual,
        }
    }
}

pub fn format(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn now_text() -> String {
    format(now())
}

/// The wall clock in UNIX milliseconds (not made strictly increasing).
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// An ISO 8601 date-time for UNIX milliseconds.
pub fn iso(ms: i64) -> String {
    format(DateTime::from_timestamp_millis(ms).unwrap_or_default())
}

/// Parses an ISO 8601 date-time, or a date (midnight UTC).
pub fn parse(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc())
        })
}
