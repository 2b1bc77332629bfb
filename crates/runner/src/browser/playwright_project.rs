//! A PLAYWRIGHT check that points at a Playwright project (`playwright`,
//! issue 49): its code bundle (`codeBundle.files`, as the loader read them)
//! written into the run's folder, then `@playwright/test` run on it with a
//! config of monform's beside the project's (`playwright_config.ts`: the
//! system Chromium, headless, a JSON report, traces of failures), the
//! check's `project` and `grep` as `--project` / `--grep`. The suite is the
//! files' code: it runs with the environment of `script_env.rs` like every
//! script, in a process group killed when the run's time is up. Each test
//! of the report becomes an entry of `details.tests`; a failed test's
//! trace and screenshot are kept in the artifacts folder.

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use serde_json::{Value, json};

use super::{Context, Report, console, node_env, run_folder, wait_in_group};
use crate::browser_setup::INSTALL_HINT;

const CONFIG: &str = include_str!("../playwright_config.ts");
/// monform's config, written beside the project's (its relative paths,
/// `testDir`, `globalSetup`, resolve from the same folder).
const OURS: &str = "monform.playwright.config.ts";

/// Runs the check's Playwright project; `Err` when it could not start.
pub(crate) async fn run(check: &Value, cx: Context<'_>, artifacts: Option<&Path>) -> Result<Report, String> {
    let files = check["codeBundle"]["files"]
        .as_array()
        .filter(|files| !files.is_empty())
        .ok_or("the check has no codeBundle: its Playwright project was not read (run it from the project's files)")?;
    let config = check["playwright"]["config"].as_str().unwrap_or_default();
    let cli = cx
        .setup
        .node_modules
        .as_deref()
        .map(|m| m.join("@playwright").join("test").join("cli.js"))
        .filter(|cli| cli.is_file())
        .ok_or_else(|| {
            format!("cannot run locally: missing @playwright/test (beside playwright-core); {INSTALL_HINT}")
        })?;
    let dir = run_folder()?;
    let bundle = dir.path().join("bundle");
    for file in files {
        let path = file["path"].as_str().unwrap_or_default();
        let target = bundle.join(safe(path)?);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot write {path}: {e}"))?;
        }
        std::fs::write(&target, file["content"].as_str().unwrap_or_default())
            .map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    link_packages(dir.path(), cx.setup.node_modules.as_deref())?;
    let config_path = bundle.join(safe(config)?);
    let config_dir = config_path.parent().unwrap_or(&bundle).to_path_buf();
    let config_name = config_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !config_path.is_file() {
        return Err(format!("playwright.config {config:?} is not in the check's codeBundle"));
    }
    let ours = CONFIG.replace("__CONFIG__", &format!("./{config_name}"));
    std::fs::write(config_dir.join(OURS), ours).map_err(|e| format!("cannot write {OURS}: {e}"))?;
    let report_file = dir.path().join("report.json");
    let output_dir = match artifacts {
        Some(folder) => folder.join("playwright"),
        None => dir.path().join("test-results"),
    };

    let node = cx.setup.node.as_deref().unwrap_or(Path::new("node"));
    let mut command = tokio::process::Command::new(node);
    node_env(&mut command, cx, dir.path());
    command
        .arg(&cli)
        .arg("test")
        .arg("--config")
        .arg(config_dir.join(OURS))
        .current_dir(&config_dir)
        .env("MONFORM_PLAYWRIGHT_REPORT", &report_file)
        .env("MONFORM_PLAYWRIGHT_OUTPUT", &output_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let project = &check["playwright"]["project"];
    let projects: Vec<&str> = match project {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for name in projects {
        command.arg("--project").arg(name);
    }
    if let Some(grep) = check["playwright"]["grep"].as_str() {
        command.arg("--grep").arg(grep);
    }
    let started = Instant::now();
    let done = wait_in_group(&mut command, &node.display().to_string(), |e| {
        format!("cannot start {}: {e}; {INSTALL_HINT}", node.display())
    })
    .await?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let output = console(&done);
    let report: Value = std::fs::read_to_string(&report_file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let mut judged = judge(&report, &bundle, files);
    if let Some(folder) = artifacts {
        judged.artifacts = keep(&judged.attachments, folder);
    }
    let error = judged
        .error
        .or_else(|| super::exit_error("playwright test", done.status, &output));
    Ok(Report {
        ok: done.status.success() && error.is_none(),
        error,
        result: json!({ "tests": judged.tests, "at": judged.at, "artifacts": judged.artifacts }),
        output,
        elapsed_ms,
    })
}

/// monform's packages (`@playwright/test`, playwright-core) as the run
/// folder's `node_modules`, above the bundle: an ES-module project
/// (`"type": "module"`, `.mjs`) resolves `import '@playwright/test'` by
/// walking up from the importing file, never through `NODE_PATH`. Node
/// follows the link to the real folder, so the specs and the runner share
/// one `@playwright/test` (two would refuse to run).
fn link_packages(run: &Path, node_modules: Option<&Path>) -> Result<(), String> {
    let Some(packages) = node_modules else {
        return Ok(());
    };
    let link = run.join("node_modules");
    #[cfg(unix)]
    let linked = std::os::unix::fs::symlink(packages, &link);
    #[cfg(windows)]
    let linked = std::os::windows::fs::symlink_dir(packages, &link);
    linked.map_err(|e| format!("cannot link {} into the run's folder: {e}", packages.display()))
}

/// A bundle's path as a relative path with no `..`: the bundle comes from
/// the files (or the service), and its files are written nowhere else.
fn safe(path: &str) -> Result<PathBuf, String> {
    let relative = Path::new(path);
    let clean = !path.is_empty() && relative.components().all(|c| matches!(c, Component::Normal(_)));
    clean
        .then(|| relative.to_path_buf())
        .ok_or_else(|| format!("codeBundle path {path:?} is not a relative path inside the bundle"))
}

/// What a run's JSON report says.
#[derive(Default)]
struct Judged {
    tests: Vec<Value>,
    error: Option<String>,
    at: Value,
    /// Trace and screenshot files of failed tests, where Playwright left them.
    attachments: Vec<(String, PathBuf)>,
    artifacts: Vec<Value>,
}

/// Each test of the report (in each project it ran in) with its outcome;
/// the first failure's message and place in the bundle (`at`, with the
/// line's text).
fn judge(report: &Value, bundle: &Path, files: &[Value]) -> Judged {
    let mut judged = Judged::default();
    let mut failed = Vec::new();
    let mut specs = Vec::new();
    collect(
        report["suites"].as_array().map(Vec::as_slice).unwrap_or_default(),
        &[],
        &mut specs,
    );
    let root = report["config"]["rootDir"].as_str().map(PathBuf::from);
    for (titles, spec) in specs {
        let file = root
            .as_ref()
            .map(|r| r.join(spec["file"].as_str().unwrap_or_default()))
            .map(|f| below(&f, bundle))
            .unwrap_or_default();
        for test in spec["tests"].as_array().into_iter().flatten() {
            let Some(result) = test["results"].as_array().and_then(|r| r.last()) else {
                continue;
            };
            let status = result["status"].as_str().unwrap_or("skipped");
            if status == "skipped" {
                continue;
            }
            // `expected`, or `flaky` (failed, then passed on a retry).
            let passed = matches!(test["status"].as_str(), Some("expected" | "flaky"));
            let name = titles
                .iter()
                .map(String::as_str)
                .chain(spec["title"].as_str())
                .collect::<Vec<_>>()
                .join(" › ");
            let project = test["projectName"].as_str().unwrap_or_default();
            let mut entry = json!({
                "name": name, "project": project, "file": file, "line": spec["line"],
                "passed": passed, "ms": result["duration"],
            });
            if !passed {
                let message = plain(result["error"]["message"].as_str().unwrap_or(status));
                entry["error"] = json!(message);
                // Where each failed test failed (the first failure's line also becomes the run's).
                if let Some(location) = result["error"]["location"].as_object() {
                    let file = below(Path::new(location["file"].as_str().unwrap_or_default()), bundle);
                    entry["at"] = json!({ "file": file, "line": location["line"] });
                }
                if judged.at.is_null()
                    && let Some(location) = result["error"]["location"].as_object()
                {
                    let file = below(Path::new(location["file"].as_str().unwrap_or_default()), bundle);
                    let line = location["line"].as_u64().unwrap_or(0);
                    let source = files
                        .iter()
                        .find(|f| f["path"] == file.as_str())
                        .and_then(|f| f["content"].as_str())
                        .and_then(|text| text.lines().nth(usize::try_from(line).ok()?.checked_sub(1)?))
                        .map(str::trim);
                    judged.at = json!({ "file": file, "line": line, "column": location["column"], "source": source });
                }
                for attachment in result["attachments"].as_array().into_iter().flatten() {
                    if let (Some(kind), Some(path)) = (attachment["name"].as_str(), attachment["path"].as_str())
                        && (kind == "trace" || kind == "screenshot")
                    {
                        judged.attachments.push((kind.to_owned(), PathBuf::from(path)));
                    }
                }
                failed.push(format!("[{project}] {name}: {message}"));
            }
            judged.tests.push(entry);
        }
    }
    let errors: Vec<String> = report["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str())
        .map(plain)
        .collect();
    judged.error = match (failed.first(), errors.first()) {
        (_, Some(error)) => Some(error.clone()),
        (Some(first), None) => Some(match failed.len() {
            1 => format!("1 of {} tests failed: {first}", judged.tests.len()),
            n => format!("{n} of {} tests failed; the first: {first}", judged.tests.len()),
        }),
        (None, None) if report.is_object() && judged.tests.is_empty() => {
            Some("the suite ran no tests (check playwright.project and playwright.grep)".to_owned())
        }
        _ => None,
    };
    judged
}

/// Every spec of the report's suites (nested by file and `describe`), with
/// the titles of the `describe` blocks above it (not the file's).
fn collect<'a>(suites: &'a [Value], titles: &[String], out: &mut Vec<(Vec<String>, &'a Value)>) {
    for suite in suites {
        // A file's suite is titled by its path; `describe` blocks inside it by their names.
        let mut inner = titles.to_vec();
        if !titles.is_empty() || suite["title"] != suite["file"] {
            inner.push(suite["title"].as_str().unwrap_or_default().to_owned());
        }
        for spec in suite["specs"].as_array().into_iter().flatten() {
            out.push((inner.clone(), spec));
        }
        collect(
            suite["suites"].as_array().map(Vec::as_slice).unwrap_or_default(),
            &inner,
            out,
        );
    }
}

/// A path of the run's bundle folder as the bundle names it (`tests/a.spec.ts`).
fn below(path: &Path, bundle: &Path) -> String {
    let bundle = bundle.canonicalize().unwrap_or_else(|_| bundle.to_path_buf());
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.strip_prefix(&bundle)
        .unwrap_or(&path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// A message without its terminal colours, at most a few lines.
fn plain(message: &str) -> String {
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ parameters final-letter
            for next in chars.by_ref() {
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    // `Error: expect(page)...`: that it is an error goes without saying.
    let out = out.trim_start().strip_prefix("Error: ").unwrap_or(&out);
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .take(4)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// Failed tests' traces and screenshots, copied flat into `folder` (the
/// run's artifacts folder, as the harness leaves a script's): `trace-N.zip`,
/// `screenshot-N.png`. Playwright's own output folder is then removed.
fn keep(attachments: &[(String, PathBuf)], folder: &Path) -> Vec<Value> {
    let mut kept = Vec::new();
    let mut counts = [0usize; 2];
    for (kind, path) in attachments {
        let (n, extension) = match kind.as_str() {
            "trace" => (&mut counts[0], "zip"),
            _ => (&mut counts[1], "png"),
        };
        *n += 1;
        let target = folder.join(format!("{kind}-{n}.{extension}"));
        if std::fs::create_dir_all(folder).is_ok() && std::fs::copy(path, &target).is_ok() {
            kept.push(json!({ "kind": kind, "path": target }));
        }
    }
    let _ = std::fs::remove_dir_all(folder.join("playwright"));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_path_stays_inside_the_bundle() {
        assert!(safe("tests/a.spec.ts").is_ok());
        for bad in ["../x", "/etc/passwd", "a/../../b", "", "./a"] {
            assert!(safe(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_report_gives_each_test_and_the_first_failure_with_its_line() {
        let bundle = Path::new("/run/bundle");
        let report = json!({
            "config": { "rootDir": "/run/bundle/tests" },
            "suites": [{ "title": "cart.spec.ts", "file": "cart.spec.ts", "specs": [
                { "title": "adds", "file": "cart.spec.ts", "line": 3, "tests": [
                    { "projectName": "chromium", "status": "expected", "results": [{ "status": "passed", "duration": 12 }] } ] },
            ], "suites": [{ "title": "checkout", "file": "cart.spec.ts", "specs": [
                { "title": "pays", "file": "cart.spec.ts", "line": 9, "tests": [
                    { "projectName": "mobile", "status": "unexpected", "results": [{ "status": "failed", "duration": 40,
                      "error": { "message": "\u{1b}[2mexpect(\u{1b}[22mpage).toHaveTitle failed\n\nExpected: \"Paid\"",
                                 "location": { "file": "/run/bundle/tests/cart.spec.ts", "line": 2, "column": 5 } },
                      "attachments": [{ "name": "trace", "path": "/run/out/trace.zip" }] }] } ] } ] }] }],
            "errors": [],
        });
        let files = [
            json!({ "path": "tests/cart.spec.ts", "content": "line one\n  await expect(page).toHaveTitle('Paid')\n" }),
        ];
        let judged = judge(&report, bundle, &files);
        assert_eq!(judged.tests.len(), 2);
        assert_eq!(judged.tests[0]["name"], "adds");
        assert_eq!(judged.tests[0]["file"], "tests/cart.spec.ts");
        assert_eq!(judged.tests[1]["name"], "checkout › pays");
        assert_eq!(judged.tests[1]["passed"], false);
        assert_eq!(
            judged.tests[1]["at"],
            json!({ "file": "tests/cart.spec.ts", "line": 2 })
        );
        assert_eq!(judged.at["line"], 2);
        assert_eq!(judged.at["source"], "await expect(page).toHaveTitle('Paid')");
        assert_eq!(
            judged.error.as_deref(),
            Some("1 of 2 tests failed: [mobile] checkout › pays: expect(page).toHaveTitle failed\nExpected: \"Paid\"")
        );
        assert_eq!(
            judged.attachments,
            [("trace".to_owned(), PathBuf::from("/run/out/trace.zip"))]
        );
    }
}
