//! `monform status`: the figures of the project's applied checks. One
//! report call for the figures of the range, whatever the number of checks;
//! each check's last status from its latest result (one result call per
//! check, at most [`CONCURRENCY`] at a time) when the project has at most
//! [`READ_EVERY_CHECK_UP_TO`] applied checks, when checks are named, or
//! with sparklines. A larger project reads a second report, of the last 6
//! hours (the window of the last status), and the latest result only of
//! the checks that report cannot vouch for ([`judge`]): at 10,000 checks,
//! two requests and the failing ones', not 10,000 (one, when the range
//! ends now and none of the checks ran in it).
//!
//! With sparklines, each check's response times: the analytics of the
//! range for the check types that have them in [`SPARK_BUCKETS`] buckets,
//! else (other types, or fewer than two buckets with runs) the results of
//! the last 6 hours (up to 100, the same call as the last status).

use futures_util::StreamExt;
use monform_api::{Client, ReportEntry};
use monform_config::Desired;
use monform_model::reports::{QuickRange, analytics_endpoint};
use monform_model::resources::CheckType;
use monform_model::resources::check::DEFAULT_DEGRADED_RESPONSE_TIME_MS;
use monform_model::{Address, Kind, RunStatus};
use serde_json::Value;

use super::Refusal;
use super::test_ops::applied_checks;
use crate::state::State;

/// Result calls in flight at once.
pub const CONCURRENCY: usize = 8;
/// Buckets of a sparkline drawn from the analytics of the range.
pub const SPARK_BUCKETS: u32 = 24;
/// Up to this many applied checks, every check's latest result is read:
/// exact, and a handful of requests.
pub const READ_EVERY_CHECK_UP_TO: usize = 50;
/// The window of the last status, as the result listing's (spec 4).
const RECENT_SECONDS: i64 = 6 * 3600;
/// Runs in the recent window above which a check's latest result is read
/// whatever the report says: the report rounds its ratio to four decimals,
/// so one failure among 20,000 runs would read as none.
const MOST_RUNS_JUDGED: u64 = 5_000;

/// What was read of one check: its id, its last status (or why not) and
/// its sparkline's response times.
type Fetched = (String, Result<Option<LastRun>, String>, Vec<Option<f64>>);
/// A check's last status and series, by its id.
type LastById = std::collections::HashMap<String, (Result<Option<LastRun>, String>, Vec<Option<f64>>)>;

/// Why the figures cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusRefusal {
    #[error("cannot read the report: {0}")]
    Report(monform_api::Error),
    #[error("cannot read the results of {address}: {error}")]
    Results { address: Address, error: String },
    #[error("{0} is not an applied check of the project\n\nhint: `monform state list` shows what is applied")]
    NotApplied(Address),
}

/// What to read.
#[derive(Debug, Clone)]
pub struct StatusRequest {
    pub range: QuickRange,
    /// Also each check's response times over the range.
    pub sparklines: bool,
    /// Only these checks (every applied check when empty); each one's
    /// latest result is read.
    pub addresses: Vec<Address>,
    /// Now, UNIX milliseconds, for the recent window's start (a service
    /// whose clock is simulated); `None`: the clock's.
    pub now_ms: Option<i64>,
}

impl Default for StatusRequest {
    fn default() -> StatusRequest {
        StatusRequest {
            range: QuickRange::Last24Hours,
            sparklines: false,
            addresses: Vec::new(),
            now_ms: None,
        }
    }
}

/// One applied check's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckStatus {
    pub address: Address,
    /// The report's name, else the files'.
    pub name: String,
    /// The report's (`None` when it does not list the check, or names a
    /// type monform does not know).
    pub check_type: Option<CheckType>,
    /// The figures of the range: `None` when the check had no run in it
    /// (or the report does not list it).
    pub success_ratio: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub avg: Option<f64>,
    /// The latest result's status (`None`: no recent result).
    pub last_status: Option<LastRun>,
    /// The name of its group in the files.
    pub group: Option<String>,
    /// Response times, oldest first (with sparklines).
    pub series: Vec<Option<f64>>,
}

/// How a check's latest run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastRun {
    Status(RunStatus),
    /// The service has no such check (deleted outside monform).
    Missing,
}

impl LastRun {
    /// `PASSED`, `FAILED`, ... or `MISSING`.
    pub fn as_str(self) -> &'static str {
        match self {
            LastRun::Status(status) => status.as_str(),
            LastRun::Missing => "MISSING",
        }
    }
}

impl std::fmt::Display for LastRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a check stands by its last run, worst first: the order of the
/// status table (failing checks first, whatever their address) and the
/// counts every front end shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Standing {
    /// FAILED, TIMED_OUT (or cancelled, still running), or MISSING
    /// (deleted outside monform).
    Failing,
    Degraded,
    Passing,
    /// No result in the last 6 hours.
    Unknown,
}

impl CheckStatus {
    /// How the check stands by its last run.
    pub fn standing(&self) -> Standing {
        match self.last_status {
            None => Standing::Unknown,
            Some(LastRun::Status(status)) => match status {
                RunStatus::Passed => Standing::Passing,
                RunStatus::Degraded => Standing::Degraded,
                RunStatus::Failed | RunStatus::TimedOut | RunStatus::Cancelled | RunStatus::Running => {
                    Standing::Failing
                }
            },
            Some(LastRun::Missing) => Standing::Failing,
        }
    }
}

/// What the report of the last 6 hours says of a check's last run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// Read its latest result: the report does not list it (deleted
    /// outside monform, or new), it failed in the window, or it may have
    /// been degraded.
    Read,
    /// No run in the window: no last status, as the listing would say.
    NoRun,
    /// Every run in the window passed, none could be degraded.
    Passed,
}

/// Whether `entry` (the check's line in the report of the last 6 hours)
/// tells its last run without reading it. `check` is the check's value in
/// the files. Only API checks' results carry the degraded flag (spec
/// 2.19), set when a run took longer than `degradedResponseTime`: an API
/// check whose runs all passed is read when their p99 reaches it (with a
/// hundred runs or fewer, the p99 is about the slowest). A check with
/// more than [`MOST_RUNS_JUDGED`] runs in the window is read (the ratio's
/// rounding). The report's zeros mean no run (`discards::has_results`).
pub fn judge(entry: Option<&ReportEntry>, check: Option<&Value>) -> Judged {
    let Some(entry) = entry else {
        return Judged::Read;
    };
    if !crate::discards::has_results(entry) {
        return Judged::NoRun;
    }
    if entry.success_ratio.is_none_or(|ratio| ratio < 1.0) {
        return Judged::Read;
    }
    let runs = check.map_or(u64::MAX, |c| monform_model::runs::runs_per_month(c) / 120);
    if runs > MOST_RUNS_JUDGED {
        return Judged::Read;
    }
    let api = entry
        .check_type
        .parse::<CheckType>()
        .ok()
        .or_else(|| check.and_then(|c| CheckType::of_check(c).ok()));
    if api == Some(CheckType::Api) {
        let degraded = check
            .and_then(|c| c["degradedResponseTime"].as_f64())
            .unwrap_or(f64::from(DEFAULT_DEGRADED_RESPONSE_TIME_MS));
        if entry.p99.is_none_or(|p99| p99 >= degraded) {
            return Judged::Read;
        }
    }
    Judged::Passed
}

/// The figures of every applied check of `state` (of the addresses
/// named, when some are), by address; nothing (and no request) when the
/// project has no applied check.
pub async fn status(
    client: &Client,
    desired: &Desired,
    state: &State,
    request: &StatusRequest,
) -> Result<Vec<CheckStatus>, Refusal> {
    let mut checks = applied_checks(state);
    if !request.addresses.is_empty() {
        if let Some(unknown) = request.addresses.iter().find(|a| !checks.values().any(|c| c == *a)) {
            return Err(Refusal::Status(StatusRefusal::NotApplied(unknown.clone())));
        }
        checks.retain(|_, address| request.addresses.contains(address));
    }
    if checks.is_empty() {
        return Ok(Vec::new());
    }
    let file = |address: &Address| desired.resources.get(address).map(|d| d.resource.to_json());
    let read_all = request.sparklines || !request.addresses.is_empty() || checks.len() <= READ_EVERY_CHECK_UP_TO;
    let range_report = client.reporting(request.range.report_name());
    // Every check named, or the few a report of the recent window cannot vouch for.
    let (report, judged) = if read_all {
        (range_report.await, None)
    } else {
        let now_ms = request.now_ms.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
        let since = now_ms / 1000 - RECENT_SECONDS;
        let (report, recent) = if ends_now(request.range) {
            // The range holds the last 6 hours: when none of the checks ran
            // in it, its zeros say so of them too (one report, not two).
            let report = range_report.await;
            let ran = report.as_ref().map_or(true, |entries| {
                entries
                    .iter()
                    .any(|e| checks.contains_key(&e.check_id) && crate::discards::has_results(e))
            });
            let recent = match ran {
                true => Some(client.reporting_since(since).await),
                false => None,
            };
            (report, recent)
        } else {
            let (report, recent) = futures_util::join!(range_report, client.reporting_since(since));
            (report, Some(recent))
        };
        let recent = match recent {
            Some(recent) => Some(recent.map_err(|e| Refusal::Status(StatusRefusal::Report(e)))?),
            None => None,
        };
        let recent: std::collections::HashMap<&str, &ReportEntry> = match (&recent, &report) {
            (Some(entries), _) | (None, Ok(entries)) => entries.iter().map(|e| (e.check_id.as_str(), e)).collect(),
            (None, Err(_)) => std::collections::HashMap::new(),
        };
        let judged: std::collections::HashMap<String, Judged> = checks
            .iter()
            .map(|(id, address)| {
                (
                    id.clone(),
                    judge(recent.get(id.as_str()).copied(), file(address).as_ref()),
                )
            })
            .collect();
        (report, Some(judged))
    };
    let to_read = checks.iter().filter(|(id, _)| {
        judged
            .as_ref()
            .is_none_or(|j| j.get(id.as_str()) == Some(&Judged::Read))
    });
    let mut lasts: LastById = futures_util::stream::iter(to_read)
        .map(|(id, address)| {
            let check_type = file(address).and_then(|f| CheckType::of_check(&f).ok());
            let endpoint = check_type.and_then(analytics_endpoint);
            last_and_series(client, id, endpoint, request)
        })
        .buffer_unordered(CONCURRENCY)
        .map(|(id, last, series)| (id, (last, series)))
        .collect()
        .await;
    let report = report.map_err(|e| Refusal::Status(StatusRefusal::Report(e)))?;
    // By id: two scans per check would be quadratic at 10,000 checks.
    let report: std::collections::HashMap<&str, _> = report.iter().map(|e| (e.check_id.as_str(), e)).collect();
    let mut out = Vec::new();
    for (id, address) in &checks {
        // The service answers zeros for a check without runs in the range:
        // no figures, not 0% and 0 ms.
        let entry = report.get(id.as_str()).copied();
        let figures = entry.filter(|e| crate::discards::has_results(e));
        let judgement = judged.as_ref().and_then(|j| j.get(id.as_str()).copied());
        let (last, series) = match judgement {
            Some(Judged::Passed) => (Ok(Some(LastRun::Status(RunStatus::Passed))), Vec::new()),
            _ => lasts.remove(id.as_str()).unwrap_or((Ok(None), Vec::new())),
        };
        let last_status = last.map_err(|error| {
            Refusal::Status(StatusRefusal::Results {
                address: address.clone(),
                error,
            })
        })?;
        let own = file(address);
        let fallback_name = own
            .as_ref()
            .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_owned))
            .unwrap_or_default();
        let group = own
            .as_ref()
            .and_then(|v| v["group"].as_str().map(str::to_owned))
            .and_then(|g| desired.resources.get(&Address::new(Kind::Group, &g)))
            .and_then(|g| g.resource.to_json()["name"].as_str().map(str::to_owned));
        out.push(CheckStatus {
            address: address.clone(),
            name: entry.map_or(fallback_name, |e| e.name.clone()),
            check_type: entry.and_then(|e| e.check_type.parse().ok()),
            success_ratio: figures.and_then(|e| e.success_ratio),
            p95: figures.and_then(|e| e.p95),
            p99: figures.and_then(|e| e.p99),
            avg: figures.and_then(|e| e.avg),
            last_status,
            group,
            series,
        });
    }
    Ok(out)
}

/// Whether `range` ends now, and so holds the last 6 hours.
fn ends_now(range: QuickRange) -> bool {
    matches!(
        range,
        QuickRange::Last24Hours | QuickRange::Last7Days | QuickRange::Last30Days
    )
}

/// A check's last status and, with sparklines, its response times.
async fn last_and_series(
    client: &Client,
    id: &str,
    endpoint: Option<&'static str>,
    request: &StatusRequest,
) -> Fetched {
    let results = client
        .recent_results(id, if request.sparklines { 100 } else { 1 })
        .await;
    let last = match &results {
        Ok(results) => Ok(results.first().map(|r| LastRun::Status(RunStatus::of_result(r)))),
        Err(e) if e.status() == Some(404) => Ok(Some(LastRun::Missing)),
        Err(e) => Err(e.to_string()),
    };
    let mut series = Vec::new();
    if request.sparklines {
        if let Some(endpoint) = endpoint {
            let interval = request.range.minutes() / SPARK_BUCKETS;
            series = client
                .response_times(endpoint, id, request.range.analytics_name(), interval)
                .await
                .unwrap_or_default();
        }
        // Too few buckets with runs (a new check): its latest runs.
        if series.iter().flatten().count() < 2 {
            series = results
                .unwrap_or_default()
                .iter()
                .rev()
                .map(|r: &Value| r["responseTime"].as_f64())
                .collect();
        }
    }
    (id.to_owned(), last, series)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(check_type: &str, ratio: f64, avg: f64, p99: f64) -> ReportEntry {
        ReportEntry {
            check_id: "1".into(),
            name: "one".into(),
            check_type: check_type.into(),
            deactivated: false,
            tags: Vec::new(),
            success_ratio: Some(ratio),
            avg: Some(avg),
            p95: Some(p99),
            p99: Some(p99),
        }
    }

    #[test]
    fn the_report_vouches_only_for_runs_that_all_passed_and_could_not_degrade() {
        let url = json!({"checkType": "URL", "frequency": 5});
        let api = json!({"checkType": "API", "frequency": 5});
        // Not listed (deleted outside monform): read, a 404 says MISSING.
        assert_eq!(judge(None, Some(&url)), Judged::Read);
        // The service's zeros: no run in the window.
        assert_eq!(judge(Some(&entry("URL", 0.0, 0.0, 0.0)), Some(&url)), Judged::NoRun);
        // Every run failed (they took time): read.
        assert_eq!(judge(Some(&entry("URL", 0.0, 35.0, 40.0)), Some(&url)), Judged::Read);
        assert_eq!(judge(Some(&entry("URL", 0.9999, 35.0, 40.0)), Some(&url)), Judged::Read);
        assert_eq!(
            judge(Some(&entry("URL", 1.0, 35.0, 40_000.0)), Some(&url)),
            Judged::Passed
        );
        // API checks: degraded past degradedResponseTime (default 10 s).
        assert_eq!(
            judge(Some(&entry("API", 1.0, 35.0, 9_999.0)), Some(&api)),
            Judged::Passed
        );
        assert_eq!(
            judge(Some(&entry("API", 1.0, 35.0, 10_000.0)), Some(&api)),
            Judged::Read
        );
        let quick = json!({"checkType": "API", "frequency": 5, "degradedResponseTime": 30});
        assert_eq!(judge(Some(&entry("API", 1.0, 20.0, 35.0)), Some(&quick)), Judged::Read);
        // The type from the files when the report's is unknown.
        assert_eq!(judge(Some(&entry("", 1.0, 20.0, 10_500.0)), Some(&api)), Judged::Read);
    }

    #[test]
    fn a_check_with_more_runs_than_four_decimals_tell_apart_is_read() {
        // Every 10 s from 22 locations: 47,520 runs in 6 hours.
        let locations: Vec<String> = (0..22).map(|n| format!("l{n}")).collect();
        let busy = json!({"checkType": "URL", "frequency": 0, "frequencyOffset": 10,
                          "runParallel": true, "locations": locations});
        assert_eq!(judge(Some(&entry("URL", 1.0, 20.0, 30.0)), Some(&busy)), Judged::Read);
        // Every minute from one: 360.
        let calm = json!({"checkType": "URL", "frequency": 1});
        assert_eq!(judge(Some(&entry("URL", 1.0, 20.0, 30.0)), Some(&calm)), Judged::Passed);
        // Not in the files: nothing to count by, read.
        assert_eq!(judge(Some(&entry("URL", 1.0, 20.0, 30.0)), None), Judged::Read);
    }
}
