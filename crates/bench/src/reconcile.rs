//! `monform reconcile` intervals (issue 30): in a fresh process, N
//! intervals of the reconciler over an applied, unchanged project: each
//! must cost no more requests than a no-op plan, and memory must not grow
//! from one interval to the next.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use monform_engine::Plan;
use monform_engine::ops::Opened;
use monform_reconcile::{Context, Host, Log, LogFormat, Metrics, Outcome, Settings, Unloaded};

use crate::harness::{ENV_ACCOUNT, ENV_KEY, ENV_URL, Sanity, client_for, open};
use crate::measure::round1;
use crate::measure::{peak_rss_mb, rss_mb};
use crate::report::ReconcileReport;

struct BenchHost {
    dir: PathBuf,
}

impl Host for BenchHost {
    fn open(&self) -> Result<Opened, Unloaded> {
        Ok(open(&self.dir, None, false))
    }

    fn markdown(&self, _plan: &Plan) -> String {
        String::new()
    }
}

/// The hidden `--phase reconcile` mode: `intervals` intervals over `dir`.
pub fn child_reconcile(dir: PathBuf, intervals: usize) {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let client = client_for(&var(ENV_URL), &var(ENV_KEY), &var(ENV_ACCOUNT));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let host = BenchHost { dir: dir.clone() };
    let opened = open(&dir, Some(&client), false);
    let project = &opened.project;
    let settings = Settings {
        dir: dir.clone(),
        ..Settings::default()
    };
    let ctx = Context {
        host: &host,
        opened: &opened,
        settings: &settings,
        metrics: Arc::new(Metrics::default()),
        log: Log {
            format: LogFormat::Json,
        },
        events: monform_reconcile::events::Events::new(None),
        http: reqwest_client(),
        stop: Arc::new(AtomicBool::new(false)),
        file_memory: Box::new(monform_reconcile::report::FileMemory::new(&dir, &project.name)),
        interval: std::sync::Mutex::new(Duration::from_secs(1)),
        sweep: Default::default(),
    };
    let mut leadership = monform_reconcile::leader::try_local(&dir, &project.name)
        .expect("the lock file")
        .expect("no other reconciler");
    let mut memory = Default::default();
    let (mut max_requests, mut total_requests, mut not_in_sync) = (0, 0, 0);
    // RSS after each interval: a leak raises the floor, while the
    // allocator's transient peaks move single readings by tens of MB (one
    // run read 21 MB of "growth" between intervals 1 and 100, the next
    // -0.4 MB). So growth is the lowest of the last ten readings minus the
    // lowest of the ten after the first interval (which warms caches).
    let mut rss = Vec::with_capacity(intervals);
    let started = Instant::now();
    for i in 0..intervals {
        let before = client.requests_sent();
        let outcome = runtime.block_on(monform_reconcile::interval::run(&ctx, &mut leadership, &mut memory));
        let sent = client.requests_sent() - before;
        max_requests = max_requests.max(sent);
        total_requests += sent;
        if outcome != Outcome::InSync {
            not_in_sync += 1;
        }
        if i > 0 {
            rss.push(rss_mb());
        }
    }
    let floor = |readings: &[f64]| readings.iter().copied().fold(f64::INFINITY, f64::min);
    let window = rss.len().min(10);
    let (rss_first_mb, rss_last_mb) = if window == 0 {
        (round1(rss_mb()), round1(rss_mb()))
    } else {
        (round1(floor(&rss[..window])), round1(floor(&rss[rss.len() - window..])))
    };
    let report = ReconcileReport {
        intervals,
        max_requests,
        mean_requests: total_requests as f64 / intervals.max(1) as f64,
        mean_interval_ms: started.elapsed().as_secs_f64() * 1000.0 / intervals.max(1) as f64,
        rss_first_mb,
        rss_last_mb,
        peak_rss_mb: round1(peak_rss_mb()),
        not_in_sync,
    };
    println!("{}", serde_json::to_string(&report).expect("a report is JSON"));
}

fn reqwest_client() -> monform_reconcile::deliver::HttpClient {
    monform_http::client().build().expect("an HTTP client")
}

/// Runs `--phase reconcile` in a child process against `server`.
pub async fn run_child(server: &monform_emulator::Server, dir: &std::path::Path, intervals: usize) -> ReconcileReport {
    let exe = std::env::current_exe().expect("own executable");
    let output = tokio::process::Command::new(exe)
        .args(["--phase", "reconcile", "--intervals", &intervals.to_string(), "--dir"])
        .arg(dir)
        .env(ENV_URL, server.url())
        .env(ENV_KEY, &server.api_key)
        .env(ENV_ACCOUNT, &server.account_id)
        .stderr(std::process::Stdio::inherit())
        .output()
        .await
        .expect("the child process runs");
    assert!(output.status.success(), "the reconcile child failed: {}", output.status);
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("the child's report `{text}`: {e}"))
}

/// Sanity: an unchanged project stays in sync, and an interval costs what
/// the no-op plan did (`noop_requests`, sent by its own process).
pub fn judge(checks: usize, report: &ReconcileReport, noop_requests: u64, sanity: &mut Sanity) {
    eprintln!(
        "[{checks}] reconcile: {} intervals, {} requests at most ({:.1} mean; no-op plan {noop_requests}), {:.0} ms mean, RSS {} -> {} MB (peak {})",
        report.intervals,
        report.max_requests,
        report.mean_requests,
        report.mean_interval_ms,
        report.rss_first_mb,
        report.rss_last_mb,
        report.peak_rss_mb
    );
    sanity.expect(
        report.not_in_sync == 0,
        format!(
            "[{checks}] {} reconcile intervals of an unchanged project were not in sync",
            report.not_in_sync
        ),
    );
    sanity.expect(
        report.max_requests <= noop_requests,
        format!(
            "[{checks}] a reconcile interval sent {} requests, the no-op plan {noop_requests}",
            report.max_requests
        ),
    );
}
