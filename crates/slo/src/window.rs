//! Durations (`5m`, `28d`), objective windows (rolling or the calendar
//! month) and the UTC calendar arithmetic behind month boundaries.

use std::fmt;
use std::time::Duration;

use crate::SloError;

const MS_PER_DAY: i64 = 86_400_000;

/// Parses a duration written as a whole number and a unit: `s`, `m`,
/// `h`, `d` or `w` (`30s`, `5m`, `1h`, `28d`). Zero is refused: no window
/// or slice can be empty.
pub fn parse_duration(text: &str) -> Result<Duration, SloError> {
    let invalid = || SloError::InvalidDuration(text.to_owned());
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).ok_or_else(invalid)?;
    let (digits, unit) = trimmed.split_at(split);
    let count: u64 = digits.parse().map_err(|_| invalid())?;
    let unit_seconds: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(invalid()),
    };
    // A bound far past any window the service keeps, so that milliseconds
    // as i64 never overflow in the arithmetic below.
    const MAX_SECONDS: u64 = 10 * 366 * 86_400;
    match count.checked_mul(unit_seconds) {
        Some(0) | None => Err(invalid()),
        Some(seconds) if seconds > MAX_SECONDS => Err(invalid()),
        Some(seconds) => Ok(Duration::from_secs(seconds)),
    }
}

/// Writes a duration back the way [`parse_duration`] reads it, in the
/// largest unit that divides it, days at most (`5m`, `1h`, `28d`, not `4w`).
pub fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if seconds > 0 && seconds.is_multiple_of(size) {
            return format!("{}{unit}", seconds / size);
        }
    }
    format!("{seconds}s")
}

/// Milliseconds of a duration, saturated (parsed durations are bounded).
pub(crate) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// The period an objective is measured over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The last `Duration` before the evaluation time (`7d`, `28d`, `30d`).
    Rolling(Duration),
    /// The UTC calendar month the evaluation time falls in, so far.
    CalendarMonth,
}

impl Window {
    /// `28d` (any [`parse_duration`] text) for a rolling window, `month`
    /// for the calendar month.
    pub fn parse(text: &str) -> Result<Window, SloError> {
        match text.trim() {
            "month" => Ok(Window::CalendarMonth),
            other => parse_duration(other)
                .map(Window::Rolling)
                .map_err(|_| SloError::InvalidWindow(text.to_owned())),
        }
    }

    /// The half-open interval `[start, now)` in UNIX milliseconds that the
    /// window covers when evaluated at `now_ms`. A run stamped exactly at
    /// `now_ms` is left to the next evaluation; a calendar month is the
    /// month so far (from 00:00:00.000 UTC on its first day).
    pub fn bounds(self, now_ms: i64) -> Interval {
        let start = match self {
            Window::Rolling(length) => now_ms.saturating_sub(millis(length)),
            Window::CalendarMonth => month_start_ms(now_ms),
        };
        Interval { start, end: now_ms }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::Rolling(length) => f.write_str(&format_duration(*length)),
            Window::CalendarMonth => f.write_str("month"),
        }
    }
}

/// A half-open interval of UNIX milliseconds, `start <= t < end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub start: i64,
    pub end: i64,
}

impl Interval {
    pub fn contains(self, at_ms: i64) -> bool {
        self.start <= at_ms && at_ms < self.end
    }
}

/// 00:00:00.000 UTC on the first day of the month `at_ms` falls in.
pub fn month_start_ms(at_ms: i64) -> i64 {
    let (year, month, _) = civil_from_days(at_ms.div_euclid(MS_PER_DAY));
    days_from_civil(year, month, 1) * MS_PER_DAY
}

/// 00:00:00.000 UTC on the first day of the month after the one `at_ms`
/// falls in: the end of a complete calendar-month window.
pub fn next_month_start_ms(at_ms: i64) -> i64 {
    let (year, month, _) = civil_from_days(at_ms.div_euclid(MS_PER_DAY));
    let (year, month) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
    days_from_civil(year, month, 1) * MS_PER_DAY
}

// Howard Hinnant's `days_from_civil` and `civil_from_days` (proleptic
// Gregorian, days since 1970-01-01): exact for every i64 day we can meet,
// and no date crate for two functions.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print() {
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("28d").unwrap(), Duration::from_secs(28 * 86_400));
        assert_eq!(parse_duration("1w").unwrap(), Duration::from_secs(604_800));
        for bad in ["", "5", "m", "0m", "1.5h", "-1h", "5 m", "3y", "99999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(format_duration(Duration::from_secs(3 * 86_400)), "3d");
        assert_eq!(format_duration(Duration::from_secs(1_800)), "30m");
        assert_eq!(format_duration(Duration::from_secs(90)), "90s");
        assert_eq!(Window::parse("28d").unwrap().to_string(), "28d");
        assert_eq!(Window::parse("month").unwrap(), Window::CalendarMonth);
        assert_eq!(
            Window::parse("28x").unwrap_err().to_string(),
            "invalid window `28x`: expected a duration such as 7d, 28d or 30d, or `month`"
        );
    }

    #[test]
    fn month_boundaries_are_utc_midnights() {
        // `date -u -d 2026-11-01 +%s` = 1793491200; 2026-12-01 = 1796083200
        // (30 days later: 30 * 86400 = 2592000).
        let nov_1 = 1_793_491_200_000;
        let dec_1 = 1_796_083_200_000;
        let last_second = dec_1 - 1_000; // 2026-11-30T23:59:59Z
        assert_eq!(month_start_ms(last_second), nov_1);
        assert_eq!(next_month_start_ms(last_second), dec_1);
        assert_eq!(month_start_ms(dec_1), dec_1);
        assert_eq!(month_start_ms(dec_1 - 1), nov_1);
        // A leap February: 2024-02-29T23:59:59Z = 1709251199, 2024-03-01 = 1709251200;
        // February starts 29 days earlier: 1709251200 - 29 * 86400 = 1706745600.
        assert_eq!(month_start_ms(1_709_251_199_000), 1_706_745_600_000);
        assert_eq!(next_month_start_ms(1_709_251_199_000), 1_709_251_200_000);
        // December rolls into January: 2026-01-01 = 1767225600.
        assert_eq!(next_month_start_ms(1_767_225_600_000 - 1), 1_767_225_600_000);
        // Before 1970 too: 1969-12-31T23:59:59Z is in December 1969,
        // which starts 31 days before the epoch: -31 * 86400 = -2678400.
        assert_eq!(month_start_ms(-1_000), -2_678_400_000);
    }
}
