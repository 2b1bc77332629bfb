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
        let client = monform_http::client().build().expect("an HTTP client");
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
    let listed: serde_json::Value = monform_http::blocking()
        .build()
        .expect("an HTTP client")
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

/// A load balancer in front of the service: it forwards connections until
/// the service behind it goes down, then answers every request 503, so
/// each request is answered (the client's breaker stays closed) and
/// retried with growing pauses.
struct Gateway {
    url: String,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Gateway {
    fn start(upstream: &str) -> Gateway {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_owned();
        let gateway = Gateway {
            url,
            down: Default::default(),
            open: Default::default(),
        };
        let (down, open) = (gateway.down.clone(), gateway.open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if down.load(Ordering::SeqCst) {
                    std::thread::spawn(move || unavailable(client));
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                    continue;
                };
                let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                open.lock().unwrap().extend([c, s]);
                if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
                    pipe(c, s);
                }
                pipe(server, client);
            }
        });
        gateway
    }

    /// The service behind goes away: open connections are cut, new ones 503.
    fn go_down(&self) {
        self.down.store(true, std::sync::atomic::Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

fn pipe(mut from: std::net::TcpStream, mut to: std::net::TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}

/// Reads one request (head and body) and answers 503, closing the connection.
fn unavailable(mut client: std::net::TcpStream) {
    use std::io::{Read, Write};
    let _ = client.set_read_timeout(Some(Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match client.read(&mut buffer) {
            Ok(n) if n > 0 => request.extend_from_slice(&buffer[..n]),
            _ => return,
        }
    };
    let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    while request.len() < head_end + length {
        match client.read(&mut buffer) {
            Ok(n) if n > 0 => request.extend_from_slice(&buffer[..n]),
            _ => break,
        }
    }
    let body = r#"{"statusCode":503,"error":"Service Unavailable","message":"no healthy upstream"}"#;
    let _ = write!(
        client,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Issue 25 item 11: SIGINT while the service is down ends an apply within
/// seconds. Behind a load balancer a down service answers 503, so nothing
/// opens the breaker and each update is retried with pauses growing to
/// seconds; the interrupt ends those pauses and sends no retry.
#[test]
fn sigint_while_the_service_is_down_exits_within_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let (served, _) = serve(
        &dir.path().join("emulator.db"),
        &["--rate-limit", "off", "--latency-ms", "40"],
    );
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("monform.toml"), "[project]\nname = \"down\"\n").unwrap();
    let checks = |name: &str| {
        let mut yaml = String::from("checks:\n");
        for i in 0..60 {
            yaml.push_str(&format!(
                "  c{i}: {{ checkType: ICMP, name: {name} {i}, activated: false, request: {{ hostname: h{i}.example.com }} }}\n"
            ));
        }
        std::fs::write(project.path().join("checks.yaml"), yaml).unwrap();
    };
    let apply = |url: &str| {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"));
        command
            .arg("--dir")
            .arg(project.path())
            .args(["--api-url", url, "--color", "never", "apply", "--auto-approve"])
            .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
            .env("MONFORM_ACCOUNT_ID", &served.account);
        command
    };
    checks("Check");
    let created = apply(&served.url).output().unwrap();
    assert!(created.status.success(), "{}", stderr(&created));

    checks("Renamed");
    let gateway = Gateway::start(&served.url);
    let mut child = apply(&gateway.url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pipe = child.stderr.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)).map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = lines_tx.send(line);
        }
        all
    });
    let next = |what: &str| loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no line with {what}"));
        if line.contains(what) {
            break line;
        }
    };
    for _ in 0..5 {
        next(": updated");
    }
    gateway.go_down();
    // The last retry's pause is 6.4 s or more: without the interrupt
    // ending it, the apply could not exit sooner.
    let announced = next("retry 6 of 6 in");
    let interrupted = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = interrupted + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "apply still running 30 s after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = interrupted.elapsed();
    let err = reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        took < Duration::from_secs(4),
        "SIGINT took {took:?} after `{announced}`:\n{err}"
    );
    assert!(err.contains("answered with an error (PUT"), "{err}");
    eprintln!("SIGINT during a {announced:?} pause: exited in {took:?}");

    // Once the service is back, the same apply finishes the renames.
    let resumed = apply(&served.url).output().unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let replan = monform()
        .arg("--dir")
        .arg(project.path())
        .args(["--api-url", &served.url, "plan", "--detailed-exitcode"])
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .output()
        .unwrap();
    assert_eq!(replan.status.code(), Some(0), "{}", stdout(&replan));
}
