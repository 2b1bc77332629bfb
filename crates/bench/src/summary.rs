//! The figures of every size, summed up: the targets as PASS/FAIL lines
//! (issue 6 item 4 up to 10,000 checks, issue 18 from 100,000, the pull
//! request's and the user's path's), `report.json` and the Markdown table.

use serde_json::{Value, json};

use crate::report::{LARGE, Phase, RATE_LIMIT_REQUESTS, RATE_LIMIT_WINDOW_S, SizeReport, Target, int, num};

/// Issue 6's targets are for projects up to this size; issue 18's from
/// `LARGE` on.
const ISSUE_6_MAX: usize = 10_000;

/// 1 GB, in the MiB the RSS figures are given in.
const ONE_GB_IN_MIB: f64 = 1e9 / 1_048_576.0;

pub fn targets(size: &SizeReport) -> Vec<Target> {
    let n = size.shape.checks;
    let mut targets = Vec::new();
    let mut add = |id, description: String, measured: f64, limit: f64, unit, pass: bool| {
        targets.push(Target {
            checks: n,
            id,
            description,
            measured,
            limit,
            unit,
            pass,
        });
    };
    if let Some(policies) = size.phase("policies") {
        add(
            "policies",
            format!("10 Rego policies over {n} checks: under 2 s (input and evaluation)"),
            policies.wall_ms,
            2_000.0,
            "ms",
            policies.wall_ms < 2_000.0,
        );
    }
    if let Some(list) = &size.list_under_load {
        add(
            "list_p99_under_load",
            format!(
                "a list request of {n} checks while {} writers run: p99 under {} ms",
                list.writers,
                crate::contention::P99_TARGET_MS
            ),
            list.p99_ms,
            crate::contention::P99_TARGET_MS,
            "ms",
            list.p99_ms < crate::contention::P99_TARGET_MS,
        );
    }
    if let Some(reconcile) = &size.reconcile {
        add(
            "reconcile_interval_requests",
            format!("a reconcile interval of {n} unchanged checks: at most 110 requests (a no-op plan's)"),
            reconcile.max_requests as f64,
            110.0,
            "requests",
            reconcile.max_requests <= 110,
        );
        add(
            "reconcile_rss",
            format!(
                "{} reconcile intervals of {n} checks: under 200 MB peak RSS",
                reconcile.intervals
            ),
            reconcile.peak_rss_mb,
            200.0,
            "MB",
            reconcile.peak_rss_mb < 200.0,
        );
        let growth = reconcile.rss_last_mb - reconcile.rss_first_mb;
        add(
            "reconcile_rss_growth",
            format!(
                "RSS growth (lowest of the last ten vs of intervals 2-11) over {} reconcile intervals: under 10 MB",
                reconcile.intervals
            ),
            growth,
            10.0,
            "MB",
            growth < 10.0,
        );
    }
    if n <= ISSUE_6_MAX {
        if let Some(noop) = size.phase("noop_plan") {
            add(
                "noop_plan_requests",
                format!("no-op plan of {n} checks: at most 120 requests"),
                noop.requests as f64,
                120.0,
                "requests",
                noop.requests <= 120,
            );
            add(
                "noop_plan_wall",
                format!("no-op plan of {n} checks: under 2 s wall (fetch + plan, loopback emulator)"),
                noop.wall_ms,
                2000.0,
                "ms",
                noop.wall_ms < 2000.0,
            );
        }
        if let Some(isolated) = &size.noop_isolated {
            add(
                "noop_plan_peak_rss",
                format!("no-op plan of {n} checks: under 200 MB peak RSS (own process: load + fetch + plan)"),
                isolated.peak_rss_mb,
                200.0,
                "MiB",
                isolated.peak_rss_mb < 200.0,
            );
        }
        if let Some(offline) = &size.load_and_diff {
            add(
                "load_and_diff",
                format!(
                    "loading and diffing {n} checks (no network): under 300 ms (median of {})",
                    offline.runs
                ),
                offline.median_ms,
                300.0,
                "ms",
                offline.median_ms < 300.0,
            );
        }
    }
    if n >= LARGE {
        if let Some(cold) = size.phase("cold_apply") {
            add(
                "cold_apply_wall",
                format!(
                    "cold apply of {} objects: under 3 minutes (loopback emulator, no rate limit)",
                    size.shape.resources()
                ),
                cold.wall_ms,
                180_000.0,
                "ms",
                cold.wall_ms < 180_000.0,
            );
        }
        if let Some(child) = size.noop_isolated.as_ref().and_then(|p| p.isolated.as_ref()) {
            let wall = child.load_ms + child.wall_ms;
            add(
                "noop_plan_process_wall",
                format!("no-op plan of {n} checks in its own process (load + fetch + plan): under 10 s wall"),
                wall,
                10_000.0,
                "ms",
                wall < 10_000.0,
            );
            add(
                "noop_plan_process_peak_rss",
                format!("no-op plan of {n} checks in its own process: under 1 GB peak RSS"),
                child.peak_rss_mb,
                ONE_GB_IN_MIB,
                "MiB",
                child.peak_rss_mb < ONE_GB_IN_MIB,
            );
        }
        if let Some(isolated) = &size.noop_isolated {
            add(
                "noop_plan_process_requests",
                format!("no-op plan of {n} checks: at most 1,100 requests"),
                isolated.requests as f64,
                1_100.0,
                "requests",
                isolated.requests <= 1_100,
            );
        }
        if let Some(offline) = &size.load_and_diff {
            add(
                "load_and_diff",
                format!(
                    "loading and diffing {n} checks (no network): under 3 s (median of {})",
                    offline.runs
                ),
                offline.median_ms,
                3_000.0,
                "ms",
                offline.median_ms < 3_000.0,
            );
        }
        if let Some(state) = &size.state {
            add(
                "state_load",
                format!("loading the state of {} objects: under 0.5 s", state.entries),
                state.load_ms,
                500.0,
                "ms",
                state.load_ms < 500.0,
            );
        }
        if let (Some(cold), Some(change)) = (size.phase("cold_apply"), size.phase("change_apply")) {
            // Proportional to the writes: a changed object costs no more
            // than twice what an object of the cold apply cost.
            let per_write = change.wall_ms / size.shape.changed().max(1) as f64;
            let per_object = cold.wall_ms / size.shape.resources() as f64;
            add(
                "change_apply_per_write",
                format!(
                    "1% change apply: time per write at most 2x the cold apply's per object ({} ms per object)",
                    num(per_object)
                ),
                per_write,
                2.0 * per_object,
                "ms",
                per_write <= 2.0 * per_object,
            );
        }
    }
    if let Some(apply) = size.phase("change_apply") {
        let changed = size.shape.changed() as u64;
        add(
            "change_apply_writes",
            format!(
                "1% change apply sends only the {changed} changed objects and reads back no more than those and the private locations (writes; {} requests in all)",
                apply.requests
            ),
            apply.writes as f64,
            changed as f64,
            "writes",
            // Verification reads each changed object back (one GET each,
            // or a listing when that is fewer requests) and lists the
            // private locations, which map checks' slugs to ids.
            apply.writes == changed && apply.requests <= 2 * changed + 1,
        );
    }
    if let Some(ratios) = size.ratios() {
        add(
            "baseline_request_ratio",
            format!("{n} checks: requests of a per-object-GET refresh ÷ no-op plan at least 50x"),
            ratios.requests,
            50.0,
            "x",
            ratios.requests >= 50.0,
        );
    }
    targets.extend(crate::partial::targets(size));
    targets.extend(crate::user_path::targets(size));
    targets
}

pub fn json_report(sizes: &[SizeReport], targets: &[Target], sanity: &[String], rss_reset: bool) -> Value {
    json!({
        "tool": "monform-bench",
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "rate_limit_model": {
            "requests": RATE_LIMIT_REQUESTS,
            "window_s": RATE_LIMIT_WINDOW_S,
            "seconds_per_request": RATE_LIMIT_WINDOW_S / RATE_LIMIT_REQUESTS,
        },
        "baseline_parallelism": crate::run::BASELINE_PARALLELISM,
        "rss_reset": rss_reset,
        "notes": [
            "In-process phases share the process with the emulator: cpu_ms includes the emulator's CPU and rss figures its memory.",
            "peak_rss_mb of an in-process phase is its own peak when rss_reset is true (VmHWM reset through /proc/self/clear_refs before the phase), else the process's monotonic high-water mark.",
            "noop_plan_isolated runs load + fetch + plan in a fresh child process against the same emulator: its peak_rss_mb and cpu_ms are monform's alone.",
            "user_path: the monform binary, one child process per command, against monform serve in its own process (SQLite file, rate limits off); cpu_ms from wait4's rusage of the monform process alone, peak_rss_mb from its VmHWM sampled every 2 ms (ru_maxrss keeps the bench's own high-water mark from before exec).",
            "modelled_seconds = requests x 0.1 s (600 requests / 60 s), bursts aside.",
        ],
        "sizes": sizes.iter().map(SizeReport::to_json).collect::<Vec<_>>(),
        "targets": targets,
        "sanity_problems": sanity,
        "all_pass": targets.iter().all(|t| t.pass) && sanity.is_empty(),
    })
}

fn row(out: &mut String, checks: usize, phase: &Phase) {
    out.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} / {} | {} | {} |\n",
        int(checks as u64),
        phase.title,
        num(phase.wall_ms),
        num(phase.cpu_ms),
        num(phase.peak_rss_mb),
        int(phase.requests),
        int(phase.requests_client),
        int(phase.writes),
        num(phase.modelled_seconds),
    ));
}

pub fn markdown(sizes: &[SizeReport], targets: &[Target], rss_reset: bool) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "## monform-bench ({} build, {} CPUs)\n\n",
        if cfg!(debug_assertions) { "debug" } else { "release" },
        std::thread::available_parallelism().map_or(0, |n| n.get())
    ));
    out.push_str(
        "| checks | phase | wall ms | CPU ms | peak RSS MiB | requests (served / sent) | writes | at 600 req/min, s |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for size in sizes {
        let n = size.shape.checks;
        for phase in &size.phases {
            row(&mut out, n, phase);
            if phase.name == "noop_plan"
                && let Some(isolated) = &size.noop_isolated
            {
                row(&mut out, n, isolated);
            }
        }
        if let Some(offline) = &size.load_and_diff {
            out.push_str(&format!(
                "| {} | load + diff, offline (median of {}; load {} (YAML parsing {}) + plan {}) | {} | {} | {} | 0 / 0 | 0 | 0.0 |\n",
                int(n as u64),
                offline.runs,
                num(offline.load_median_ms),
                num(offline.parse_median_ms),
                num(offline.plan_median_ms),
                num(offline.median_ms),
                num(offline.cpu_ms),
                num(offline.peak_rss_mb),
            ));
        }
        if let Some(baseline) = &size.baseline {
            row(&mut out, n, baseline);
        }
    }
    out.push_str(&format!(
        "\nResources per size: checks + checks/50 groups + snippets, alert channels and variables (max(5, checks/200) each). \
         In-process rows include the emulator's CPU and memory; peak RSS is {}. \
         The \"own process\" row is a fresh `--phase noop-plan` child (load + fetch + plan): its CPU and peak RSS are monform's alone \
         (its wall is fetch + plan; load is listed below).\n",
        if rss_reset {
            "the phase's own peak (VmHWM reset before each phase)"
        } else {
            "the process's monotonic high-water mark"
        }
    ));
    for size in sizes {
        if let Some(list) = &size.list_under_load {
            out.push_str(&format!(
                "\nA list request (`GET /v1/checks?limit=100`, every 20 ms) of {} checks while {} writers create and delete \
                 variables ({} writes): p50 {} ms, p99 {} ms, worst {} ms over {} lists.\n",
                int(size.shape.checks as u64),
                list.writers,
                int(list.writes),
                num(list.p50_ms),
                num(list.p99_ms),
                num(list.max_ms),
                list.lists,
            ));
        }
    }
    out.push_str(&crate::user_path::markdown(sizes));
    out.push_str(
        "\n### No-op plan vs a Terraform-style refresh (one GET per object)\n\n\
         | checks | objects | monform requests | baseline requests | ratio | monform wall ms | baseline wall ms | wall ratio | monform at 600/min, s | baseline at 600/min, s |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for size in sizes {
        if let (Some(noop), Some(baseline), Some(ratios)) = (size.phase("noop_plan"), &size.baseline, size.ratios()) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {:.1}x | {} | {} | {:.1}x | {} | {} |\n",
                int(size.shape.checks as u64),
                int(size.shape.resources() as u64),
                int(noop.requests),
                int(baseline.requests),
                ratios.requests,
                num(noop.wall_ms),
                num(baseline.wall_ms),
                ratios.wall,
                num(noop.modelled_seconds),
                num(baseline.modelled_seconds),
            ));
        }
    }
    for size in sizes {
        if let Some(isolated) = size.noop_isolated.as_ref().and_then(|p| p.isolated.as_ref()) {
            out.push_str(&format!(
                "\nNo-op plan in its own process, {} checks: load {} ms, fetch {} ms, plan {} ms; CPU {} ms (process {} ms); \
                 RSS / peak RSS after load {} / {} MiB, after fetch {} / {} MiB, after plan {} / {} MiB; \
                 {} requests; {} changes. Reload after the 1% edit: {} ms.\n",
                int(size.shape.checks as u64),
                num(isolated.load_ms),
                num(isolated.fetch_ms),
                num(isolated.plan_ms),
                num(isolated.cpu_ms),
                num(isolated.process_cpu_ms),
                num(isolated.rss_after_load_mb.0),
                num(isolated.rss_after_load_mb.1),
                num(isolated.rss_after_fetch_mb.0),
                num(isolated.rss_after_fetch_mb.1),
                num(isolated.rss_after_plan_mb.0),
                num(isolated.rss_after_plan_mb.1),
                int(isolated.requests_sent),
                isolated.changes,
                num(size.reload_ms),
            ));
            out.push_str(&format!(
                "Load average (1/5/15 min) at the start and end of the {} checks: {:?} → {:?}.\n",
                int(size.shape.checks as u64),
                size.load_average.0,
                size.load_average.1
            ));
        }
    }
    let states: Vec<&SizeReport> = sizes.iter().filter(|s| s.state.is_some()).collect();
    if !states.is_empty() {
        out.push_str(
            "\n### State after the cold apply\n\n\
             | checks | entries | state.json bytes | bytes per entry | before (format 1) | load ms |\n\
             |---:|---:|---:|---:|---:|---:|\n",
        );
        for size in states {
            if let Some(state) = &size.state {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    int(size.shape.checks as u64),
                    int(state.entries as u64),
                    int(state.bytes),
                    num(state.bytes_per_entry),
                    num(state.version_1_bytes_per_entry),
                    num(state.load_ms),
                ));
            }
        }
    }
    out.push_str(
        "\n### Targets (issue 6 item 4 up to 10,000 checks, issue 18 from 100,000, issue 29 on the user's path)\n\n",
    );
    for target in targets {
        out.push_str(&format!(
            "{} [{} checks] {}: {} {} (limit {} {})\n",
            if target.pass { "PASS" } else { "FAIL" },
            int(target.checks as u64),
            target.description,
            num(target.measured),
            target.unit,
            num(target.limit),
            target.unit
        ));
    }
    out
}
