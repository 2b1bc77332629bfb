//! The user's path (issue 29 item 2): the `monform` binary run as a user
//! runs it, each command its own child process, against `monform serve` in
//! a process of its own (SQLite file on disk, rate limits off on both
//! sides). Per command: wall time, CPU time of that one process from
//! `wait4`'s rusage, its peak RSS from `VmHWM` sampled every 2 ms (see
//! [`wait4`] for why not `ru_maxrss`), and the requests `monform serve`
//! counted (its `/-/metrics`).
//!
//! Steps, on a fresh project, database and state: `validate`, cold `apply
//! --auto-approve`, no-op `plan --detailed-exitcode` (exit 0), and `plan
//! --detailed-exitcode` after 1% of the checks changed in the files
//! (exit 2). Two shapes per size (`variants`). The two steps with a time
//! target, `validate` (each run on an empty parse cache) and the no-op
//! plan, run three times: the median run is reported. Then the bench's ten
//! policies: `validate`, and the no-op plan with them (issue 48 item 3:
//! under 4.5 s and 650 MB at 100,000 checks), with the policies'
//! evaluation in it timed by the bench's own `--phase plan-policies`
//! (under 1.5 s).

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::generate::{Shape, generate};
use crate::harness::Sanity;
use crate::measure::ms;
use crate::report::{Step, UserPathReport, modelled_seconds};

/// The account `monform serve` is started with (any UUID).
pub(crate) const ACCOUNT: &str = "11111111-2222-4333-8444-555555555555";

/// A project shape the user's path is measured on.
pub struct Variant {
    pub name: &'static str,
    pub title: &'static str,
    pub shape: Shape,
}

/// The bench's own shape (ten check types, groups of 50, alert channels)
/// and issue 29's (2,000 groups, no alert channel yet: every check draws
/// the linter's "alerts nobody", summarised).
pub fn variants(checks: usize) -> Vec<Variant> {
    vec![
        Variant {
            name: "channels",
            title: "groups of 50, alert channels",
            shape: Shape::new(checks),
        },
        Variant {
            name: "no_channels_2000_groups",
            title: "2,000 groups, no alert channel",
            shape: Shape::with_groups(checks, 2_000, false),
        },
    ]
}

/// The `monform` binary next to the bench's own (`target/release/monform`
/// beside `target/release/monform-bench`), if built.
pub fn sibling_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.join("monform");
    path.is_file().then_some(path)
}

/// `monform serve` as a child process, stopped when dropped.
pub(crate) struct Serve {
    child: Child,
    pub(crate) addr: SocketAddr,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<SocketAddr, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener.local_addr().map_err(|e| e.to_string())
}

fn serve(monform: &Path, base: &Path, key: &str) -> Result<Serve, String> {
    serve_with(monform, base, key, "off")
}

/// `program` as a client of `monform serve` at `url` with `key`, pacing
/// off (a serve run with `--rate-limit off` states no budget, and a
/// client would fall back to 600 requests a minute), no stdin.
pub(crate) fn client_of(program: &Path, url: &str, key: &str) -> Command {
    let mut command = Command::new(program);
    command
        .env("MONFORM_API_URL", url)
        .env("MONFORM_API_KEY", key)
        .env("MONFORM_ACCOUNT_ID", ACCOUNT)
        .env("MONFORM_RATE_LIMIT", "off")
        .stdin(Stdio::null());
    command
}

/// `monform serve` on `base/emulator.db` with its `--rate-limit` at `rate_limit`.
pub(crate) fn serve_with(monform: &Path, base: &Path, key: &str, rate_limit: &str) -> Result<Serve, String> {
    let addr = free_port()?;
    let log = File::create(base.join("serve.log")).map_err(|e| e.to_string())?;
    let child = Command::new(monform)
        .arg("serve")
        .args(["--listen", &addr.to_string(), "--api-key", key, "--account-id", ACCOUNT])
        .args(["--rate-limit", rate_limit, "--auth-failure-limit", "off", "--db"])
        .arg(base.join("emulator.db"))
        .current_dir(base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start {} serve: {e}", monform.display()))?;
    let mut serve = Serve { child, addr };
    // Ready once it accepts a connection.
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = serve.child.try_wait() {
            return Err(format!(
                "monform serve exited ({status}); see {}",
                base.join("serve.log").display()
            ));
        }
        if Instant::now() > deadline {
            return Err("monform serve did not listen within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(serve)
}

/// Requests `monform serve` has answered, its own scrapes left out.
fn requests_served(addr: SocketAddr) -> Result<u64, String> {
    served_counts(addr).map(|(all, _)| all)
}

/// Requests `monform serve` has answered and of them its 429s, its own
/// scrapes left out.
pub(crate) fn served_counts(addr: SocketAddr) -> Result<(u64, u64), String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("cannot reach monform serve: {e}"))?;
    stream
        .write_all(b"GET /-/metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream.read_to_string(&mut text).map_err(|e| e.to_string())?;
    let mut counts = (0, 0);
    for line in text
        .lines()
        .filter(|l| l.starts_with("monform_emulator_requests_total{") && !l.contains("route=\"/-/metrics\""))
    {
        let n = line.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
        counts.0 += n;
        if line.contains("status=\"429\"") {
            counts.1 += n;
        }
    }
    Ok(counts)
}

/// What `wait4` says of a finished child.
struct Reaped {
    exit_code: i32,
    cpu: Duration,
    peak_rss_mb: f64,
}

/// The process's peak RSS so far (`VmHWM`, KiB), while it runs.
fn vm_hwm_kib(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for `pid` and takes its rusage: that process's own CPU, and its
/// peak RSS from `VmHWM` read every 2 ms while it runs. Not `ru_maxrss`:
/// Linux keeps the high-water mark of the memory a process had before
/// `exec`, so a child forked by this bench, already at 300 MiB after the
/// in-process phases, reported 306 MiB for every command.
fn wait4(pid: libc::pid_t) -> Result<Reaped, String> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(vm_hwm_kib(pid).unwrap_or(0));
                std::thread::sleep(Duration::from_millis(2));
            }
            peak
        })
    };
    let reaped = reap(pid);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak_kib = sampler.join().unwrap_or(0);
    let (exit_code, cpu) = reaped?;
    Ok(Reaped {
        exit_code,
        cpu,
        peak_rss_mb: peak_kib as f64 / 1024.0,
    })
}

/// Waits for `pid`: its exit code and its own CPU time.
fn reap(pid: libc::pid_t) -> Result<(i32, Duration), String> {
    let mut status: libc::c_int = 0;
    // SAFETY: wait4 only writes the status and the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above; `pid` is our own child, not yet reaped.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4: {error}"));
        }
    }
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    let exit_code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    Ok((exit_code, time(usage.ru_utime) + time(usage.ru_stime)))
}

struct Runner<'a> {
    monform: &'a Path,
    project: &'a Path,
    logs: &'a Path,
    serve: &'a Serve,
    key: &'a str,
}

impl Runner<'_> {
    /// Runs `monform <args>` in the project as a user would (output to a
    /// log file, no terminal) and measures it.
    fn step(&self, name: &'static str, title: &'static str, args: &[&str]) -> Result<Step, String> {
        let log = |suffix: &str| File::create(self.logs.join(format!("{name}.{suffix}"))).map_err(|e| e.to_string());
        let before = requests_served(self.serve.addr)?;
        let started = Instant::now();
        let child = client_of(self.monform, &format!("http://{}", self.serve.addr), self.key)
            .args(args)
            .current_dir(self.project)
            .env("NO_COLOR", "1")
            .env_remove("MONFORM_ENV")
            .stdout(log("stdout")?)
            .stderr(log("stderr")?)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.monform.display()))?;
        let pid = libc::pid_t::try_from(child.id()).map_err(|e| e.to_string())?;
        let reaped = wait4(pid)?;
        let wall = started.elapsed();
        // Reaped by wait4: the handle must not wait again (dropping it does not).
        drop(child);
        let requests = requests_served(self.serve.addr)?.saturating_sub(before);
        Ok(Step {
            name,
            title,
            wall_ms: ms(wall),
            cpu_ms: ms(reaped.cpu),
            peak_rss_mb: (reaped.peak_rss_mb * 10.0).round() / 10.0,
            requests,
            modelled_seconds: (modelled_seconds(requests) * 10.0).round() / 10.0,
            exit_code: reaped.exit_code,
            runs_wall_ms: Vec::new(),
        })
    }

    /// [`Runner::step`] run [`REPEATS`] times, `prepare` before each: the
    /// median run by wall time, with every run's wall time and the highest
    /// peak RSS. On a 2-core machine others share, one run's wall time
    /// moved by a third from one run to the next (the same work: its CPU
    /// time moved as much); a target is judged on the median. A run that
    /// exits other than `code` (0, or 1 where the policies deny) is the
    /// one reported, so the sanity check sees it.
    fn repeated(
        &self,
        name: &'static str,
        title: &'static str,
        args: &[&str],
        code: i32,
        mut prepare: impl FnMut() -> Result<(), String>,
    ) -> Result<Step, String> {
        let mut runs = Vec::with_capacity(REPEATS);
        for _ in 0..REPEATS {
            prepare()?;
            runs.push(self.step(name, title, args)?);
        }
        let walls: Vec<f64> = runs.iter().map(|r| r.wall_ms).collect();
        let peak = runs.iter().map(|r| r.peak_rss_mb).fold(0.0, f64::max);
        let mut step = match runs.iter().position(|r| r.exit_code != code) {
            Some(failed) => runs.swap_remove(failed),
            None => {
                runs.sort_by(|a, b| a.wall_ms.total_cmp(&b.wall_ms));
                runs.swap_remove(REPEATS / 2)
            }
        };
        step.peak_rss_mb = peak;
        step.runs_wall_ms = walls;
        Ok(step)
    }
}

/// Runs of each step with a wall-time target (`validate`, the no-op plan).
const REPEATS: usize = 3;

/// The policies' evaluation in a no-op plan: `monform-bench --phase
/// plan-policies` ([`crate::policies::child_plan_policies`]: `monform
/// plan`'s engine calls, in the same order, allocator tuned as `plan`
/// tunes it) [`REPEATS`] times against the same `monform serve`; a step
/// whose wall and CPU time are the median run's evaluation alone, and
/// whose peak RSS is that process's highest.
fn policy_evaluation(runner: &Runner<'_>) -> Result<Step, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut runs = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let output = client_of(&exe, &format!("http://{}", runner.serve.addr), runner.key)
            .args(["--phase", "plan-policies", "--dir"])
            .arg(runner.project)
            .current_dir(runner.project)
            .env("MIMALLOC_PURGE_DELAY", "0")
            .env_remove("MONFORM_ENV")
            .stderr(File::create(runner.logs.join("plan_policies_evaluation.stderr")).map_err(|e| e.to_string())?)
            .output()
            .map_err(|e| format!("cannot run {} --phase plan-policies: {e}", exe.display()))?;
        if !output.status.success() {
            return Err(format!("--phase plan-policies failed: {}", output.status));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let figures: crate::policies::PlanPolicyFigures =
            serde_json::from_str(text.trim()).map_err(|e| format!("--phase plan-policies printed `{text}`: {e}"))?;
        runs.push(figures);
    }
    let walls: Vec<f64> = runs.iter().map(|r| r.evaluate_ms).collect();
    let peak = runs.iter().map(|r| r.peak_rss_mb).fold(0.0, f64::max);
    runs.sort_by(|a, b| a.evaluate_ms.total_cmp(&b.evaluate_ms));
    let median = runs.swap_remove(REPEATS / 2);
    Ok(Step {
        name: "plan_policies_evaluation",
        title: "the policies' evaluation in that plan (input built before it: not counted)",
        wall_ms: median.evaluate_ms,
        cpu_ms: median.evaluate_cpu_ms,
        peak_rss_mb: peak,
        requests: 0,
        modelled_seconds: 0.0,
        exit_code: 0,
        runs_wall_ms: walls,
    })
}

/// Every step of `variant`, in a temporary folder (project, database, logs).
pub fn run(monform: &Path, variant: &Variant, sanity: &mut Sanity) -> Result<UserPathReport, String> {
    let shape = variant.shape;
    let n = shape.checks;
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = temporary.path();
    let project = base.join("project");
    let logs = base.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
    generate(&project, &shape, 0).map_err(|e| format!("cannot write the project: {e}"))?;
    // A throwaway key of a throwaway local service; never printed.
    let key = format!("bench-{}", std::process::id());
    let serve = serve(monform, base, &key)?;
    let runner = Runner {
        monform,
        project: &project,
        logs: &logs,
        serve: &serve,
        key: &key,
    };
    let mut steps = Vec::new();
    let mut expect = |step: Step, code: i32, sanity: &mut Sanity| {
        let tail = std::fs::read_to_string(logs.join(format!("{}.stderr", step.name))).unwrap_or_default();
        let tail: String = tail.lines().rev().take(5).collect::<Vec<_>>().join(" / ");
        sanity.expect(
            step.exit_code == code,
            format!(
                "[{n}, {}] monform {} exited {} (expected {code}): {tail}",
                variant.name, step.name, step.exit_code
            ),
        );
        let runs = match step.runs_wall_ms.as_slice() {
            [] => String::new(),
            walls => format!(" (median of {walls:?} ms)"),
        };
        eprintln!(
            "[{n}, {}] {}: {} ms wall{runs}, {} ms CPU, {} MiB peak",
            variant.name, step.name, step.wall_ms, step.cpu_ms, step.peak_rss_mb
        );
        steps.push(step);
    };
    eprintln!("[{n}, {}] user's path: {}", variant.name, monform.display());
    // Each run of `validate` on an empty parse cache, as the first is. The
    // last run's cache is moved aside, not deleted: creating 1,000 files
    // where 1,000 were just deleted costs ext4 more (it skips recently
    // freed inodes), which a user's fresh clone never pays.
    let cache = project.join(".monform/cache");
    let mut runs = 0;
    let mut empty_cache = || {
        runs += 1;
        let aside = base.join(format!("cache-of-validate-{runs}"));
        match std::fs::rename(&cache, aside) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("cannot empty the parse cache: {e}")),
            _ => Ok(()),
        }
    };
    expect(
        runner.repeated("validate", "validate", &["validate"], 0, &mut empty_cache)?,
        0,
        sanity,
    );
    let cold = runner.step("cold_apply", "cold apply", &["apply", "--auto-approve"])?;
    expect(cold, 0, sanity);
    let noop = runner.repeated(
        "noop_plan",
        "no-op plan",
        &["plan", "--detailed-exitcode"],
        0,
        || Ok(()),
    )?;
    expect(noop, 0, sanity);
    generate(&project, &shape, 1).map_err(|e| format!("cannot edit the project: {e}"))?;
    let change = runner.step(
        "change_plan",
        "plan after a 1% change",
        &["plan", "--detailed-exitcode"],
    )?;
    // `--detailed-exitcode`: 2 when the plan has changes.
    expect(change, 2, sanity);
    // The team's rules on top: the bench's ten policies find a problem on
    // most checks (130,000 at 100,000 checks), written as a user sees them.
    crate::policies::write(&project);
    let policies = runner.repeated(
        "validate_policies",
        "validate with 10 policies",
        &["validate"],
        1,
        &mut empty_cache,
    )?;
    // Exit 1: the policies' `deny` findings are errors.
    expect(policies, 1, sanity);
    // Issue 48 item 3: the no-op plan again, with the ten policies (the
    // files as applied); exit 1 on their `deny` findings.
    generate(&project, &shape, 0).map_err(|e| format!("cannot restore the project: {e}"))?;
    let plan = runner.repeated(
        "noop_plan_policies",
        "no-op plan with 10 policies",
        &["plan", "--detailed-exitcode"],
        1,
        || Ok(()),
    )?;
    expect(plan, 1, sanity);
    // The policies' own part of that plan, which the binary does not
    // report: the same engine calls in the bench's own process.
    expect(policy_evaluation(&runner)?, 0, sanity);
    drop(serve);
    Ok(UserPathReport {
        variant: variant.name,
        title: variant.title,
        shape,
        monform: monform.to_owned(),
        steps,
    })
}

/// Issue 29's targets on the 2-core machine, in MB as the issue gives them.
const LARGE_PEAK_MB: f64 = 600.0;
const SMALL_PEAK_MB: f64 = 150.0;
const MIB_PER_MB: f64 = 1e6 / 1_048_576.0;

/// Issue 29 item 2: from 100,000 checks, no-op `plan` under 8 s, `validate`
/// under 3 s and every command under 600 MB peak RSS; up to 10,000 checks,
/// every command under 150 MB.
pub fn targets(size: &crate::report::SizeReport) -> Vec<crate::report::Target> {
    let n = size.shape.checks;
    let mut targets = Vec::new();
    for path in &size.user_path {
        let mut add = |id, description: String, measured: f64, limit: f64, unit| {
            targets.push(crate::report::Target {
                checks: n,
                id,
                description: format!("user's path, {}: {description}", path.title),
                measured,
                limit,
                unit,
                pass: measured < limit,
            });
        };
        if n >= crate::report::LARGE {
            if let Some(plan) = path.step("noop_plan") {
                add(
                    "user_noop_plan_wall",
                    format!("no-op plan of {n} checks under 8 s wall"),
                    plan.wall_ms,
                    8_000.0,
                    "ms",
                );
            }
            if let Some(validate) = path.step("validate") {
                let text = format!("validate of {n} checks under 3 s wall");
                add("user_validate_wall", text, validate.wall_ms, 3_000.0, "ms");
            }
            // Issue 48 item 3: the ten policies within the plan's memory.
            if let Some(plan) = path.step("noop_plan_policies") {
                let text = format!("no-op plan of {n} checks with 10 policies under 4.5 s wall");
                add("user_policy_plan_wall", text, plan.wall_ms, 4_500.0, "ms");
                let text = format!("no-op plan of {n} checks with 10 policies under 650 MB peak RSS");
                add(
                    "user_policy_plan_rss",
                    text,
                    plan.peak_rss_mb,
                    650.0 * MIB_PER_MB,
                    "MiB",
                );
            }
            if let Some(evaluation) = path.step("plan_policies_evaluation") {
                let text = "the 10 policies' evaluation in that plan under 1.5 s wall".to_owned();
                add("user_policy_evaluation_wall", text, evaluation.wall_ms, 1_500.0, "ms");
            }
        }
        let peak_mb = match n {
            n if n >= crate::report::LARGE => Some(LARGE_PEAK_MB),
            n if n <= 10_000 => Some(SMALL_PEAK_MB),
            _ => None,
        };
        if let Some(limit_mb) = peak_mb {
            // Issue 29's commands, on a project without policies; the
            // policies' run is reported beside them (its input alone is a
            // quarter of a GiB at 100,000 checks).
            let with_policies = ["validate_policies", "noop_plan_policies", "plan_policies_evaluation"];
            for step in path.steps.iter().filter(|s| !with_policies.contains(&s.name)) {
                let text = format!("{} of {n} checks under {limit_mb} MB peak RSS", step.title);
                add("user_peak_rss", text, step.peak_rss_mb, limit_mb * MIB_PER_MB, "MiB");
            }
        }
    }
    targets
}

/// The in-process figure beside a step, for the bench's own shape: load
/// for `validate`, the phases for the others (the no-op plan's from its own
/// process, load included).
fn in_process_ms(size: &crate::report::SizeReport, step: &str) -> Option<f64> {
    let phase = |name: &str| size.phase(name).map(|p| p.wall_ms);
    match step {
        "validate" => phase("load"),
        "cold_apply" => phase("cold_apply").zip(phase("load")).map(|(a, l)| a + l),
        "noop_plan" => {
            let child = size.noop_isolated.as_ref()?.isolated.as_ref()?;
            Some(child.load_ms + child.wall_ms)
        }
        "change_plan" => phase("change_plan").map(|p| p + size.reload_ms),
        "validate_policies" => phase("policies").zip(phase("load")).map(|(p, l)| p + l),
        _ => None,
    }
}

/// The user's path as a Markdown table, beside the in-process rows.
pub fn markdown(sizes: &[crate::report::SizeReport]) -> String {
    use crate::report::{int, num};
    let mut out = String::new();
    if sizes.iter().all(|s| s.user_path.is_empty()) {
        return out;
    }
    out.push_str(
        "\n### The user's path: the `monform` binary against `monform serve`, each in its own process\n\n\
         | checks | shape | command | wall ms | CPU ms | peak RSS MiB | requests | at 600 req/min, s | in-process wall ms |\n\
         |---:|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for size in sizes {
        for path in &size.user_path {
            for step in &path.steps {
                let beside = (path.variant == "channels")
                    .then(|| in_process_ms(size, step.name))
                    .flatten()
                    .map_or_else(|| "".to_owned(), num);
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    int(size.shape.checks as u64),
                    path.title,
                    step.title,
                    num(step.wall_ms),
                    num(step.cpu_ms),
                    num(step.peak_rss_mb),
                    int(step.requests),
                    num(step.modelled_seconds),
                    beside,
                ));
            }
        }
    }
    if let Some(path) = sizes.iter().flat_map(|s| &s.user_path).next() {
        out.push_str(&format!(
            "\nBinary: {}. SQLite file on disk, rate limits off (`serve --rate-limit off`, `MONFORM_RATE_LIMIT=off`); \
             output to files. CPU and peak RSS are the `monform` process's own (`wait4`). Validate (each run on an \
             empty parse cache, the last with the bench's ten policies) and the no-op plan (also with the ten policies): the median of three runs, peak RSS \
             the highest; the policies' evaluation in that plan: the bench's `--phase plan-policies` (the same engine calls), median of three. The in-process column, for the bench's shape: load (validate), load + cold apply, the no-op plan's \
             own process (load + fetch + plan), reload + the 1% plan, load + the policies' input and evaluation.\n",
            path.monform.display()
        ));
    }
    out
}
