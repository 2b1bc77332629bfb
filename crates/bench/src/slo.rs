//! `monform gate` at 1,000 SLOs (issue 50 item 5): the release binary
//! against `monform serve`, on a project of `--slos N` SLOs over N / 10
//! URL checks (ten objectives a check, as teams write an availability and
//! a latency objective per endpoint and environment), applied first.
//!
//! - cold: no cache (`--max-age 0`): the gate reads every member's
//!   results (a 7-day window: 28 six-hour listings a check) and computes;
//! - warm: `monform reconcile --once` evaluated every SLO and cached the
//!   verdicts (`.monform/slo-status.json`); the gate loads the files (each
//!   verdict is used only for the definition they hold) and reads that file;
//! - one changed: objective-0's target edited, as a pull request would: the
//!   gate computes that SLO from its check's results, the rest from the cache.
//!
//! Target: warm under 1 s (the figure), with no request to the
//! service; the cold figure and its requests are in the row's words, for
//! comparison, without a target of their own. Set-up runs with the rate
//! limit off (`monform serve --rate-limit off`, `MONFORM_RATE_LIMIT=off`).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use crate::report::Target;
use crate::user_path::{client_of, serve_with, served_counts};

const KEY: &str = "slo-bench-key";
/// SLOs per check.
const PER_CHECK: usize = 10;
/// The warm gate's limit, ms.
const WARM_LIMIT_MS: f64 = 1000.0;

/// Writes a project of `slos` SLOs over `slos / PER_CHECK` checks.
fn generate(dir: &Path, slos: usize) -> std::io::Result<()> {
    let checks = slos.div_ceil(PER_CHECK);
    std::fs::create_dir_all(dir.join("monitors"))?;
    std::fs::write(
        dir.join("monform.toml"),
        "[project]\nname = \"slo-bench\"\n\n[reconcile]\ninterval = \"60s\"\n",
    )?;
    let mut text = String::from("checks:\n");
    for c in 0..checks {
        let _ = write!(
            text,
            "  endpoint-{c}:\n    checkType: URL\n    name: Endpoint {c}\n    frequency: 10\n    \
             locations: [eu-west-1]\n    request: {{ url: \"https://shop.example.com/{c}\" }}\n"
        );
    }
    text.push_str("slos:\n");
    for s in 0..slos {
        let check = s / PER_CHECK;
        // Availability and latency objectives in turn, targets varied.
        let body = if s % 2 == 0 {
            format!("indicator: availability\n    target: {}", 99.0 + (s % 10) as f64 / 10.0)
        } else {
            "indicator: latency\n    threshold: 800\n    target: 95".to_owned()
        };
        let _ = write!(
            text,
            "  objective-{s}:\n    checks: [checks.endpoint-{check}]\n    {body}\n    window: 7d\n"
        );
    }
    std::fs::write(dir.join("monitors").join("slos.yaml"), text)
}

/// Runs `monform ARGS` in `dir` against `url`: its exit code and wall ms.
fn run(monform: &Path, dir: &Path, url: &str, args: &[String]) -> Result<(Option<i32>, f64), String> {
    let started = Instant::now();
    let output = client_of(monform, url, KEY)
        .arg("--dir")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let code = output.status.code();
    // The gate's 1 (a blocking SLO) is an answer; anything else a failure.
    if code == Some(0) || (args.first().is_some_and(|a| a == "gate") && code == Some(1)) {
        Ok((code, ms))
    } else {
        Err(format!(
            "monform {}: {}",
            args.first().map_or("", String::as_str),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The cold and warm gates over `slos` SLOs; their rows.
pub fn measure(monform: &Path, slos: usize) -> Result<Vec<Target>, String> {
    let base = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = base.path().join("project");
    generate(&dir, slos).map_err(|e| format!("cannot write the SLO project: {e}"))?;
    let serve = serve_with(monform, base.path(), KEY, "off")?;
    let url = format!("http://{}", serve.addr);
    eprintln!("[{slos} SLOs] applying {} checks", slos.div_ceil(PER_CHECK));
    run(monform, &dir, &url, &["apply".into(), "--auto-approve".into()])?;
    let mut gate: Vec<String> = vec!["gate".into(), "--slo".into()];
    gate.extend((0..slos).map(|s| format!("slos.objective-{s}")));

    let before = served_counts(serve.addr)?.0;
    let mut cold = gate.clone();
    cold.extend(["--max-age".into(), "0".into()]);
    let (cold_code, cold_ms) = run(monform, &dir, &url, &cold)?;
    let cold_requests = served_counts(serve.addr)?.0.saturating_sub(before);
    eprintln!("[{slos} SLOs] gate, cold: {cold_ms:.0} ms, {cold_requests} requests, exit {cold_code:?}");

    // The reconciler's cache, not the gate's own.
    let _ = std::fs::remove_file(dir.join(monform_engine::ops::SLO_CACHE));
    run(monform, &dir, &url, &["reconcile".into(), "--once".into()])?;
    if !dir.join(monform_engine::ops::SLO_CACHE).exists() {
        return Err("monform reconcile --once wrote no SLO cache".into());
    }
    let before = served_counts(serve.addr)?.0;
    // The median of three warm gates.
    let mut warm = Vec::new();
    let mut warm_code = None;
    for _ in 0..3 {
        let (code, ms) = run(monform, &dir, &url, &gate)?;
        warm_code = code;
        warm.push(ms);
    }
    warm.sort_by(f64::total_cmp);
    let warm_ms = warm[1];
    let warm_requests = served_counts(serve.addr)?.0.saturating_sub(before);
    eprintln!("[{slos} SLOs] gate, warm: {warm_ms:.0} ms, {warm_requests} requests, exit {warm_code:?}");
    if warm_code != cold_code {
        return Err(format!(
            "the cached gate exited {warm_code:?}, the fresh one {cold_code:?}"
        ));
    }
    // A pull request that changes one SLO's target: the gate takes the
    // other verdicts from the cache and computes that one (its check's
    // results), not the reconciler's verdict of the old definition.
    let slos_file = dir.join("monitors").join("slos.yaml");
    let text = std::fs::read_to_string(&slos_file).map_err(|e| e.to_string())?;
    let edited = text.replacen(
        "objective-0:\n    checks: [checks.endpoint-0]\n    indicator: availability\n    target: 99\n",
        "objective-0:\n    checks: [checks.endpoint-0]\n    indicator: availability\n    target: 98\n",
        1,
    );
    if edited == text {
        return Err("the SLO project has no objective-0 at 99% to change".into());
    }
    std::fs::write(&slos_file, edited).map_err(|e| e.to_string())?;
    let before = served_counts(serve.addr)?.0;
    let (_, changed_ms) = run(monform, &dir, &url, &gate)?;
    let changed_requests = served_counts(serve.addr)?.0.saturating_sub(before);
    eprintln!("[{slos} SLOs] gate, one definition changed: {changed_ms:.0} ms, {changed_requests} requests");
    if changed_requests == 0 {
        return Err("the gate used the cached verdict of a changed SLO".into());
    }
    drop(serve);
    let checks = slos.div_ceil(PER_CHECK);
    // One row: the target is the warm gate's; the cold one is shown
    // beside it for comparison.
    Ok(vec![Target {
        checks,
        id: "slo_gate",
        description: format!(
            "monform gate over {slos} SLOs ({checks} checks) with the verdicts monform reconcile cached \
             ({warm_requests} requests over 3 gates; cold, reading every result: {cold_ms:.0} ms, {cold_requests} requests; \
             one SLO's target changed, that one computed: {changed_ms:.0} ms, {changed_requests} requests): under 1 s"
        ),
        measured: warm_ms,
        limit: WARM_LIMIT_MS,
        unit: "ms",
        pass: warm_ms < WARM_LIMIT_MS && warm_requests == 0,
    }])
}
