//! Rules that span several fields, applied to typed resources after the
//! shape check (spec 2.4, 2.1, 2.3, 2.12 and the maintenance window body).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;

use crate::resources::check::{Check, FREQUENCIES, MAX_PROMPT, SUB_MINUTE_OFFSETS};
use crate::resources::common::{RetryStrategy, RetryType, Script};
use crate::resources::group::GroupRetryStrategy;
use crate::{FieldPath, Resource, Violation};

/// Every rule violation of `resource`.
pub fn check(resource: &Resource) -> Vec<Violation> {
    let mut violations = Vec::new();
    match resource {
        Resource::Check(check) => check_rules(check, &mut violations),
        Resource::Snippet(snippet) => {
            script_length(&snippet.script, 1, usize::MAX, "script", &mut violations);
        }
        Resource::Group(group) => {
            if let Some(GroupRetryStrategy::Strategy(s)) = &group.retry_strategy {
                retry_rules(s, &FieldPath::root().key("retryStrategy"), &mut violations);
            }
        }
        Resource::PrivateLocation(location) if looks_like_data_center(&location.slug_name) => {
            violations.push(
                Violation::new(
                    FieldPath::root().key("slugName"),
                    format!(
                        "`{}` looks like a data-center location; slugs must not",
                        location.slug_name
                    ),
                )
                .with_help("pick a name of your own, e.g. `office-amsterdam`"),
            );
        }
        Resource::MaintenanceWindow(window) => {
            let root = FieldPath::root();
            for (field, value) in [
                ("startsAt", Some(&window.starts_at)),
                ("endsAt", Some(&window.ends_at)),
                ("repeatEndsAt", window.repeat_ends_at.as_ref()),
            ] {
                if let Some(value) = value
                    && !is_date_time(value)
                {
                    violations.push(
                        Violation::new(root.key(field), format!("`{value}` is not an ISO 8601 date-time"))
                            .with_help("write it like 2026-12-01T02:00:00Z"),
                    );
                }
            }
            if let (Some(start), Some(end)) = (instant(&window.starts_at), instant(&window.ends_at))
                && end <= start
            {
                violations.push(Violation::new(root.key("endsAt"), "endsAt must be after startsAt"));
            }
            if window.repeat_interval.is_some() && window.repeat_unit.is_none() {
                violations.push(Violation::new(
                    root.key("repeatUnit"),
                    "repeatInterval needs a repeatUnit (DAY, WEEK or MONTH)",
                ));
            }
        }
        _ => {}
    }
    violations
}

fn check_rules(check: &Check, violations: &mut Vec<Violation>) {
    let common = check.common();
    let root = FieldPath::root();
    let check_type = check.check_type();
    if common.frequency == 0 && !check_type.allows_sub_minute() {
        violations.push(
            Violation::new(
                root.key("frequency"),
                format!("frequency 0 (sub-minute) is only for API and TCP checks, not {check_type}"),
            )
            .with_help(format!("use one of {}", join(&FREQUENCIES[1..]))),
        );
    }
    if let Some(range) = offset_range(common.frequency) {
        match (common.frequency_offset, range) {
            (None, OffsetRange::SubMinute) if check_type.allows_sub_minute() => violations.push(Violation::new(
                root.key("frequency"),
                "frequency 0 needs frequencyOffset 10, 20 or 30 (seconds between runs)",
            )),
            (Some(offset), OffsetRange::SubMinute) if !SUB_MINUTE_OFFSETS.contains(&offset) => {
                violations.push(Violation::new(
                    root.key("frequencyOffset"),
                    format!("frequencyOffset {offset} is not allowed for frequency 0; use 10, 20 or 30"),
                ))
            }
            (Some(offset), OffsetRange::Minutes(max)) if !(1..=max).contains(&offset) => {
                violations.push(Violation::new(
                    root.key("frequencyOffset"),
                    format!(
                        "frequencyOffset {offset} is out of range 1..{max} for frequency {}",
                        common.frequency
                    ),
                ))
            }
            _ => {}
        }
    }
    if let Some(strategy) = &common.retry_strategy {
        retry_rules(strategy, &root.key("retryStrategy"), violations);
    }
    if let Check::Agentic(agentic) = check {
        script_length(&agentic.spec.prompt, 1, MAX_PROMPT, "prompt", violations);
    }
    if let Check::Icmp(icmp) = check
        && icmp.spec.max_packet_loss_threshold < icmp.spec.degraded_packet_loss_threshold
    {
        violations.push(Violation::new(
            root.key("maxPacketLossThreshold"),
            format!(
                "maxPacketLossThreshold {} must be at least degradedPacketLossThreshold {}",
                icmp.spec.max_packet_loss_threshold, icmp.spec.degraded_packet_loss_threshold
            ),
        ));
    }
}

/// Length limits of script fields. They are rules, not schema: a script may be
/// `{ file }` in a file, and the schema generator drops length limits on the
/// script type, so the text is measured once resolved.
fn script_length(script: &Script, min: usize, max: usize, field: &str, violations: &mut Vec<Violation>) {
    let length = script.0.chars().count();
    let message = if length < min && min == 1 {
        "must not be empty".to_owned()
    } else if length < min {
        format!("must be at least {min} characters long")
    } else if length > max {
        format!("is {length} characters long; at most {max} are allowed")
    } else {
        return;
    };
    violations.push(Violation::new(FieldPath::root().key(field), message));
}

enum OffsetRange {
    SubMinute,
    Minutes(u32),
}

/// The allowed frequencyOffset for a frequency (spec 2.4).
fn offset_range(frequency: u32) -> Option<OffsetRange> {
    match frequency {
        0 => Some(OffsetRange::SubMinute),
        1..=60 => Some(OffsetRange::Minutes(frequency * 10)),
        _ => Some(OffsetRange::Minutes(frequency.div_ceil(60))),
    }
}

fn retry_rules(strategy: &RetryStrategy, path: &FieldPath, violations: &mut Vec<Violation>) {
    if strategy.kind == RetryType::SingleRetry {
        for (field, set) in [
            ("maxRetries", strategy.max_retries.is_some()),
            ("maxDurationSeconds", strategy.max_duration_seconds.is_some()),
        ] {
            if set {
                violations.push(Violation::new(
                    path.key(field),
                    format!("{field} is not supported with type SINGLE_RETRY"),
                ));
            }
        }
    }
}

/// The service forbids slugs shaped like its own data-center names.
fn looks_like_data_center(slug: &str) -> bool {
    static DATA_CENTER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(us(-gov)?|ap|ca|cn|eu|sa|af|me)-(central|(north|south)?(east|west)?)-\d+")
            .expect("valid pattern")
    });
    DATA_CENTER.is_match(slug)
}

fn is_date_time(text: &str) -> bool {
    instant(text).is_some()
}

/// The instant a date or date-time names, as (seconds since 1970-01-01T00:00Z,
/// nanoseconds), so that times with different offsets compare correctly. A
/// date alone is its midnight; a time without an offset counts as UTC.
fn instant(text: &str) -> Option<(i64, u32)> {
    static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?<y>\d{4})-(?<mo>0[1-9]|1[0-2])-(?<d>0[1-9]|[12]\d|3[01])",
            r"(T(?<h>[01]\d|2[0-3]):(?<mi>[0-5]\d)(:(?<s>[0-5]\d)(\.(?<frac>\d+))?)?(Z|(?<sign>[+-])(?<oh>\d{2}):(?<om>\d{2}))?)?$",
        ))
        .expect("valid pattern")
    });
    let captures = DATE_TIME.captures(text)?;
    let number = |name: &str| {
        captures
            .name(name)
            .map_or(0, |m| m.as_str().parse::<i64>().unwrap_or(0))
    };
    let (year, month, day) = (number("y"), number("mo"), number("d"));
    // Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let (era, year_of_era) = (y.div_euclid(400), y.rem_euclid(400));
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let days = era * 146_097 + year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year - 719_468;
    let sign = if captures.name("sign").is_some_and(|s| s.as_str() == "-") {
        -1
    } else {
        1
    };
    let offset = sign * (number("oh") * 3600 + number("om") * 60);
    let seconds = days * 86_400 + number("h") * 3600 + number("mi") * 60 + number("s") - offset;
    let nanos = captures.name("frac").map_or(0, |f| {
        let digits = &f.as_str()[..f.len().min(9)];
        format!("{digits:0<9}").parse().unwrap_or(0)
    });
    Some((seconds, nanos))
}

/// Matches `text` against a schema `pattern`, compiling each pattern once.
pub(crate) fn matches_pattern(pattern: &str, text: &str) -> bool {
    static CACHE: LazyLock<Mutex<HashMap<String, Option<Regex>>>> = LazyLock::new(Default::default);
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let regex = cache
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(pattern).ok());
    regex.as_ref().is_none_or(|r| r.is_match(text))
}

fn join(values: &[u32]) -> String {
    values.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}
