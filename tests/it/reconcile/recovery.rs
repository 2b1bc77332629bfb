//! `monform reconcile` when something goes wrong or is left out (issue 30):
//! SIGTERM in the middle of an apply, drift delivered to a SLACK channel,
//! `--exclude`, and the back-off while the service is down.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{CHECKS, PATIENCE, check, metrics, project, reconcile, sample, ui_edit, wait_until};
use crate::common::receiver::Receiver;
use crate::common::*;

/// The lines of an `--events` file (none yet when it does not exist).
fn events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect()
}

fn of(events: &[Value], event: &str) -> Vec<Value> {
    events.iter().filter(|e| e["event"] == event).cloned().collect()
}

/// A reconciler started by a test, killed if the test fails first.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sigterm(child: &std::process::Child) {
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
}

/// Waits at most `timeout` for `child` to exit; kills it (and fails) after.
fn exit_code(child: &mut std::process::Child, timeout: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            panic!("still running {timeout:?} after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM while the reconciler applies 40 new checks: the creates in
/// flight finish and are recorded, none starts after, the process exits 0;
/// the next apply creates only the rest (no duplicate, state consistent).
#[test]
fn sigterm_during_an_apply_finishes_the_changes_in_flight_and_exits_0() {
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        // Slow enough that the apply is still running when the signal lands.
        latency: Duration::from_millis(250),
        ..Default::default()
    });
    let receiver = Receiver::start();
    let mut checks = String::from("checks:\n");
    for i in 0..40 {
        checks.push_str(&format!(
            "  c{i}:\n    checkType: URL\n    name: C{i}\n    request: {{ url: \"https://example.com/{i}\" }}\n"
        ));
    }
    let project = project("1h", "apply-changes = true\n", &receiver.url, &checks);
    let dir = project.path();
    let events_file = dir.join("events.jsonl");
    let listen = format!("127.0.0.1:{}", free_port());
    let mut child = Running(reconcile(
        &emulator,
        dir,
        &["--events", events_file.to_str().unwrap(), "--listen", &listen],
    ));
    let child = &mut child.0;
    let created_checks = || -> Vec<String> {
        of(&events(&events_file), "applied")
            .iter()
            .filter_map(|e| e["address"].as_str().map(str::to_owned))
            .filter(|a| a.starts_with("checks."))
            .collect()
    };
    wait_until("the first created check", Duration::from_secs(60), || {
        !created_checks().is_empty()
    });
    sigterm(child);
    assert_eq!(exit_code(child, Duration::from_secs(60)), Some(0));

    let created = created_checks();
    assert!(created.len() < 40, "the signal stopped the apply early: {created:?}");
    let listed = emulator.call("GET", "/v1/checks?limit=100", None);
    let listed = listed.as_array().unwrap();
    assert_eq!(
        listed.len(),
        created.len(),
        "every create that reached the service finished and was reported: {created:?}"
    );
    assert!(
        of(&events(&events_file), "apply_failed").is_empty(),
        "nothing failed: {:?}",
        events(&events_file)
    );

    // The state knows exactly those: the next apply creates only the rest
    // (of the 40 checks and the alert channel).
    let applied_before = of(&events(&events_file), "applied").len();
    let applied = emulator.applied(dir);
    assert!(
        stdout(&applied).contains(&format!("Plan: {} to create,", 41 - applied_before)),
        "{applied_before} created before: {}",
        stdout(&applied)
    );
    let listed = emulator.call("GET", "/v1/checks?limit=100", None);
    let mut names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 40, "no duplicate: {listed}");
    assert_eq!(listed.as_array().unwrap().len(), 40, "no duplicate: {listed}");
}

/// A SLACK channel named by `[reconcile] notify` gets what Slack's incoming
/// webhooks take: a JSON POST with a `text`, once per drift, and a
/// back-in-sync message when it ends.
#[test]
fn drift_reaches_a_slack_channel_as_an_incoming_webhook_message() {
    let emulator = Emulator::start();
    let slack = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"recon\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[reconcile]\ninterval = \"1m\"\nnotify = [\"ops-slack\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("monitors.yaml"),
        format!(
            "{CHECKS}alertChannels:\n  ops-slack:\n    type: SLACK\n    config: {{ url: \"${{env:DRIFT_SLACK_URL}}\" }}\n    sendRecovery: false\n    sendFailure: false\n    sendDegraded: false\n"
        ),
    )
    .unwrap();
    let dir = dir.path();
    let run = |args: &[&str]| {
        emulator
            .monform(dir)
            .env("DRIFT_SLACK_URL", &slack.url)
            .args(args)
            .output()
            .unwrap()
    };
    let applied = run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));

    ui_edit(&emulator, "Homepage", json!({"frequency": 10}));
    let output = run(&["reconcile", "--once"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let received = slack.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let message = &received[0];
    assert_eq!(message.method, "POST");
    assert_eq!(message.path, "/hook");
    assert!(
        message
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json")),
        "{message:?}"
    );
    let body = message.body.as_object().expect("a JSON object");
    let text = body["text"].as_str().expect("Slack's `text`");
    // checks.homepage in project recon; not checks.api (reverted, not reported).
    insta::assert_snapshot!("slack_drift", steady(text));
    for key in body.keys() {
        // Keys an incoming webhook reads; anything else Slack ignores at best.
        assert!(
            ["text", "blocks", "attachments", "mrkdwn"].contains(&key.as_str()),
            "{key} in {body:?}"
        );
    }

    // The drift persists: no second message.
    let output = run(&["reconcile", "--once"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(slack.received().len(), 1);

    // Put back: one back-in-sync message.
    ui_edit(&emulator, "Homepage", json!({"frequency": 5}));
    let output = run(&["reconcile", "--once"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let received = slack.received();
    assert_eq!(received.len(), 2, "{received:?}");
    let text = received[1].body["text"].as_str().unwrap();
    insta::assert_snapshot!("slack_back_in_sync", steady(text));
}

/// `--exclude` on reconcile: the excluded resources' drift is neither
/// reverted nor reported; without it, it is.
#[test]
fn exclude_leaves_the_excluded_resources_drift_alone() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project("1m", "", &receiver.url, CHECKS);
    let dir = project.path();
    emulator.applied(dir);
    ui_edit(&emulator, "API", json!({"frequency": 15}));
    ui_edit(&emulator, "Homepage", json!({"frequency": 10}));

    let events_file = dir.join("events.jsonl");
    let output = emulator
        .monform(dir)
        .args(["reconcile", "--once", "--events", events_file.to_str().unwrap()])
        .args(["--exclude", "checks.api", "--exclude", "checks.home*"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(check(&emulator, "API")["frequency"], 15, "not reverted");
    assert!(receiver.reports().is_empty(), "{:?}", receiver.reports());
    let seen = std::fs::read_to_string(&events_file).unwrap_or_default();
    assert!(
        !seen.contains("checks.api") && !seen.contains("checks.homepage"),
        "{seen}"
    );

    let output = emulator.monform(dir).args(["reconcile", "--once"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(check(&emulator, "API")["frequency"], 5, "reverted");
    let reports = receiver.reports();
    let types: Vec<(&Value, &Value)> = reports
        .iter()
        .map(|r| (&r["type"], &r["drifted"][0]["address"]))
        .collect();
    assert_eq!(
        types,
        [
            (&json!("reverted"), &json!("checks.api")),
            (&json!("drift"), &json!("checks.homepage"))
        ],
        "{reports:?}"
    );
}

/// The service goes down: the attempts after failed intervals are 2, 4,
/// then 8 intervals apart (README), and once it is back the reconciler
/// recovers and runs every interval again.
#[test]
fn a_failing_service_is_retried_less_and_less_often_then_recovered_from() {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("emulator.db");
    let port = free_port();
    let serve_args = ["--rate-limit", "off"];
    let (served, _) = serve_at(&db, port, &serve_args, "warn");
    let receiver = Receiver::start();
    let project = project("1s", "", &receiver.url, CHECKS);
    let dir = project.path();
    let command = |args: &[&str]| {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"));
        command
            .arg("--dir")
            .arg(dir)
            .args(["--api-url", &served.url, "--color", "never"])
            .args(args)
            .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
            .env("MONFORM_ACCOUNT_ID", &served.account);
        command
    };
    let applied = command(&["apply", "--auto-approve"]).output().unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));

    let events_file = dir.join("events.jsonl");
    let metrics_port = free_port();
    let listen = format!("127.0.0.1:{metrics_port}");
    let child = command(&[
        "reconcile",
        "--events",
        events_file.to_str().unwrap(),
        "--listen",
        &listen,
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let mut child = Running(child);
    let child = &mut child.0;
    let in_sync_runs = || {
        monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("http://127.0.0.1:{metrics_port}/metrics"))
            .send()
            .is_ok()
            .then(|| {
                sample(
                    &metrics(metrics_port),
                    "monform_reconcile_runs_total",
                    Some(("result", "in_sync")),
                )
            })
            .flatten()
            .unwrap_or(0.0)
    };
    wait_until("an interval in sync", PATIENCE, || in_sync_runs() >= 1.0);

    drop(served);
    // The times at which each failed interval was reported, as seen here.
    let mut failures: Vec<Instant> = Vec::new();
    wait_until("four failed intervals", Duration::from_secs(90), || {
        let count = of(&events(&events_file), "api_error").len();
        while failures.len() < count {
            failures.push(Instant::now());
        }
        failures.len() >= 4
    });
    for (i, expected) in [2u64, 4, 8].into_iter().enumerate() {
        let gap = failures[i + 1] - failures[i];
        assert!(
            gap >= Duration::from_secs(expected) - Duration::from_millis(300)
                && gap <= Duration::from_secs(expected + 6),
            "attempt {} came {gap:?} after the one before, not {expected} intervals",
            i + 2
        );
    }
    let before_recovery = in_sync_runs();

    let (_served, _) = serve_at(&db, port, &serve_args, "warn");
    let back = Instant::now();
    wait_until("the recovery", Duration::from_secs(40), || {
        in_sync_runs() > before_recovery
    });
    assert!(
        back.elapsed() <= Duration::from_secs(8 + 6),
        "recovered {:?} after the service came back",
        back.elapsed()
    );
    // Then every interval again, not every 8: the next two intervals come
    // sooner than the back-off's 8 would (counted as they come, not
    // guessed from a sleep, which a loaded machine's slow intervals beat).
    let mut last = (in_sync_runs(), Instant::now());
    for _ in 0..2 {
        wait_until("an interval after the recovery", PATIENCE, || in_sync_runs() > last.0);
        let gap = last.1.elapsed();
        assert!(
            gap < Duration::from_secs(8),
            "an interval {gap:?} after the one before: backing off still"
        );
        last = (in_sync_runs(), Instant::now());
    }
    let scrape = metrics(metrics_port);
    assert!(sample(&scrape, "monform_reconcile_api_errors_total", None).unwrap() >= 4.0);

    sigterm(child);
    assert_eq!(exit_code(child, Duration::from_secs(30)), Some(0));
}
