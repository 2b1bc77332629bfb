//! Load + diff without network, and the hidden phases for comparing and
//! profiling builds of the loader (`--phase load-times`, `--phase load-diff`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use monform_engine::ops::Planned;
use monform_engine::stages::PlanOptions;
use monform_engine::{Actual, LocalState, StateBackend};

use crate::generate::PROJECT;
use crate::harness::{Bench, client_for, fetch_and_plan, load, open};
use crate::measure::Cost;
use crate::measure::{median, ms};
use crate::report::LoadAndDiff;

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
    let opened = open(&dir, Some(&bench.client), false);
    let Planned { actual, .. } = runtime.block_on(fetch_and_plan(&opened));
    drop(opened);
    let offline = load_and_diff(&bench, &dir, &actual, runs);
    println!("{}", serde_json::to_string(&offline).expect("a report is JSON"));
}

/// Load + plan with an already-fetched `Actual`, `runs` times.
pub fn load_and_diff(bench: &Bench, dir: &Path, actual: &Actual, runs: usize) -> LoadAndDiff {
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
        let plan = monform_engine::stages::plan(PROJECT, &loaded.desired, actual, &state, &PlanOptions::default());
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
