//! The reliability suite (issue 6): faults, kills and load, each bounded in
//! time, all traffic on loopback.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use monform_emulator::store::Objects;

/// A project of `checks` checks in groups of 50, with snippets, channels and variables.
fn project(checks: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"reliable\"\n").unwrap();
    let groups = checks.div_ceil(50);
    let mut yaml = String::from("groups:\n");
    for g in 0..groups {
        yaml.push_str(&format!("  g{g}: {{ name: Group {g} }}\n"));
    }
    yaml.push_str("snippets:\n  setup: { name: Setup, script: \"console.log(1)\" }\n");
    yaml.push_str("alertChannels:\n  mail: { type: EMAIL, config: { address: ops@example.com } }\n");
    yaml.push_str(
        "variables:\n  TOKEN: { value: not-really-secret, secret: true }\n  BASE: { value: https://example.com }\n",
    );
    yaml.push_str("checks:\n");
    for i in 0..checks {
        let group = i / 50;
        if i % 2 == 0 {
            yaml.push_str(&format!(
                "  c{i}:\n    checkType: API\n    name: Check {i}\n    group: g{group}\n    setupSnippet: setup\n    alertChannels: [mail]\n    request: {{ url: \"https://example.com/{i}\" }}\n"
            ));
        } else {
            yaml.push_str(&format!(
                "  c{i}:\n    checkType: ICMP\n    name: Check {i}\n    group: g{group}\n    request: {{ hostname: host{i}.example.com }}\n"
            ));
        }
    }
    std::fs::write(dir.path().join("monitors.yaml"), yaml).unwrap();
    dir
}

/// Objects in the account per kind, and how many distinct owners claim checks and groups.
fn census(emulator: &Emulator) -> (usize, usize, usize) {
    let db = emulator.server.app.store.lock();
    let account = &emulator.server.account_id;
    let total: usize = monform_model::Kind::ALL
        .iter()
        .map(|k| db.all(account, k.section()).unwrap().len())
        .sum();
    let owners = |section: &str| -> usize {
        let rows = db.all(account, section).unwrap();
        let tags: BTreeSet<String> = rows
            .iter()
            .filter_map(|r| {
                r.body["tags"]
                    .as_array()?
                    .iter()
                    .filter_map(|t| t.as_str())
                    .find(|t| t.starts_with("monform:"))
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(
            tags.len(),
            rows.len(),
            "{section}: every object has its own owner tag (no duplicates)"
        );
        rows.len()
    };
    (total, owners("checks"), owners("groups"))
}

fn apply(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).args(args).output().unwrap()
}

#[test]
fn every_fault_mode_at_20_percent_converges_with_500_objects() {
    let config = monform_emulator::Config {
        rate_limit: None,
        fault_rate: 0.2,
        fault_seed: 2026,
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    // 485 checks + 10 groups + snippet + channel + 2 variables ≈ 500 objects,
    // and the project's ownership record (a variable).
    let dir = project(485);
    let mut runs = 0;
    loop {
        runs += 1;
        let output = apply(&emulator, dir.path(), &["apply", "--auto-approve"]);
        if output.status.success() {
            break;
        }
        assert!(runs < 4, "not converged after {runs} runs:\n{}", stderr(&output));
    }
    let (total, checks, groups) = census(&emulator);
    assert_eq!(
        (total, checks, groups),
        (500, 485, 10),
        "converged in {runs} runs with no duplicates and no orphans"
    );
    let faults = emulator.server.app.metrics.faults(None);
    assert!(faults > 50, "faults were really injected ({faults})");
}

#[test]
fn sigkill_at_50_points_of_apply_and_of_destroy_converges() {
    let config = monform_emulator::Config {
        rate_limit: None,
        latency: Duration::from_millis(3),
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    let dir = project(100);
    // MONFORM_TEST_SEED=<n> replays the kill moments; printed on failure.
    let seed = Seed::new();
    let mut random = seed.lcg();
    let started = Instant::now();
    for _ in 0..50 {
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "seed {seed}: bounded in time"
        );
        emulator.kill_randomly(dir.path(), &["apply", "--auto-approve"], &mut random, 10, 400);
    }
    let output = apply(&emulator, dir.path(), &["apply", "--auto-approve"]);
    assert!(output.status.success(), "seed {seed}: {}", stderr(&output));
    // 106 objects and the project's ownership record.
    assert_eq!(census(&emulator), (107, 100, 2), "seed {seed}");
    let state = std::fs::read_to_string(dir.path().join(".monform/state.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&state).expect("state is valid JSON");

    for _ in 0..50 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "seed {seed}: bounded in time"
        );
        emulator.kill_randomly(
            dir.path(),
            &["destroy", "--auto-approve", "--allow-mass-delete"],
            &mut random,
            10,
            400,
        );
    }
    let output = apply(
        &emulator,
        dir.path(),
        &["destroy", "--auto-approve", "--allow-mass-delete"],
    );
    assert!(output.status.success(), "seed {seed}: {}", stderr(&output));
    assert_eq!(census(&emulator), (0, 0, 0), "seed {seed}: destroy converged");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".monform/state.json")).unwrap()).unwrap();
    assert_eq!(state["resources"].as_object().map(|r| r.len()), Some(0), "seed {seed}");
}

#[test]
fn the_emulator_under_load_loses_no_write() {
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        ..Default::default()
    });
    let url = emulator.server.url();
    let key = emulator.server.api_key.clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    let created = emulator.block_on(async move {
        let client = reqwest::Client::new();
        let workers = (0..50).map(|worker| {
            let (client, url, key) = (client.clone(), url.clone(), key.clone());
            tokio::spawn(async move {
                let mut ids = Vec::new();
                let mut server_errors = 0;
                let mut n = 0;
                while Instant::now() < deadline && n < 400 {
                    n += 1;
                    let body = serde_json::json!({"name": format!("load {worker}-{n}"), "script": "x"});
                    let response = client
                        .post(format!("{url}/v1/snippets"))
                        .bearer_auth(&key)
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    if response.status().is_server_error() {
                        server_errors += 1;
                        continue;
                    }
                    assert_eq!(response.status(), 201);
                    let created: serde_json::Value = response.json().await.unwrap();
                    ids.push(created["id"].clone());
                    let read = client
                        .get(format!("{url}/v1/checks?limit=5"))
                        .bearer_auth(&key)
                        .send()
                        .await
                        .unwrap();
                    if read.status().is_server_error() {
                        server_errors += 1;
                    }
                }
                (ids, server_errors)
            })
        });
        let mut all = Vec::new();
        for worker in futures_util::future::join_all(workers).await {
            let (ids, errors) = worker.unwrap();
            assert_eq!(errors, 0, "no 5xx under load");
            all.extend(ids);
        }
        all
    });
    assert!(created.len() > 500, "a real load ({} writes)", created.len());
    let db = emulator.server.app.store.lock();
    let stored: BTreeSet<String> = db
        .all(&emulator.server.account_id, "snippets")
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    for id in &created {
        assert!(
            stored.contains(&id.to_string()),
            "write {id} was acknowledged and is readable"
        );
    }
}

/// The service goes away in the middle of an apply (issue 25 item 11):
/// after a few requests in a row fail to reach it the apply stops trying,
/// says what it did and did not do, and exits; run again once the service
/// is back, it finishes the job without duplicates.
#[test]
fn an_apply_whose_service_goes_away_stops_and_resumes_later() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("emulator.db");
    let port = free_port();
    let args = ["--rate-limit", "off", "--latency-ms", "40"];
    let (served, _) = serve_at(&db, port, &args, "warn");
    let project = project(300);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .arg("--dir")
        .arg(project.path())
        .args(["--api-url", &served.url, "--color", "never", "apply", "--auto-approve"])
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pipe = child.stderr.take().unwrap();
    // The service goes away after a few dozen objects exist, not after a
    // fixed time: on a fast machine the whole apply fit in 2.5 seconds.
    let (created_tx, created_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        let mut created = 0;
        for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)) {
            let Ok(line) = line else { break };
            if line.ends_with(": created") {
                created += 1;
                if created == 30 {
                    let _ = created_tx.send(());
                }
            }
            err.push_str(&line);
            err.push('\n');
        }
        err
    });
    created_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the apply creates objects");
    let (key, account) = (served.key.clone(), served.account.clone());
    drop(served);
    // Bounded: without the breaker the apply retried every object for minutes.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "apply still running 2 minutes after the service went away"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let err = reader.join().unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("stopped answering"), "{err}");
    assert!(err.contains("not started: the service is unreachable"), "{err}");
    assert!(err.contains("Apply incomplete:"), "{err}");

    let (served, _) = serve_at(&db, port, &args, "warn");
    assert_eq!((&served.key, &served.account), (&key, &account));
    let output = monform()
        .arg("--dir")
        .arg(project.path())
        .args(["--api-url", &served.url, "--color", "never", "apply", "--auto-approve"])
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let listed: serde_json::Value = reqwest::blocking::Client::new()
        .get(format!("{}/v1/checks?limit=100&page=4", served.url))
        .bearer_auth(served.key.as_deref().unwrap_or_default())
        .header("X-Service-Account", &served.account)
        .send()
        .and_then(|r| r.json())
        .unwrap();
    // 300 checks, no duplicate: the fourth page of 100 is empty.
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
    let replan = monform()
        .arg("--dir")
        .arg(project.path())
        .args([
            "--api-url",
            &served.url,
            "--color",
            "never",
            "plan",
            "--detailed-exitcode",
        ])
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .output()
        .unwrap();
    assert_eq!(replan.status.code(), Some(0), "{}", stdout(&replan));
}
