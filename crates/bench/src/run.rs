//! The phases of one size, in one process against one in-process emulator
//! (file-backed SQLite, rate limit off), plus the no-op plan again in a
//! child process for its own peak RSS (`child.rs`) and load + diff without
//! network (`offline.rs`).

use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use monform_api::{Client, ClientConfig, Secret};
use monform_config::{Loaded, Project};
use monform_engine::ops::{self, ApplyRequest, PlanRequest, Planned, Session};
use monform_engine::{Actual, ApplyOptions, Event, LocalState, Plan, StateBackend, Summary};
use serde::Serialize;

use crate::generate::{PROJECT, Shape, generate};
use crate::measure::{Cost, Probe, Requests};
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

pub(crate) struct Bench {
    pub(crate) server: monform_emulator::Server,
    pub(crate) client: Client,
}

impl Bench {
    pub(crate) fn requests(&self) -> Requests {
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

    pub(crate) fn probe(&self) -> Probe {
        Probe::start(self.requests())
    }

    pub(crate) fn finish(&self, probe: Probe) -> Cost {
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
pub(crate) async fn fetch_and_plan(bench: &Bench, dir: &Path, loaded: &Loaded) -> Planned {
    let project = project_of(loaded);
    let backend = LocalState::new(dir);
    ops::plan(&session(bench, &project, loaded, &backend), &PlanRequest::default())
        .await
        .expect("the plan is made")
}

pub(crate) fn project_of(loaded: &Loaded) -> Project {
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
    let mut loaded = load(dir);
    report.push(Phase::new(
        "load",
        "load (files → desired, offline)",
        bench.finish(probe),
    ));

    // Ten Rego policies over the files (issue 32), as `validate` runs them.
    eprintln!("[{checks}] policies");
    crate::policies::write(dir);
    let probe = bench.probe();
    let figures = crate::policies::measure(dir, &mut loaded);
    report.push(Phase::new(
        "policies",
        "10 Rego policies over the files (input + evaluation)",
        bench.finish(probe),
    ));
    crate::policies::remove(dir);
    sanity.expect(
        figures.findings > 0,
        format!("[{checks}] the policies found nothing in the generated project"),
    );
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
    let child = crate::child::run_child(&bench, dir).await;
    let served = bench.requests() - before;
    if checks <= RECONCILE_MAX_CHECKS {
        eprintln!("[{checks}] {RECONCILE_INTERVALS} reconcile intervals, isolated process");
        let figures = crate::reconcile::run_child(&bench.server, dir, RECONCILE_INTERVALS).await;
        crate::reconcile::judge(checks, &figures, child.requests_sent, sanity);
        report.reconcile = Some(figures);
    }
    report.noop_isolated = Some(child.into_phase(served));

    // A list while writers run (issue 28): the store's fair lock.
    eprintln!(
        "[{checks}] a list request while {} writers run",
        crate::contention::WRITERS
    );
    let writer = client_for(&bench.server.url(), &bench.server.api_key, &bench.server.account_id);
    let contention = crate::contention::measure(&bench.client, &writer).await;
    sanity.expect(
        contention.errors == 0,
        format!(
            "[{checks}] {} requests failed while measuring a list under load",
            contention.errors
        ),
    );
    report.list_under_load = Some(contention);

    // Load + diff without network, against the Actual fetched above.
    eprintln!("[{checks}] load + diff, offline ({runs} runs)");
    let offline = crate::offline::load_and_diff(&bench, dir, &actual, runs);
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
    crate::partial::pull_request(&bench.server, &bench.client, dir, &mut report, sanity).await;

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

pub(crate) fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub(crate) fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}
