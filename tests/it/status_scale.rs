//! `monform status` past [`READ_EVERY_CHECK_UP_TO`] checks (issue 51: the
//! status tool under 3 s at 10,000 checks): the figures and the recent
//! window from two reports, each check's latest result read only when the
//! report cannot vouch for it (it failed, an API check may have been
//! degraded, the service no longer lists it), and read for the addresses
//! named; the CLI and `monform mcp`'s status tool through the same engine
//! op, with the same counts. And `status --format json`'s SLO part (issue
//! 50 item 3): each SLO as `slo status --format json` shows it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use monform_engine::ops::READ_EVERY_CHECK_UP_TO;

/// API checks that pass: with the others, more than the exact path reads.
const PASSING_API: usize = 52;

fn api(id: &str, url: &str, extra: &str) -> String {
    format!(
        "  {id}:\n    checkType: API\n    name: {id}\n{extra}    request:\n      method: GET\n      url: {url}\n      assertions:\n        - {{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}\n"
    )
}

fn url(id: &str, url: &str) -> String {
    format!("  {id}:\n    checkType: URL\n    name: {id}\n    request:\n      url: {url}\n")
}

/// Sixty checks applied (`status` then: one request), all but `idle-1`
/// and `idle-2` run once: passing
/// API and URL checks, two failing API checks and a failing URL check, an
/// API check whose every run is degraded (`slow`), and `gone`, deleted
/// outside monform after its run.
fn sixty() -> (Emulator, tempfile::TempDir, Value) {
    let base = fail_target();
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        session_duration: Duration::from_millis(200),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"sixty\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    let mut text = String::from("checks:\n");
    for n in 0..PASSING_API {
        text.push_str(&api(&format!("api-ok-{n:02}"), &format!("{base}/ok"), ""));
    }
    text.push_str(&url("url-ok", &format!("{base}/ok")));
    text.push_str(&api("api-fail-1", &format!("{base}/fail"), ""));
    text.push_str(&api("api-fail-2", &format!("{base}/fail/2"), ""));
    text.push_str(&url("url-fail", &format!("{base}/fail")));
    text.push_str(&api("slow", &format!("{base}/ok"), "    degradedResponseTime: 0\n"));
    text.push_str(&api("gone", &format!("{base}/ok"), ""));
    text.push_str(&url("idle-1", &format!("{base}/ok")));
    text.push_str(&url("idle-2", &format!("{base}/ok")));
    std::fs::write(dir.path().join("monitors.yaml"), text).unwrap();
    emulator.applied(dir.path());
    // Before any run: the range's report says none ran, which holds for the
    // last 6 hours too: that one request, no other.
    let (output, gets) = status(&emulator, dir.path(), &["--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["summary"]["withoutRecentRun"], 60, "{json}");
    assert_eq!(gets, 1, "the report alone");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".monform/state.json")).unwrap()).unwrap();
    let ids: Vec<String> = state["resources"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(address, _)| address.starts_with("checks.") && !address.starts_with("checks.idle"))
        .map(|(_, entry)| entry["remoteId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 58);
    emulator.call(
        "POST",
        "/v2/check-sessions/trigger",
        Some(json!({ "target": { "checkId": ids } })),
    );
    // Until every session left its result (the report's zeros: none yet).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let report = emulator.call("GET", "/v1/reporting", None);
        let ran = report
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["aggregate"]["avg"].as_f64().is_some_and(|a| a > 0.0))
            .count();
        if ran == ids.len() {
            break;
        }
        assert!(Instant::now() < deadline, "{ran} of {} ran: {report}", ids.len());
        std::thread::sleep(Duration::from_millis(200));
    }
    let gone = state["resources"]["checks.gone"]["remoteId"].as_str().unwrap();
    emulator.call("DELETE", &format!("/v1/checks/{gone}"), None);
    (emulator, dir, state)
}

/// `monform status ARGS` and the GET requests the service served for it.
fn status(emulator: &Emulator, dir: &Path, args: &[&str]) -> (std::process::Output, u64) {
    let before = emulator.server.app.metrics.total(Some("GET"));
    let output = emulator.monform(dir).arg("status").args(args).output().unwrap();
    (output, emulator.server.app.metrics.total(Some("GET")) - before)
}

fn last_statuses(json: &Value) -> std::collections::BTreeMap<String, Value> {
    json["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("{json}"))
        .iter()
        .map(|c| (c["address"].as_str().unwrap().to_owned(), c["lastStatus"].clone()))
        .collect()
}

/// One `tools/call` of `monform mcp`, spoken in plain JSON-RPC lines.
fn mcp_status(emulator: &Emulator, dir: &Path, arguments: Value) -> Value {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .arg("--dir")
        .arg(dir)
        .arg("mcp")
        .env("XDG_CONFIG_HOME", user_config_home())
        .env("MONFORM_API_URL", emulator.url())
        .env("MONFORM_API_KEY", &emulator.server.api_key)
        .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id)
        .env_remove("MONFORM_APPROVALS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |message: Value, id: Option<u64>| -> Value {
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        let Some(id) = id else { return Value::Null };
        loop {
            let mut line = String::new();
            assert!(output.read_line(&mut line).unwrap() > 0, "monform mcp ended");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "status-test", "version": "1"}}}),
        Some(1),
    );
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), None);
    let answer = ask(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "status", "arguments": arguments}}),
        Some(2),
    );
    drop(input);
    let _ = child.kill();
    let _ = child.wait();
    answer["result"]["structuredContent"].clone()
}

#[test]
fn past_fifty_checks_status_reads_the_report_and_only_the_results_it_cannot_vouch_for() {
    let (emulator, dir, _) = sixty();
    const { assert!(60 > READ_EVERY_CHECK_UP_TO) };
    let (output, gets) = status(&emulator, dir.path(), &["--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let last = last_statuses(&json);
    assert_eq!(last.len(), 60);
    for n in 0..PASSING_API {
        assert_eq!(last[&format!("checks.api-ok-{n:02}")], "PASSED");
    }
    assert_eq!(last["checks.url-ok"], "PASSED");
    assert_eq!(last["checks.api-fail-1"], "FAILED");
    assert_eq!(last["checks.api-fail-2"], "FAILED");
    assert_eq!(last["checks.url-fail"], "FAILED");
    assert_eq!(last["checks.slow"], "DEGRADED");
    assert_eq!(last["checks.gone"], "MISSING");
    assert_eq!(last["checks.idle-1"], Value::Null);
    assert_eq!(last["checks.idle-2"], Value::Null);
    assert_eq!(
        json["summary"],
        json!({"checks": 60, "failing": 4, "degraded": 1, "passing": 53, "withoutRecentRun": 2}),
        "{json}"
    );
    // Two reports and the five results read (three failed, the degraded
    // one, the one the report no longer lists), not sixty.
    assert!(gets <= 10, "{gets} GET requests");
    // Failing first, then degraded, as the table.
    let order: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .take(5)
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "checks.api-fail-1",
            "checks.api-fail-2",
            "checks.gone",
            "checks.url-fail",
            "checks.slow"
        ]
    );

    // The human table tells the same.
    let (human, _) = status(&emulator, dir.path(), &[]);
    assert!(
        stdout(&human).ends_with("60 checks: 4 failing, 1 degraded, 53 passing, 2 without a run in the last 6 hours\n"),
        "{}",
        stdout(&human)
    );

    // Addresses named: those checks only, each one's latest result read.
    let (named, gets) = status(
        &emulator,
        dir.path(),
        &["checks.slow", "checks.api-ok-07", "checks.idle-1", "--format", "json"],
    );
    assert_eq!(named.status.code(), Some(0), "{}", stderr(&named));
    let named: Value = serde_json::from_slice(&named.stdout).unwrap();
    let last = last_statuses(&named);
    assert_eq!(
        last,
        [
            ("checks.api-ok-07".to_owned(), json!("PASSED")),
            ("checks.idle-1".to_owned(), Value::Null),
            ("checks.slow".to_owned(), json!("DEGRADED")),
        ]
        .into()
    );
    assert!(gets <= 6, "one report and three results: {gets}");
    let (unknown, _) = status(&emulator, dir.path(), &["checks.nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("checks.nope is not an applied check of the project"),
        "{}",
        stderr(&unknown)
    );
    let (wrong, _) = status(&emulator, dir.path(), &["groups.shop"]);
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));

    // monform mcp's status tool: the same engine op, the same counts.
    let tool = mcp_status(&emulator, dir.path(), json!({}));
    assert_eq!(tool["summary"], json["summary"], "{tool}");
    assert_eq!(tool["checks"].as_array().map(Vec::len), Some(60));
    let one = mcp_status(&emulator, dir.path(), json!({"addresses": ["checks.slow"]}));
    assert_eq!(one["checks"][0]["address"], "checks.slow", "{one}");
    assert_eq!(one["checks"][0]["lastStatus"], "DEGRADED", "{one}");
    assert_eq!(one["checks"].as_array().map(Vec::len), Some(1), "{one}");
}

/// Issue 50 item 3: `status --format json` carries each SLO's SLI, budget
/// left and burn rates, the very figures `slo status --format json` gives:
/// two days of one run a minute, 30 of them failed (12:00 to 12:29 on the
/// 2nd), against a 98% target.
#[test]
fn status_json_has_each_slo_as_slo_status_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"slo-json\"\n").unwrap();
    std::fs::write(
        dir.path().join("monitors.yaml"),
        clock::checkout_each_minute(
            "slos:
  checkout:
    name: Checkout availability
    checks: [checks.checkout]
    target: 98
    window: 2d
",
        ),
    )
    .unwrap();
    let emulator = clock::Simulated::serve(
        &dir.path().join("emulator.db"),
        "2026-10-01T00:00:00Z",
        &["Checkout:2026-10-02T12:00:00Z:30m"],
        &[],
    );
    let now = "2026-10-03T00:00:00Z";
    let run = |args: &[&str]| emulator.run(dir.path(), now, args);
    let applied = run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let jump = emulator.jump(now);
    assert_eq!(jump["runs"], 2_879, "{jump}");

    let json_of = |args: &[&str]| -> Value {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&output)))
    };
    let status = json_of(&["status", "--format", "json"]);
    let slo = json_of(&["slo", "status", "--format", "json"]);
    assert_eq!(status["evaluatedAt"], clock::millis(now), "{status}");
    assert_eq!(status["slos"], slo["slos"], "{status}");
    let figures = &status["slos"][0];
    assert_eq!(figures["address"], "slos.checkout");
    assert_eq!(
        (figures["good"].as_u64(), figures["total"].as_u64()),
        (Some(2_849), Some(2_879))
    );
    let sli = 2_849.0 / 2_879.0;
    assert!((figures["sli"].as_f64().unwrap() - sli).abs() < 1e-9, "{figures}");
    // 30 bad of the 57.58 the 2% budget allows.
    let left = 1.0 - (1.0 - sli) / 0.02;
    assert!(
        (figures["budgetLeft"].as_f64().unwrap() - left).abs() < 1e-9,
        "{figures}"
    );
    assert!(!figures["burnRates"].as_array().unwrap().is_empty(), "{figures}");
    assert_eq!(status["checks"][0]["address"], "checks.checkout", "{status}");
    assert_eq!(status["checks"][0]["lastStatus"], "PASSED", "{status}");

    // Named: an SLO alone, a check alone.
    let only_slo = json_of(&["status", "slos.checkout", "--format", "json"]);
    assert_eq!(only_slo["checks"], json!([]), "{only_slo}");
    assert_eq!(only_slo["slos"], slo["slos"], "{only_slo}");
    let only_check = json_of(&["status", "checks.checkout", "--format", "json"]);
    assert_eq!(only_check["slos"], json!([]), "{only_check}");
    assert_eq!(only_check["checks"].as_array().map(Vec::len), Some(1), "{only_check}");
}
