//! Service level objectives' maths (issue 50): from the runs of an
//! objective's member checks, its SLI, error budget, budget left and burn
//! rates, and which multi-window multi-burn-rate alert pairs fire. Pure
//! arithmetic: no I/O, no clock (the caller passes `now`), no network. The
//! loader (`slos:`), `monform slo status`, the reconciler's alerts and
//! `monform gate` all call [`evaluate`], so they cannot disagree.
//!
//! # What is computed
//!
//! - **Good events.** A run is good for `availability` when it succeeded;
//!   for `latency` when it succeeded *and* its response time is at most
//!   `threshold_ms` (a fast error is not a fast answer).
//! - **Budgeting by occurrences**: SLI = good runs / runs in the window.
//! - **Budgeting by time slices**: the window is cut into `timeslice`
//!   slices aligned to the UNIX epoch (so `1m` slices start on the minute,
//!   whatever the window); a slice is good when its good runs / its runs is
//!   at least `slice_good_percent` (default 100: every run succeeded).
//!   SLI = good slices / slices with data.
//! - **Error budget** = 1 - target (99.5% → 0.005). **Budget left** =
//!   1 - (1 - SLI) / budget: 1 untouched, 0 spent, negative overspent.
//!   **Burn rate** over a window = (1 - SLI over it) / budget: 1 spends the
//!   budget exactly over the objective's window.
//! - **Alerts** ([`default_burn_rates`], the SRE workbook's table, named
//!   `burnRates: default`): a pair fires when the burn rate over its long
//!   window *and* over its short window are both at least its factor.
//!
//! - **History** ([`history`]): the window cut into UTC days (equal
//!   parts below two days), each part's SLI and the budget left from the
//!   window's start to its end: the status report's chart.
//!
//! # Rules chosen where the spec is silent
//!
//! - **Which results are runs.** The spec's check result has a result type
//!   (FINAL, ATTEMPT), a cancelled flag and a degraded flag. The caller
//!   passes FINAL results only (one run, however many retries it took),
//!   leaves out cancelled ones (nobody's service failed), and passes a
//!   degraded run as successful: degraded means slow, which the latency
//!   indicator measures.
//! - **Missing data.** Time slices with no run are neither good nor bad:
//!   they are left out of the denominator and counted in
//!   [`Tally::missing_slices`] so a report can say how much is unseen. A
//!   window with no run at all has no SLI (`None`), no budget left and no
//!   burn rate, and no alert pair fires on it.
//! - **Window edges.** Every window is half-open, `[start, now)`, in UNIX
//!   milliseconds: a run stamped exactly at `now` counts from the next
//!   evaluation, and a run at 23:59:59.999 on a month's last day belongs to
//!   that month. Rolling windows are `[now - length, now)`. The calendar
//!   window is the UTC month `now` falls in, *so far*: its SLI and budget
//!   are those of the runs seen since 00:00 UTC on the 1st (a partial
//!   window); at 00:00 on the 1st a new, empty month begins.
//! - **Burn-rate windows are rolling** (5m ... 3d) even for a calendar
//!   objective: an alert must not go quiet because the month turned.
//! - **At the threshold.** A burn rate exactly equal to the factor fires
//!   (the workbook's "2% of the budget in one hour" is reached, not
//!   exceeded). Comparisons are made in integers (the budget in parts per
//!   million, factors in thousandths), so "exactly" is exact: targets are
//!   read to 0.0001%.

mod burn;
mod history;
mod measure;
mod window;

#[cfg(test)]
mod tests;

use std::time::Duration;

pub use burn::{BurnRatePair, Severity, Status, WindowBurn, default_burn_rates, evaluate, parse_burn_rates};
pub use history::{Part, history, part_length_ms};
pub use measure::{Tally, measure};
pub use window::{Interval, Window, format_duration, month_start_ms, next_month_start_ms, parse_duration};

/// What makes a run good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indicator {
    /// The run succeeded.
    Availability,
    /// The run succeeded within `threshold_ms`.
    Latency,
}

/// What the SLI counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budgeting {
    /// Good runs / runs.
    Occurrences,
    /// Good time slices / time slices with data.
    Timeslices,
}

/// One objective, as the files declare it (already resolved to values).
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    pub indicator: Indicator,
    pub budgeting: Budgeting,
    /// The target in percent, strictly between 0 and 100 (`99.5`).
    pub target_percent: f64,
    pub window: Window,
    /// The slice length; required with [`Budgeting::Timeslices`].
    pub timeslice: Option<Duration>,
    /// A slice is good when at least this percent of its runs are good
    /// (default 100: all of them).
    pub slice_good_percent: f64,
    /// The latency threshold; required with [`Indicator::Latency`].
    pub threshold_ms: Option<u32>,
}

impl Objective {
    /// An availability objective by occurrences over `window`.
    pub fn availability(target_percent: f64, window: Window) -> Objective {
        Objective {
            indicator: Indicator::Availability,
            budgeting: Budgeting::Occurrences,
            target_percent,
            window,
            timeslice: None,
            slice_good_percent: 100.0,
            threshold_ms: None,
        }
    }

    /// Checks the fields against each other; [`evaluate`] assumes it passed.
    pub fn validate(&self) -> Result<(), SloError> {
        let target = self.target_percent;
        if !(target > 0.0 && target < 100.0) {
            return Err(SloError::Target(target));
        }
        if budget_ppm(target) == 0 {
            return Err(SloError::TargetPrecision(target));
        }
        let slice = self.slice_good_percent;
        if !(slice > 0.0 && slice <= 100.0) {
            return Err(SloError::SliceGoodPercent(slice));
        }
        match (self.budgeting, self.timeslice) {
            (Budgeting::Timeslices, None) => return Err(SloError::MissingTimeslice),
            (Budgeting::Timeslices, Some(length)) if window::millis(length) <= 0 => {
                return Err(SloError::MissingTimeslice);
            }
            _ => {}
        }
        if self.indicator == Indicator::Latency && self.threshold_ms.is_none() {
            return Err(SloError::MissingThreshold);
        }
        Ok(())
    }

    /// The error budget as a fraction (`99.5` → `0.005`).
    pub fn error_budget(&self) -> f64 {
        budget_ppm(self.target_percent) as f64 / 1_000_000.0
    }

    pub(crate) fn is_good(&self, run: &Run) -> bool {
        match self.indicator {
            Indicator::Availability => run.success,
            Indicator::Latency => run.success && self.threshold_ms.is_some_and(|limit| run.response_ms <= limit),
        }
    }
}

/// The error budget in parts per million, rounded: `99.9` → 1000.
pub(crate) fn budget_ppm(target_percent: f64) -> u64 {
    let ppm = ((100.0 - target_percent) * 10_000.0).round();
    if ppm.is_finite() && ppm > 0.0 { ppm as u64 } else { 0 }
}

/// One run of a member check (a FINAL, not cancelled result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// When it started, UNIX milliseconds.
    pub at_ms: i64,
    pub success: bool,
    pub response_ms: u32,
    /// The location it ran from (`eu-west-1`, a private location's slug).
    pub location: String,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SloError {
    #[error("invalid duration `{0}`: expected a whole number and a unit (s, m, h, d, w), such as 5m or 28d")]
    InvalidDuration(String),
    #[error("invalid window `{0}`: expected a duration such as 7d, 28d or 30d, or `month`")]
    InvalidWindow(String),
    #[error("unknown burn rates `{0}`: expected `default`")]
    UnknownBurnRates(String),
    #[error("target {0} is not a percentage strictly between 0 and 100 (100% leaves no error budget)")]
    Target(f64),
    #[error("target {0} leaves no error budget at a precision of 0.0001%")]
    TargetPrecision(f64),
    #[error("slice threshold {0} is not a percentage above 0 and at most 100")]
    SliceGoodPercent(f64),
    #[error("budgeting by time slices needs a `timeslice` length, such as 1m")]
    MissingTimeslice,
    #[error("a latency objective needs a `threshold` in milliseconds")]
    MissingThreshold,
}
