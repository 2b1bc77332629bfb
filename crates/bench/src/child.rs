//! The no-op plan again in a fresh child process of the bench itself
//! (`--phase noop-plan`), for a peak RSS and CPU that are the plan's alone.

use std::path::{Path, PathBuf};
use std::time::Instant;

use monform_engine::ops::{self, PlanRequest, Planned};

use crate::harness::{Bench, ENV_ACCOUNT, ENV_KEY, ENV_URL, client_for, open};
use crate::measure::{cpu_time, ms, peak_rss_mb, round1, rss_mb};
use crate::report::ChildReport;

pub async fn run_child(bench: &Bench, dir: &Path) -> ChildReport {
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
    let opened = open(&dir, Some(&client), false);
    let load_ms = ms(started.elapsed());
    let memory = || (round1(rss_mb()), round1(peak_rss_mb()));
    let rss_after_load_mb = memory();
    let session = opened.session().expect("opened with the bench's client");
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
