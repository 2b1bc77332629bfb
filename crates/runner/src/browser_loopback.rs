//! Browser-type checks and API scripts against a loopback HTTP server, with
//! the real Node.js, playwright-core and Chromium (skipped, saying why,
//! where they are missing).

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::{BrowserSetup, Job, Outcome, RunStatus, Runner, RunnerConfig, Variables};

async fn site() -> String {
    let router = Router::new()
        .route(
            "/",
            get(|| async { Html("<html><head><title>Monform Shop</title></head><body><h1>Hello</h1></body></html>") }),
        )
        .route("/api/items", get(|| async { axum::Json(json!({"items": [1, 2]})) }))
        .route("/api/health", get(|| async { axum::Json(json!({"ok": true})) }));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

/// Says where `cargo test` shows it (uncaptured) that the running test
/// did not run: monform-testkit's `skipped`, which this crate cannot
/// depend on (the emulator, under it, depends on this crate).
fn skipped(why: &str) {
    use std::io::Write;
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("a test")
        .to_owned();
    let _ = std::io::stderr().write_all(format!("\nSKIPPED {test}: {why} (counted as passed)\n").as_bytes());
}

fn setup() -> Option<BrowserSetup> {
    let setup = BrowserSetup::discover(None);
    match setup.missing(true) {
        None => Some(setup),
        Some(why) => {
            skipped(&why);
            None
        }
    }
}

async fn execute(setup: BrowserSetup, check: &Value, variables: &Variables) -> Outcome {
    Runner::new(RunnerConfig::default())
        .with_browser(setup)
        .execute(Job {
            check,
            variables,
            heartbeats: None,
            location: "local",
        })
        .await
}

#[tokio::test]
async fn browser_scripts_run_in_chromium() {
    let Some(setup) = setup() else { return };
    let base = site().await;
    let mut variables = Variables::new();
    variables.insert("BASE", base.clone(), false);
    variables.insert("TOKEN", "hunter2-secret", true);
    let script = |title: &str| {
        format!(
            "const {{ test, expect }} = require('@playwright/test')\n\
             test('home', async ({{ page }}) => {{\n  console.log('token', process.env.TOKEN)\n  \
             await page.goto(process.env.BASE)\n  await expect(page).toHaveTitle('{title}')\n}})\n"
        )
    };
    // High thresholds: a loaded CI machine must not make a passing run degraded.
    let passing = json!({"checkType": "BROWSER", "script": script("Monform Shop"),
        "degradedResponseTime": 60000, "maxResponseTime": 120000});
    let outcome = execute(setup.clone(), &passing, &variables).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");
    let output = outcome.details["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("token *****") && !output.contains("hunter2"),
        "{output}"
    );

    let broken = json!({"checkType": "BROWSER", "script": script("Wrong"), "maxResponseTime": 30000});
    let outcome = execute(setup.clone(), &broken, &variables).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap_or_default();
    assert!(
        error.contains("test 'home'") && error.contains("got 'Monform Shop'"),
        "{error}"
    );

    let multi = json!({"checkType": "MULTI_STEP", "script":
        "const a = await request.get(process.env.BASE + '/api/items')\nexpect(a.status()).toBe(200)\n\
         const b = await request.get(process.env.BASE + '/api/health')\nexpect((await b.json()).ok).toBe(true)\n",
        "degradedResponseTime": 60000, "maxResponseTime": 120000});
    let outcome = execute(setup.clone(), &multi, &variables).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");

    let hung = json!({"checkType": "BROWSER", "maxResponseTime": 3000,
        "script": "await page.goto(process.env.BASE)\nawait new Promise((r) => setTimeout(r, 60000))"});
    let outcome = execute(setup, &hung, &variables).await;
    assert_eq!(outcome.status, RunStatus::TimedOut, "{outcome:?}");
}

#[tokio::test]
async fn a_cut_short_suite_command_kills_what_it_started() {
    let Some(setup) = setup() else { return };
    let bundle = tempfile::tempdir().unwrap();
    // The shell starts a child and waits: the time limit must end both.
    let check = json!({"checkType": "PLAYWRIGHT", "maxResponseTime": 1500,
        "codeBundlePath": bundle.path(), "testCommand": "sleep 60 & echo $! > child.pid; wait"});
    let outcome = execute(setup, &check, &Variables::new()).await;
    assert_eq!(outcome.status, RunStatus::TimedOut, "{outcome:?}");
    let pid = std::fs::read_to_string(bundle.path().join("child.pid")).unwrap();
    let proc = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    for _ in 0..50 {
        // Gone, or a zombie waiting for a parent that no longer exists.
        let state = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
        if state.is_empty() || state.contains(") Z ") {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the suite's child {} still runs", pid.trim());
}

#[tokio::test]
async fn api_setup_scripts_change_the_request() {
    let mut setup = BrowserSetup::discover(None);
    if setup.missing(false).is_some() {
        skipped("no Node.js");
        return;
    }
    let base = site().await;
    let check = json!({"checkType": "API", "request": {"url": format!("{base}/nowhere"), "method": "GET"},
        "localSetupScript": "request.url = request.url.replace('/nowhere', '/api/items')",
        "localTearDownScript": "if (response.statusCode !== 200) throw new Error('bad status ' + response.statusCode)"});
    let outcome = execute(setup.clone(), &check, &Variables::new()).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");

    setup.chromium = Some("/nonexistent/chromium".into());
    let browser = json!({"checkType": "BROWSER", "script": "await page.goto('about:blank')"});
    let outcome = execute(setup, &browser, &Variables::new()).await;
    assert!(
        outcome
            .error
            .unwrap_or_default()
            .contains("Chromium (no /nonexistent/chromium)")
    );
}

/// Issue 43: a script, a suite's `testCommand` and an API setup script see
/// the allow-list, the passed names and the run's variables, nothing else
/// of the runner's environment; Chromium still starts with it.
#[tokio::test]
async fn scripts_see_only_their_environment() {
    let Some(setup) = setup() else { return };
    let base = site().await;
    let mut variables = Variables::new();
    variables.insert("BASE", base.clone(), false);
    let runner = Runner::new(RunnerConfig::default())
        .with_browser(setup)
        .with_passed_env([("PASSED_ON_PURPOSE".to_owned(), "yes".into())]);
    let run = |check: Value| {
        let (runner, variables) = (runner.clone(), variables.clone());
        async move {
            runner
                .execute(Job {
                    check: &check,
                    variables: &variables,
                    heartbeats: None,
                    location: "local",
                })
                .await
        }
    };
    let harness = ["MONFORM_RESULT_FILE", "MONFORM_IO_FILE"];
    let allowed: Vec<&str> = crate::script_env::INHERITED
        .iter()
        .chain(crate::script_env::SET)
        .map(|(n, _)| *n)
        .chain(harness)
        .chain(["BASE", "PASSED_ON_PURPOSE"])
        .collect();
    let names_in = |output: &str| -> Vec<String> {
        let line = output.lines().find_map(|l| l.strip_prefix("ENV ")).unwrap_or_default();
        serde_json::from_str(line).unwrap_or_else(|_| panic!("no names printed: {output}"))
    };

    let browser = json!({"checkType": "BROWSER", "degradedResponseTime": 60000, "maxResponseTime": 120000,
        "script": "console.log('ENV ' + JSON.stringify(Object.keys(process.env)))\n\
                   await page.goto(process.env.BASE)\nawait expect(page).toHaveTitle('Monform Shop')\n"});
    let outcome = run(browser).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");
    let output = outcome.details["output"].as_str().unwrap_or_default();
    let names = names_in(output);
    for name in &names {
        assert!(allowed.contains(&name.as_str()), "{name} reached the script: {names:?}");
    }
    for needed in ["BASE", "PASSED_ON_PURPOSE", "HOME", "TMPDIR"] {
        assert!(names.iter().any(|n| n == needed), "no {needed}: {names:?}");
    }

    let bundle = tempfile::tempdir().unwrap();
    let suite = json!({"checkType": "PLAYWRIGHT", "maxResponseTime": 30000, "codeBundlePath": bundle.path(),
        "testCommand": "node -e \"console.log('ENV ' + JSON.stringify(Object.keys(process.env)))\""});
    let outcome = run(suite).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");
    // `sh` adds PWD (and perhaps SHLVL, `_`) of its own.
    let shell = ["PWD", "SHLVL", "_", "OLDPWD"];
    for name in names_in(outcome.details["output"].as_str().unwrap_or_default()) {
        assert!(
            allowed.contains(&name.as_str()) || shell.contains(&name.as_str()),
            "{name} reached the testCommand"
        );
    }

    let api = json!({"checkType": "API", "request": {"url": format!("{base}/api/health"), "method": "GET"},
        "localSetupScript": "const names = Object.keys(process.env).filter((n) => !\
            ['PATH','LANG','LC_ALL','TZ','HOME','TMPDIR','PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD','MONFORM_CHROMIUM',\
             'NODE_PATH','MONFORM_RESULT_FILE','MONFORM_IO_FILE','BASE','PASSED_ON_PURPOSE'].includes(n))\n\
            if (names.length) throw new Error('leaked ' + names.join(','))"});
    let outcome = run(api).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");
}
