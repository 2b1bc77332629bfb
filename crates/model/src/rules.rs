//! Rules that span several fields (spec 2.4, 2.1, 2.3, 2.12 and the
//! maintenance window body). They read the resource's JSON (the files' form,
//! scripts read) field by field, so that they also run on a resource whose
//! other fields are broken: a field the caller marks unusable (it failed the
//! shape check) skips only the rules that read it.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use regex::Regex;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

mod slo;
use crate::resources::CheckType;
use crate::resources::check::{
    FREQUENCIES, MAX_PROMPT, SUB_MINUTE_OFFSETS, default_degraded_packet_loss, default_frequency,
    default_max_packet_loss,
};
use crate::resources::common::{MAX_SCRIPT_BYTES, RetryStrategy, RetryType, Script, json_len};
use crate::resources::group::GroupRetryStrategy;
use crate::resources::maintenance_window::RepeatUnit;
use crate::sensitive::Wording;
use crate::{FieldPath, Kind, Violation};

/// The top-level fields of a resource as the rules read them.
pub(crate) struct Fields<'a> {
    map: &'a Map<String, Value>,
    usable: &'a dyn Fn(&str) -> bool,
    wording: &'a Wording<'a>,
}

impl Fields<'_> {
    /// The top-level `field`'s value as a message may quote it.
    fn quoted(&self, field: &str, value: &str) -> String {
        self.wording
            .value(&FieldPath::root().key(field), &Value::String(value.to_owned()))
    }

    /// `None` when the field is unusable (broken or of the wrong type): the
    /// rules reading it are skipped. `Some(None)` when it is absent.
    pub(crate) fn get<T: DeserializeOwned>(&self, field: &str) -> Option<Option<T>> {
        if !(self.usable)(field) {
            return None;
        }
        match self.map.get(field) {
            None | Some(Value::Null) => Some(None),
            Some(value) => T::deserialize(value).ok().map(Some),
        }
    }

    /// The field's value, or the model's default when it is absent.
    pub(crate) fn or<T: DeserializeOwned>(&self, field: &str, default: fn() -> T) -> Option<T> {
        self.get(field).map(|v| v.unwrap_or_else(default))
    }
}

/// Every rule violation of a resource of `kind` given as JSON, skipping the
/// rules that read a top-level field for which `usable` is false.
pub fn check(kind: Kind, value: &Value, usable: &dyn Fn(&str) -> bool) -> Vec<Violation> {
    check_worded(kind, value, usable, &Wording::new(kind, value, &[]))
}

/// [`check`] of a resource whose messages word its values as `wording`
/// says (the loader's: values of `${env:}` named, never quoted).
pub fn check_worded(kind: Kind, value: &Value, usable: &dyn Fn(&str) -> bool, wording: &Wording<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    let Some(map) = value.as_object() else {
        return violations;
    };
    script_sizes(kind, value, usable, &mut violations);
    if usable("lifecycle") {
        violations.extend(crate::lifecycle::check_ignore_changes(kind, value, wording));
    }
    let fields = Fields { map, usable, wording };
    match kind {
        Kind::Check => check_rules(&fields, &mut violations),
        Kind::Snippet => {
            if let Some(Some(script)) = fields.get::<Script>("script") {
                script_length(&script, 1, usize::MAX, "script", &mut violations);
            }
        }
        Kind::Group => {
            if let Some(Some(GroupRetryStrategy::Strategy(s))) = fields.get("retryStrategy") {
                retry_rules(&s, &FieldPath::root().key("retryStrategy"), &mut violations);
            }
        }
        Kind::PrivateLocation => {
            if let Some(Some(slug)) = fields.get::<String>("slugName")
                && looks_like_data_center(&slug)
            {
                violations.push(
                    Violation::new(
                        FieldPath::root().key("slugName"),
                        format!(
                            "{} looks like a data-center location; slugs must not",
                            fields.quoted("slugName", &slug)
                        ),
                    )
                    .with_help("pick a name of your own, e.g. `office-amsterdam`"),
                );
            }
        }
        Kind::MaintenanceWindow => window_rules(&fields, &mut violations),
        Kind::Slo => slo::slo_rules(&fields, &mut violations),
        _ => {}
    }
    violations
}

fn window_rules(fields: &Fields<'_>, violations: &mut Vec<Violation>) {
    let root = FieldPath::root();
    let mut instants = Vec::new();
    for field in ["startsAt", "endsAt", "repeatEndsAt"] {
        let value = fields.get::<String>(field).flatten();
        if let Some(value) = &value
            && !is_date_time(value)
        {
            violations.push(
                Violation::new(
                    root.key(field),
                    format!("{} is not an ISO 8601 date-time", fields.quoted(field, value)),
                )
                .with_help("write it like 2026-12-01T02:00:00Z"),
            );
        }
        instants.push(value.as_deref().and_then(instant));
    }
    if let (Some(start), Some(end)) = (instants[0], instants[1])
        && end <= start
    {
        violations.push(Violation::new(root.key("endsAt"), "endsAt must be after startsAt"));
    }
    if let (Some(Some(_)), Some(None)) = (
        fields.get::<u32>("repeatInterval"),
        fields.get::<RepeatUnit>("repeatUnit"),
    ) {
        violations.push(Violation::new(
            root.key("repeatUnit"),
            "repeatInterval needs a repeatUnit (DAY, WEEK or MONTH)",
        ));
    }
}

fn check_rules(fields: &Fields<'_>, violations: &mut Vec<Violation>) {
    let root = FieldPath::root();
    let check_type = fields.get::<CheckType>("checkType").flatten();
    let frequency = fields.or("frequency", default_frequency);
    if let (Some(0), Some(check_type)) = (frequency, check_type)
        && !check_type.allows_sub_minute()
    {
        violations.push(
            Violation::new(
                root.key("frequency"),
                format!("frequency 0 (sub-minute) is only for API and TCP checks, not {check_type}"),
            )
            .with_help(format!("use one of {}", join(&FREQUENCIES[1..]))),
        );
    }
    if let (Some(frequency), Some(offset)) = (frequency, fields.get::<u32>("frequencyOffset")) {
        match (offset, offset_range(frequency)) {
            (None, OffsetRange::SubMinute) if check_type.is_some_and(CheckType::allows_sub_minute) => {
                violations.push(Violation::new(
                    root.key("frequency"),
                    "frequency 0 needs frequencyOffset 10, 20 or 30 (seconds between runs)",
                ))
            }
            (Some(offset), OffsetRange::SubMinute) if !SUB_MINUTE_OFFSETS.contains(&offset) => {
                violations.push(Violation::new(
                    root.key("frequencyOffset"),
                    format!("frequencyOffset {offset} is not allowed for frequency 0; use 10, 20 or 30"),
                ))
            }
            (Some(offset), OffsetRange::Minutes(max)) if !(1..=max).contains(&offset) => {
                violations.push(Violation::new(
                    root.key("frequencyOffset"),
                    format!("frequencyOffset {offset} is out of range 1..{max} for frequency {frequency}"),
                ))
            }
            _ => {}
        }
    }
    if let Some(Some(strategy)) = fields.get::<RetryStrategy>("retryStrategy") {
        retry_rules(&strategy, &root.key("retryStrategy"), violations);
    }
    if check_type == Some(CheckType::Agentic)
        && let Some(Some(prompt)) = fields.get::<Script>("prompt")
    {
        script_length(&prompt, 1, MAX_PROMPT, "prompt", violations);
    }
    if check_type == Some(CheckType::Playwright) {
        playwright_rules(fields, violations);
    }
    if check_type == Some(CheckType::Icmp)
        && let (Some(max), Some(degraded)) = (
            fields.or("maxPacketLossThreshold", default_max_packet_loss),
            fields.or("degradedPacketLossThreshold", default_degraded_packet_loss),
        )
        && max < degraded
    {
        violations.push(Violation::new(
            root.key("maxPacketLossThreshold"),
            format!("maxPacketLossThreshold {max} must be at least degradedPacketLossThreshold {degraded}"),
        ));
    }
}

/// A PLAYWRIGHT check runs a folder of specs (`codeBundlePath`) or a
/// Playwright project (`playwright`): one of them, not both.
fn playwright_rules(fields: &Fields<'_>, violations: &mut Vec<Violation>) {
    let (Some(path), Some(project)) = (
        fields.get::<String>("codeBundlePath"),
        fields.get::<Value>("playwright"),
    ) else {
        return;
    };
    let path = path.filter(|p| !p.is_empty());
    let project = project.filter(|p| !p.is_null());
    let root = FieldPath::root();
    match (path, project) {
        (None, None) => violations.push(
            Violation::new(root.key("codeBundlePath"), "a PLAYWRIGHT check needs codeBundlePath or playwright")
                .with_help("point `playwright: { config: playwright.config.ts }` at a Playwright project, or codeBundlePath at a folder of *.spec.js files"),
        ),
        (Some(_), Some(_)) => violations.push(
            Violation::new(root.key("codeBundlePath"), "codeBundlePath and playwright are both given; a PLAYWRIGHT check runs one of them")
                .with_help("with playwright, the loader bundles the project's files itself: remove codeBundlePath"),
        ),
        _ => {}
    }
}

/// Every script field (inline or read from its file) fits a request: the
/// service refuses bodies above `MAX_SCRIPT_BYTES`.
fn script_sizes(kind: Kind, value: &Value, usable: &dyn Fn(&str) -> bool, violations: &mut Vec<Violation>) {
    use crate::facts::{Step, expand, facts};
    for pattern in &facts(kind, value).scripts {
        if !matches!(pattern.first(), Some(Step::Key(top)) if usable(top)) {
            continue;
        }
        for path in expand(pattern, value) {
            let Some(Value::String(script)) = path.get(value) else {
                continue;
            };
            let size = json_len(script);
            if size > MAX_SCRIPT_BYTES {
                violations.push(
                    Violation::new(
                        path,
                        format!(
                            "the script takes {size} bytes in a request; the service accepts at most {MAX_SCRIPT_BYTES} (1 MiB)"
                        ),
                    )
                    .with_help("move shared code into a snippet (setupSnippet), or shorten the script"),
                );
            }
        }
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
fn offset_range(frequency: u32) -> OffsetRange {
    match frequency {
        0 => OffsetRange::SubMinute,
        1..=60 => OffsetRange::Minutes(frequency * 10),
        _ => OffsetRange::Minutes(frequency.div_ceil(60)),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_rule_runs_unless_a_field_it_reads_is_broken() {
        let value = json!({ "checkType": "URL", "frequency": 5, "frequencyOffset": 700, "locations": [1] });
        let usable = |field: &str| field != "locations";
        assert_eq!(check(Kind::Check, &value, &usable).len(), 1);
        let broken = json!({ "checkType": "URL", "frequency": "often", "frequencyOffset": 700 });
        assert!(check(Kind::Check, &broken, &|field| field != "frequency").is_empty());
        // An absent field takes the model's default (frequency 10: offsets 1..100).
        let defaulted = json!({ "checkType": "URL", "frequencyOffset": 101 });
        assert_eq!(check(Kind::Check, &defaulted, &|_| true).len(), 1);
    }

    /// Issue 25 item 14: a script the service would refuse (its request
    /// body is at most 1 MiB) fails validation, inline or not, in checks,
    /// their dependencies and snippets.
    #[test]
    fn scripts_larger_than_a_request_are_refused() {
        let fits = "x".repeat(MAX_SCRIPT_BYTES - 2);
        let big = "x".repeat(MAX_SCRIPT_BYTES);
        let quoted = "\"".repeat(MAX_SCRIPT_BYTES / 2); // twice as long escaped
        let browser = |script: &str| json!({ "checkType": "BROWSER", "name": "b", "script": script });
        assert!(check(Kind::Check, &browser(&fits), &|_| true).is_empty());
        for script in [&big, &quoted] {
            let violations = check(Kind::Check, &browser(script), &|_| true);
            assert_eq!(violations.len(), 1, "{violations:?}");
            assert_eq!(violations[0].path.to_string(), "script");
            assert!(
                violations[0].message.contains("at most 1048576"),
                "{}",
                violations[0].message
            );
        }
        let api = json!({ "checkType": "API", "name": "a", "localSetupScript": big });
        assert_eq!(
            check(Kind::Check, &api, &|_| true)[0].path.to_string(),
            "localSetupScript"
        );
        let snippet = json!({ "name": "s", "script": big });
        assert_eq!(check(Kind::Snippet, &snippet, &|_| true).len(), 1);
        // A broken field's rules are skipped.
        assert!(check(Kind::Snippet, &snippet, &|f| f != "script").is_empty());
    }
}
