//! `monform slo status` and `monform gate` (issue 50): each SLO's SLI,
//! error budget left and burn rates from its member checks' FINAL results,
//! read through the API client (paged by cursor, 6-hour windows as the
//! listing's rule has it, paced like every read; settled windows kept
//! between evaluations, `slo_runs.rs`), computed by
//! `monform-slo`. The reconciler and the MCP server call the same
//! operation, so they cannot disagree with the CLI.
//!
//! Which results are runs: FINAL results, cancelled ones left out, a
//! degraded run counted as a success (`monform_slo`'s rules). A member
//! not applied yet (no remote id in the state) has no results: it is
//! named in [`SloReport::unapplied`].

use futures_util::StreamExt;
use monform_api::Client;
use monform_config::Desired;
pub use monform_config::slos::{MemberRunCost, Schedule as SloSchedule, SloRunCost};
use monform_model::resources::Slo;
use monform_model::resources::slo::{SloBudgeting, SloCalendar, SloIndicator};
use monform_model::{Address, Kind, Resource, RunStatus};
use monform_slo::{Budgeting, BurnRatePair, Indicator, Objective, Run, Status, Window};
use serde_json::Value;
use std::collections::BTreeMap;

use super::slo_runs::{BLOCK_MS, CheckRuns, SETTLE_MS};
use crate::state::State;

/// Result pages in flight at once.
const CONCURRENCY: usize = 8;
/// Buckets of an SLO's sparkline over its window.
pub const SLO_SPARK_BUCKETS: usize = 24;

/// Why the figures cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SloRefusal {
    #[error("{0} is not an SLO of the files")]
    Unknown(Address),
    #[error("{address}: {error}")]
    Objective {
        address: Address,
        error: monform_slo::SloError,
    },
    #[error("cannot read the results of {address}: {error}")]
    Results {
        address: Address,
        error: monform_api::Error,
    },
}

/// What to compute.
#[derive(Debug, Clone, Default)]
pub struct SloStatusRequest {
    /// The SLOs (empty: every SLO of the files).
    pub addresses: Vec<Address>,
    /// The evaluation time, UNIX milliseconds (`None`: now).
    pub now_ms: Option<i64>,
    /// Where settled blocks of results are kept between evaluations (the
    /// project's [`super::SLO_RUNS_CACHE`]); `None`: every block is read.
    pub runs_cache: Option<std::path::PathBuf>,
    /// Also each SLO's [`SloReport::history`] (the status report's chart).
    pub history: bool,
    /// The project's environment (`--env`), part of each SLO's
    /// [`SloReport::fingerprint`]: a staging SLO's figures are not production's.
    pub environment: Option<String>,
}

/// One SLO's figures.
#[derive(Debug, Clone)]
pub struct SloReport {
    pub address: Address,
    pub name: String,
    pub target_percent: f64,
    pub objective: Objective,
    pub pairs: Vec<BurnRatePair>,
    pub members: Vec<Address>,
    /// Members without a remote id in the state (not applied).
    pub unapplied: Vec<Address>,
    pub status: Status,
    /// The SLI of each of [`SLO_SPARK_BUCKETS`] equal parts of the window,
    /// oldest first; `None` for a part without data.
    pub series: Vec<Option<f64>>,
    /// The alert channels of `alerting` (logical ids).
    pub channels: Vec<String>,
    /// The window by UTC day (or 24 parts of a window under two days):
    /// each part's SLI and the budget left so far; empty unless
    /// [`SloStatusRequest::history`].
    pub history: Vec<monform_slo::Part>,
    /// The definition the figures are of (`slo_cache::slo_fingerprint`):
    /// a cached verdict is used only for the same one.
    pub fingerprint: String,
}

impl SloReport {
    /// Whether a page-severity pair fires: burning fast.
    pub fn burning_fast(&self) -> bool {
        self.status
            .firing
            .iter()
            .any(|pair| pair.severity == monform_slo::Severity::Page)
    }
}

/// The objective an SLO of the files declares.
pub fn objective_of(slo: &Slo) -> Result<Objective, monform_slo::SloError> {
    let window = match (&slo.window, slo.calendar) {
        (_, Some(SloCalendar::Month)) => Window::CalendarMonth,
        (Some(text), None) => Window::parse(text)?,
        (None, None) => Window::parse("")?,
    };
    let objective = Objective {
        indicator: match slo.indicator {
            SloIndicator::Availability => Indicator::Availability,
            SloIndicator::Latency => Indicator::Latency,
        },
        budgeting: match slo.budgeting {
            SloBudgeting::Occurrences => Budgeting::Occurrences,
            SloBudgeting::Timeslices => Budgeting::Timeslices,
        },
        target_percent: slo.target,
        window,
        timeslice: slo.timeslice.as_deref().map(monform_slo::parse_duration).transpose()?,
        slice_good_percent: slo.timeslice_target.unwrap_or(100.0),
        threshold_ms: slo.threshold,
    };
    objective.validate()?;
    Ok(objective)
}

/// The burn-rate pairs of an SLO (`burnRates: default` without `alerting`).
pub fn pairs_of(slo: &Slo) -> Vec<BurnRatePair> {
    let name = slo.alerting.as_ref().map_or("default", |a| a.burn_rates.as_str());
    monform_slo::parse_burn_rates(name).unwrap_or_else(|_| monform_slo::default_burn_rates())
}

/// How far back an objective's figures reach from `now_ms`: its window
/// and its longest burn-rate window.
fn span_ms(objective: &Objective, pairs: &[BurnRatePair], now_ms: i64) -> i64 {
    let window = objective.window.bounds(now_ms);
    let longest = pairs.iter().map(|p| p.long.as_millis() as i64).max().unwrap_or(0);
    (now_ms - window.start).max(longest)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The SLOs of the files `addresses` name (all when empty), in order.
fn wanted<'a>(desired: &'a Desired, addresses: &'a [Address]) -> Result<Vec<(&'a Address, &'a Slo)>, SloRefusal> {
    if addresses.is_empty() {
        return Ok(desired
            .resources
            .iter()
            .filter_map(|(a, r)| match r.resource.as_ref() {
                Resource::Slo(slo) => Some((a, slo)),
                _ => None,
            })
            .collect());
    }
    addresses
        .iter()
        .map(
            |address| match desired.resources.get(address).map(|r| r.resource.as_ref()) {
                Some(Resource::Slo(slo)) => Ok((address, slo)),
                _ => Err(SloRefusal::Unknown(address.clone())),
            },
        )
        .collect()
}

/// The fingerprint of each SLO `addresses` names (all when empty), in
/// order, as the files define it now in `environment`: what `gate`
/// compares with the cached verdicts' (`read_slo_cache`), without reading
/// a result.
pub fn slo_fingerprints(
    desired: &Desired,
    addresses: &[Address],
    environment: Option<&str>,
) -> Result<Vec<(Address, String)>, SloRefusal> {
    Ok(wanted(desired, addresses)?
        .into_iter()
        .map(|(address, slo)| {
            let members = monform_config::slos::members(desired, slo);
            (address.clone(), super::slo_fingerprint(slo, &members, environment))
        })
        .collect())
}

/// The figures of the SLOs `request` names.
pub async fn slo_status(
    client: &Client,
    desired: &Desired,
    state: &State,
    request: &SloStatusRequest,
) -> Result<Vec<SloReport>, SloRefusal> {
    let now_ms = request.now_ms.unwrap_or_else(now);
    let wanted = wanted(desired, &request.addresses)?;
    // Each SLO's objective and members, and how far back each member
    // check must be read (the longest any of its SLOs needs).
    let mut planned = Vec::new();
    let mut spans: BTreeMap<Address, i64> = BTreeMap::new();
    for (address, slo) in wanted {
        let objective = objective_of(slo).map_err(|error| SloRefusal::Objective {
            address: address.clone(),
            error,
        })?;
        let pairs = pairs_of(slo);
        let members = monform_config::slos::members(desired, slo);
        let span = span_ms(&objective, &pairs, now_ms);
        for member in &members {
            let longest = spans.entry(member.clone()).or_default();
            *longest = (*longest).max(span);
        }
        planned.push((address, slo, objective, pairs, members));
    }
    let runs = read_runs(client, state, &spans, now_ms, request.runs_cache.as_deref()).await?;
    let mut reports = Vec::with_capacity(planned.len());
    for (address, slo, objective, pairs, members) in planned {
        let mut all: Vec<Run> = Vec::new();
        let mut unapplied = Vec::new();
        for member in &members {
            match runs.get(member) {
                Some(found) => all.extend(found.iter().cloned()),
                None => unapplied.push(member.clone()),
            }
        }
        let status = monform_slo::evaluate(&objective, &all, &pairs, now_ms);
        let fingerprint = super::slo_fingerprint(slo, &members, request.environment.as_deref());
        let series = series(&objective, &all, &status);
        let history = match request.history {
            true => monform_slo::history(&objective, &all, status.interval),
            false => Vec::new(),
        };
        reports.push(SloReport {
            address: address.clone(),
            name: slo.display_name(&address.id).to_owned(),
            target_percent: slo.target,
            objective,
            pairs,
            members,
            unapplied,
            status,
            series,
            channels: slo.alerting.as_ref().map(|a| a.channels.clone()).unwrap_or_default(),
            history,
            fingerprint,
        });
    }
    Ok(reports)
}

/// The SLI of each equal part of the window so far.
fn series(objective: &Objective, runs: &[Run], status: &Status) -> Vec<Option<f64>> {
    let interval = status.interval;
    let width = ((interval.end - interval.start) / SLO_SPARK_BUCKETS as i64).max(1);
    (0..SLO_SPARK_BUCKETS as i64)
        .map(|i| {
            let part = monform_slo::Interval {
                start: interval.start + i * width,
                end: if i + 1 == SLO_SPARK_BUCKETS as i64 {
                    interval.end
                } else {
                    interval.start + (i + 1) * width
                },
            };
            monform_slo::measure(objective, runs, part).ratio()
        })
        .collect()
}

/// A listing's runs: the member, the settled block to keep them as, the runs.
type WindowRead = (Address, Option<i64>, Vec<Run>);

/// Every member's runs over its span, by address; members the state has
/// no id for are left out. Read in epoch-aligned blocks (`slo_runs.rs`):
/// settled ones from `cache` when kept there, and kept once read.
async fn read_runs(
    client: &Client,
    state: &State,
    spans: &BTreeMap<Address, i64>,
    now_ms: i64,
    cache: Option<&std::path::Path>,
) -> Result<BTreeMap<Address, Vec<Run>>, SloRefusal> {
    // Each member's kept blocks, its runs so far, and the listings to
    // make: (address, remote id, from, to, the block to keep or None).
    let mut kept: BTreeMap<Address, (String, CheckRuns)> = BTreeMap::new();
    let mut runs: BTreeMap<Address, Vec<Run>> = BTreeMap::new();
    let mut windows = Vec::new();
    for (address, span) in spans {
        let Some(entry) = state.resources.get(&address.to_string()) else {
            continue;
        };
        let start = now_ms - span;
        let blocks = cache.map(|dir| CheckRuns::load(dir, &entry.remote_id));
        let found = runs.entry(address.clone()).or_default();
        let first = start.div_euclid(BLOCK_MS);
        let last = (now_ms - 1).div_euclid(BLOCK_MS);
        for block in first..=last {
            let (from, to) = (block * BLOCK_MS, (block + 1) * BLOCK_MS);
            let settled = blocks.is_some() && to <= now_ms - SETTLE_MS;
            match blocks.as_ref().filter(|_| settled).and_then(|b| b.block(from)) {
                Some(read) => found.extend(read),
                // The whole block, to keep it.
                None if settled => windows.push((address.clone(), entry.remote_id.clone(), from, to, Some(from))),
                None => windows.push((
                    address.clone(),
                    entry.remote_id.clone(),
                    from.max(start),
                    to.min(now_ms),
                    None,
                )),
            }
        }
        if let Some(blocks) = blocks {
            kept.insert(address.clone(), (entry.remote_id.clone(), blocks));
        }
    }
    let read: Vec<Result<WindowRead, SloRefusal>> = futures_util::stream::iter(windows)
        .map(|(address, id, from, to, keep)| async move {
            let runs = read_window(client, &id, from, to)
                .await
                .map_err(|error| SloRefusal::Results {
                    address: address.clone(),
                    error,
                })?;
            Ok((address, keep, runs))
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    for result in read {
        let (address, keep, found) = result?;
        if let (Some(start), Some((_, blocks))) = (keep, kept.get_mut(&address)) {
            blocks.keep(start, &found);
        }
        runs.entry(address).or_default().extend(found);
    }
    if let Some(dir) = cache {
        for (id, blocks) in kept.into_values() {
            // Best effort: a block not kept is read again next time.
            let _ = blocks.save(dir, &id, now_ms);
        }
    }
    // Only the span (a block reaches before it), each run once (the
    // listing's `to` is inclusive: adjacent windows share a bound).
    for (address, list) in runs.iter_mut() {
        let start = now_ms - spans.get(address).copied().unwrap_or(0);
        list.retain(|run| start <= run.at_ms && run.at_ms < now_ms);
        list.sort_by(|a, b| (a.at_ms, &a.location).cmp(&(b.at_ms, &b.location)));
        list.dedup();
    }
    Ok(runs)
}

/// The runs of one check in `[from_ms, to_ms)`, every page.
async fn read_window(
    client: &Client,
    check_id: &str,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<Run>, monform_api::Error> {
    let mut runs = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let (entries, cursor) = client
            .results_page(
                check_id,
                from_ms.div_euclid(1000),
                to_ms.div_euclid(1000),
                next.as_deref(),
            )
            .await?;
        runs.extend(
            entries
                .iter()
                .filter_map(run_of)
                .filter(|run| from_ms <= run.at_ms && run.at_ms < to_ms),
        );
        match cursor {
            Some(cursor) if !entries.is_empty() && next.as_deref() != Some(cursor.as_str()) => next = Some(cursor),
            _ => return Ok(runs),
        }
    }
}

/// A FINAL result as a run; `None` for a cancelled or unfinished one, or
/// one without a start time.
pub fn run_of(result: &Value) -> Option<Run> {
    let status = RunStatus::of_result(result);
    if matches!(status, RunStatus::Cancelled | RunStatus::Running) {
        return None;
    }
    let started = result["startedAt"].as_str().or_else(|| result["created_at"].as_str())?;
    let at_ms = chrono::DateTime::parse_from_rfc3339(started).ok()?.timestamp_millis();
    Some(Run {
        at_ms,
        success: !status.is_failure(),
        response_ms: result["responseTime"]
            .as_f64()
            .map_or(0, |ms| ms.clamp(0.0, u32::MAX as f64).round() as u32),
        location: result["runLocation"].as_str().unwrap_or_default().to_owned(),
    })
}

/// The window's length in the files' words (`28d`, `month`).
pub fn window_text(slo: &Slo) -> String {
    match (&slo.window, slo.calendar) {
        (_, Some(SloCalendar::Month)) => "month".to_owned(),
        (Some(window), None) => window.clone(),
        (None, None) => String::new(),
    }
}

/// What each SLO of the files needs of its member checks (the runs its
/// fast-burn alert needs, and the schedule that gives them) and its run
/// budget: the members' runs a month as the files write them and at what
/// it needs (`plan`'s SLO notes). The rule is the loader's, the one
/// `enforce: true` applies (`monform_config::slos`).
pub fn slo_run_costs(desired: &Desired) -> Vec<SloRunCost> {
    monform_config::slos::run_costs(desired)
}

/// The SLO addresses of the files (for `gate` without addresses, and
/// completion).
pub fn slo_addresses(desired: &Desired) -> Vec<Address> {
    desired
        .resources
        .keys()
        .filter(|a| a.kind == Kind::Slo)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_become_runs() {
        let passed =
            json!({"startedAt": "2026-11-01T00:00:01.500Z", "responseTime": 120.4, "runLocation": "eu-west-1"});
        let run = run_of(&passed).unwrap();
        assert_eq!(run.at_ms, 1_793_491_201_500);
        assert!(run.success);
        assert_eq!(run.response_ms, 120);
        let failed = json!({"startedAt": "2026-11-01T00:00:00Z", "hasFailures": true});
        assert!(!run_of(&failed).unwrap().success);
        let degraded = json!({"startedAt": "2026-11-01T00:00:00Z", "isDegraded": true});
        assert!(run_of(&degraded).unwrap().success);
        assert_eq!(
            run_of(&json!({"startedAt": "2026-11-01T00:00:00Z", "aborted": true})),
            None
        );
        assert_eq!(run_of(&json!({"hasFailures": true})), None);
    }
}
