//! The member checks' runs kept between SLO evaluations (issue 50): a
//! check's results are read in epoch-aligned six-hour blocks (the
//! listing's widest window), and a block that ended at least
//! [`SETTLE_MS`] before the evaluation time is settled: its FINAL results
//! no longer change, so it is kept in `.monform/slo-runs/<check id>.json`
//! and never read again. `slo status`, `gate` and the reconciler then read
//! only the blocks of the last hours: the first evaluation of a 28-day
//! window reads its 112 blocks, the next ones two or three.
//!
//! What is kept of a run is what `monform-slo` reads (`Run`: start time,
//! success, response time, location), so the figures are those of a
//! fresh read. Choices: a check is known by its remote id (a uuid, never
//! reused); a file of another format, or one that does not parse, is read
//! as empty (the blocks are read again); blocks older than
//! [`KEEP_MS`] are dropped when the file is written; writes are atomic
//! (`durable::write`) and a failed one only costs a later read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use monform_slo::Run;
use serde::{Deserialize, Serialize};

/// Where the blocks live, from the project's folder.
pub const SLO_RUNS_CACHE: &str = ".monform/slo-runs";

/// A block: the results listing's widest window (spec 4), 6 hours.
pub(crate) const BLOCK_MS: i64 = 6 * 3_600_000;

/// How long after its end a block's results are taken as final (a run
/// is listed once its session settles; a private location reports late).
pub(crate) const SETTLE_MS: i64 = 3_600_000;

/// Blocks kept: the longest window (a calendar month, 31 days) and a day.
const KEEP_MS: i64 = 32 * 24 * 3_600_000;

const VERSION: u32 = 1;

/// One check's settled blocks.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct CheckRuns {
    version: u32,
    /// Location names, indexed by the runs.
    locations: Vec<String>,
    /// Block start (UNIX ms) to its runs: `[at_ms, success, response_ms, location]`.
    blocks: BTreeMap<i64, Vec<(i64, bool, u32, u16)>>,
    #[serde(skip)]
    changed: bool,
}

impl CheckRuns {
    fn file(dir: &Path, check_id: &str) -> Option<PathBuf> {
        // A remote id is a uuid or a number: anything else is not a file name.
        let safe = !check_id.is_empty()
            && check_id.len() <= 64
            && check_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        safe.then(|| dir.join(format!("{check_id}.json")))
    }

    /// The blocks kept for `check_id` under `dir` (empty when none).
    pub(crate) fn load(dir: &Path, check_id: &str) -> CheckRuns {
        Self::file(dir, check_id)
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice::<CheckRuns>(&bytes).ok())
            .filter(|runs| runs.version == VERSION)
            .unwrap_or_default()
    }

    /// The runs of the block starting at `start`, if kept.
    pub(crate) fn block(&self, start: i64) -> Option<Vec<Run>> {
        let runs = self.blocks.get(&start)?;
        Some(
            runs.iter()
                .map(|(at_ms, success, response_ms, location)| Run {
                    at_ms: *at_ms,
                    success: *success,
                    response_ms: *response_ms,
                    location: self.locations.get(usize::from(*location)).cloned().unwrap_or_default(),
                })
                .collect(),
        )
    }

    /// Keeps the runs of the settled block starting at `start`.
    pub(crate) fn keep(&mut self, start: i64, runs: &[Run]) {
        let mut kept = Vec::with_capacity(runs.len());
        for run in runs {
            let index = match self.locations.iter().position(|l| *l == run.location) {
                Some(i) => i,
                None => {
                    self.locations.push(run.location.clone());
                    self.locations.len() - 1
                }
            };
            let Ok(index) = u16::try_from(index) else {
                // More locations than a service has: not kept, read again.
                return;
            };
            kept.push((run.at_ms, run.success, run.response_ms, index));
        }
        self.blocks.insert(start, kept);
        self.changed = true;
    }

    /// Writes the blocks back when some were added, dropping those older
    /// than [`KEEP_MS`] before `now_ms`.
    pub(crate) fn save(mut self, dir: &Path, check_id: &str, now_ms: i64) -> std::io::Result<()> {
        let Some(path) = Self::file(dir, check_id).filter(|_| self.changed) else {
            return Ok(());
        };
        self.version = VERSION;
        self.blocks.retain(|start, _| *start + BLOCK_MS >= now_ms - KEEP_MS);
        let bytes = serde_json::to_vec(&self).map_err(std::io::Error::other)?;
        std::fs::create_dir_all(dir)?;
        crate::durable::write(&path, &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(at_ms: i64, success: bool, location: &str) -> Run {
        Run {
            at_ms,
            success,
            response_ms: 120,
            location: location.to_owned(),
        }
    }

    #[test]
    fn settled_blocks_round_trip_and_old_ones_are_dropped() {
        let root = tempfile::tempdir().unwrap();
        // A folder not made yet, as `.monform/slo-runs` at first.
        let dir = root.path().join("slo-runs");
        let dir = dir.as_path();
        let id = "3f2a9c1e-0000-4000-8000-000000000001";
        let mut runs = CheckRuns::load(dir, id);
        assert_eq!(runs.block(0), None);
        let block = vec![run(1_000, true, "eu-west-1"), run(2_000, false, "us-east-1")];
        runs.keep(0, &block);
        runs.keep(BLOCK_MS * 200, &[run(BLOCK_MS * 200 + 5, true, "eu-west-1")]);
        runs.save(dir, id, BLOCK_MS * 201).unwrap();
        let again = CheckRuns::load(dir, id);
        // 200 blocks are 50 days: the first is past KEEP_MS.
        assert_eq!(again.block(0), None);
        assert_eq!(again.block(BLOCK_MS * 200).unwrap()[0].location, "eu-west-1");
        let mut fresh = CheckRuns::load(dir, id);
        fresh.keep(0, &block);
        fresh.save(dir, id, BLOCK_MS).unwrap();
        assert_eq!(CheckRuns::load(dir, id).block(0), Some(block));
        // Not a remote id: neither read nor written.
        assert!(CheckRuns::file(dir, "../x").is_none());
    }
}
