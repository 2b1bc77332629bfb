//! Runs that need a process queue behind `Config::max_browser_runs`
//! (issue 28 item 7). The "Node.js" here is a shell script standing in for
//! it (no Chromium needed): it marks itself running in a folder, sleeps,
//! notes how many were running at once, and leaves.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::targets::{create, run_session};
use common::{TestServer, parts};
use monform_emulator::Config;
use monform_runner::BrowserSetup;
use serde_json::{Value, json};

/// A fake browser setup whose "node" runs for `seconds`; returns it and
/// the file each run appends the number of runs it saw at once to.
fn fake_setup(dir: &Path, seconds: f64) -> (BrowserSetup, PathBuf) {
    let running = dir.join("running");
    let counts = dir.join("counts");
    std::fs::create_dir_all(&running).unwrap();
    let node = dir.join("node");
    std::fs::write(
        &node,
        format!(
            "#!/bin/sh\ntouch '{running}/'$$\nsleep {seconds}\nls '{running}' | wc -l >> '{counts}'\nrm -f '{running}/'$$\n",
            running = running.display(),
            counts = counts.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    let modules = dir.join("node_modules");
    std::fs::create_dir_all(modules.join("playwright-core")).unwrap();
    std::fs::write(modules.join("playwright-core").join("package.json"), "{}").unwrap();
    let setup = BrowserSetup {
        node: Some(node),
        node_modules: Some(modules),
        chromium: Some(PathBuf::from("/bin/sh")),
    };
    (setup, counts)
}

async fn emulator(setup: BrowserSetup, slots: usize) -> TestServer {
    TestServer::with(Config {
        rate_limit: None,
        session_duration: Duration::from_millis(20),
        execute_checks: true,
        max_browser_runs: slots,
        browser: Some(setup),
        ..Config::default()
    })
    .await
}

fn browser(name: &str, extra: Value) -> Value {
    let mut body = json!({ "name": name, "script": "await page.goto('about:blank')", "locations": ["eu-west-1"] });
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

fn seen_at_once(counts: &Path) -> Vec<usize> {
    std::fs::read_to_string(counts)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[tokio::test]
async fn browser_runs_queue_behind_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let (setup, counts) = fake_setup(dir.path(), 0.4);
    let ts = emulator(setup, 1).await;
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(create(&ts, "browser", browser(&format!("b{n}"), json!({}))).await);
    }
    let (status, body) = parts(
        ts.post("/v2/check-sessions/trigger", &json!({ "target": { "checkId": ids } }))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    for session in body["sessions"].as_array().unwrap() {
        let id = session["checkSessionId"].as_str().unwrap();
        let (status, done) = parts(
            ts.get(&format!("/v2/check-sessions/{id}/completion?maxWaitSeconds=10"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{done}");
        assert_eq!(done["status"], "PASSED", "{done}");
    }
    assert_eq!(seen_at_once(&counts), [1, 1, 1], "one run at a time");
}

#[tokio::test]
async fn a_run_queued_past_its_max_response_time_times_out_unrun() {
    let dir = tempfile::tempdir().unwrap();
    let (setup, counts) = fake_setup(dir.path(), 1.5);
    let ts = emulator(setup, 1).await;
    let long = create(&ts, "browser", browser("long", json!({}))).await;
    let quick = create(
        &ts,
        "browser",
        browser("quick", json!({ "maxResponseTime": 300, "degradedResponseTime": 200 })),
    )
    .await;
    let (status, body) = parts(
        ts.post(
            "/v2/check-sessions/trigger",
            &json!({ "target": { "checkId": [long] } }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    // The long run holds the one slot; the quick one queues and times out.
    let running = dir.path().join("running");
    for _ in 0..100 {
        if std::fs::read_dir(&running).unwrap().count() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let session = run_session(&ts, &quick).await;
    assert_eq!(session["status"], "TIMED_OUT", "{session}");
    let error = session["results"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("--max-browser-runs"), "{session}");
    // It never started: only the long run counted itself.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    assert_eq!(seen_at_once(&counts), [1]);
}
