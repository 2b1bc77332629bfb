//! Burn rates and the multi-window multi-burn-rate alert pairs (Google's
//! SRE workbook, "Alerting on SLOs", the table of recommended pairs), and
//! [`evaluate`], which puts an objective's numbers together.

use std::time::Duration;

use crate::measure::{Tally, measure};
use crate::window::Interval;
use crate::window::millis;
use crate::{Objective, Run, SloError, budget_ppm};

/// Who an alert pair is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Wake someone: the budget goes in days.
    Page,
    /// Look during working hours.
    Ticket,
}

/// Fires when the burn rate over `long` and over `short` both reach
/// `factor`. The short window makes the alert resolve soon after the
/// burning stops; the long one keeps a blip from firing it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurnRatePair {
    pub long: Duration,
    pub short: Duration,
    pub factor: f64,
    pub severity: Severity,
}

/// `burnRates: default`: the workbook's three pairs for a 30-day budget.
/// 14.4x over 1h and 5m (2% of the budget in an hour), 6x over 6h and 30m
/// (5% in six hours), 1x over 3d and 6h (10% in three days).
pub fn default_burn_rates() -> Vec<BurnRatePair> {
    const MINUTE: u64 = 60;
    const HOUR: u64 = 3_600;
    let pair = |long, short, factor, severity| BurnRatePair {
        long: Duration::from_secs(long),
        short: Duration::from_secs(short),
        factor,
        severity,
    };
    vec![
        pair(HOUR, 5 * MINUTE, 14.4, Severity::Page),
        pair(6 * HOUR, 30 * MINUTE, 6.0, Severity::Page),
        pair(72 * HOUR, 6 * HOUR, 1.0, Severity::Ticket),
    ]
}

/// The pairs a `burnRates:` name stands for (only `default` so far).
pub fn parse_burn_rates(name: &str) -> Result<Vec<BurnRatePair>, SloError> {
    match name.trim() {
        "default" => Ok(default_burn_rates()),
        other => Err(SloError::UnknownBurnRates(other.to_owned())),
    }
}

/// The burn rate over one rolling window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowBurn {
    pub window: Duration,
    pub tally: Tally,
    /// `None` without data in the window.
    pub burn_rate: Option<f64>,
}

/// An objective's numbers at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The interval the objective's window covered.
    pub interval: Interval,
    pub tally: Tally,
    /// good / total over the objective's window; `None` without data.
    pub sli: Option<f64>,
    /// 1 - target, as a fraction.
    pub error_budget: f64,
    /// 1 untouched, 0 spent, negative overspent; `None` without data.
    pub budget_left: Option<f64>,
    /// The burn rate over the objective's whole window.
    pub burn_rate: Option<f64>,
    /// Each distinct window of the alert pairs, shortest first.
    pub burn_rates: Vec<WindowBurn>,
    /// The pairs that fire, in the order given.
    pub firing: Vec<BurnRatePair>,
}

/// The objective's SLI, budget and burn rates at `now_ms` from `runs` (the
/// member checks' runs, any order, covering at least the objective's
/// window and the longest alert window), and which `pairs` fire.
/// `objective` should have passed [`Objective::validate`].
pub fn evaluate(objective: &Objective, runs: &[Run], pairs: &[BurnRatePair], now_ms: i64) -> Status {
    let budget = budget_ppm(objective.target_percent);
    let interval = objective.window.bounds(now_ms);
    let tally = measure(objective, runs, interval);

    let mut windows: Vec<Duration> = pairs.iter().flat_map(|pair| [pair.long, pair.short]).collect();
    windows.sort();
    windows.dedup();
    let burn_rates: Vec<WindowBurn> = windows
        .into_iter()
        .map(|window| {
            let tally = measure(objective, runs, rolling(window, now_ms));
            WindowBurn {
                window,
                tally,
                burn_rate: burn_rate(tally, budget),
            }
        })
        .collect();
    let reaches = |window: Duration, factor: f64| {
        burn_rates
            .iter()
            .find(|burn| burn.window == window)
            .is_some_and(|burn| reaches_factor(burn.tally, budget, factor))
    };
    let firing = pairs
        .iter()
        .filter(|pair| reaches(pair.long, pair.factor) && reaches(pair.short, pair.factor))
        .copied()
        .collect();

    let sli = tally.ratio();
    Status {
        interval,
        tally,
        sli,
        error_budget: budget as f64 / 1_000_000.0,
        budget_left: burn_rate(tally, budget).map(|burn| 1.0 - burn),
        burn_rate: burn_rate(tally, budget),
        burn_rates,
        firing,
    }
}

fn rolling(window: Duration, now_ms: i64) -> Interval {
    Interval {
        start: now_ms.saturating_sub(millis(window)),
        end: now_ms,
    }
}

/// (bad / total) / budget.
fn burn_rate(tally: Tally, budget_ppm: u64) -> Option<f64> {
    (tally.total > 0 && budget_ppm > 0)
        .then(|| tally.bad() as f64 * 1_000_000.0 / (tally.total as f64 * budget_ppm as f64))
}

/// bad / total >= factor * budget, in integers: factor in thousandths,
/// budget in millionths, so a burn rate exactly at the factor fires.
fn reaches_factor(tally: Tally, budget_ppm: u64, factor: f64) -> bool {
    if tally.total == 0 {
        return false;
    }
    let factor_milli = (factor * 1_000.0).round().max(0.0) as u128;
    u128::from(tally.bad()) * 1_000_000 * 1_000 >= factor_milli * u128::from(budget_ppm) * u128::from(tally.total)
}
