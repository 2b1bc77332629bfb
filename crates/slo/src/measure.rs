//! Counting good and bad events of an objective within an interval: runs
//! (occurrences) or time slices.

use std::collections::BTreeMap;

use crate::window::{Interval, millis};
use crate::{Budgeting, Objective, Run};

/// The counts behind an SLI: runs, or time slices with data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub good: u64,
    pub total: u64,
    /// Time slices of the interval with no run (always 0 by occurrences).
    pub missing_slices: u64,
}

impl Tally {
    pub fn bad(&self) -> u64 {
        self.total - self.good
    }

    /// good / total, or `None` without data.
    pub fn ratio(&self) -> Option<f64> {
        (self.total > 0).then(|| self.good as f64 / self.total as f64)
    }
}

/// Counts the objective's events among `runs` inside `interval` (runs
/// outside it are ignored; the order of `runs` does not matter).
pub fn measure(objective: &Objective, runs: &[Run], interval: Interval) -> Tally {
    let inside = runs.iter().filter(|run| interval.contains(run.at_ms));
    let slice_ms = objective.timeslice.map(millis).filter(|ms| *ms > 0);
    match (objective.budgeting, slice_ms) {
        (Budgeting::Timeslices, Some(slice_ms)) => {
            // slice index -> (good runs, runs)
            let mut slices: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
            for run in inside {
                let counts = slices.entry(run.at_ms.div_euclid(slice_ms)).or_default();
                counts.0 += u64::from(objective.is_good(run));
                counts.1 += 1;
            }
            let need_ppm = (objective.slice_good_percent * 10_000.0).round() as u128;
            let good = slices
                .values()
                .filter(|(good, total)| u128::from(*good) * 1_000_000 >= need_ppm * u128::from(*total))
                .count() as u64;
            let with_data = slices.len() as u64;
            Tally {
                good,
                total: with_data,
                missing_slices: slice_count(interval, slice_ms).saturating_sub(with_data),
            }
        }
        // Occurrences (a time-slice objective without a length was refused
        // by `validate`; counting runs is the sane fallback).
        _ => {
            let mut tally = Tally::default();
            for run in inside {
                tally.good += u64::from(objective.is_good(run));
                tally.total += 1;
            }
            tally
        }
    }
}

/// Epoch-aligned slices that overlap `interval` (partial ones included).
fn slice_count(interval: Interval, slice_ms: i64) -> u64 {
    if interval.end <= interval.start {
        return 0;
    }
    let first = interval.start.div_euclid(slice_ms);
    let last = (interval.end - 1).div_euclid(slice_ms);
    u64::try_from(last - first + 1).unwrap_or(0)
}
