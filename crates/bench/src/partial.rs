//! A pull request's plan (issue 29 items 3 and 4): 10 checks of one file
//! edited after an apply, the project loaded through the parse cache and
//! planned with `--refresh=changed`, against the in-process emulator.
//! Its rows: the cache's first load (which writes it), a load with one
//! file changed, and the plan (load included); its targets: at most 15
//! requests and under 5 s with those requests at the real service's pace,
//! and the load with one file changed under 1 s, from 100,000 checks.

use std::path::Path;

use monform_api::Client;
use monform_config::Loaded;
use monform_engine::Refresh;
use monform_engine::ops::{self, PlanRequest};

use crate::generate::CHECKS_PER_FILE;
use crate::harness::Sanity;
use crate::measure::{Probe, Requests};
use crate::report::{Phase, SizeReport, Target};

/// Checks a pull request changes.
pub const PR_CHECKS: usize = 10;

/// The size from which the targets apply (the project).
const FROM_CHECKS: usize = 100_000;

fn requests(server: &monform_emulator::Server, client: &Client) -> Requests {
    let metrics = &server.app.metrics;
    Requests {
        served: metrics.total(None),
        sent: client.requests_sent(),
        writes: ["POST", "PUT", "PATCH", "DELETE"]
            .iter()
            .map(|m| metrics.total(Some(m)))
            .sum(),
    }
}

fn load_cached(dir: &Path) -> Loaded {
    crate::harness::open(dir, None, true).loaded
}

/// Renames the first `PR_CHECKS` checks of the first checks file whose
/// names are as generated; returns how many it renamed.
pub(crate) fn edit_checks(dir: &Path) -> usize {
    let path = dir.join("monitors/team-0/checks-000.yaml");
    let Ok(mut text) = std::fs::read_to_string(&path) else {
        return 0;
    };
    let mut renamed = 0;
    for n in 0..CHECKS_PER_FILE {
        if renamed == PR_CHECKS {
            break;
        }
        let plain = format!(" check {n}\n");
        if text.contains(&plain) {
            text = text.replacen(&plain, &format!(" check {n} (pull request)\n"), 1);
            renamed += 1;
        }
    }
    std::fs::write(&path, text).map_or(0, |()| renamed)
}

/// Measures the pull request's plan on an applied project in `dir`.
pub async fn pull_request(
    server: &monform_emulator::Server,
    client: &Client,
    dir: &Path,
    report: &mut SizeReport,
    sanity: &mut Sanity,
) {
    let checks = report.shape.checks;
    eprintln!("[{checks}] parse cache: first load");
    let probe = Probe::start(requests(server, client));
    let first = load_cached(dir);
    report.push(Phase::new(
        "cache_first_load",
        "load, parse cache empty (writes it)",
        probe.finish(requests(server, client)),
    ));
    sanity.expect(
        first.cache.parsed == report.shape.files,
        format!("[{checks}] the first cached load parsed {:?}", first.cache),
    );
    drop(first);
    let renamed = edit_checks(dir);
    sanity.expect(renamed == PR_CHECKS, format!("[{checks}] renamed {renamed} checks"));
    eprintln!("[{checks}] parse cache: one file changed");
    let probe = Probe::start(requests(server, client));
    let loaded = load_cached(dir);
    report.push(Phase::new(
        "cache_one_file_load",
        "load, one file changed (parse cache)",
        probe.finish(requests(server, client)),
    ));
    sanity.expect(
        loaded.cache.parsed == 1,
        format!("[{checks}] the load after one edit parsed {:?}", loaded.cache),
    );
    drop(loaded);

    eprintln!("[{checks}] pull request plan (--refresh=changed)");
    let probe = Probe::start(requests(server, client));
    let opened = crate::harness::open(dir, Some(client), true);
    let session = opened.session().expect("opened with the bench's client");
    let request = PlanRequest {
        refresh: Refresh::Changed,
        ..PlanRequest::default()
    };
    let planned = ops::plan(&session, &request).await;
    report.push(Phase::new(
        "pr_plan",
        "10 checks changed: plan --refresh=changed (cached load + GETs + plan)",
        probe.finish(requests(server, client)),
    ));
    match planned {
        Ok(planned) => {
            let summary = planned.plan.summary();
            sanity.expect(
                summary.update == PR_CHECKS && summary.create + summary.delete + summary.replace == 0,
                format!("[{checks}] the pull request plan is not {PR_CHECKS} updates: {summary:?}"),
            );
        }
        Err(refusal) => sanity.expect(false, format!("[{checks}] the pull request plan: {refusal}")),
    }
}

/// The targets of issue 29 items 3 and 4.
pub fn targets(size: &SizeReport) -> Vec<Target> {
    let n = size.shape.checks;
    let mut targets = Vec::new();
    if n < FROM_CHECKS {
        return targets;
    }
    if let Some(plan) = size.phase("pr_plan") {
        targets.push(Target {
            checks: n,
            id: "pr_plan_requests",
            description: format!("{PR_CHECKS} of {n} checks changed, plan --refresh=changed: at most 15 requests"),
            measured: plan.requests as f64,
            limit: 15.0,
            unit: "requests",
            pass: plan.requests <= 15,
        });
        let seconds = plan.wall_ms / 1000.0 + plan.modelled_seconds;
        targets.push(Target {
            checks: n,
            id: "pr_plan_seconds",
            description: format!(
                "{PR_CHECKS} of {n} checks changed, plan --refresh=changed: under 5 s, load included, requests at 600 a minute"
            ),
            measured: seconds,
            limit: 5.0,
            unit: "s",
            pass: seconds < 5.0,
        });
    }
    if let Some(load) = size.phase("cache_one_file_load") {
        targets.push(Target {
            checks: n,
            id: "cache_one_file_load",
            description: format!("{n} checks, one file changed: load under 1 s (parse cache)"),
            measured: load.wall_ms / 1000.0,
            limit: 1.0,
            unit: "s",
            pass: load.wall_ms < 1000.0,
        });
    }
    targets
}

/// The hidden `--phase cache-load-times` mode: the load of `dir` without
/// the parse cache (as before it), with it empty, with it warm and after
/// one file changed, as JSON milliseconds (the edit is undone after).
pub fn child_cache_load_times(dir: &Path) {
    let time = |load: &dyn Fn() -> Loaded| {
        // The last load's entries written first, as between two commands.
        monform_config::settle_cache();
        let started = std::time::Instant::now();
        let loaded = load();
        let elapsed = crate::measure::ms(started.elapsed());
        (elapsed, loaded.cache, loaded.desired.len())
    };
    let _ = std::fs::remove_dir_all(dir.join(monform_config::CACHE_DIR));
    let uncached = time(&|| crate::harness::load(dir));
    let first = time(&|| load_cached(dir));
    let warm = time(&|| load_cached(dir));
    let path = dir.join("monitors/team-0/checks-000.yaml");
    let original = std::fs::read_to_string(&path).expect("the first checks file");
    let renamed = edit_checks(dir);
    let one_file = time(&|| load_cached(dir));
    std::fs::write(&path, original).expect("the edit undone");
    let report = serde_json::json!({
        "resources": uncached.2,
        "uncached_ms": uncached.0,
        "cache_empty_ms": first.0,
        "cache_warm_ms": warm.0,
        "one_file_changed_ms": one_file.0,
        "one_file_changed": { "checks_renamed": renamed, "hits": one_file.1.hits, "parsed": one_file.1.parsed },
    });
    println!("{report}");
}
