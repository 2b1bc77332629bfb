//! BROWSER, MULTI_STEP and PLAYWRIGHT checks, and the setup/teardown
//! scripts of API checks: run with Node.js and playwright-core against the
//! system Chromium, through a small harness (`harness.js`) that also serves
//! `@playwright/test`'s `test` and `expect`. Only playwright-core is needed
//! (no browser download, one package to pin); a real `@playwright/test`
//! runner would launch its own browser unless every suite's config named the
//! system one. Every process started here gets the environment of
//! `script_env.rs`, never the runner's own: the scripts are the files' code.

// A Playwright project of the files (`playwright:`): its own runner, using
// this module's Node.js context and report.
mod playwright_project;

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use monform_model::resources::CheckType;
use serde_json::{Value, json};

use crate::browser_setup::{BrowserSetup, INSTALL_HINT};
use crate::outcome::Probe;
use crate::script_env;
use crate::variables::Variables;

const HARNESS: &str = include_str!("harness.js");
/// Console output kept per run.
const OUTPUT_LIMIT: usize = 16 * 1024;

/// What the processes of one run are started with.
#[derive(Clone, Copy)]
pub(crate) struct Context<'a> {
    pub setup: &'a BrowserSetup,
    pub variables: &'a Variables,
    /// `[project] pass-env`: names of monform's own environment passed to
    /// scripts on purpose, with their values (read by the runner's caller).
    pub passed: &'a [(String, OsString)],
}

/// Prepares `command` the way every process of a run is started: the
/// environment built from nothing (`script_env`: the run's folder `home`
/// as HOME and TMPDIR), no input, and death with the run.
pub(crate) fn node_env(command: &mut tokio::process::Command, cx: Context<'_>, home: &Path) {
    let env = script_env::build(|name| std::env::var_os(name), cx.passed, cx.variables, cx.setup, home);
    script_env::apply(command, env);
    command.stdin(Stdio::null()).kill_on_drop(true);
}

/// A fresh temporary folder for one run's files (and its HOME and TMPDIR).
pub(crate) fn run_folder() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("monform-run-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))
}

/// What one harness run reported.
pub(crate) struct Report {
    pub ok: bool,
    pub error: Option<String>,
    pub result: Value,
    pub output: String,
    pub elapsed_ms: f64,
}

/// Runs the harness in a fresh temporary folder. `files` are written there
/// first; the process is killed when the caller's time limit drops this.
async fn harness(
    cx: Context<'_>,
    mode: &str,
    target: Option<&Path>,
    files: &[(&str, &str)],
    artifacts: Option<&Path>,
) -> Result<Report, String> {
    let dir = run_folder()?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
    };
    write("harness.js", HARNESS)?;
    for (name, text) in files {
        write(name, text)?;
    }
    let target = target.map_or_else(|| dir.path().join(files[0].0), Path::to_path_buf);
    let node = cx.setup.node.as_deref().unwrap_or(Path::new("node"));
    let mut command = tokio::process::Command::new(node);
    node_env(&mut command, cx, dir.path());
    command
        .arg(dir.path().join("harness.js"))
        .arg(mode)
        .arg(&target)
        .current_dir(dir.path())
        .env("MONFORM_RESULT_FILE", dir.path().join("result.json"))
        .env("MONFORM_IO_FILE", dir.path().join("io.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(artifacts) = artifacts {
        command.env("MONFORM_ARTIFACTS", artifacts);
    }
    let started = Instant::now();
    let done = wait_in_group(&mut command, &node.display().to_string(), |e| {
        format!("cannot start {}: {e}; {INSTALL_HINT}", node.display())
    })
    .await?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let output = console(&done);
    let result: Value = std::fs::read_to_string(dir.path().join("result.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let error = result["error"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| exit_error("node", done.status, &output));
    Ok(Report {
        ok: done.status.success() && error.is_none(),
        error,
        result,
        output,
        elapsed_ms,
    })
}

/// A process's output and errors, cut at [`OUTPUT_LIMIT`].
pub(crate) fn console(done: &std::process::Output) -> String {
    let mut output = String::from_utf8_lossy(&done.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&done.stderr));
    if output.len() > OUTPUT_LIMIT {
        let mut cut = OUTPUT_LIMIT;
        while !output.is_char_boundary(cut) {
            cut -= 1;
        }
        output.truncate(cut);
        output.push_str("\n[output cut]");
    }
    output
}

/// Runs `command` in a process group of its own and waits for its output:
/// a run cut short (`maxResponseTime` drops this future) kills everything
/// it started (node, npx, browsers), not only the child. `start_failed`
/// words a failed start; a failed wait is "cannot run {label}".
pub(crate) async fn wait_in_group(
    command: &mut tokio::process::Command,
    label: &str,
    start_failed: impl FnOnce(std::io::Error) -> String,
) -> Result<std::process::Output, String> {
    let child = command.process_group(0).spawn().map_err(start_failed)?;
    let mut group = Group(child.id());
    let done = child
        .wait_with_output()
        .await
        .map_err(|e| format!("cannot run {label}: {e}"))?;
    group.0 = None;
    Ok(done)
}

/// Kills the harness's whole process group (Node and the Chromium it
/// started) when a run is cut short (`maxResponseTime`) before it ended.
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) takes no pointers; a negative pid signals only
            // the process group our child leads (process_group(0)).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// Runs a BROWSER or MULTI_STEP script, or a PLAYWRIGHT suite. With
/// `artifacts` (a folder of its own for this run), a failed test leaves its
/// screenshot and Playwright trace there (`details.artifacts`); a failure's
/// place in the script is `details.at` (`file`, `line`, `column`, `source`:
/// the line's text).
pub(crate) async fn probe(check: &Value, cx: Context<'_>, artifacts: Option<&Path>) -> Probe {
    if let Some(missing) = cx.setup.missing(true) {
        return Probe::error(missing);
    }
    let script = check["script"].as_str().unwrap_or_default();
    let is_suite = CheckType::of_check(check) == Ok(CheckType::Playwright);
    let report = if is_suite {
        suite(check, cx, artifacts).await
    } else {
        harness(cx, "script", None, &[("check.js", script)], artifacts).await
    };
    let report = match report {
        Ok(report) => report,
        Err(message) => return Probe::error(message),
    };
    let mut at = report.result["at"].clone();
    // A Playwright project's run found the line's text in its bundle.
    if at["source"].is_null()
        && let Some(line) = at["line"].as_u64().and_then(|l| usize::try_from(l).ok())
    {
        let source = if is_suite {
            let bundle = Path::new(check["codeBundlePath"].as_str().unwrap_or_default());
            std::fs::read_to_string(bundle.join(at["file"].as_str().unwrap_or_default())).unwrap_or_default()
        } else {
            script.to_owned()
        };
        if let Some(text) = source.lines().nth(line.saturating_sub(1)) {
            at["source"] = json!(text.trim());
        }
    }
    let details = json!({
        "tests": report.result["tests"], "output": report.output,
        "at": at, "artifacts": report.result["artifacts"],
    });
    Probe {
        response_time: report.elapsed_ms,
        failure: (!report.ok).then(|| report.error.unwrap_or_else(|| "the script failed".into())),
        details,
        ..Probe::default()
    }
}

/// A PLAYWRIGHT check: `npx playwright test` (the default command) runs the
/// suite's `*.spec.js` / `*.test.js` files in the harness; another command
/// runs as written in `codeBundlePath` (`sh -c`).
async fn suite(check: &Value, cx: Context<'_>, artifacts: Option<&Path>) -> Result<Report, String> {
    if check["playwright"].is_object() {
        return playwright_project::run(check, cx, artifacts).await;
    }
    let bundle = check["codeBundlePath"].as_str().unwrap_or_default();
    if bundle.is_empty() || !Path::new(bundle).is_dir() {
        return Err(format!("codeBundlePath {bundle:?} is not a folder"));
    }
    let command = check["testCommand"].as_str().unwrap_or("npx playwright test").trim();
    if command.starts_with("npx playwright test") || command.starts_with("playwright test") {
        return harness(cx, "suite", Some(Path::new(bundle)), &[], artifacts).await;
    }
    // The command's HOME and TMPDIR, removed when the run ends.
    let home = run_folder()?;
    let started = Instant::now();
    let mut shell = tokio::process::Command::new("sh");
    node_env(&mut shell, cx, home.path());
    shell
        .arg("-c")
        .arg(command)
        .current_dir(bundle)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let label = format!("`{command}`");
    let done = wait_in_group(&mut shell, &label, |e| format!("cannot run {label}: {e}")).await?;
    let mut output = String::from_utf8_lossy(&done.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&done.stderr));
    Ok(Report {
        ok: done.status.success(),
        error: (!done.status.success()).then(|| format!("`{command}` exited with {}", done.status)),
        result: Value::Null,
        output,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Runs an API check's setup or teardown script (`mode`) with `io` (the
/// `request`, and the `response` after it) in scope; returns `io` as the
/// script left it (a setup script may change the request).
async fn api_script(mode: &str, script: &str, io: Value, cx: Context<'_>) -> Result<Value, String> {
    let io = io.to_string();
    let report = harness(cx, mode, None, &[("script.js", script), ("io.json", &io)], None).await?;
    match report.error {
        Some(e) => Err(format!("the {mode} script failed: {e}")),
        None => Ok(report.result["io"].clone()),
    }
}

/// An API check with `localSetupScript` / `localTearDownScript`: the setup
/// script may change the request, then the request is made, then the
/// teardown script runs; a script that fails fails the run.
pub(crate) async fn api_with_scripts(check: &Value, cx: Context<'_>) -> Probe {
    if let Some(missing) = cx.setup.missing(false) {
        return Probe::error(format!("localSetupScript/localTearDownScript: {missing}"));
    }
    let script = |field: &str| {
        check[field]
            .as_str()
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let mut check = check.clone();
    let (before, after) = (script("localSetupScript"), script("localTearDownScript"));
    if let Some(object) = check.as_object_mut() {
        object.remove("localSetupScript");
        object.remove("localTearDownScript");
    }
    if let Some(before) = before {
        match api_script("setup", &before, json!({ "request": check["request"] }), cx).await {
            Ok(io) if io["request"].is_object() => check["request"] = io["request"].clone(),
            Ok(_) => {}
            Err(e) => return Probe::error(e),
        }
    }
    let mut probe = crate::http::probe(&check).await;
    if let (Some(after), None) = (after, &probe.error) {
        let response = &probe.api_result["response"];
        let response =
            json!({ "statusCode": response["status"], "headers": response["headers"], "body": response["body"] });
        let io = json!({ "request": check["request"], "response": response });
        if let Err(e) = api_script("teardown", &after, io, cx).await {
            probe.failure = Some(probe.failure.map_or(e.clone(), |f| format!("{f}; {e}")));
        }
    }
    probe
}

/// A process that failed without saying why in its report: its exit
/// status and the last line it printed.
fn exit_error(program: &str, status: std::process::ExitStatus, output: &str) -> Option<String> {
    (!status.success()).then(|| {
        let last = output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        format!("{program} exited with {status}: {last}")
    })
}
