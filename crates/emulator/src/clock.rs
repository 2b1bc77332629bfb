//! The clock, the one home of timestamps. `updated_at` must change on every update, even two in the
//! same millisecond, because clients use it as a version.
//!
//! The clock can be simulated (`monform serve --clock-start`, `POST
//! /-/clock`, `domain::simulate`): an offset added to the wall clock, so
//! simulated time still flows at the wall clock's pace between jumps and
//! only ever moves forward. The offset is process-wide, like the clock
//! itself: one simulated clock per process (`monform serve` runs one
//! emulator; tests that move the clock run `monform serve` as a process of
//! its own, never an in-process emulator beside others).

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

static LAST_MILLIS: AtomicI64 = AtomicI64::new(0);
/// Simulated time minus wall time, in milliseconds (0: the wall clock).
static OFFSET_MILLIS: AtomicI64 = AtomicI64::new(0);

/// Now, strictly later than any earlier call in this process.
pub fn now() -> DateTime<Utc> {
    let wall = now_ms();
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

/// The (possibly simulated) clock in UNIX milliseconds (not made strictly increasing).
pub fn now_ms() -> i64 {
    Utc::now()
        .timestamp_millis()
        .saturating_add(OFFSET_MILLIS.load(Ordering::Relaxed))
}

/// The (possibly simulated) clock as a date-time.
pub fn now_utc() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(now_ms()).unwrap_or_else(Utc::now)
}

/// How far the simulated clock is ahead of the wall clock (negative: behind).
pub fn offset_ms() -> i64 {
    OFFSET_MILLIS.load(Ordering::Relaxed)
}

/// Sets the clock so that now is `at` (UNIX ms); from then on it flows with
/// the wall clock. For start-up (`Config::clock_start`): later moves go
/// through [`advance_to`], which never goes back.
pub fn start_at(at: i64) {
    OFFSET_MILLIS.store(at.saturating_sub(Utc::now().timestamp_millis()), Ordering::Relaxed);
}

/// Moves the clock forward to `at` (UNIX ms); a time already past leaves
/// it where it is. Returns now afterwards.
pub fn advance_to(at: i64) -> i64 {
    let wall = Utc::now().timestamp_millis();
    OFFSET_MILLIS.fetch_max(at.saturating_sub(wall), Ordering::Relaxed);
    now_ms()
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

/// A duration such as `90s`, `45m`, `6h`, `30d` or `2w`, in milliseconds.
pub fn parse_duration_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: i64 = number.parse().ok()?;
    let unit_ms = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 604_800_000,
        _ => return None,
    };
    number.checked_mul(unit_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("45m"), Some(2_700_000));
        assert_eq!(parse_duration_ms("30d"), Some(2_592_000_000));
        assert_eq!(parse_duration_ms("1w"), Some(604_800_000));
        for bad in ["", "m", "5", "5x", "-5m", "1.5h"] {
            assert_eq!(parse_duration_ms(bad), None, "{bad}");
        }
    }
}
