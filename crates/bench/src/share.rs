//! The reconciler within its request share (issue 48): `monform serve`
//! with its rate limit at 600/60 and `monform reconcile` (`[reconcile]
//! interval = "10s"`, `request-share = "25%"`), the release binaries as
//! their own processes. The project (the bench's shape) is applied with the
//! rate limit off, then the service is started again on its database with
//! it on. Measured: the reconciler's sweep (every object read), its
//! requests a minute at the service, a UI edit's time to its drift event,
//! a CI `plan --refresh=changed` of a 10-check pull request alone and while
//! the reconciler runs (median of three each), and the 429s the service
//! answered anyone. A sweep that would take more than `SWEEP_CAP` is
//! measured in part and its time computed from the share of it read (the
//! row says so).

use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::generate::{Shape, generate};
use crate::harness::Sanity;
use crate::report::Target;
use crate::user_path::{ACCOUNT, Serve, serve_with, served_counts};

/// The share and the budget it is of.
const SHARE: f64 = 0.25;
const LIMIT: f64 = 600.0;
const WINDOW_S: f64 = 60.0;
const INTERVAL_S: f64 = 10.0;
/// Longest a sweep is waited for; past it, computed from the part read.
const SWEEP_CAP: Duration = Duration::from_secs(150);
/// The CI plan alone and contended: runs of each (the median is kept).
const CI_RUNS: usize = 3;

/// What was measured at one size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ShareReport {
    pub checks: usize,
    /// Seconds of a sweep, and whether it was measured whole (else
    /// computed from `progress` read in `partial_s`).
    pub sweep_s: f64,
    pub sweep_whole: bool,
    pub partial_s: f64,
    pub progress: f64,
    /// Requests of the sweep (measured whole) or of a whole read (as the
    /// reconciler last saw the listings).
    pub sweep_requests: f64,
    /// The reconciler's requests a minute at the service while alone,
    /// its first burst left out, and over how long.
    pub per_minute: f64,
    pub alone_s: f64,
    /// A UI edit's time to its drift event (10,000 checks and less).
    pub ui_edit_s: Option<f64>,
    /// The CI plan's wall time alone and while the reconciler runs, ms.
    pub ci_alone_ms: Option<f64>,
    pub ci_contended_ms: Option<f64>,
    /// 429s the service answered, to anyone, while its limit was on.
    pub rejected: u64,
}

/// Copies `from` into `to` (a project and its local state), the parse
/// cache and the reconciler's files left out.
fn copy_project(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text == "cache" || text.starts_with("reconcile.") || text == "events.jsonl" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_project(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        // SAFETY: a signal to the child this bench started.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

fn monform_in(monform: &Path, dir: &Path, serve: &Serve, key: &str, log: &Path) -> Result<Command, String> {
    let mut command = Command::new(monform);
    command
        .current_dir(dir)
        .env("MONFORM_API_URL", format!("http://{}", serve.addr))
        .env("MONFORM_API_KEY", key)
        .env("MONFORM_ACCOUNT_ID", ACCOUNT)
        .env("NO_COLOR", "1")
        .env_remove("MONFORM_ENV")
        .env_remove("MONFORM_RATE_LIMIT")
        .stdin(Stdio::null())
        .stdout(File::create(log.with_extension("out")).map_err(|e| e.to_string())?)
        .stderr(File::create(log).map_err(|e| e.to_string())?);
    Ok(command)
}

/// The reconciler's `/metrics` sample `name`.
fn metric(port: u16, name: &str) -> Option<f64> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// The CI plan of `ci` (10 checks edited): wall ms of the median of
/// [`CI_RUNS`] runs; it must exit 2.
fn ci_plan(monform: &Path, ci: &Path, serve: &Serve, key: &str, logs: &Path) -> Result<f64, String> {
    let mut walls = Vec::new();
    for run in 0..CI_RUNS {
        let log = logs.join(format!("ci-{run}.log"));
        let started = Instant::now();
        let status = monform_in(monform, ci, serve, key, &log)?
            .args(["plan", "--refresh=changed", "--detailed-exitcode"])
            .status()
            .map_err(|e| e.to_string())?;
        walls.push(started.elapsed().as_secs_f64() * 1000.0);
        if status.code() != Some(2) {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!("the CI plan exited {status} (expected 2): {tail}"));
        }
    }
    walls.sort_by(f64::total_cmp);
    Ok((walls[walls.len() / 2] * 10.0).round() / 10.0)
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Result<Duration, String> {
    let started = Instant::now();
    while !done() {
        if started.elapsed() > limit {
            return Err(format!("{what}: not within {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(started.elapsed())
}

/// A person's edit in the UI: the name of the first check listed, as
/// another client of the key (the bench's own HTTP).
fn ui_edit(serve: &Serve, key: &str) -> Result<(), String> {
    use std::io::{Read, Write};
    let request = |method: &str, path: &str, body: &str| -> Result<String, String> {
        let mut stream = std::net::TcpStream::connect(serve.addr).map_err(|e| e.to_string())?;
        let head = format!(
            "{method} {path} HTTP/1.0\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\nX-Service-Account: {ACCOUNT}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
        let mut text = String::new();
        stream.read_to_string(&mut text).map_err(|e| e.to_string())?;
        if !text.starts_with("HTTP/1.0 2") && !text.starts_with("HTTP/1.1 2") {
            return Err(format!(
                "{method} {path}: {}",
                text.lines().next().unwrap_or("no answer")
            ));
        }
        Ok(text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default())
    };
    let listed: serde_json::Value = serde_json::from_str(&request("GET", "/v1/checks?limit=100&page=1", "")?)
        .map_err(|e| format!("the checks: {e}"))?;
    // The first check listed, whatever its type: updated at its type's path.
    let check = listed
        .as_array()
        .and_then(|checks| checks.first())
        .ok_or("no check listed")?;
    let id = check["id"].as_str().ok_or("a check without an id")?.to_owned();
    let segment = monform_model::resources::CheckType::ALL
        .iter()
        .find(|t| check["checkType"] == t.as_str())
        .map(|t| t.path_segment())
        .ok_or("a check of an unknown type")?;
    request(
        "PUT",
        &format!("/v1/checks/{segment}/{id}"),
        r#"{"name":"renamed in the UI"}"#,
    )
    .map(drop)
}

/// Measures the reconciler at `checks` checks with the binary `monform`.
pub fn measure(monform: &Path, checks: usize) -> Result<ShareReport, String> {
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = temporary.path();
    let project = base.join("project");
    let ci = base.join("ci");
    let logs = base.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    let shape = Shape::new(checks);
    generate(&project, &shape, 0).map_err(|e| format!("cannot write the project: {e}"))?;
    let toml = project.join("monform.toml");
    let mut text = std::fs::read_to_string(&toml).map_err(|e| e.to_string())?;
    text.push_str(&format!(
        "\n[reconcile]\ninterval = \"{INTERVAL_S}s\"\nrequest-share = \"{}%\"\n",
        SHARE * 100.0
    ));
    std::fs::write(&toml, text).map_err(|e| e.to_string())?;
    let key = format!("bench-{}", std::process::id());
    eprintln!("[{checks}] reconcile within its share: applying with the rate limit off");
    {
        let serve = serve_with(monform, base, &key, "off")?;
        let status = monform_in(monform, &project, &serve, &key, &logs.join("apply.log"))?
            .env("MONFORM_RATE_LIMIT", "off")
            .args(["apply", "--auto-approve"])
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("the apply exited {status}; see {}", logs.display()));
        }
    }
    copy_project(&project, &ci)?;
    let renamed = crate::partial::edit_checks(&ci);
    if renamed != crate::partial::PR_CHECKS {
        return Err(format!("the CI copy: renamed {renamed} checks"));
    }
    let serve = serve_with(monform, base, &key, "600/60")?;
    let small = checks <= 10_000;
    let ci_alone_ms = if small {
        eprintln!("[{checks}] the CI plan alone");
        Some(ci_plan(monform, &ci, &serve, &key, &logs)?)
    } else {
        None
    };
    // The CI plans' window closes before the reconciler starts.
    if small {
        std::thread::sleep(Duration::from_secs(61));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())?;
    let events = project.join("events.jsonl");
    eprintln!("[{checks}] monform reconcile at {}%", SHARE * 100.0);
    let (served_before, _) = served_counts(serve.addr)?;
    let started = Instant::now();
    let child = monform_in(monform, &project, &serve, &key, &logs.join("reconcile.log"))?
        .args([
            "reconcile",
            "--log-format",
            "json",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .arg("--events")
        .arg(&events)
        .spawn()
        .map_err(|e| format!("cannot start monform reconcile: {e}"))?;
    let reconciler = Killed(child);
    // The first sweep, whole, or as much of it as SWEEP_CAP allows.
    let swept = wait_for("the first sweep", SWEEP_CAP, || {
        metric(port, "monform_reconcile_sweeps_total").is_some_and(|n| n >= 1.0)
    });
    let alone_s = started.elapsed().as_secs_f64();
    let (served_after, _) = served_counts(serve.addr)?;
    // Its first burst (a sixth of the allowance) left out.
    let burst = (SHARE * LIMIT / 6.0).floor();
    let per_minute = ((served_after - served_before) as f64 - burst).max(0.0) * 60.0 / alone_s.max(1.0);
    let (sweep_s, sweep_whole, progress, sweep_requests) = match swept {
        Ok(_) => (
            metric(port, "monform_reconcile_sweep_seconds").unwrap_or(alone_s),
            true,
            1.0,
            metric(port, "monform_reconcile_sweep_requests").unwrap_or(0.0),
        ),
        Err(_) => {
            let progress = metric(port, "monform_reconcile_sweep_progress").unwrap_or(0.0);
            let read = metric(port, "monform_reconcile_read_requests_total").unwrap_or(0.0);
            let whole = if progress > 0.0 { read / progress } else { f64::INFINITY };
            (alone_s / progress.max(1e-9), false, progress, whole)
        }
    };
    eprintln!("[{checks}] sweep: {sweep_s:.1} s ({sweep_requests:.0} requests), {per_minute:.0} requests/min");
    let (mut ui_edit_s, mut ci_contended_ms) = (None, None);
    if small {
        ui_edit(&serve, &key)?;
        let took = wait_for("the UI edit's drift event", SWEEP_CAP, || {
            std::fs::read_to_string(&events).is_ok_and(|t| t.lines().any(|l| l.contains("\"event\":\"drift\"")))
        })?;
        ui_edit_s = Some(took.as_secs_f64());
        eprintln!("[{checks}] the CI plan while the reconciler runs");
        ci_contended_ms = Some(ci_plan(monform, &ci, &serve, &key, &logs)?);
    }
    drop(reconciler);
    let (_, rejected) = served_counts(serve.addr)?;
    Ok(ShareReport {
        checks,
        sweep_s: (sweep_s * 10.0).round() / 10.0,
        sweep_whole,
        partial_s: (alone_s * 10.0).round() / 10.0,
        progress,
        sweep_requests: sweep_requests.round(),
        per_minute: per_minute.round(),
        alone_s: (alone_s * 10.0).round() / 10.0,
        ui_edit_s: ui_edit_s.map(|s| (s * 10.0).round() / 10.0),
        ci_alone_ms,
        ci_contended_ms,
        rejected,
    })
}

/// The rows of the report: each with its target and PASS/FAIL.
pub fn targets(r: &ShareReport) -> Vec<Target> {
    let n = r.checks;
    let pct = SHARE * 100.0;
    let allowance = SHARE * LIMIT * 60.0 / WINDOW_S;
    // The physical limit: a whole read's requests at the share's pace.
    let physical = r.sweep_requests / (SHARE * LIMIT / WINDOW_S);
    let mut rows = Vec::new();
    let how = if r.sweep_whole {
        "measured".to_owned()
    } else {
        format!(
            "computed from {:.0}% of a sweep read in {:.0} s (a whole one past {} s)",
            r.progress * 100.0,
            r.partial_s,
            SWEEP_CAP.as_secs()
        )
    };
    rows.push(Target {
        checks: n,
        id: "reconcile_sweep",
        description: format!(
            "monform reconcile at {pct}% of 600/60: a sweep of {n} checks (every object read; {} requests, {how}) within 1.25x the {physical:.0} s its requests take at the share",
            r.sweep_requests
        ),
        measured: r.sweep_s,
        limit: (physical * 1.25).max(1.0),
        unit: "s",
        pass: r.sweep_s <= physical * 1.25 + INTERVAL_S,
    });
    rows.push(Target {
        checks: n,
        id: "reconcile_share",
        description: format!(
            "monform reconcile's requests a minute at the service over {:.0} s alone: at most {pct}% of 600/60",
            r.alone_s
        ),
        measured: r.per_minute,
        limit: allowance,
        unit: "requests/min",
        pass: r.per_minute <= allowance,
    });
    if let Some(ui) = r.ui_edit_s {
        let limit = r.sweep_s + INTERVAL_S;
        rows.push(Target {
            checks: n,
            id: "reconcile_ui_edit",
            description: format!(
                "a UI edit reported by monform reconcile within one sweep ({:.0} s) and the interval that plans it ({INTERVAL_S} s)",
                r.sweep_s
            ),
            measured: ui,
            limit,
            unit: "s",
            pass: ui <= limit,
        });
    }
    if let (Some(alone), Some(contended)) = (r.ci_alone_ms, r.ci_contended_ms) {
        rows.push(Target {
            checks: n,
            id: "reconcile_ci_plan",
            description: format!(
                "a CI plan --refresh=changed of 10 checks while monform reconcile runs: within 2x its {alone:.0} ms alone"
            ),
            measured: contended,
            limit: 2.0 * alone,
            unit: "ms",
            pass: contended <= 2.0 * alone,
        });
    }
    rows.push(Target {
        checks: n,
        id: "reconcile_no_429",
        description: "429s the service answered any client while monform reconcile ran (the CI plan, the UI edit)"
            .to_owned(),
        measured: r.rejected as f64,
        limit: 0.0,
        unit: "429s",
        pass: r.rejected == 0,
    });
    rows
}

/// The rows of each size in `sizes` (from 10,000 checks in a whole run;
/// every size given with `--reconcile-only`).
pub fn rows(monform: &Path, sizes: &[usize], only: bool, sanity: &mut Sanity) -> Vec<Target> {
    let mut rows = Vec::new();
    for &checks in sizes.iter().filter(|&&n| only || n >= 10_000) {
        match measure(monform, checks) {
            Ok(report) => {
                eprintln!(
                    "[{checks}] reconcile within its share: {}",
                    serde_json::to_string(&report).unwrap_or_default()
                );
                rows.extend(targets(&report));
            }
            Err(e) => sanity.expect(false, format!("[{checks}] the reconciler within its share: {e}")),
        }
    }
    rows
}
