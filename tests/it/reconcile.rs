//! `monform reconcile` (issue 30), end to end: the real binary against the
//! real emulator, a loopback webhook receiver for the drift reports, the
//! `/metrics` page read with a Prometheus text-format parser.

use crate::common;

mod listener;
mod recovery;
mod reports;
mod share;

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use common::check_named as check;
use common::receiver::Receiver;
use common::*;
use serde_json::{Value, json};

fn project(interval: &str, reconcile_extra: &str, hook: &str, checks: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        format!(
            "[project]\nname = \"recon\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[reconcile]\ninterval = \"{interval}\"\nnotify = [\"ops-webhook\"]\n{reconcile_extra}"
        ),
    )
    .unwrap();
    let channels = format!(
        "alertChannels:\n  ops-webhook:\n    type: WEBHOOK\n    config: {{ name: ops, url: \"{hook}\" }}\n    sendRecovery: false\n    sendFailure: false\n    sendDegraded: false\n"
    );
    std::fs::write(dir.path().join("monitors.yaml"), format!("{checks}{channels}")).unwrap();
    dir
}

const CHECKS: &str = r#"checks:
  homepage:
    checkType: URL
    name: Homepage
    frequency: 5
    request: { url: "https://example.com/" }
  api:
    checkType: URL
    name: API
    frequency: 5
    request: { url: "https://example.com/api" }
    lifecycle: { drift: revert }
  status:
    checkType: URL
    name: Status
    frequency: 5
    request: { url: "https://example.com/status" }
    lifecycle: { ignoreChanges: [frequency] }
"#;

fn ui_edit(emulator: &Emulator, name: &str, body: Value) {
    let id = check(emulator, name)["id"].as_str().unwrap().to_owned();
    emulator.call("PUT", &format!("/v1/checks/url/{id}"), Some(body));
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How long a test waits for something the reconciler does at an
/// interval. The tests wait on the event itself (a report received, an
/// interval counted), so this cap is no guess of how long an interval
/// takes: on a 2-core CI machine beside the loader's fuzzing, intervals
/// of 1 s took over 10 s. Only a real failure waits this long.
const PATIENCE: Duration = Duration::from_secs(60);

/// Intervals the reconciler listening on `port` has finished, whatever
/// their result (`monform_reconcile_runs_total`, all results summed).
fn intervals(port: u16) -> f64 {
    metrics(port)
        .samples
        .iter()
        .filter(|s| s.metric == "monform_reconcile_runs_total")
        .filter_map(|s| match s.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
        .sum()
}

/// Waits until the reconciler listening on `port` has finished `n` more
/// intervals: "several intervals later", counted rather than guessed.
fn wait_intervals(port: u16, n: u32) {
    let from = intervals(port);
    wait_until(&format!("{n} more intervals"), PATIENCE, || {
        intervals(port) >= from + f64::from(n)
    });
}

fn reconcile(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Child {
    let mut command = emulator.background(dir, &[]);
    command.arg("reconcile").args(args).stderr(std::process::Stdio::piped());
    command.spawn().expect("monform reconcile starts")
}

fn metrics(port: u16) -> prometheus_parse::Scrape {
    let text = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .and_then(|r| r.text())
        .expect("metrics page");
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("valid Prometheus text")
}

fn sample(scrape: &prometheus_parse::Scrape, name: &str, label: Option<(&str, &str)>) -> Option<f64> {
    scrape
        .samples
        .iter()
        .find(|s| s.metric == name && label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
        .and_then(|s| match s.value {
            prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
}

#[test]
fn drift_is_reported_once_reverted_by_policy_and_ignored_fields_left_alone() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project("1s", "", &receiver.url, CHECKS);
    let dir = project.path();
    emulator.applied(dir);

    let events = dir.join("events.jsonl");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut child = reconcile(
        &emulator,
        dir,
        &[
            "--events",
            events.to_str().unwrap(),
            "--listen",
            &listen,
            "--log-format",
            "json",
        ],
    );
    wait_until("/readyz", PATIENCE, || {
        monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .is_ok_and(|r| r.status().is_success())
    });

    // Edits in the UI: a notify check, a revert check, an ignored field.
    ui_edit(&emulator, "Homepage", json!({"frequency": 10}));
    ui_edit(&emulator, "API", json!({"frequency": 15}));
    ui_edit(&emulator, "Status", json!({"frequency": 30}));

    wait_until("the drift report", PATIENCE, || !of_type(&receiver, "drift").is_empty());
    let report = of_type(&receiver, "drift")[0].clone();
    assert_eq!(report["project"], "recon", "{report}");
    let drifted = report["drifted"].as_array().unwrap();
    assert_eq!(drifted.len(), 1, "only the notify check: {report}");
    assert_eq!(drifted[0]["address"], "checks.homepage");
    assert_eq!(drifted[0]["fields"][0]["path"], "frequency");
    assert_eq!(drifted[0]["fields"][0]["service"], 10);
    assert_eq!(drifted[0]["fields"][0]["files"], 5);
    insta::assert_snapshot!("drift_report_markdown", steady(report["markdown"].as_str().unwrap()));

    // The revert check holds the files' value again; the ignored field
    // keeps the UI's. The revert report is sent after the revert is
    // applied (and, if the API edit landed after the interval that found
    // the Homepage's, a whole sweep after the drift report).
    wait_until("the revert report", PATIENCE, || {
        !of_type(&receiver, "reverted").is_empty()
    });
    assert_eq!(check(&emulator, "API")["frequency"], 5, "reverted");
    assert_eq!(check(&emulator, "Status")["frequency"], 30);
    assert_eq!(check(&emulator, "Homepage")["frequency"], 10, "notify changes nothing");

    // Several intervals later (each reads the reported drift first): still one report.
    wait_intervals(port, 3);
    assert_eq!(of_type(&receiver, "drift").len(), 1, "{:?}", receiver.reports());
    // The revert, told once (the service's value and the files').
    let reverted = of_type(&receiver, "reverted");
    assert_eq!(reverted.len(), 1, "{:?}", receiver.reports());
    assert_eq!(
        reverted[0]["drifted"][0]["fields"],
        json!([{"path": "frequency", "service": 15, "files": 5, "sensitive": false}])
    );
    let scrape = metrics(port);
    assert_eq!(
        sample(&scrape, "monform_reconcile_drifted_resources", Some(("kind", "checks"))),
        Some(1.0)
    );
    assert!(sample(&scrape, "monform_reconcile_last_success_timestamp_seconds", None).unwrap() > 0.0);
    assert!(sample(&scrape, "monform_reconcile_applied_changes_total", None).unwrap() >= 1.0);
    assert_eq!(sample(&scrape, "monform_reconcile_leader", None), Some(1.0));

    // Put back by hand: one back-in-sync report.
    ui_edit(&emulator, "Homepage", json!({"frequency": 5}));
    wait_until("the back-in-sync report", PATIENCE, || {
        !of_type(&receiver, "in-sync").is_empty()
    });
    let back = of_type(&receiver, "in-sync")[0].clone();
    assert_eq!(back["type"], "in-sync", "{back}");
    assert_eq!(back["resolved"], json!(["checks.homepage"]), "{back}");

    // SIGTERM: exits 0.
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    for line in log.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|_| panic!("not a JSON log line: {line}"));
    }
    let events = std::fs::read_to_string(&events).unwrap();
    assert!(events.lines().any(|l| l.contains("\"event\":\"drift\"")), "{events}");
    assert!(
        events
            .lines()
            .any(|l| l.contains("\"event\":\"applied\"") && l.contains("checks.api")),
        "{events}"
    );
    assert!(
        !events.contains("checks.status"),
        "an ignored field is no change: {events}"
    );
    assert_eq!(receiver.reports().len(), 3);
}

/// The reports of one `type` (`drift`, `reverted`, `in-sync`) received so far.
fn of_type(receiver: &Receiver, kind: &str) -> Vec<Value> {
    receiver.reports().into_iter().filter(|r| r["type"] == kind).collect()
}

#[test]
fn once_exits_as_plan_detailed_exitcode_and_a_broken_file_changes_nothing() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project("1m", "", &receiver.url, CHECKS);
    let dir = project.path();
    emulator.applied(dir);
    let once = |dir: &Path| emulator.monform(dir).args(["reconcile", "--once"]).output().unwrap();

    let output = once(dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    ui_edit(&emulator, "API", json!({"frequency": 15}));
    let output = once(dir);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(check(&emulator, "API")["frequency"], 5, "reverted");

    // A broken file: nothing changes, and the reason is given.
    ui_edit(&emulator, "API", json!({"frequency": 15}));
    edit(
        dir,
        "monitors.yaml",
        "frequency: 5\n    request: { url: \"https://example.com/api\" }",
        "frequency: fast\n    request: { url: \"https://example.com/api\" }",
    );
    insta::assert_snapshot!("once_with_a_broken_file", transcript(&once(dir)));
    assert_eq!(check(&emulator, "API")["frequency"], 15, "nothing changed");
}

#[test]
fn the_mass_delete_threshold_stops_a_reconcile_whose_files_lost_most_resources() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let mut checks = String::from("checks:\n");
    for i in 0..12 {
        checks.push_str(&format!(
            "  c{i}:\n    checkType: URL\n    name: C{i}\n    request: {{ url: \"https://example.com/{i}\" }}\n"
        ));
    }
    let project = project("1m", "apply-changes = true\n", &receiver.url, &checks);
    let dir = project.path();
    emulator.applied(dir);
    let text = std::fs::read_to_string(dir.join("monitors.yaml")).unwrap();
    std::fs::write(
        dir.join("monitors.yaml"),
        text.replace(
            &checks,
            "checks:\n  c0:\n    checkType: URL\n    name: C0\n    request: { url: \"https://example.com/0\" }\n",
        ),
    )
    .unwrap();
    let mut once = emulator.monform(dir);
    assert_run!(
        "once_over_the_mass_delete_threshold",
        once.args(["reconcile", "--once"])
    );
    assert_eq!(
        emulator
            .call("GET", "/v1/checks?limit=100", None)
            .as_array()
            .map(Vec::len),
        Some(12)
    );
}

/// Two replicas on the PostgreSQL state: one leads; SIGKILLed, the other
/// takes over within two intervals, and the receiver saw each drift once.
#[test]
fn two_replicas_on_postgres_hand_over_when_the_leader_is_killed() {
    let Some(url) = postgres() else { return };
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let name = unique("recon");
    let project = project("2s", "", &receiver.url, CHECKS);
    let dir = project.path();
    edit(
        dir,
        "monform.toml",
        "name = \"recon\"",
        &format!("name = \"{name}\"\n\n[state]\nbackend = \"postgres\""),
    );
    let applied = emulator
        .monform(dir)
        .env("MONFORM_STATE_URL", &url)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));

    let ports = [free_port(), free_port()];
    let mut replicas: Vec<std::process::Child> = ports
        .iter()
        .map(|port| {
            let listen = format!("127.0.0.1:{port}");
            let mut command = emulator.background(dir, &["reconcile", "--listen", &listen]);
            command.env("MONFORM_STATE_URL", &url);
            command.spawn().expect("a replica starts")
        })
        .collect();
    let leader_of = |port: u16| -> Option<bool> {
        let text = monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("http://127.0.0.1:{port}/metrics"))
            .send()
            .ok()?
            .text()
            .ok()?;
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).ok()?;
        sample(&scrape, "monform_reconcile_leader", None).map(|v| v == 1.0)
    };
    let mut leader = None;
    wait_until("a leader", PATIENCE, || {
        let states = [leader_of(ports[0]), leader_of(ports[1])];
        leader = states.iter().position(|s| *s == Some(true));
        leader.is_some() && states.iter().all(Option::is_some)
    });
    let leader = leader.unwrap();
    assert_eq!(leader_of(ports[1 - leader]), Some(false), "one leader only");

    ui_edit(&emulator, "Homepage", json!({"frequency": 10}));
    wait_until("the drift report", PATIENCE, || !of_type(&receiver, "drift").is_empty());

    // Mid-interval: killed without a chance to clean up.
    std::thread::sleep(Duration::from_millis(700));
    replicas[leader].kill().unwrap();
    replicas[leader].wait().unwrap();
    let killed = Instant::now();
    wait_until("the takeover", PATIENCE, || leader_of(ports[1 - leader]) == Some(true));
    assert!(
        killed.elapsed() < Duration::from_secs(4),
        "within two intervals: {:?}",
        killed.elapsed()
    );

    // The new leader acts (reverts) and does not report the old drift again.
    ui_edit(&emulator, "API", json!({"frequency": 15}));
    wait_until("the revert report", PATIENCE, || {
        !of_type(&receiver, "reverted").is_empty()
    });
    assert_eq!(check(&emulator, "API")["frequency"], 5, "reverted");
    // The interval that reverted (and would have told the old drift
    // again) is over, and one more.
    wait_intervals(ports[1 - leader], 2);
    let reports = of_type(&receiver, "drift");
    assert_eq!(reports.len(), 1, "each drift once: {reports:?}");
    let survivor = &mut replicas[1 - leader];
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(survivor.id() as i32, libc::SIGTERM) };
    assert_eq!(survivor.wait().unwrap().code(), Some(0));
}
