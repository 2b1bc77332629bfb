//! The figures: a Markdown table on stdout, `report.json`, and the targets
//! as PASS/FAIL lines: issue 6 item 4 up to 10,000 checks, issue 18 from
//! 100,000.

use monform_engine::Summary;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::generate::Shape;
use crate::measure::{Cost, Requests, ms};

/// The real service's budget (spec 8): 600 requests per 60 s, so each
/// request costs 0.1 s once the burst is spent.
pub const RATE_LIMIT_REQUESTS: f64 = 600.0;
pub const RATE_LIMIT_WINDOW_S: f64 = 60.0;

pub fn modelled_seconds(requests: u64) -> f64 {
    requests as f64 * RATE_LIMIT_WINDOW_S / RATE_LIMIT_REQUESTS
}

/// One measured phase.
#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    pub name: &'static str,
    pub title: &'static str,
    pub wall_ms: f64,
    pub cpu_ms: f64,
    /// RSS when the phase started (the emulator and what the bench keeps).
    pub rss_start_mb: f64,
    /// Peak RSS during the phase (see `rss_reset`).
    pub peak_rss_mb: f64,
    /// Requests the emulator served (its metrics).
    pub requests: u64,
    /// Requests the client sent (`requests_sent`).
    pub requests_client: u64,
    /// POST/PUT/PATCH/DELETE the emulator served.
    pub writes: u64,
    /// `requests` at 600 requests / 60 s (0.1 s each), bursts aside.
    pub modelled_seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolated: Option<ChildReport>,
}

impl Phase {
    pub fn new(name: &'static str, title: &'static str, cost: Cost) -> Phase {
        Phase {
            name,
            title,
            wall_ms: ms(cost.wall),
            cpu_ms: ms(cost.cpu),
            rss_start_mb: round(cost.rss_start_mb),
            peak_rss_mb: round(cost.peak_rss_mb),
            requests: cost.requests.served,
            requests_client: cost.requests.sent,
            writes: cost.requests.writes,
            modelled_seconds: round(modelled_seconds(cost.requests.served)),
            isolated: None,
        }
    }
}

/// The 1, 5 and 15 minute load averages (empty where unknown).
pub fn load_average() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default()
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Everything measured for one size.
pub struct SizeReport {
    pub shape: Shape,
    /// `/proc/loadavg` (1, 5, 15 min) when the size started and ended: other
    /// work on the machine makes wall times noisy.
    pub load_average: (Vec<f64>, Vec<f64>),
    pub project_bytes: usize,
    pub reload_ms: f64,
    pub phases: Vec<Phase>,
    pub noop_isolated: Option<Phase>,
    pub load_and_diff: Option<LoadAndDiff>,
    pub baseline: Option<Phase>,
    pub change_summary: Option<Summary>,
    pub state: Option<StateFigures>,
    /// The release binary against `monform serve`, per project shape.
    pub user_path: Vec<UserPathReport>,
    /// `monform reconcile` intervals over the applied project (issue 30).
    pub reconcile: Option<ReconcileReport>,
    /// `GET /v1/checks?limit=100` while writers run (issue 28).
    pub list_under_load: Option<crate::contention::ListUnderLoad>,
}

impl SizeReport {
    pub fn new(shape: Shape, project_bytes: usize) -> SizeReport {
        SizeReport {
            shape,
            load_average: (load_average(), Vec::new()),
            project_bytes,
            reload_ms: 0.0,
            phases: Vec::new(),
            noop_isolated: None,
            load_and_diff: None,
            baseline: None,
            change_summary: None,
            state: None,
            user_path: Vec::new(),
            reconcile: None,
            list_under_load: None,
        }
    }

    pub fn push(&mut self, phase: Phase) {
        self.phases.push(phase);
    }

    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.name == name)
    }

    pub(crate) fn ratios(&self) -> Option<Ratios> {
        let noop = self.phase("noop_plan")?;
        let baseline = self.baseline.as_ref()?;
        Some(Ratios {
            requests: round(baseline.requests as f64 / noop.requests.max(1) as f64),
            wall: round(baseline.wall_ms / noop.wall_ms.max(0.1)),
            modelled: round(baseline.modelled_seconds / noop.modelled_seconds.max(0.1)),
        })
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut phases = Map::new();
        for phase in self.phases.iter().chain(&self.noop_isolated) {
            phases.insert(phase.name.into(), json!(phase));
        }
        json!({
            "checks": self.shape.checks,
            "shape": self.shape,
            "resources": self.shape.resources(),
            "project_bytes": self.project_bytes,
            "reload_ms": self.reload_ms,
            "load_average": { "start": self.load_average.0, "end": self.load_average.1 },
            "phases": phases,
            "load_and_diff": self.load_and_diff,
            "baseline": self.baseline,
            "ratios": self.ratios(),
            "change_plan_summary": self.change_summary,
            "state": self.state,
            "user_path": self.user_path,
        })
    }
}

/// Baseline ÷ monform, for the no-op plan.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Ratios {
    pub(crate) requests: f64,
    pub(crate) wall: f64,
    /// At the modelled rate limit: the same as `requests`.
    pub(crate) modelled: f64,
}

/// Issue 18's targets are for projects from this size on (issue 6's up
/// to 10,000 checks).
pub const LARGE: usize = 100_000;

/// One target (issue 6 item 4, issue 18).
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub checks: usize,
    pub id: &'static str,
    pub description: String,
    pub measured: f64,
    pub limit: f64,
    pub unit: &'static str,
    pub pass: bool,
}

pub fn int(x: u64) -> String {
    let text = x.to_string();
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i > 0 && (text.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn num(x: f64) -> String {
    if x >= 100.0 {
        int(x.round() as u64)
    } else {
        format!("{x:.1}")
    }
}

/// What the state costs after the cold apply.
#[derive(Debug, Clone, Serialize)]
pub struct StateFigures {
    pub entries: usize,
    /// `state.json` as written (format version 2).
    pub bytes: u64,
    pub bytes_per_entry: f64,
    /// The same state as version 1 wrote it (pretty JSON, every entry with
    /// its field names, 32-digit fingerprints): the format before.
    pub version_1_bytes_per_entry: f64,
    /// `LocalState::load` (median of 3).
    pub load_ms: f64,
}

/// What the child process reports on stdout (one JSON line).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildReport {
    pub load_ms: f64,
    pub fetch_ms: f64,
    pub plan_ms: f64,
    /// Fetch + plan.
    pub wall_ms: f64,
    /// CPU of fetch + plan.
    pub cpu_ms: f64,
    /// CPU of the whole process (start-up and load included).
    pub process_cpu_ms: f64,
    /// VmHWM at the end: the whole process's peak.
    pub peak_rss_mb: f64,
    /// (RSS, peak RSS) in MiB after load, after fetch and after plan: where
    /// the memory goes.
    pub rss_after_load_mb: (f64, f64),
    pub rss_after_fetch_mb: (f64, f64),
    pub rss_after_plan_mb: (f64, f64),
    pub requests_sent: u64,
    pub changes: usize,
}

impl ChildReport {
    pub fn into_phase(self, served: Requests) -> Phase {
        let cost = Cost {
            wall: Duration::from_secs_f64(self.wall_ms / 1000.0),
            cpu: Duration::from_secs_f64(self.cpu_ms / 1000.0),
            rss_start_mb: 0.0,
            peak_rss_mb: self.peak_rss_mb,
            requests: Requests {
                served: served.served,
                sent: self.requests_sent,
                writes: served.writes,
            },
        };
        let mut phase = Phase::new(
            "noop_plan_isolated",
            "no-op plan, own process (load + fetch + plan)",
            cost,
        );
        phase.isolated = Some(self);
        phase
    }
}

/// Load + diff, offline: medians of several runs.
#[derive(Debug, Clone, Serialize)]
pub struct LoadAndDiff {
    /// Every run's plan had no changes.
    pub unchanged: bool,
    pub runs: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub load_median_ms: f64,
    /// Of which YAML parsing (`parse_yaml` of every file, measured apart).
    pub parse_median_ms: f64,
    pub plan_median_ms: f64,
    /// Of the last run.
    pub cpu_ms: f64,
    pub peak_rss_mb: f64,
}

/// One command, measured.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub name: &'static str,
    pub title: &'static str,
    pub wall_ms: f64,
    /// User + system CPU of the `monform` process alone.
    pub cpu_ms: f64,
    /// The `monform` process's peak RSS (`VmHWM`); of a repeated step,
    /// the highest of its runs.
    pub peak_rss_mb: f64,
    /// Requests `monform serve` answered during the command.
    pub requests: u64,
    pub modelled_seconds: f64,
    pub exit_code: i32,
    /// A repeated step's wall time of each run, in order; the other
    /// figures are of the median run (`user_path::Runner::repeated`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs_wall_ms: Vec<f64>,
}

/// The steps of one shape at one size.
#[derive(Debug, Clone, Serialize)]
pub struct UserPathReport {
    pub variant: &'static str,
    pub title: &'static str,
    pub shape: Shape,
    pub monform: PathBuf,
    pub steps: Vec<Step>,
}

impl UserPathReport {
    pub fn step(&self, name: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.name == name)
    }
}

/// What the child reports.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReconcileReport {
    pub intervals: usize,
    /// Requests one interval sent: the most and the mean.
    pub max_requests: u64,
    pub mean_requests: f64,
    pub mean_interval_ms: f64,
    /// The lowest RSS of the ten intervals after the first and of the last
    /// ten (a leak raises the floor; see `reconcile::child_reconcile`), and
    /// the peak.
    pub rss_first_mb: f64,
    pub rss_last_mb: f64,
    pub peak_rss_mb: f64,
    /// Intervals that were not in sync (the project is unchanged: none).
    pub not_in_sync: usize,
}
