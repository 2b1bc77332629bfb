//! The SLO verdict cache `monform gate` reads (issue 50 item 5):
//! `.monform/slo-status.json`, written by `monform slo status`, `gate`'s
//! own fresh reads and the reconciler at each interval, through the one
//! [`write_slo_cache`], atomically (`durable::write`). It keeps what a
//! gate's verdict needs per SLO (budget left, whether a page-severity pair
//! fires, the window), each entry stamped with when it was evaluated, so a
//! gate over 1,000 SLOs reads one small file instead of their results.
//!
//! Choices: a writer replaces the entries of the SLOs it evaluated and
//! keeps the others (`slo status slos.a` does not drop the reconciler's
//! other 999); two writers at once may lose each other's entries, which
//! only costs the next gate a fresh read. An entry is as old as its
//! `evaluatedAt`; a gate takes it younger than its `--max-age` and never
//! from the future. An SLO whose definition changed since stays cached
//! until then (the gate does not load the files to compare).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::SloReport;

/// Where the cache lives, from the project's folder.
pub const SLO_CACHE: &str = ".monform/slo-status.json";

/// The cache's format; another is read as no cache.
const CACHE_VERSION: u32 = 1;

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
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    slos: BTreeMap<String, SloVerdict>,
}

fn read_file(dir: &Path) -> Option<CacheFile> {
    let text = std::fs::read_to_string(dir.join(SLO_CACHE)).ok()?;
    serde_json::from_str::<CacheFile>(&text)
        .ok()
        .filter(|file| file.version == CACHE_VERSION)
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

/// The cached verdicts of `addresses`, in their order, when every one is
/// cached, evaluated at most `max_age_ms` before `now_ms` and not after it;
/// `None` otherwise (the gate then reads the results).
pub fn read_slo_cache(dir: &Path, addresses: &[String], max_age_ms: i64, now_ms: i64) -> Option<Vec<SloVerdict>> {
    let mut file = read_file(dir)?;
    addresses
        .iter()
        .map(|address| {
            file.slos
                .remove(address)
                .filter(|v| v.evaluated_at <= now_ms && now_ms - v.evaluated_at <= max_age_ms)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(address: &str, at: i64) -> SloVerdict {
        SloVerdict {
            address: address.to_owned(),
            window: "28d".to_owned(),
            budget_left: Some(0.5),
            fast_burn: None,
            evaluated_at: at,
            by: "test".to_owned(),
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

    #[test]
    fn fresh_entries_for_every_address_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(read_slo_cache(dir.path(), &names(&["slos.a"]), 1_000, 10_000), None);
        put(dir.path(), &[verdict("slos.a", 9_500), verdict("slos.b", 5_000)]);
        let got = read_slo_cache(dir.path(), &names(&["slos.a"]), 1_000, 10_000).unwrap();
        assert_eq!(got, [verdict("slos.a", 9_500)]);
        // One entry too old, one missing, one from the future: no cache.
        assert_eq!(
            read_slo_cache(dir.path(), &names(&["slos.a", "slos.b"]), 1_000, 10_000),
            None
        );
        assert_eq!(read_slo_cache(dir.path(), &names(&["slos.c"]), 1_000, 10_000), None);
        assert_eq!(read_slo_cache(dir.path(), &names(&["slos.a"]), 1_000, 9_000), None);
        // Another format is no cache.
        std::fs::write(dir.path().join(SLO_CACHE), r#"{"evaluatedAt": 1, "slos": []}"#).unwrap();
        assert_eq!(read_slo_cache(dir.path(), &names(&["slos.a"]), 1_000, 10_000), None);
    }
}
