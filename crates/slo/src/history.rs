//! An objective's window as a history, for a chart: the window cut into
//! parts (UTC days, or equal parts of a window shorter than two days),
//! each with its own SLI and the budget left *so far* (from the window's
//! start to the part's end), so the last point is the status's budget
//! left.

use crate::measure::{Tally, measure};
use crate::window::Interval;
use crate::{Objective, Run, budget_ppm};

const MS_PER_DAY: i64 = 86_400_000;
/// Parts of a window shorter than two days.
const SHORT_PARTS: i64 = 24;

/// One part of the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    /// The part, half-open; the first and last day may be partial.
    pub interval: Interval,
    /// The part's own events.
    pub tally: Tally,
    /// good / total within the part; `None` without data.
    pub sli: Option<f64>,
    /// 1 - (1 - SLI from the window's start to the part's end) / budget;
    /// `None` while the window has no data yet.
    pub budget_left: Option<f64>,
}

/// How long each part of `interval` is: a UTC day when the window is at
/// least two days, else a 24th of it (at least a millisecond).
pub fn part_length_ms(interval: Interval) -> i64 {
    let length = interval.end - interval.start;
    if length >= 2 * MS_PER_DAY {
        MS_PER_DAY
    } else {
        (length / SHORT_PARTS).max(1)
    }
}

/// The window `interval` as parts, oldest first: UTC days (epoch-aligned,
/// so a rolling window's first and last day are partial) when
/// [`part_length_ms`] is a day, else equal parts from its start. A part's
/// budget left counts every run from `interval.start` to the part's end,
/// measured as one interval (a time slice across a part's edge counts
/// once), so the last part's is [`crate::Status::budget_left`].
pub fn history(objective: &Objective, runs: &[Run], interval: Interval) -> Vec<Part> {
    if interval.end <= interval.start {
        return Vec::new();
    }
    let step = part_length_ms(interval);
    let mut edges = Vec::new();
    let mut at = if step == MS_PER_DAY {
        (interval.start.div_euclid(MS_PER_DAY) + 1) * MS_PER_DAY
    } else {
        interval.start + step
    };
    while at < interval.end {
        edges.push(at);
        at += step;
    }
    edges.push(interval.end);
    let budget = budget_ppm(objective.target_percent);
    let mut start = interval.start;
    edges
        .into_iter()
        .map(|end| {
            let part = Interval { start, end };
            start = end;
            let tally = measure(objective, runs, part);
            let so_far = measure(
                objective,
                runs,
                Interval {
                    start: interval.start,
                    end,
                },
            );
            Part {
                interval: part,
                tally,
                sli: tally.ratio(),
                budget_left: budget_left(so_far, budget),
            }
        })
        .collect()
}

fn budget_left(tally: Tally, budget_ppm: u64) -> Option<f64> {
    (tally.total > 0 && budget_ppm > 0)
        .then(|| 1.0 - tally.bad() as f64 * 1_000_000.0 / (tally.total as f64 * budget_ppm as f64))
}
