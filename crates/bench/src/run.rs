//! The phases of one size, in one process against one in-process emulator
//! (file-backed SQLite, rate limit off), plus the no-op plan again in a
//! child process for its own peak RSS.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use monform_api::{Client, ClientConfig, Secret};
use monform_config::{Loaded, Project};
use monform_engine::ops::{self, ApplyRequest, PlanRequest, Planned, Session};
use monform_engine::{Actual, ApplyOptions, Event, LocalState, Plan, PlanOptions, StateBackend, Summary};
use serde::{Deserialize, Serialize};

use crate::generate::{PROJECT, Shape, generate};
use crate::measure::{Cost, Probe, Requests, cpu_time, peak_rss_mb, rss_mb};
use crate::report::{Phase, SizeReport};

/// Requests a Terraform-style refresh has in flight at once
/// (`terraform -parallelism` defaults to 10).
pub const BASELINE_PARALLELISM: usize = 10;

/// The hidden `--phase noop-plan` mode's environment: where the parent's
/// emulator is and its key.
/// Reconcile intervals measured per size, up to this many checks.
const RECONCILE_INTERVALS: usize = 100;
const RECONCILE_MAX_CHECKS: usize = 10_000;

pub const ENV_URL: &str = "MONFORM_BENCH_URL";
pub const ENV_KEY: &str = "MONFORM_BENCH_API_KEY";
pub const ENV_ACCOUNT: &str = "MONFORM_BENCH_ACCOUNT";

fn no_env(_: &str) -> Option<String> {
    None
}

pub(crate) fn client_for(url: &str, key: &str, account: &str) -> Client {
    let mut config = ClientConfig::new(url, Secret::new(key));
    config.rate_limit = None;
    config.account_id = Some(account.to_owned());
    Client::new(config).expect("a valid client configuration")
}

/// Loads the project; a generated project must load without diagnostics.
pub(crate) fn load(dir: &Path) -> Loaded {
    let loaded = monform_config::load(dir, &no_env);
    if !loaded.is_ok() {
        for diagnostic in loaded.diagnostics.iter().take(10) {
            eprintln!(
                "{}: {} [{}]",
                diagnostic.location(&loaded.sources).unwrap_or_default(),
                diagnostic.message,
                diagnostic.code
            );
        }
        panic!("the generated project has {} diagnostics", loaded.diagnostics.len());
    }
    loaded
}

struct Bench {
    server: monform_emulator::Server,
    client: Client,
}

impl Bench {
    fn requests(&self) -> Requests {
        let metrics = &self.server.app.metrics;
        Requests {
            served: metrics.total(None),
            sent: self.client.requests_sent(),
            writes: ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .map(|m| metrics.total(Some(m)))
                .sum(),
        }
    }

    fn probe(&self) -> Probe {
        Probe::start(self.requests())
    }

    fn finish(&self, probe: Probe) -> Cost {
        probe.finish(self.requests())
    }
}

/// Problems that make the figures meaningless (an apply that failed, a
/// no-op plan with changes); reported, and the run fails.
#[derive(Default)]
pub struct Sanity(pub Vec<String>);

impl Sanity {
    pub(crate) fn expect(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            let what = what.into();
            eprintln!("warning: {what}");
            self.0.push(what);
        }
    }
}

fn describe_changes(plan: &Plan, limit: usize) -> String {
    plan.changes
        .iter()
        .filter(|c| c.action != monform_engine::Action::Noop)
        .take(limit)
        .map(|c| {
            let fields: Vec<&str> = c.fields.iter().map(|f| f.path.as_str()).take(6).collect();
            format!(
                "{:?} {} ({}): {}",
                c.action,
                c.address,
                c.reason.text(),
                fields.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// Applies what the files say, as `monform apply --auto-approve` does:
/// the engine's operations (lock, plan, guards, apply, verification).
async fn apply(bench: &Bench, dir: &Path, loaded: &Loaded) -> ops::Applied {
    let project = project_of(loaded);
    let backend = LocalState::new(dir);
    let session = session(bench, &project, loaded, &backend);
    execute(prepare(&session).await).await
}

/// The lock, the plan and its guards, as `monform apply` takes them.
async fn prepare<'s>(session: &'s Session<'s>) -> ops::Ready<'s> {
    let request = ApplyRequest {
        command: "monform-bench".into(),
        ..Default::default()
    };
    ops::prepare_apply(session, request)
        .await
        .expect("the plan can be applied")
}

/// The changes of a prepared plan and their verification.
async fn execute(ready: ops::Ready<'_>) -> ops::Applied {
    let on_event = |_: Event| {};
    ops::execute(ready, &ApplyOptions::default(), &on_event)
        .await
        .expect("the state can be written")
}

/// The session of the bench's project against its emulator.
fn session<'a>(bench: &'a Bench, project: &'a Project, loaded: &'a Loaded, backend: &'a LocalState) -> Session<'a> {
    Session {
        project,
        desired: &loaded.desired,
        client: &bench.client,
        backend,
    }
}

/// Plans as `monform plan` does.
async fn fetch_and_plan(bench: &Bench, dir: &Path, loaded: &Loaded) -> Planned {
    let project = project_of(loaded);
    let backend = LocalState::new(dir);
    ops::plan(&session(bench, &project, loaded, &backend), &PlanRequest::default())
        .await
        .expect("the plan is made")
}

fn project_of(loaded: &Loaded) -> Project {
    loaded.project.clone().expect("the project has a monform.toml")
}

fn summary_text(s: &Summary) -> String {
    format!(
        "{} to create, {} to update, {} to replace, {} to delete, {} unchanged",
        s.create, s.update, s.replace, s.delete, s.noop
    )
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

fn state_figures(dir: &Path) -> StateFigures {
    let backend = LocalState::new(dir);
    let bytes = std::fs::metadata(backend.path()).map_or(0, |m| m.len());
    let mut times = Vec::new();
    let mut state = None;
    for _ in 0..3 {
        let started = Instant::now();
        state = Some(backend.load(PROJECT).expect("state loads"));
        times.push(started.elapsed());
    }
    let mut state = state.expect("loaded");
    state.version = 1;
    // Version 1's fingerprints had 16 more digits.
    let pad = |f: &mut String| f.push_str("0123456789abcdef");
    for entry in state.resources.values_mut() {
        pad(&mut entry.applied);
        entry.secrets.values_mut().for_each(pad);
    }
    let version_1 = serde_json::to_string_pretty(&state).expect("a state is JSON").len();
    let entries = state.resources.len().max(1);
    StateFigures {
        entries: state.resources.len(),
        bytes,
        bytes_per_entry: round1(bytes as f64 / entries as f64),
        version_1_bytes_per_entry: round1(version_1 as f64 / entries as f64),
        load_ms: ms(median(&mut times)),
    }
}

/// Every phase for `checks` checks; the per-object-GET baseline only up to
/// `baseline_max` checks (it takes one request per object).
/// With `keep`, the project and the emulator's database are written to
/// `keep/<checks>/` (which must not exist yet) and left there.
pub async fn run_size(
    checks: usize,
    runs: usize,
    baseline_max: usize,
    keep: Option<&Path>,
    sanity: &mut Sanity,
) -> SizeReport {
    let shape = Shape::new(checks);
    let temporary = tempfile::tempdir().expect("temporary directory");
    let base = match keep {
        Some(keep) => {
            let base = keep.join(checks.to_string());
            assert!(
                !base.exists(),
                "{} exists already: --keep needs a fresh folder",
                base.display()
            );
            base
        }
        None => temporary.path().to_owned(),
    };
    let project_dir = base.join("project");
    let db = base.join("emulator.db");
    std::fs::create_dir_all(&project_dir).expect("project folder");
    let dir = project_dir.as_path();
    eprintln!(
        "[{checks}] generating {} resources in {} files",
        shape.resources(),
        shape.files
    );
    let bytes = generate(dir, &shape, 0).expect("project written");

    let server = monform_emulator::start_local(monform_emulator::Config {
        db: Some(db),
        rate_limit: None,
        ..Default::default()
    })
    .await
    .expect("emulator starts");
    let client = client_for(&server.url(), &server.api_key, &server.account_id);
    let bench = Bench { server, client };
    let mut report = SizeReport::new(shape, bytes);

    // Load (no network).
    eprintln!("[{checks}] load");
    let probe = bench.probe();
    let loaded = load(dir);
    report.push(Phase::new(
        "load",
        "load (files → desired, offline)",
        bench.finish(probe),
    ));
    sanity.expect(
        loaded.desired.len() == shape.resources(),
        format!(
            "[{checks}] loaded {} resources, expected {}",
            loaded.desired.len(),
            shape.resources()
        ),
    );

    // Cold apply: fetch + plan + apply from an empty account and state.
    eprintln!("[{checks}] cold apply");
    let probe = bench.probe();
    let applied = apply(&bench, dir, &loaded).await;
    let cost = bench.finish(probe);
    report.push(Phase::new(
        "cold_apply",
        "cold apply (fetch + plan + apply + verify)",
        cost,
    ));
    let done = &applied.report;
    sanity.expect(
        applied.is_complete() && done.done.len() == shape.resources(),
        format!(
            "[{checks}] cold apply: {} done, {} failed (first: {:?}), {} skipped, verified: {:?}",
            done.done.len(),
            done.failed.len(),
            done.failed.first(),
            done.skipped.len(),
            applied
                .verification
                .as_ref()
                .map(|v| v.as_ref().map(|v| v.failures.len()))
        ),
    );
    drop(applied);
    report.state = Some(state_figures(dir));

    // No-op plan: fetch + plan.
    eprintln!("[{checks}] no-op plan");
    let probe = bench.probe();
    let Planned { actual, plan, .. } = fetch_and_plan(&bench, dir, &loaded).await;
    report.push(Phase::new(
        "noop_plan",
        "no-op plan (fetch + plan)",
        bench.finish(probe),
    ));
    let summary = plan.summary();
    sanity.expect(
        !summary.has_changes(),
        format!(
            "[{checks}] the no-op plan has changes: {}\n  {}",
            summary_text(&summary),
            describe_changes(&plan, 10)
        ),
    );
    sanity.expect(
        actual.owned.len() == shape.resources(),
        format!(
            "[{checks}] fetch found {} of {} objects",
            actual.owned.len(),
            shape.resources()
        ),
    );
    drop(plan);

    // The same no-op plan in a fresh process (load + fetch + plan), for a
    // peak RSS that is the plan's alone.
    eprintln!("[{checks}] no-op plan, isolated process");
    let before = bench.requests();
    let child = run_child(&bench, dir).await;
    let served = bench.requests() - before;
    if checks <= RECONCILE_MAX_CHECKS {
        eprintln!("[{checks}] {RECONCILE_INTERVALS} reconcile intervals, isolated process");
        let figures = crate::reconcile::run_child(&bench.server, dir, RECONCILE_INTERVALS).await;
        crate::reconcile::judge(checks, &figures, child.requests_sent, sanity);
        report.reconcile = Some(figures);
    }
    report.noop_isolated = Some(child.into_phase(served));

    // Load + diff without network, against the Actual fetched above.
    eprintln!("[{checks}] load + diff, offline ({runs} runs)");
    let offline = load_and_diff(&bench, dir, &actual, runs);
    sanity.expect(
        offline.unchanged,
        format!("[{checks}] the offline load + diff has changes"),
    );
    report.load_and_diff = Some(offline);

    // Baseline: one GET per managed object.
    if checks <= baseline_max {
        eprintln!("[{checks}] baseline: {} GETs", actual.owned.len());
        let probe = bench.probe();
        let found = refresh(&bench.client, &actual).await;
        report.baseline = Some(Phase::new(
            "baseline_refresh",
            "baseline: refresh, one GET per object",
            bench.finish(probe),
        ));
        sanity.expect(
            found == actual.owned.len(),
            format!(
                "[{checks}] the baseline found {found} of {} objects",
                actual.owned.len()
            ),
        );
    }
    drop((actual, loaded));

    // 1% of the checks changed: edit the files, reload, plan, apply.
    generate(dir, &shape, 1).expect("project edited");
    let started = Instant::now();
    let loaded = load(dir);
    report.reload_ms = ms(started.elapsed());
    eprintln!("[{checks}] 1% plan");
    let project = project_of(&loaded);
    let backend = LocalState::new(dir);
    let session = session(&bench, &project, &loaded, &backend);
    let probe = bench.probe();
    // As `monform apply`: the lock, the plan and its guards...
    let ready = prepare(&session).await;
    report.push(Phase::new(
        "change_plan",
        "1% changed: plan (fetch + plan)",
        bench.finish(probe),
    ));
    let summary = ready.plan().summary();
    sanity.expect(
        summary.update == shape.changed() && summary.noop + summary.update == shape.resources(),
        format!(
            "[{checks}] the 1% plan is not {} updates: {}\n  {}",
            shape.changed(),
            summary_text(&summary),
            describe_changes(ready.plan(), 10)
        ),
    );
    report.change_summary = Some(summary);
    eprintln!("[{checks}] 1% apply");
    // ...then the changes and their verification, measured apart.
    let probe = bench.probe();
    let applied = execute(ready).await;
    report.push(Phase::new(
        "change_apply",
        "1% changed: apply (changes + verify)",
        bench.finish(probe),
    ));
    sanity.expect(
        applied.is_complete(),
        format!("[{checks}] the 1% apply failed: {:?}", applied.report.failed.first()),
    );
    drop(loaded);

    let Bench { server, .. } = bench;
    let _ = server.shutdown().await;
    drop(temporary);
    report.load_average.1 = crate::report::load_average();
    report
}

/// `client.get` of every managed object, `BASELINE_PARALLELISM` at a time;
/// returns how many were found.
async fn refresh(client: &Client, actual: &Actual) -> usize {
    futures_util::stream::iter(actual.owned.iter())
        .map(|(address, remote)| async move {
            client
                .get(address.kind, &remote.id)
                .await
                .expect("GET succeeds")
                .is_some()
        })
        .buffer_unordered(BASELINE_PARALLELISM)
        .filter(|found| std::future::ready(*found))
        .count()
        .await
}

/// The project's YAML files, read.
fn yaml_texts(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, texts: &mut Vec<String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("readable folder")
            .map(|e| e.expect("folder entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, texts);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                texts.push(std::fs::read_to_string(&path).expect("readable file"));
            }
        }
    }
    let mut texts = Vec::new();
    walk(&dir.join("monitors"), &mut texts);
    texts
}

/// YAML parsing alone (the loader's `parse_yaml`, files already in memory):
/// the share of `load` that is the YAML library's.
fn parse_only(texts: &[String]) -> Duration {
    let started = Instant::now();
    for text in texts {
        drop(monform_config::tree::parse_yaml(0, text).expect("valid YAML"));
    }
    started.elapsed()
}

/// The hidden `--phase load-times` mode: load and parse-only times of `dir`
/// (`runs` each, after a warm-up), as JSON, for comparing builds.
pub fn child_load_times(dir: PathBuf, runs: usize) {
    let texts = yaml_texts(&dir);
    drop(load(&dir));
    let mut loads = Vec::new();
    let mut parses = Vec::new();
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let loaded = load(&dir);
        loads.push(started.elapsed());
        drop(loaded);
        parses.push(parse_only(&texts));
    }
    let summary = |times: &mut Vec<Duration>| {
        let median = ms(median(times));
        serde_json::json!({ "min_ms": ms(times[0]), "median_ms": median })
    };
    let report = serde_json::json!({ "load": summary(&mut loads), "parse": summary(&mut parses) });
    println!("{report}");
}

/// The hidden `--phase load-diff` mode: fetches once from the kept emulator
/// database next to `dir`, then loads and diffs `runs` times, printing each.
pub fn child_load_diff(dir: PathBuf, runs: usize) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let db = dir.parent().expect("a kept project folder").join("emulator.db");
    let server = runtime
        .block_on(monform_emulator::start_local(monform_emulator::Config {
            db: Some(db),
            rate_limit: None,
            ..Default::default()
        }))
        .expect("emulator starts");
    let client = client_for(&server.url(), &server.api_key, &server.account_id);
    let bench = Bench { server, client };
    let loaded = load(&dir);
    let Planned { actual, .. } = runtime.block_on(fetch_and_plan(&bench, &dir, &loaded));
    drop(loaded);
    let offline = load_and_diff(&bench, &dir, &actual, runs);
    println!("{}", serde_json::to_string(&offline).expect("a report is JSON"));
}

/// Load + plan with an already-fetched `Actual`, `runs` times.
fn load_and_diff(bench: &Bench, dir: &Path, actual: &Actual, runs: usize) -> LoadAndDiff {
    let state = LocalState::new(dir).load(PROJECT).expect("state loads");
    let mut total = Vec::new();
    let mut loads = Vec::new();
    let mut plans = Vec::new();
    let mut last = Cost::default();
    let mut unchanged = true;
    let texts = yaml_texts(dir);
    let mut parses = Vec::new();
    for _ in 0..runs.max(1) {
        let probe = bench.probe();
        let started = Instant::now();
        let loaded = load(dir);
        let loaded_at = started.elapsed();
        let plan = monform_engine::plan(PROJECT, &loaded.desired, actual, &state, &PlanOptions::default());
        let cost = bench.finish(probe);
        loads.push(loaded_at);
        plans.push(cost.wall - loaded_at);
        total.push(cost.wall);
        last = cost;
        unchanged &= !plan.summary().has_changes();
        drop((plan, loaded));
        parses.push(parse_only(&texts));
    }
    LoadAndDiff {
        unchanged,
        runs: total.len(),
        median_ms: ms(median(&mut total)),
        min_ms: ms(total[0]),
        max_ms: ms(total[total.len() - 1]),
        load_median_ms: ms(median(&mut loads)),
        parse_median_ms: ms(median(&mut parses)),
        plan_median_ms: ms(median(&mut plans)),
        cpu_ms: ms(last.cpu),
        peak_rss_mb: last.peak_rss_mb,
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

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub(crate) fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

// ---- the isolated no-op plan ----

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
    fn into_phase(self, served: Requests) -> Phase {
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

async fn run_child(bench: &Bench, dir: &Path) -> ChildReport {
    let exe = std::env::current_exe().expect("own executable");
    let output = tokio::process::Command::new(exe)
        .args(["--phase", "noop-plan", "--dir"])
        .arg(dir)
        .env(ENV_URL, bench.server.url())
        .env(ENV_KEY, &bench.server.api_key)
        .env(ENV_ACCOUNT, &bench.server.account_id)
        .stderr(std::process::Stdio::inherit())
        .output()
        .await
        .expect("the child process runs");
    assert!(
        output.status.success(),
        "the no-op plan child failed: {}",
        output.status
    );
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("the child's report `{text}`: {e}"))
}

/// The hidden `--phase noop-plan` mode: load + fetch + plan of `dir`
/// against the emulator named in the environment; prints a `ChildReport`.
pub fn child_noop_plan(dir: PathBuf) {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let client = client_for(&var(ENV_URL), &var(ENV_KEY), &var(ENV_ACCOUNT));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let started = Instant::now();
    let loaded = load(&dir);
    let load_ms = ms(started.elapsed());
    let memory = || (round1(rss_mb()), round1(peak_rss_mb()));
    let rss_after_load_mb = memory();
    let project = project_of(&loaded);
    let backend = LocalState::new(&dir);
    let session = Session {
        project: &project,
        desired: &loaded.desired,
        client: &client,
        backend: &backend,
    };
    let cpu = cpu_time();
    let started = Instant::now();
    // As `monform plan`: the engine's plan operation.
    let Planned {
        plan,
        fetched_in: fetch,
        ..
    } = runtime
        .block_on(ops::plan(&session, &PlanRequest::default()))
        .expect("the plan is made");
    let wall = started.elapsed();
    // One operation now fetches and plans: this is after both.
    let rss_after_fetch_mb = memory();
    let rss_after_plan_mb = memory();
    let report = ChildReport {
        load_ms,
        fetch_ms: ms(fetch),
        plan_ms: ms(wall - fetch),
        wall_ms: ms(wall),
        cpu_ms: ms(cpu_time().saturating_sub(cpu)),
        process_cpu_ms: ms(cpu_time()),
        peak_rss_mb: peak_rss_mb(),
        rss_after_load_mb,
        rss_after_fetch_mb,
        rss_after_plan_mb,
        requests_sent: client.requests_sent(),
        changes: plan
            .changes
            .iter()
            .filter(|c| c.action != monform_engine::Action::Noop)
            .count(),
    };
    println!("{}", serde_json::to_string(&report).expect("a report is JSON"));
}
