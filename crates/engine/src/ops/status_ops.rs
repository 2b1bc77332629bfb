//! `monform status`: the figures of the project's applied checks. One
//! report call for all checks; one result call per check, at most
//! [`CONCURRENCY`] at a time; with sparklines, each check's response times:
//! the analytics of the range for the check types that have them in
//! [`SPARK_BUCKETS`] buckets, else (other types, or fewer than two buckets
//! with runs) the results of the last 6 hours (up to 100, the same call as
//! the last status).

use futures_util::StreamExt;
use monform_api::Client;
use monform_config::Desired;
use monform_model::reports::{QuickRange, analytics_endpoint};
use monform_model::resources::CheckType;
use monform_model::{Address, Kind, RunStatus};
use serde_json::Value;

use super::Refusal;
use super::test_ops::applied_checks;
use crate::state::State;

/// Result calls in flight at once.
pub const CONCURRENCY: usize = 8;
/// Buckets of a sparkline drawn from the analytics of the range.
pub const SPARK_BUCKETS: u32 = 24;

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
}

/// What to read.
#[derive(Debug, Clone, Copy)]
pub struct StatusRequest {
    pub range: QuickRange,
    /// Also each check's response times over the range.
    pub sparklines: bool,
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

/// The figures of every applied check of `state`, by address; nothing
/// (and no request) when the project has no applied check.
pub async fn status(
    client: &Client,
    desired: &Desired,
    state: &State,
    request: StatusRequest,
) -> Result<Vec<CheckStatus>, Refusal> {
    let checks = applied_checks(state);
    if checks.is_empty() {
        return Ok(Vec::new());
    }
    let report = client.reporting(request.range.report_name()).await;
    let file = |address: &Address| desired.resources.get(address).map(|d| d.resource.to_json());
    let mut lasts: LastById = futures_util::stream::iter(checks.iter())
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
        let (last, series) = lasts.remove(id.as_str()).unwrap_or((Ok(None), Vec::new()));
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

/// A check's last status and, with sparklines, its response times.
async fn last_and_series(client: &Client, id: &str, endpoint: Option<&'static str>, request: StatusRequest) -> Fetched {
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
