//! `lifecycle.ignoreChanges` (issue 30), end to end: the real binary
//! against the real emulator. An ignored field is sent on create, never
//! compared, never sent on update; an unknown path is a diagnostic.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

const MONITORS: &str = r#"checks:
  homepage:
    checkType: API
    name: Homepage
    frequency: 5
    tags: [web]
    request:
      method: GET
      url: https://example.com/
      headers:
        - { key: X-Env, value: prod }
    lifecycle:
      ignoreChanges: [muted, request.headers, tags]
      drift: notify
"#;

fn project(monitors: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"life\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).args(args).output().unwrap()
}

fn homepage(emulator: &Emulator) -> Value {
    let checks = emulator.call("GET", "/v1/checks?limit=100", None);
    checks
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "Homepage")
        .cloned()
        .expect("the check exists")
}

#[test]
fn ignored_fields_are_sent_on_create_then_never_compared_nor_sent() {
    let emulator = Emulator::start();
    let project = project(MONITORS);
    let dir = project.path();
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));

    // Sent on create.
    let created = homepage(&emulator);
    assert_eq!(created["request"]["headers"][0]["value"], "prod", "{created}");
    let tags = created["tags"].as_array().unwrap();
    assert!(tags.contains(&json!("web")), "{created}");

    // Changed in the UI: the muted flag, a header, a tag.
    let id = created["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| created["id"].to_string());
    let mut request = created["request"].clone();
    request["headers"] = json!([{"key": "X-Env", "value": "staging"}]);
    let mut ui_tags = tags.clone();
    ui_tags.push(json!("from-ui"));
    emulator.call(
        "PUT",
        &format!("/v1/checks/api/{id}"),
        Some(json!({"muted": true, "request": request, "tags": ui_tags})),
    );

    // No change, no drift: the plan mentions none of them.
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        planned.status.code(),
        Some(0),
        "{}{}",
        stdout(&planned),
        stderr(&planned)
    );
    insta::assert_snapshot!("no_drift_plan", stdout(&planned));

    // A file edit is applied; the ignored fields keep the service's values.
    edit(dir, "monitors.yaml", "frequency: 5", "frequency: 10");
    edit(
        dir,
        "monitors.yaml",
        "url: https://example.com/",
        "url: https://example.com/home",
    );
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let after = homepage(&emulator);
    assert_eq!(after["frequency"], 10, "{after}");
    assert_eq!(after["request"]["url"], "https://example.com/home", "{after}");
    assert_eq!(after["muted"], true, "{after}");
    assert_eq!(after["request"]["headers"][0]["value"], "staging", "{after}");
    let tags = after["tags"].as_array().unwrap();
    assert!(tags.contains(&json!("from-ui")), "{after}");
    assert!(
        tags.iter()
            .any(|t| t.as_str().is_some_and(|t| t == "monform:life/homepage")),
        "the ownership tag stays: {after}"
    );
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
}

#[test]
fn an_unknown_ignored_path_is_a_diagnostic_with_its_place_and_a_suggestion() {
    let project = project(&MONITORS.replace("[muted, request.headers, tags]", "[mutd, request.hedaers]"));
    // Exit 1, at monitors.yaml:13, suggesting `muted` and `request.headers`.
    let mut validate = monform();
    validate
        .arg("--dir")
        .arg(project.path())
        .args(["--color", "never", "validate"]);
    assert_run!("unknown_ignored_path", validate);
}

#[test]
fn lifecycle_is_accepted_in_for_each_templates() {
    let monitors = r#"checks:
  api:
    forEach: [orders, users]
    checkType: API
    name: "API ${each.key}"
    request: { method: GET, url: "https://example.com/${each.key}" }
    lifecycle: { ignoreChanges: [muted], drift: revert }
"#;
    let project = project(monitors);
    let output = monform()
        .arg("--dir")
        .arg(project.path())
        .args(["--color", "never", "validate"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let bad = project_with_bad_drift();
    let mut validate = monform();
    validate
        .arg("--dir")
        .arg(bad.path())
        .args(["--color", "never", "validate"]);
    assert_run!("bad_drift_in_a_template", validate);
}

fn project_with_bad_drift() -> tempfile::TempDir {
    project(&MONITORS.replace("drift: notify", "drift: revrt"))
}
