//! `monform test` and `monform status` end to end: the real binary against
//! the real emulator on a loopback port. Sessions in the emulator always
//! pass until its runner lands, so the exit-1 path of `monform test` is
//! covered by unit tests of the summary (`render::test`).

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;

const MONFORM_TOML: &str = r#"[project]
name = "probe"

[defaults]
locations = ["eu-west-1"]
"#;

const MONITORS: &str = r#"checks:
  home:
    checkType: URL
    name: Homepage
    frequency: 5
    tags: [smoke]
    request:
      url: {BASE}/
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
  orders-api:
    checkType: API
    name: Orders API
    frequency: 5
    tags: [smoke, api]
    request:
      method: GET
      url: {BASE}/orders
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
  login-api:
    checkType: API
    name: Login API
    frequency: 10
    tags: [api]
    locations: [eu-west-1, us-east-1]
    request:
      method: POST
      url: {BASE}/login
"#;

fn emulator() -> Emulator {
    Emulator::with(monform_emulator::Config {
        rate_limit: None,
        session_duration: Duration::from_millis(300),
        ..Default::default()
    })
}

fn project() -> tempfile::TempDir {
    project_with(&MONITORS.replace("{BASE}", &fail_target()))
}

fn project_with(monitors: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), MONFORM_TOML).unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

fn run(emulator: &Emulator, project: &Path, args: &[&str]) -> (i32, String, String) {
    let output = emulator.monform(project).args(args).output().unwrap();
    (output.status.code().unwrap_or(-1), stdout(&output), stderr(&output))
}

fn applied() -> (Emulator, tempfile::TempDir) {
    let emulator = emulator();
    let project = project();
    let (code, out, err) = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "apply failed:\n{out}\n{err}");
    (emulator, project)
}

/// Timings replaced, for snapshots.
fn redact_timings(text: &str) -> String {
    let ms = regex::Regex::new(r"\s+\d+ ms").unwrap();
    let seconds = regex::Regex::new(r" in \d+\.\d s").unwrap();
    let text = ms.replace_all(text, " [n] ms");
    seconds.replace_all(&text, " in [t] s").into_owned()
}

/// A run's transcript (`assert_run!`'s) with the padding before the
/// timing column collapsed: its width follows the figures, which vary.
fn steady_run(mut command: assert_cmd::Command) -> String {
    let output = command.output().expect("monform runs");
    let text = transcript(&output);
    regex::Regex::new(r"\s+\[n\] ms")
        .unwrap()
        .replace_all(&text, " [n] ms")
        .into_owned()
}

/// Minimal well-formedness: every element opened is closed in order.
fn assert_well_formed(xml: &str) {
    let tag = regex::Regex::new(r"<(/?)([A-Za-z-]+)[^>]*?(/?)>").unwrap();
    let mut open: Vec<String> = Vec::new();
    let body = xml.trim_start_matches(|c| c != '\n');
    for m in tag.captures_iter(body) {
        let name = m[2].to_owned();
        if &m[1] == "/" {
            assert_eq!(
                open.pop().as_deref(),
                Some(name.as_str()),
                "mismatched </{name}> in\n{xml}"
            );
        } else if &m[3] != "/" {
            open.push(name);
        }
    }
    assert!(open.is_empty(), "unclosed {open:?} in\n{xml}");
    assert!(xml.starts_with("<?xml version=\"1.0\""));
    assert!(!body.contains("& "), "unescaped ampersand");
}

#[test]
fn test_runs_every_applied_check_and_writes_junit() {
    let (emulator, project) = applied();
    let junit = project.path().join("report.xml");
    let (code, out, err) = run(
        &emulator,
        project.path(),
        &["test", "--location", "eu-west-1", "--junit", junit.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    insta::assert_snapshot!("test_human", redact_timings(&redact_ids(&out)));

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_well_formed(&xml);
    insta::assert_snapshot!("test_junit", steady_junit(&xml));
    // Written atomically: no temporary file is left behind.
    assert!(!project.path().join(".report.xml.tmp").exists());
}

#[test]
fn target_and_tags_limit_the_session() {
    let (emulator, project) = applied();
    let mut test = emulator.monform(project.path());
    test.args(["test", "--target", "checks.home"]);
    insta::assert_snapshot!("target_one_check", steady_run(test));

    // Without --location, each check runs in its own locations.
    let mut test = emulator.monform(project.path());
    test.args(["test", "--target", "checks.login-api"]);
    insta::assert_snapshot!("target_a_check_in_its_locations", steady_run(test));

    let mut test = emulator.monform(project.path());
    test.args(["test", "--tags", "smoke", "--tags", "api"]);
    insta::assert_snapshot!("tags_select_the_checks", steady_run(test));

    let mut test = emulator.monform(project.path());
    assert_run!("no_check_with_the_tags", test.args(["test", "--tags", "nope"]));
    let mut test = emulator.monform(project.path());
    assert_run!("not_an_applied_check", test.args(["test", "--target", "checks.nope"]));
}

#[test]
fn two_locations_give_a_line_per_check_and_location() {
    let (emulator, project) = applied();
    let mut test = emulator.monform(project.path());
    test.args([
        "test",
        "--target",
        "checks.home",
        "--location",
        "eu-west-1",
        "--location",
        "us-east-1",
    ]);
    insta::assert_snapshot!("two_locations", steady_run(test));
}

#[test]
fn a_session_still_running_at_the_timeout_is_an_error() {
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        session_duration: Duration::from_secs(20),
        ..Default::default()
    });
    let project = project();
    let (code, out, err) = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let mut test = emulator.monform(project.path());
    assert_run!("still_running_at_the_timeout", test.args(["test", "--timeout", "1"]));
}

#[test]
fn a_failing_check_exits_1() {
    let emulator = emulator();
    let base = fail_target();
    let monitors = format!(
        "{}  broken:\n    checkType: API\n    name: Broken\n    frequency: 10\n    request:\n      method: GET\n      url: {base}/fail\n      assertions:\n        - {{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}\n",
        MONITORS.replace("{BASE}", &base)
    );
    let project = project_with(&monitors);
    let (code, out, err) = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let junit = project.path().join("junit.xml");
    let mut test = emulator.monform(project.path());
    test.args(["test", "--location", "eu-west-1", "--junit", junit.to_str().unwrap()]);
    // Exit 1, and why it failed, as `--local` says it, and in JUnit.
    insta::assert_snapshot!("a_failing_check", steady_run(test));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_well_formed(&xml);
    insta::assert_snapshot!("a_failing_check_junit", steady_junit(&xml));
    // A test session raises no alert and notifies no one (spec 4).
    assert_eq!(emulator.call("GET", "/v1/check-alerts", None), serde_json::json!([]));
    assert_eq!(
        emulator.call("GET", "/v1/alert-notifications", None),
        serde_json::json!([])
    );
}

#[test]
fn no_applied_checks_is_an_error() {
    let emulator = emulator();
    let project = project();
    let mut test = emulator.monform(project.path());
    assert_run!("no_applied_checks", test.arg("test"));
}

#[test]
fn status_lists_the_project_checks() {
    let (emulator, project) = applied();
    // Something unrelated in the account is not listed.
    emulator.call(
        "POST",
        "/v1/checks/api",
        Some(serde_json::json!({
            "name": "Not ours", "activated": true, "frequency": 10, "locations": ["eu-west-1"],
            "request": { "method": "GET", "url": "https://other.example.com/" },
        })),
    );
    // A check session leaves a check result behind: the last status.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".monform/state.json")).unwrap()).unwrap();
    let home_id = state["resources"]["checks.home"]["remoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    emulator.call(
        "POST",
        "/v2/check-sessions/trigger",
        Some(serde_json::json!({ "target": { "checkId": [home_id] } })),
    );
    std::thread::sleep(Duration::from_millis(500));
    let (code, out, err) = run(&emulator, project.path(), &["status", "--format", "json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["range"], "last24Hours", "{json}");
    assert_eq!(json["slos"], serde_json::json!([]), "no SLO in the files: {json}");
    let rows = json["checks"].as_array().unwrap();
    let addresses: Vec<&str> = rows.iter().map(|r| r["address"].as_str().unwrap()).collect();
    assert_eq!(addresses, ["checks.home", "checks.login-api", "checks.orders-api"]);
    let home = &rows[0];
    assert_eq!(home["name"], "Homepage");
    assert_eq!(home["checkType"], "URL");
    assert_eq!(home["lastStatus"], "PASSED", "{home}");
    assert_eq!(home["successRatio"], 1.0, "{home}");
    assert!(home["p95"].as_f64().unwrap() > 0.0, "{home}");
    for field in ["p99", "avg"] {
        assert!(home[field].is_number(), "{field} missing in {home}");
    }
    assert_eq!(
        rows[1]["lastStatus"],
        serde_json::Value::Null,
        "no result yet: {}",
        rows[1]
    );

    let (code, out, err) = run(&emulator, project.path(), &["status", "--range", "last7Days"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    // The header (columns as wide as the figures, which vary: one space between).
    let header = regex::Regex::new(r" {2,}")
        .unwrap()
        .replace_all(lines[0], " ")
        .into_owned();
    insta::assert_snapshot!("status_header", header);
    assert!(lines[5].starts_with("3 checks: 0 failing"), "the summary line: {out}");
    assert!(!out.contains('\x1b'));
}

/// Debian's Chromium for the report's browser check, or `None` (skipped)
/// unless `MONFORM_REQUIRE_BROWSER=1` says it must be there.
fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("MONFORM_CHROMIUM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    if path.is_file() {
        return Some(path);
    }
    assert_ne!(
        std::env::var("MONFORM_REQUIRE_BROWSER").as_deref(),
        Ok("1"),
        "no Chromium"
    );
    monform_testkit::skipped(&format!(
        "no Chromium at {} (MONFORM_REQUIRE_BROWSER=1 fails instead)",
        path.display()
    ));
    None
}

#[test]
fn status_writes_a_self_contained_html_report_grouped_by_check_group() {
    let base = fail_target();
    let monitors = format!(
        "groups:\n  storefront:\n    name: Storefront\n{}",
        MONITORS.replace("{BASE}", &base).replace(
            "  home:\n    checkType: URL\n",
            "  home:\n    checkType: URL\n    group: storefront\n"
        )
    );
    let emulator = emulator();
    let project = project_with(&monitors);
    let (code, out, err) = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".monform/state.json")).unwrap()).unwrap();
    let ids: Vec<String> = ["checks.home", "checks.orders-api", "checks.login-api"]
        .iter()
        .map(|a| state["resources"][a]["remoteId"].as_str().unwrap().to_owned())
        .collect();
    for _ in 0..3 {
        emulator.call(
            "POST",
            "/v2/check-sessions/trigger",
            Some(serde_json::json!({ "target": { "checkId": ids } })),
        );
        std::thread::sleep(Duration::from_millis(400));
    }
    let report = project.path().join("report.html");
    let mut status = emulator.monform(project.path());
    status.args(["status", "--format", "html", "--out", report.to_str().unwrap()]);
    assert_run!("html_report_written", status);
    let html = std::fs::read_to_string(&report).unwrap();
    let storefront = html.find(">Storefront</h2>").expect("a card per group");
    let ungrouped = html.find(">Checks without a group</h2>").expect("and one for the rest");
    assert!(storefront < ungrouped);
    assert!(html[storefront..ungrouped].contains("checks.home"), "{html}");
    assert!(html.matches("<polyline").count() >= 2, "sparklines: {html}");
    assert!(html.contains("class=\"bar\""), "{html}");
    for fetched in ["<script", "<link", "src=\"http", "url("] {
        assert!(!html.contains(fetched), "self-contained, no {fetched}: {html}");
    }
    assert!(!project.path().join(".report.html.tmp").exists());
    // Without --out the report goes to standard output.
    let (code, out, err) = run(&emulator, project.path(), &["status", "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("<!DOCTYPE html>") && out.contains(">Storefront</h2>"),
        "{out}"
    );

    if let Some(chromium) = chromium() {
        let dom = std::process::Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
            .arg(format!("file://{}", report.display()))
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&dom.stdout);
        assert!(dom.matches("<polyline").count() >= 2, "{dom}");
        assert!(dom.contains("Storefront"), "{dom}");
    }
}
