//! `[reconcile] request-share` (issue 48): the reconciler reads within its
//! share of the key's rate limit, spreads a sweep over intervals, finds a
//! UI edit within a sweep, and leaves the rest of the budget to the key's
//! other clients. Against `monform serve` with its rate limit at 60/10 s
//! (the service's 600/60 scaled down: the share is 15 requests a window).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{metrics, sample, wait_until};
use crate::common::*;

const CHECKS: usize = 150;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"share\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[reconcile]\ninterval = \"2s\"\nrequest-share = \"25%\"\n",
    )
    .unwrap();
    let mut checks = String::from("checks:\n");
    for n in 0..CHECKS {
        checks.push_str(&format!(
            "  c{n}:\n    checkType: URL\n    name: Check {n}\n    frequency: 5\n    request: {{ url: \"https://example.com/{n}\" }}\n"
        ));
    }
    std::fs::write(dir.path().join("checks.yaml"), checks).unwrap();
    dir
}

fn command(served: &Served, dir: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("monform"));
    command
        .env("XDG_CONFIG_HOME", user_config_home())
        .arg("--dir")
        .arg(dir)
        .args(["--api-url", &served.url, "--color", "never"])
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account);
    command
}

/// `monform serve`'s request counts: (all, 429s), its own scrapes left out.
fn served_counts(served: &Served) -> (u64, u64) {
    let text = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(format!("{}/-/metrics", served.url))
        .send()
        .and_then(|r| r.text())
        .expect("the emulator's metrics");
    let mut counts = (0, 0);
    for line in text.lines() {
        if !line.starts_with("monform_emulator_requests_total{") || line.contains("route=\"/-/metrics\"") {
            continue;
        }
        let n: u64 = line.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        counts.0 += n;
        if line.contains("status=\"429\"") {
            counts.1 += n;
        }
    }
    counts
}

/// A person's edit in the UI: another client of the same key.
fn ui_edit(served: &Served, name: &str, frequency: u64) -> Instant {
    let http = monform_http::blocking().build().expect("an HTTP client");
    let key = served.key.clone().unwrap_or_default();
    let mut checks: Vec<Value> = Vec::new();
    for page in 1..=CHECKS.div_ceil(100) {
        let listed: Vec<Value> = http
            .get(format!("{}/v1/checks?limit=100&page={page}", served.url))
            .bearer_auth(&key)
            .header("X-Service-Account", &served.account)
            .send()
            .and_then(|r| r.json())
            .expect("the checks");
        checks.extend(listed);
    }
    let id = checks
        .iter()
        .find(|c| c["name"] == name)
        .and_then(|c| c["id"].as_str())
        .expect("the check")
        .to_owned();
    let reply = http
        .put(format!("{}/v1/checks/url/{id}", served.url))
        .bearer_auth(&key)
        .header("X-Service-Account", &served.account)
        .json(&json!({ "frequency": frequency }))
        .send()
        .expect("the edit");
    assert!(reply.status().is_success(), "{}", reply.status());
    Instant::now()
}

fn reconcile(served: &Served, dir: &Path, events: &Path, port: u16) -> Child {
    let mut command = command(served, dir);
    command
        .args(["reconcile", "--log-format", "json", "--events"])
        .arg(events)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("reconcile.log")).expect("a log file"));
    command.spawn().expect("monform reconcile starts")
}

#[test]
fn the_reconciler_reads_within_its_share_finds_a_ui_edit_in_a_sweep_and_never_starves_another_client() {
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("service.db");
    let project = project();
    let dir = project.path();
    // Applied without a rate limit (150 creates), then served at 60/10 s.
    {
        let (served, _) = serve(&db, &["--rate-limit", "off"]);
        let output = command(&served, dir)
            .args(["apply", "--auto-approve"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let (served, _) = serve(&db, &["--rate-limit", "60/10"]);
    let events = dir.join("events.jsonl");
    let port = free_port();
    let mut child = reconcile(&served, dir, &events, port);
    let scrape = |name: &str| {
        monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .is_ok()
            .then(|| sample(&metrics(port), name, None))
            .flatten()
    };
    // The first sweep spans several 2 s intervals: 3 requests each.
    let started = Instant::now();
    let log = || std::fs::read_to_string(dir.join("reconcile.log")).unwrap_or_default();
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until("a first sweep", Duration::from_secs(60), || {
            scrape("monform_reconcile_sweeps_total").is_some_and(|n| n >= 1.0)
        })
    }));
    assert!(waited.is_ok(), "no sweep within 60 s; the reconciler's log:\n{}", log());
    let sweep = scrape("monform_reconcile_sweep_seconds").unwrap();
    assert!(
        sweep >= 4.0,
        "a sweep of 3 pages of checks and every kind spans intervals: {sweep} s"
    );

    // Alone, within 15 requests a window: counted at the service over 20 s.
    let (before, _) = served_counts(&served);
    std::thread::sleep(Duration::from_secs(20));
    let (after, rejected) = served_counts(&served);
    let alone = after - before;
    assert!(
        alone <= 15 * 3 + 2,
        "the reconciler alone sent {alone} requests in 20 s, its share is 15 per 10 s"
    );
    assert!(alone >= 10, "it keeps reading: {alone} requests in 20 s");
    assert_eq!(rejected, 0, "no 429 at all");

    // A UI edit is found within about a sweep.
    let edited = ui_edit(&served, "Check 120", 10);
    wait_until("the drift event", Duration::from_secs(60), || {
        std::fs::read_to_string(&events).is_ok_and(|text| {
            text.lines()
                .any(|l| l.contains("\"event\":\"drift\"") && l.contains("checks.c120"))
        })
    });
    let found_after = edited.elapsed().as_secs_f64();
    assert!(
        found_after <= sweep + 2.0 * 2.0 + 3.0,
        "the edit was reported after {found_after:.1} s, a sweep takes {sweep:.1} s"
    );

    // Another client of the key takes 30 of a window at once (with the
    // reconciler's 15, the edit's few and the plan's, within the 60), then
    // a CI plan runs: neither gets a 429, and the plan is not held up past
    // a window.
    let http = monform_http::blocking().build().expect("an HTTP client");
    let key = served.key.clone().unwrap_or_default();
    for _ in 0..30 {
        let reply = http
            .get(format!("{}/v1/checks?limit=1", served.url))
            .bearer_auth(&key)
            .header("X-Service-Account", &served.account)
            .send()
            .expect("a reply");
        assert_ne!(reply.status().as_u16(), 429, "the other client got a 429");
    }
    let ci = Instant::now();
    let plan = command(&served, dir)
        .args(["plan", "--refresh=changed", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    assert!(
        ci.elapsed() < Duration::from_secs(12),
        "the CI plan took {:?}",
        ci.elapsed()
    );
    let (_, rejected) = served_counts(&served);
    assert_eq!(rejected, 0, "no client got a 429");
    assert!(
        scrape("monform_reconcile_read_requests_total").unwrap() > 0.0,
        "the reads are counted"
    );
    assert!(started.elapsed() < Duration::from_secs(150));

    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
