//! monform's end-to-end benchmark (issue 6, items 1, 2 and 4).
//!
//! For each size (`--checks N`, repeatable; default 1,000, 10,000 and
//! 100,000) it
//! generates a project of N checks of all ten types in groups of 50, with
//! snippets, alert channels and variables, in YAML files of 100 checks;
//! starts the emulator in-process (file-backed SQLite, rate limit off) and
//! measures, in one run: load; cold apply (fetch + plan + apply from
//! empty); no-op plan (fetch + plan), again in a fresh child process for its
//! own peak RSS; the state's bytes per entry and load time; load + diff
//! without network; a Terraform-style refresh (one GET per managed object,
//! up to `--baseline-max` checks) as the baseline; the plan and the apply
//! of 1% of the checks changed in the files.
//!
//! Each phase reports wall time, CPU time, peak RSS, API requests (served by
//! the emulator and sent by the client) and the time the requests would take
//! at the real service's 600 requests / 60 s. Prints a Markdown table and the
//! targets (issue 6 item 4 up to 10,000 checks, issue 18 from 100,000) as
//! PASS/FAIL lines to stdout, writes
//! `target/bench/report.json`, and exits 1 when a target fails in a release
//! build.
//!
//! Beside the sizes, the release binary's own rows: the reconciler within
//! its request share (`share.rs`), the language server (`lsp.rs`), `monform
//! mcp`'s tools (`mcp.rs`) and `monform gate` over 1,000 SLOs, cold and
//! from the reconciler's cache (`slo.rs`; `--slos N`, `--slo-only`).
//!
//! `cargo run --release -p monform-bench -- [--checks N]... [--runs R] [--out FILE]`

mod child;
mod contention;
mod fold;
mod generate;
mod harness;
mod lsp;
mod mcp;
mod measure;
mod offline;
mod partial;
mod policies;
mod reconcile;
mod report;
mod run;
mod share;
mod slo;
mod summary;
mod user_path;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

// As `monform` itself: loading and planning allocate a great deal, from
// both cores; glibc's malloc made a fifth of the time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "monform's end-to-end benchmark: cold apply, no-op plan, 1% change, per-object-GET baseline")]
struct Args {
    /// Number of checks; repeat for several sizes (default: 1000, 10000 and 100000).
    #[arg(long = "checks", value_name = "N")]
    checks: Vec<usize>,
    /// The per-object-GET baseline runs up to this many checks (one request
    /// per object: at 100,000 it takes longer than everything else).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    baseline_max: usize,
    /// Runs of the offline load + diff (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Where to write the JSON report (default: target/bench/report.json).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Keep each size's project and emulator database in DIR/<checks>/
    /// (DIR/<checks> must not exist yet), e.g. for profiling afterwards.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// The `monform` binary of the user's path (default: the one next to
    /// this bench's executable, e.g. target/release/monform).
    #[arg(long, value_name = "PATH")]
    monform: Option<PathBuf>,
    /// Measure only the user's path (the binary against `monform serve`), not the in-process phases.
    #[arg(long, conflicts_with = "no_user_path")]
    user_path_only: bool,
    /// Skip the user's path.
    #[arg(long)]
    no_user_path: bool,
    /// Only the reconciler within its request share (issue 48): `monform
    /// serve` at 600/60 and `monform reconcile` at 25%, the release
    /// binaries, per `--checks` size (the language server skipped).
    #[arg(long, conflicts_with_all = ["user_path_only", "no_user_path"])]
    reconcile_only: bool,
    /// Checks of the language server's project (`monform lsp` over stdio,
    /// in files of 100: open, keystroke, completion, rename, memory); 0
    /// skips it.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    lsp_checks: usize,
    /// Keystrokes measured in the language server's project (p95 reported).
    #[arg(long, value_name = "N", default_value_t = 40)]
    lsp_keystrokes: usize,
    /// Only the language server's measurements (no size, no user's path).
    #[arg(long, conflicts_with = "user_path_only")]
    lsp_only: bool,
    /// Checks of the generated project `monform mcp`'s tools are timed on
    /// (issue 51), besides the quickstart; 0: the quickstart only.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    mcp_checks: usize,
    /// Only `monform mcp`'s tools (no size, no user's path, no language server).
    #[arg(long, conflicts_with_all = ["user_path_only", "lsp_only", "reconcile_only"])]
    mcp_only: bool,
    /// Skip `monform mcp`'s tools.
    #[arg(long, conflicts_with = "mcp_only")]
    no_mcp: bool,
    /// SLOs of the project `monform gate` is timed on (issue 50: cold,
    /// and warm from the reconciler's cache); 0 skips it.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    slos: usize,
    /// Only `monform gate` over `--slos N` SLOs (no size, no user's path,
    /// no language server, no MCP).
    #[arg(long, conflicts_with_all = ["user_path_only", "lsp_only", "reconcile_only", "mcp_only"])]
    slo_only: bool,
    /// Skip folding an account of 1,000 hand-made checks (issue 49).
    #[arg(long)]
    no_fold: bool,
    /// Internal: run one phase in this process: `noop-plan`; `generate` (only
    /// write the project of `--checks N` into `--dir`); `load-times`;
    /// `load-diff` (a `--keep` project and its emulator database).
    #[arg(long, hide = true)]
    phase: Option<String>,
    /// Internal: reconcile intervals of `--phase reconcile`.
    #[arg(long, hide = true, default_value_t = 100)]
    intervals: usize,
    /// Internal: the prepared project of `--phase`.
    #[arg(long, hide = true)]
    dir: Option<PathBuf>,
    /// Internal: `--phase generate` in this many groups (the user's path's
    /// second shape, for profiling it by hand).
    #[arg(long, hide = true, value_name = "N")]
    groups: Option<usize>,
    /// Internal: `--phase generate` without alert channels.
    #[arg(long, hide = true)]
    no_alert_channels: bool,
    /// Internal: `--phase generate` at this revision (1: the 1% change).
    #[arg(long, hide = true, default_value_t = 0)]
    revision: u32,
}

fn default_out() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("bench").join("report.json")
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    if args.reconcile_only {
        args.lsp_checks = 0;
    }
    if args.mcp_only {
        args.lsp_checks = 0;
        args.lsp_only = true;
        args.no_user_path = true;
    }
    if args.slo_only {
        args.lsp_checks = 0;
        args.lsp_only = true;
        args.no_user_path = true;
        args.no_mcp = true;
    }
    if let Some(phase) = args.phase {
        let Some(dir) = args.dir else {
            eprintln!("error: --phase needs --dir");
            return ExitCode::from(2);
        };
        match phase.as_str() {
            "noop-plan" => child::child_noop_plan(dir),
            "reconcile" => reconcile::child_reconcile(dir, args.intervals),
            // For comparing builds of the loader.
            "load-times" => offline::child_load_times(dir, args.runs),
            // The parse cache's loads (issue 29 item 4).
            "cache-load-times" => partial::child_cache_load_times(&dir),
            // For profiling load + diff: `--dir KEEP/<checks>/project` of a `--keep` run.
            "load-diff" => offline::child_load_diff(dir, args.runs),
            // Ten Rego policies over `--checks N` generated checks (issue 32).
            "plan-policies" => policies::child_plan_policies(&dir),
            "policies" => policies::child_policies(&dir, args.checks.first().copied().unwrap_or(100_000)),
            // For profiling the loader alone (`monform validate DIR`).
            "generate" => {
                let checks = args.checks.first().copied().unwrap_or(10_000);
                let shape = match args.groups {
                    Some(groups) => generate::Shape::with_groups(checks, groups, !args.no_alert_channels),
                    None if args.no_alert_channels => {
                        generate::Shape::with_groups(checks, checks.div_ceil(generate::CHECKS_PER_GROUP), false)
                    }
                    None => generate::Shape::new(checks),
                };
                generate::generate(&dir, &shape, args.revision).expect("project written");
            }
            _ => {
                eprintln!("error: unknown phase `{phase}`");
                return ExitCode::from(2);
            }
        }
        return ExitCode::SUCCESS;
    }
    let sizes = if args.checks.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        args.checks
    };
    if sizes.contains(&0) {
        eprintln!("error: --checks must be above 0");
        return ExitCode::from(2);
    }
    let rss_reset = measure::reset_peak_rss();
    if !rss_reset {
        eprintln!("note: /proc/self/clear_refs is not writable: peak RSS is the process's high-water mark");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let monform = if args.no_user_path && args.lsp_checks == 0 && args.no_mcp && args.slos == 0 {
        None
    } else {
        // Absolute: the commands run in the project's folder.
        let given = args.monform.clone().map(|p| std::fs::canonicalize(&p).unwrap_or(p));
        let found = given.or_else(user_path::sibling_binary);
        if found.is_none() {
            eprintln!(
                "note: the user's path is skipped: no monform binary next to this one \
                 (cargo build --release -p monform, or --monform PATH)"
            );
        }
        found
    };
    let mut sanity = harness::Sanity::default();
    // `--reconcile-only`: no size's phases, only the reconciler's rows.
    let (sizes, share_sizes) = if args.reconcile_only {
        (Vec::new(), sizes)
    } else {
        (sizes.clone(), sizes)
    };
    let mut reports = Vec::new();
    for &checks in sizes.iter().filter(|_| !args.lsp_only) {
        let mut report = if args.user_path_only {
            report::SizeReport::new(generate::Shape::new(checks), 0)
        } else {
            runtime.block_on(run::run_size(
                checks,
                args.runs,
                args.baseline_max,
                args.keep.as_deref(),
                &mut sanity,
            ))
        };
        if let Some(monform) = monform.as_ref().filter(|_| !args.no_user_path) {
            for variant in user_path::variants(checks) {
                match user_path::run(monform, &variant, &mut sanity) {
                    Ok(measured) => report.user_path.push(measured),
                    Err(e) => sanity.expect(false, format!("[{checks}, {}] user's path: {e}", variant.name)),
                }
            }
        }
        reports.push(report);
    }
    let mut targets: Vec<report::Target> = reports.iter().flat_map(summary::targets).collect();
    // The reconciler within its share (issue 48): the release binaries.
    if let Some(monform) = monform.as_ref().filter(|_| !args.no_user_path && !args.lsp_only) {
        targets.extend(share::rows(monform, &share_sizes, args.reconcile_only, &mut sanity));
    }
    // The real binary over stdio, as an editor runs it.
    let lsp = match (&monform, args.lsp_checks) {
        (_, 0) => None,
        (None, _) => {
            sanity.expect(
                false,
                "the language server: no monform binary (--monform PATH)".to_owned(),
            );
            None
        }
        (Some(monform), checks) => match lsp::measure(monform, checks, args.lsp_keystrokes.max(1), 20) {
            Ok(measured) => Some(lsp::report(&measured)),
            Err(e) => {
                sanity.expect(false, format!("the language server: {e}"));
                None
            }
        },
    };
    if let Some((_, lsp_targets)) = &lsp {
        targets.extend(lsp_targets.iter().cloned());
    }
    // The MCP server's tools over stdio (issue 51): the release binary.
    if !args.no_mcp && !args.reconcile_only && (args.mcp_only || !args.lsp_only) {
        match &monform {
            Some(monform) => match mcp::measure(monform, args.mcp_checks) {
                Ok(rows) => targets.extend(rows),
                Err(e) => sanity.expect(false, format!("monform mcp: {e}")),
            },
            None => sanity.expect(false, "monform mcp: no monform binary (--monform PATH)".to_owned()),
        }
    }
    // `monform gate` over 1,000 SLOs (issue 50): the release binary.
    if args.slos > 0 && !args.reconcile_only && (args.slo_only || !args.lsp_only) {
        match &monform {
            Some(monform) => match slo::measure(monform, args.slos) {
                Ok(rows) => targets.extend(rows),
                Err(e) => sanity.expect(false, format!("monform gate over SLOs: {e}")),
            },
            None => sanity.expect(
                false,
                "monform gate over SLOs: no monform binary (--monform PATH)".to_owned(),
            ),
        }
    }
    // Folding an account (issue 49 item 2), when sizes were measured.
    let fold_text = (!args.no_fold && !reports.is_empty())
        .then(|| fold::run(&runtime, &mut targets, &mut sanity))
        .flatten();
    print!("{}", summary::markdown(&reports, &targets, rss_reset));
    if let Some((text, _)) = &lsp {
        print!("{text}");
    }
    if let Some(text) = &fold_text {
        print!("{text}");
    }
    for problem in &sanity.0 {
        println!("FAIL sanity: {problem}");
    }
    let json = summary::json_report(&reports, &targets, &sanity.0, rss_reset);
    let out = args.out.unwrap_or_else(default_out);
    let written = out
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&out, serde_json::to_string_pretty(&json).expect("JSON") + "\n"));
    match written {
        Ok(()) => eprintln!("wrote {}", out.display()),
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    let pass = targets.iter().all(|t| t.pass) && sanity.0.is_empty();
    if pass || cfg!(debug_assertions) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
