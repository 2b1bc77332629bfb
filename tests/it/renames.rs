//! Rename suggestions and the results a delete discards (issue 20, item 3),
//! end to end: the real binary against the real emulator.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

const TOKEN: (&str, &str) = ("SHOP_API_TOKEN", "tok-4242-secret");

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).env(TOKEN.0, TOKEN.1).args(args).output().unwrap()
}

fn applied_fixture() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let applied = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    (emulator, project)
}

#[test]
fn a_rename_without_moved_is_suggested_in_every_format() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    // The address and the name change; the hostname and the rest stay.
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    edit(dir, "monitors.yaml", "name: Gateway ping", "name: Gateway ICMP");

    let planned = run(&emulator, dir, &["plan"]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let text = stdout(&planned);
    let line = text
        .lines()
        .find(|l| l.starts_with("Suggestion:"))
        .unwrap_or_else(|| panic!("no suggestion:\n{text}"));
    insta::assert_snapshot!("rename_human", line);

    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    insta::assert_json_snapshot!("rename_json", plan["suggestedMoves"]);

    let markdown = run(&emulator, dir, &["plan", "--format", "markdown"]);
    let text = stdout(&markdown);
    let section = &text[text.find("#### Possible renames").expect("a renames section")..];
    let section = &section[..section.find("<details>").unwrap_or(section.len())];
    insta::assert_snapshot!("rename_markdown", section);
}

#[test]
fn an_unrelated_delete_and_create_are_not_called_a_rename() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    edit(dir, "monitors.yaml", "name: Gateway ping", "name: Gateway ICMP");
    edit(
        dir,
        "monitors.yaml",
        "hostname: gw.example.com",
        "hostname: other.example.com",
    );

    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(plan["suggestedMoves"], serde_json::json!([]), "{plan:#}");
}

/// A loopback HTTP server answering 200 to everything, for checks to reach.
fn target() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buffer = [0u8; 8192];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    base
}

const CHECKS: &str = r#"checks:
  home:
    checkType: URL
    name: Homepage
    frequency: 5
    locations: [eu-west-1]
    request:
      url: {BASE}/
  spare:
    checkType: URL
    name: Spare
    frequency: 5
    locations: [eu-west-1]
    request:
      url: {BASE}/spare
"#;

/// Timings (the numbers before "ms") replaced: they vary from run to run.
fn redact_timings(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let redacted: Vec<&str> = words
        .iter()
        .enumerate()
        .map(|(i, w)| match words.get(i + 1) {
            Some(next) if next.starts_with("ms") && w.parse::<f64>().is_ok() => "N",
            _ => w,
        })
        .collect();
    redacted.join(" ")
}

#[test]
fn deleting_checks_says_which_results_it_discards_with_one_report_request() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::write(dir.join("monform.toml"), "[project]\nname = \"history\"\n").unwrap();
    std::fs::write(dir.join("monitors.yaml"), CHECKS.replace("{BASE}", &target())).unwrap();
    let applied = emulator
        .monform(dir)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));

    // One run of `home` leaves a result; `spare` has none.
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap()).unwrap();
    let home = state["resources"]["checks.home"]["remoteId"].as_str().unwrap();
    let sessions = emulator.call(
        "POST",
        "/v2/check-sessions/trigger",
        Some(serde_json::json!({ "target": { "checkId": [home] } })),
    );
    let session = sessions["sessions"][0]["checkSessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id: {sessions}"));
    emulator.call(
        "GET",
        &format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=10"),
        None,
    );

    std::fs::write(dir.join("monitors.yaml"), "checks: {}\n").unwrap();
    let planned = emulator.monform(dir).arg("plan").output().unwrap();
    assert!(planned.status.success(), "{}", stderr(&planned));
    let text = stdout(&planned);
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("Results:"))
        .map(redact_timings)
        .collect();
    insta::assert_snapshot!("discarded_human", lines.join("\n"));

    let json = emulator
        .monform(dir)
        .args(["plan", "--format", "json"])
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    let discarded = &plan["discardedResults"];
    assert_eq!(discarded["known"], true, "{discarded}");
    assert_eq!(discarded["range"], "last30Days", "{discarded}");
    assert_eq!(discarded["checks"][0]["address"], "checks.home", "{discarded}");
    assert_eq!(discarded["checks"][0]["hasResults"], true, "{discarded}");
    assert_eq!(discarded["checks"][0]["successRatio"], 1.0, "{discarded}");
    // Created moments ago, every 5 minutes: the estimate is the one run the report saw.
    assert_eq!(discarded["checks"][0]["estimatedResults"], 1, "{discarded}");
    assert_eq!(discarded["checks"][1]["estimatedResults"], 0, "{discarded}");
    assert_eq!(discarded["checks"][1]["address"], "checks.spare", "{discarded}");
    assert_eq!(discarded["checks"][1]["hasResults"], false, "{discarded}");

    let markdown = emulator
        .monform(dir)
        .args(["plan", "--format", "markdown"])
        .output()
        .unwrap();
    let markdown = stdout(&markdown);
    // From the section on: ids and timings replaced.
    let discarded = steady(tail_from(&markdown, "#### Results discarded"));
    insta::assert_snapshot!("results_discarded_markdown", discarded);
}
