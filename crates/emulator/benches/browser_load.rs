//! The API under browser-run load (issue 28 item 7): while sessions of
//! many browser checks run, a client lists checks (`GET /v1/checks?limit=100`)
//! every 20 ms; the p99 of those lists must stay under 100 ms with the
//! default pool (`max_browser_runs` = the cores). For comparison the same
//! load runs with an unbounded pool, as before the pool existed.
//!
//! Each "browser run" is a stand-in for Node.js and Chromium (no browser
//! is needed): a shell loop that keeps one core busy until the next full
//! second of the clock, as a browser does while it renders.
//!
//! `cargo bench -p monform-emulator --bench browser_load` (release).
//! `MONFORM_BENCH_BROWSER_CHECKS` sets how many browser checks run (default 40).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use monform_emulator::{Config, start_local};
use monform_runner::BrowserSetup;
use serde_json::{Value, json};

const TARGET_P99: Duration = Duration::from_millis(100);
const LIST_EVERY: Duration = Duration::from_millis(20);

/// A stand-in for Node.js that keeps a core busy for about a second.
fn busy_setup(dir: &Path) -> BrowserSetup {
    let node = dir.join("node");
    std::fs::write(
        &node,
        "#!/bin/sh\nend=$(( $(date +%s) + 1 ))\nwhile [ \"$(date +%s)\" -lt \"$end\" ]; do :; done\n",
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let modules = dir.join("node_modules");
    std::fs::create_dir_all(modules.join("playwright-core")).expect("mkdir");
    std::fs::write(modules.join("playwright-core").join("package.json"), "{}").expect("write");
    BrowserSetup {
        node: Some(node),
        node_modules: Some(modules),
        chromium: Some(PathBuf::from("/bin/sh")),
    }
}

struct Measured {
    lists: Vec<Duration>,
    /// From the trigger until every session was final.
    all_done: Duration,
}

async fn measure(setup: BrowserSetup, slots: usize, browser_checks: usize) -> Measured {
    let server = start_local(Config {
        rate_limit: None,
        execute_checks: true,
        session_duration: Duration::from_millis(20),
        max_browser_runs: slots,
        browser: Some(setup),
        ..Config::default()
    })
    .await
    .expect("emulator starts");
    let client = monform_http::client().build().expect("an HTTP client");
    let (base, key) = (server.url(), server.api_key.clone());
    let mut ids = Vec::new();
    for n in 0..browser_checks {
        let body = json!({
            "name": format!("browser {n}"), "script": "await page.goto('about:blank')",
            "locations": ["eu-west-1"], "maxResponseTime": 120_000, "degradedResponseTime": 60_000,
        });
        let created: Value = client
            .post(format!("{base}/v1/checks/browser?autoAssignAlerts=false"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .expect("create")
            .json()
            .await
            .expect("JSON");
        ids.push(created["id"].clone());
    }
    let started = Instant::now();
    let triggered: Value = client
        .post(format!("{base}/v2/check-sessions/trigger"))
        .bearer_auth(&key)
        .json(&json!({ "target": { "checkId": ids } }))
        .send()
        .await
        .expect("trigger")
        .json()
        .await
        .expect("JSON");
    let sessions: Vec<String> = triggered["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["checkSessionId"].as_str().expect("an id").to_owned())
        .collect();
    let waiter = {
        let (client, base, key) = (client.clone(), base.clone(), key.clone());
        tokio::spawn(async move {
            for id in sessions {
                loop {
                    let response = client
                        .get(format!("{base}/v2/check-sessions/{id}/completion?maxWaitSeconds=10"))
                        .bearer_auth(&key)
                        .send()
                        .await
                        .expect("completion");
                    if response.status() != 408 {
                        break;
                    }
                }
            }
            started.elapsed()
        })
    };
    let mut lists = Vec::new();
    while !waiter.is_finished() {
        let sent = Instant::now();
        let response = client
            .get(format!("{base}/v1/checks?limit=100"))
            .bearer_auth(&key)
            .send()
            .await
            .expect("list");
        assert_eq!(response.status(), 200);
        response.bytes().await.expect("body");
        lists.push(sent.elapsed());
        tokio::time::sleep(LIST_EVERY).await;
    }
    let all_done = waiter.await.expect("waiter");
    server.shutdown().await.expect("shutdown");
    lists.sort();
    Measured { lists, all_done }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let checks = std::env::var("MONFORM_BENCH_BROWSER_CHECKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().expect("temporary directory");
    let setup = busy_setup(dir.path());
    let cores = monform_emulator::domain::sessions::pool::default_size();
    println!();
    println!(
        "GET /v1/checks?limit=100 every {} ms while {checks} browser runs (a busy core each, up to 1 s) run",
        LIST_EVERY.as_millis()
    );
    println!();
    println!(
        "{:<28}  {:>6}  {:>8}  {:>8}  {:>8}  {:>12}",
        "pool", "lists", "p50 ms", "p99 ms", "max ms", "all done s"
    );
    let mut bounded_p99 = Duration::ZERO;
    for (label, slots) in [
        (format!("bounded ({cores}, default)"), cores),
        ("unbounded".to_owned(), 10_000),
    ] {
        let m = measure(setup.clone(), slots, checks).await;
        let p99 = percentile(&m.lists, 0.99);
        if slots == cores {
            bounded_p99 = p99;
        }
        println!(
            "{label:<28}  {:>6}  {:>8}  {:>8}  {:>8}  {:>12.1}",
            m.lists.len(),
            ms(percentile(&m.lists, 0.5)),
            ms(p99),
            ms(m.lists.last().copied().unwrap_or_default()),
            m.all_done.as_secs_f64()
        );
    }
    println!();
    let verdict = if bounded_p99 < TARGET_P99 { "PASS" } else { "FAIL" };
    println!(
        "p99 of a list under load with the default pool: {} ms (target under {} ms): {verdict}",
        ms(bounded_p99),
        TARGET_P99.as_millis()
    );
    assert!(
        bounded_p99 < TARGET_P99,
        "the API must stay responsive under browser load"
    );
}
