//! `[reconcile]` in monform.toml (issue 30): how often `monform reconcile`
//! compares the service with the files, the default drift policy, whether
//! it applies changes made in the files, which alert channels of the
//! project get its drift reports, and the share of the API key's request
//! budget it may spend (`request-share`, issue 48).

use std::time::Duration;

use monform_model::DriftPolicy;

use super::{unknown, wrong_type};
use crate::diagnostic::{Diagnostic, quote};
use crate::source::Span;
use crate::tree::{Entry, NodeValue};

/// The `[reconcile]` settings; each has a default, so the table is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconcile {
    /// `interval`: between two comparisons (default 5 minutes).
    pub interval: Duration,
    /// `drift`: the policy of a resource whose `lifecycle` sets none.
    pub drift: DriftPolicy,
    /// `apply-changes`: a change in the files is applied (true) or reported.
    pub apply_changes: bool,
    /// `notify`: logical ids of the project's WEBHOOK and SLACK channels,
    /// each with where it is written.
    pub notify: Vec<(String, Span)>,
    /// `request-share`: the fraction of the service's rate limit the
    /// reconciler's reads may use, in (0, 1] (default 0.25, `"25%"`).
    pub request_share: f64,
}

/// `request-share`'s default: a quarter of the key's budget, the rest left
/// to the deploy pipeline and people sharing the key.
pub const DEFAULT_REQUEST_SHARE: f64 = 0.25;

impl Default for Reconcile {
    fn default() -> Reconcile {
        Reconcile {
            interval: Duration::from_secs(300),
            drift: DriftPolicy::Notify,
            apply_changes: false,
            notify: Vec::new(),
            request_share: DEFAULT_REQUEST_SHARE,
        }
    }
}

pub(crate) const KEYS: &[&str] = &["interval", "drift", "apply-changes", "notify", "request-share"];

/// Reads the `[reconcile]` table's `fields` into `settings`.
pub(crate) fn read(fields: &[Entry], settings: &mut Reconcile, diagnostics: &mut Vec<Diagnostic>) {
    for field in fields {
        let path = format!("reconcile.{}", field.key);
        match (field.key.as_str(), &field.value.value) {
            ("interval", NodeValue::Str(text)) => match parse_duration(text) {
                Some(interval) if interval >= Duration::from_secs(1) => settings.interval = interval,
                _ => diagnostics.push(
                    Diagnostic::new(
                        "monform::reconcile",
                        format!(
                            "reconcile.interval {} is not a duration of 1s or more",
                            quote(&field.value)
                        ),
                    )
                    .at(field.value.span, "here")
                    .help("write a number and a unit: \"30s\", \"5m\", \"1h\""),
                ),
            },
            ("interval", _) => diagnostics.push(wrong_type(&path, &field.value, "a duration such as \"5m\"")),
            ("drift", NodeValue::Str(text)) => match DriftPolicy::ALL.iter().find(|p| p.as_str() == text) {
                Some(policy) => settings.drift = *policy,
                None => diagnostics.push(
                    Diagnostic::new(
                        "monform::reconcile",
                        format!("reconcile.drift {} is not known", quote(&field.value)),
                    )
                    .at(
                        field.value.span,
                        "expected \"revert\", \"notify\", \"ignore\" or \"codify\"",
                    ),
                ),
            },
            ("drift", _) => diagnostics.push(wrong_type(
                &path,
                &field.value,
                "\"revert\", \"notify\", \"ignore\" or \"codify\"",
            )),
            ("apply-changes", NodeValue::Bool(apply)) => settings.apply_changes = *apply,
            ("apply-changes", _) => diagnostics.push(wrong_type(&path, &field.value, "true or false")),
            ("notify", NodeValue::Seq(items)) => {
                for item in items {
                    match &item.value {
                        NodeValue::Str(id) if monform_model::is_valid_logical_id(id) => {
                            settings.notify.push((id.clone(), item.span));
                        }
                        _ => diagnostics.push(wrong_type(
                            "reconcile.notify[]",
                            item,
                            "the logical id of an alert channel of this project",
                        )),
                    }
                }
            }
            ("notify", _) => diagnostics.push(wrong_type(&path, &field.value, "a list of alert channel ids")),
            ("request-share", NodeValue::Str(text)) => match parse_share(text) {
                Some(share) => settings.request_share = share,
                None => diagnostics.push(
                    Diagnostic::new(
                        "monform::reconcile",
                        format!(
                            "reconcile.request-share {} is not a percentage above 0% and at most 100%",
                            quote(&field.value)
                        ),
                    )
                    .at(field.value.span, "here")
                    .help("write a percentage of the API key's rate limit: \"25%\" (the default), \"10%\", \"2.5%\""),
                ),
            },
            ("request-share", _) => diagnostics.push(wrong_type(&path, &field.value, "a percentage such as \"25%\"")),
            _ => diagnostics.push(unknown(&field.key, field.key_span, KEYS.iter().copied(), "field")),
        }
    }
}

/// `25%`, `2.5%`: a percentage above 0 and at most 100, as a fraction.
pub fn parse_share(text: &str) -> Option<f64> {
    let number = text.trim().strip_suffix('%')?.trim_end();
    // Digits and at most one point: no sign, exponent, `inf` or `NaN`.
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let percent: f64 = number.parse().ok()?;
    (percent > 0.0 && percent <= 100.0).then_some(percent / 100.0)
}

/// `90s`, `5m`, `1h`, `1h30m`: a whole number before each unit.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = 0u64;
    let mut number = String::new();
    let mut any = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => return None,
        };
        let n: u64 = number.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        number.clear();
        any = true;
    }
    (any && number.is_empty()).then(|| Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::read_project;
    use crate::tree::parse_toml;

    fn read_share(toml: &str) -> (f64, Vec<Diagnostic>) {
        let root = parse_toml(0, toml).expect("TOML");
        let mut diagnostics = Vec::new();
        let project = read_project(&root, &[], &mut diagnostics).expect("a project");
        (project.reconcile.request_share, diagnostics)
    }

    #[test]
    fn request_share_is_a_percentage_with_a_default() {
        let (share, diagnostics) = read_share("[project]\nname = \"p\"\n");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(share, DEFAULT_REQUEST_SHARE);
        let (share, diagnostics) = read_share("[project]\nname = \"p\"\n[reconcile]\nrequest-share = \"10%\"\n");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(share, 0.1);
        // Out of range: at the value (line 4), naming the field; the default stays.
        let toml = "[project]\nname = \"p\"\n[reconcile]\nrequest-share = \"150%\"\n";
        let (share, diagnostics) = read_share(toml);
        assert_eq!(share, DEFAULT_REQUEST_SHARE);
        let [diagnostic] = diagnostics.as_slice() else {
            panic!("{diagnostics:?}")
        };
        assert_eq!(
            diagnostic.message,
            "reconcile.request-share `150%` is not a percentage above 0% and at most 100%"
        );
        let span = diagnostic.span.expect("where");
        assert_eq!(&toml[span.start..span.start + span.len], "\"150%\"");
        let (_, diagnostics) = read_share("[project]\nname = \"p\"\n[reconcile]\nrequest-share = 0.25\n");
        assert!(
            diagnostics[0].message.contains("reconcile.request-share"),
            "{diagnostics:?}"
        );
    }

    #[test]
    fn shares() {
        assert_eq!(parse_share("25%"), Some(0.25));
        assert_eq!(parse_share("100%"), Some(1.0));
        assert_eq!(parse_share(" 2.5 %"), Some(0.025));
        for bad in [
            "", "%", "0%", "0.0%", "100.5%", "25", "-5%", "1e1%", "inf%", "NaN%", "25%%", "1.2.3%",
        ] {
            assert_eq!(parse_share(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2s"), Some(Duration::from_secs(2)));
        for bad in ["", "5", "m", "5x", "5m3"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
