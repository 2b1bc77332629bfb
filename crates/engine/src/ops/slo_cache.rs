//! The SLO verdict cache `monform gate` reads (issue 50 item 5):
//! `.monform/slo-status.json`, written by `monform slo status`, `gate`'s
//! own fresh reads and the reconciler at each interval, through the one
//! [`write_slo_cache`], atomically (`durable::write`). It keeps what a
//! gate's verdict needs per SLO (budget left, whether a page-severity pair
//! fires, the window), each entry stamped with when it was evaluated and
//! the fingerprint of the definition it was computed for, so a gate over
//! 1,000 SLOs reads one small file instead of their results.
//!
//! Choices: a writer replaces the entries of the SLOs it evaluated and
//! keeps the others (`slo status slos.a` does not drop the reconciler's
//! other 999); two writers at once may lose each other's entries, which
//! only costs the next gate a fresh read. An entry is as old as its
//! `evaluatedAt`; a gate takes it younger than its `--max-age`, never
//! from the future, and only when its fingerprint is the definition's
//! the gate loads now ([`slo_fingerprint`]): a pull request that changes
//! an SLO's target, window, members or budgeting gets that SLO computed
//! afresh, not the reconciler's figures for the old definition
//! ([`Cached::DefinitionChanged`]).
//!
//! The fingerprint is of the definition as resolved, not as written: the
//! resource after defaults and substitutions (`indicator`, `burnRates`
//! filled in, `${var:}` read), its member checks' addresses as `checks`,
//! `tags` and `forEach` resolve them today (a new check tagged `team:shop`
//! changes the SLO's figures without a line of it changing), and the
//! environment (a staging SLO is not production's). Every field counts,
//! even those the verdict does not read (`name`, the channels): a renamed
//! SLO costs one fresh read, where a list of the fields that matter would
//! go stale the day a field is added. The members' remote ids are not in
//! it: a gate runs before the apply, when the state's ids are those the
//! cached figures were read from, and the gate need not read the state.
//!
//! Format: version 2 (version 1 had no fingerprints; it reads as no cache,
//! which is what its entries would be worth: every SLO computed afresh).

use std::collections::BTreeMap;
use std::path::Path;

use monform_model::Address;
use monform_model::resources::Slo;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::SloReport;

/// Where the cache lives, from the project's folder.
pub const SLO_CACHE: &str = ".monform/slo-status.json";

/// The cache's format; another is read as no cache.
const CACHE_VERSION: u32 = 2;

/// A fast-burning pair, as a gate words it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FastBurn {
    pub factor: f64,
    /// `1h`, `5m`: `monform_slo::format_duration`'s words.
    pub long: String,
    pub short: String,
}

/// What a gate needs of one SLO's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SloVerdict {
    pub address: String,
    /// The objective's window (`28d`, `month`).
    pub window: String,
    /// The error budget left, a fraction (`None`: no results in the window).
    pub budget_left: Option<f64>,
    /// The first page-severity pair firing, if any: burning fast.
    pub fast_burn: Option<FastBurn>,
    /// When the figures were computed, UNIX ms (the evaluation time).
    pub evaluated_at: i64,
    /// Who computed them: `slo status`, `gate`, `reconcile`.
    pub by: String,
    /// The fingerprint of the definition they were computed for (16 hex
    /// digits): the SLO as resolved, its member checks and the environment.
    pub fingerprint: String,
}

impl SloVerdict {
    /// The verdict inputs of a report computed at `evaluated_at` by `by`.
    pub fn of(report: &SloReport, evaluated_at: i64, by: &str) -> SloVerdict {
        let fast_burn = report
            .status
            .firing
            .iter()
            .find(|pair| pair.severity == monform_slo::Severity::Page)
            .map(|pair| FastBurn {
                factor: pair.factor,
                long: monform_slo::format_duration(pair.long),
                short: monform_slo::format_duration(pair.short),
            });
        SloVerdict {
            address: report.address.to_string(),
            window: report.objective.window.to_string(),
            budget_left: report.status.budget_left,
            fast_burn,
            evaluated_at,
            by: by.to_owned(),
            fingerprint: report.fingerprint.clone(),
        }
    }
}

/// The fingerprint of an SLO's resolved definition (the module's header
/// says what is in it and why): 16 hex digits of a SHA-256, the same in
/// every process and on every machine. Lists whose order means nothing
/// (`checks`, `tags`, the channels) are sorted first: reordering them is
/// not a change.
pub fn slo_fingerprint(slo: &Slo, members: &[Address], environment: Option<&str>) -> String {
    let mut slo = slo.clone();
    if let Some(checks) = slo.checks.as_mut() {
        checks.sort_by(|a, b| a.0.cmp(&b.0));
    }
    if let Some(tags) = slo.tags.as_mut() {
        tags.sort();
    }
    if let Some(alerting) = slo.alerting.as_mut() {
        alerting.channels.sort();
    }
    // A struct of strings, numbers and enums: serialising cannot fail.
    let definition = serde_json::to_string(&slo).unwrap_or_default();
    let mut members: Vec<String> = members.iter().map(ToString::to_string).collect();
    members.sort();
    let mut hasher = Sha256::new();
    // Each part ended by a NUL, which none of them can hold.
    for part in [
        "monform slo definition 1",
        environment.unwrap_or(""),
        definition.as_str(),
        members.join("\n").as_str(),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// What the cache holds for one SLO, as a gate may use it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cached {
    /// Figures of this very definition, younger than the max age.
    Fresh(SloVerdict),
    /// No entry (or no cache, or a cache of another format).
    Missing,
    /// Figures older than the max age, or from the future.
    TooOld(SloVerdict),
    /// Figures of another definition: the SLO (or its members, or the
    /// environment) changed since they were computed.
    DefinitionChanged(SloVerdict),
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    slos: BTreeMap<String, SloVerdict>,
}

fn read_file(dir: &Path) -> Option<CacheFile> {
    let text = std::fs::read_to_string(dir.join(SLO_CACHE)).ok()?;
    // The version first: an older format's entries do not parse as these.
    #[derive(Deserialize)]
    struct Version {
        version: u32,
    }
    let version = serde_json::from_str::<Version>(&text).ok()?.version;
    if version != CACHE_VERSION {
        return None;
    }
    serde_json::from_str::<CacheFile>(&text).ok()
}

/// Records `reports`, evaluated at `evaluated_at` (UNIX ms) by `by`, in
/// the project's cache, keeping the entries of other SLOs.
pub fn write_slo_cache(dir: &Path, reports: &[SloReport], evaluated_at: i64, by: &str) -> std::io::Result<()> {
    let mut file = read_file(dir).unwrap_or_default();
    file.version = CACHE_VERSION;
    for report in reports {
        let verdict = SloVerdict::of(report, evaluated_at, by);
        file.slos.insert(verdict.address.clone(), verdict);
    }
    let text = serde_json::to_string(&file).map_err(std::io::Error::other)?;
    let path = dir.join(SLO_CACHE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    crate::durable::write(&path, text.as_bytes())
}

/// What the cache holds for each of `wanted` (an SLO's address and the
/// fingerprint of its definition now), in their order: fresh when
/// evaluated at most `max_age_ms` before `now_ms`, not after it, and for
/// the same definition.
pub fn read_slo_cache(dir: &Path, wanted: &[(String, String)], max_age_ms: i64, now_ms: i64) -> Vec<Cached> {
    let mut file = read_file(dir).unwrap_or_default();
    wanted
        .iter()
        .map(|(address, fingerprint)| match file.slos.remove(address) {
            None => Cached::Missing,
            Some(verdict) if verdict.fingerprint != *fingerprint => Cached::DefinitionChanged(verdict),
            Some(verdict) if verdict.evaluated_at <= now_ms && now_ms - verdict.evaluated_at <= max_age_ms => {
                Cached::Fresh(verdict)
            }
            Some(verdict) => Cached::TooOld(verdict),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_model::Kind;

    fn verdict(address: &str, at: i64) -> SloVerdict {
        SloVerdict {
            address: address.to_owned(),
            window: "28d".to_owned(),
            budget_left: Some(0.5),
            fast_burn: None,
            evaluated_at: at,
            by: "test".to_owned(),
            fingerprint: format!("{address}-1"),
        }
    }

    fn put(dir: &Path, verdicts: &[SloVerdict]) {
        let file = CacheFile {
            version: CACHE_VERSION,
            slos: verdicts.iter().map(|v| (v.address.clone(), v.clone())).collect(),
        };
        std::fs::create_dir_all(dir.join(".monform")).unwrap();
        std::fs::write(dir.join(SLO_CACHE), serde_json::to_string(&file).unwrap()).unwrap();
    }

    fn wanted(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(a, f)| ((*a).to_owned(), (*f).to_owned())).collect()
    }

    #[test]
    fn each_entry_fresh_of_the_same_definition_or_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = wanted(&[("slos.a", "slos.a-1")]);
        assert_eq!(read_slo_cache(dir.path(), &a, 1_000, 10_000), [Cached::Missing]);
        put(dir.path(), &[verdict("slos.a", 9_500), verdict("slos.b", 5_000)]);
        assert_eq!(
            read_slo_cache(dir.path(), &a, 1_000, 10_000),
            [Cached::Fresh(verdict("slos.a", 9_500))]
        );
        // Each on its own: one fresh, one too old, one missing, one of
        // another definition.
        let all = wanted(&[("slos.a", "slos.a-1"), ("slos.b", "slos.b-1"), ("slos.c", "slos.c-1")]);
        assert_eq!(
            read_slo_cache(dir.path(), &all, 1_000, 10_000),
            [
                Cached::Fresh(verdict("slos.a", 9_500)),
                Cached::TooOld(verdict("slos.b", 5_000)),
                Cached::Missing
            ]
        );
        assert_eq!(
            read_slo_cache(dir.path(), &wanted(&[("slos.a", "slos.a-2")]), 1_000, 10_000),
            [Cached::DefinitionChanged(verdict("slos.a", 9_500))]
        );
        // From the future.
        assert_eq!(
            read_slo_cache(dir.path(), &a, 1_000, 9_000),
            [Cached::TooOld(verdict("slos.a", 9_500))]
        );
        // Another format is no cache: version 1 had no fingerprints.
        let old = r#"{"version": 1, "slos": {"slos.a": {"address": "slos.a", "window": "28d",
            "budgetLeft": 0.5, "fastBurn": null, "evaluatedAt": 9500, "by": "reconcile"}}}"#;
        std::fs::write(dir.path().join(SLO_CACHE), old).unwrap();
        assert_eq!(read_slo_cache(dir.path(), &a, 1_000, 10_000), [Cached::Missing]);
        std::fs::write(dir.path().join(SLO_CACHE), r#"{"evaluatedAt": 1, "slos": []}"#).unwrap();
        assert_eq!(read_slo_cache(dir.path(), &a, 1_000, 10_000), [Cached::Missing]);
    }

    fn slo(yaml: &str) -> Slo {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn fingerprints_change_with_the_resolved_definition_only() {
        let checkout = Address::new(Kind::Check, "checkout".to_owned());
        let orders = Address::new(Kind::Check, "api[orders]".to_owned());
        let base = slo("checks: [checks.checkout, \"checks.api[orders]\"]\ntarget: 99.5\nwindow: 28d\n");
        let members = [checkout.clone(), orders.clone()];
        let print = slo_fingerprint(&base, &members, None);
        assert_eq!(print.len(), 16);
        assert!(print.chars().all(|c| c.is_ascii_hexdigit()), "{print}");
        // The same definition: the same fingerprint, whatever the order of
        // its lists or its members, and defaults written out or not.
        let reordered = slo(
            "checks: [\"checks.api[orders]\", checks.checkout]\ntarget: 99.5\nwindow: 28d\n\
             indicator: availability\nbudgeting: occurrences\n",
        );
        assert_eq!(
            slo_fingerprint(&reordered, &[orders.clone(), checkout.clone()], None),
            print
        );
        // A target, a window, the budgeting, the members, the environment: another.
        let changed = [
            slo_fingerprint(
                &slo("checks: [checks.checkout, \"checks.api[orders]\"]\ntarget: 99.9\nwindow: 28d\n"),
                &members,
                None,
            ),
            slo_fingerprint(
                &slo("checks: [checks.checkout, \"checks.api[orders]\"]\ntarget: 99.5\nwindow: 7d\n"),
                &members,
                None,
            ),
            slo_fingerprint(
                &slo(
                    "checks: [checks.checkout, \"checks.api[orders]\"]\ntarget: 99.5\nwindow: 28d\n\
                     budgeting: timeslices\ntimeslice: 1m\n",
                ),
                &members,
                None,
            ),
            slo_fingerprint(&base, &members[..1], None),
            slo_fingerprint(&base, &members, Some("staging")),
        ];
        for (i, other) in changed.iter().enumerate() {
            assert_ne!(*other, print, "change {i}");
        }
    }
}
