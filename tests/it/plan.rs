//! `monform plan` end to end: the real binary against the real emulator on
//! a loopback port, with snapshots of what users see.

use crate::common;

use common::*;

const TOKEN: &str = "first-token-value-4711";

fn plan(emulator: &Emulator, project: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = emulator
        .monform(project)
        .arg("plan")
        .args(args)
        .env("SHOP_API_TOKEN", TOKEN)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        redact_ids(&stdout(&output)),
        stderr(&output),
    )
}

fn apply(emulator: &Emulator, project: &std::path::Path) {
    let output = emulator
        .monform(project)
        .args(["apply", "--auto-approve"])
        .env("SHOP_API_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "apply failed:\n{}\n{}",
        stdout(&output),
        stderr(&output)
    );
}

/// A project applied to a fresh emulator.
fn applied() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    apply(&emulator, project.path());
    (emulator, project)
}

fn remote_id(project: &std::path::Path, address: &str) -> String {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".monform/state.json")).unwrap()).unwrap();
    state["resources"][address]["remoteId"].as_str().unwrap().to_owned()
}

#[test]
fn fresh_project_is_all_creates_in_dependency_order() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let (code, human, _) = plan(&emulator, project.path(), &["--detailed-exitcode"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("fresh_human", human);
    let (_, json, _) = plan(&emulator, project.path(), &["--format", "json"]);
    insta::assert_snapshot!("fresh_json", json);
    let (_, markdown, _) = plan(&emulator, project.path(), &["--format", "markdown"]);
    insta::assert_snapshot!("fresh_markdown", markdown);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let order: Vec<&str> = value["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    let position = |a: &str| order.iter().position(|x| *x == a).unwrap();
    assert!(position("groups.production") < position("checks.orders-api"));
    assert!(position("snippets.sign") < position("checks.orders-api"));
    assert!(position("alertChannels.oncall") < position("checks.orders-api"));
}

#[test]
fn no_changes_once_applied() {
    let (emulator, project) = applied();
    let (code, human, _) = plan(&emulator, project.path(), &["--detailed-exitcode"]);
    assert_eq!(human, "No changes. Your monitors match the configuration.\n");
    assert_eq!(code, 0);
}

#[test]
fn config_changes_show_field_by_field() {
    let (emulator, project) = applied();
    let dir = project.path();
    edit(dir, "monitors.yaml", "    frequency: 5\n", "    frequency: 10\n");
    edit(
        dir,
        "monitors.yaml",
        "      request.headers['X-Signature'] = sign(stamp)\n",
        "      request.headers['X-Signature'] = sign(stamp, 'v2')\n",
    );
    edit(
        dir,
        "monitors.yaml",
        "    name: Gateway ping\n    group: production",
        "    name: Gateway ping\n    group: staging",
    );
    let (code, human, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("config_changes_human", human);
    let (_, json, _) = plan(&emulator, dir, &["--format", "json"]);
    insta::assert_snapshot!("config_changes_json", json);
    let (_, markdown, _) = plan(&emulator, dir, &["--format", "markdown"]);
    insta::assert_snapshot!("config_changes_markdown", markdown);
}

#[test]
fn removed_resources_are_deleted() {
    let (emulator, project) = applied();
    let dir = project.path();
    edit(dir, "monitors.yaml", "  staging: { name: Staging }\n", "");
    let (code, human, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("removed_human", human);
}

#[test]
fn changes_made_through_the_api_are_drift() {
    let (emulator, project) = applied();
    let dir = project.path();
    let check = remote_id(dir, "checks.gateway-ping");
    // A managed field, and a field the files omit but that has a default.
    emulator.call(
        "PUT",
        &format!("/v1/checks/icmp/{check}"),
        Some(serde_json::json!({"name": "Renamed in the UI", "muted": true})),
    );
    let (code, human, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("drift_human", human);
}

/// A UI edit and a file edit of the same check: each field says which it is.
#[test]
fn drift_and_file_edits_are_told_apart_field_by_field() {
    let (emulator, project) = applied();
    let dir = project.path();
    let check = remote_id(dir, "checks.gateway-ping");
    emulator.call(
        "PUT",
        &format!("/v1/checks/icmp/{check}"),
        Some(serde_json::json!({"muted": true})),
    );
    edit(
        dir,
        "monitors.yaml",
        "    name: Gateway ping\n",
        "    name: Gateway ping (edge)\n",
    );
    let (code, human, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("field_drift_human", human);
    let (_, json, _) = plan(&emulator, dir, &["--format", "json"]);
    insta::assert_snapshot!("field_drift_json", json);
    let (_, markdown, _) = plan(&emulator, dir, &["--format", "markdown"]);
    insta::assert_snapshot!("field_drift_markdown", markdown);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let fields = &value["changes"][0]["fields"];
    let drift = |path: &str| fields.as_array().unwrap().iter().find(|f| f["path"] == path).unwrap()["drift"].clone();
    assert_eq!(drift("muted"), serde_json::json!(true));
    assert_eq!(drift("name"), serde_json::json!(false));
    // Applied, the account matches the files again: nothing is drift.
    apply(&emulator, dir);
    let (code, human, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(
        (code, human.as_str()),
        (0, "No changes. Your monitors match the configuration.\n")
    );
}

/// A state written before field fingerprints still loads; drift is then
/// told by the object's version, as before.
#[test]
fn a_state_without_field_fingerprints_tells_drift_by_version() {
    let (emulator, project) = applied();
    let dir = project.path();
    let path = dir.join(".monform/state.json");
    let mut state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for entry in state["resources"].as_object_mut().unwrap().values_mut() {
        assert!(
            entry.as_object_mut().unwrap().remove("fields").is_some(),
            "recorded by apply"
        );
    }
    std::fs::write(&path, serde_json::to_string(&state).unwrap()).unwrap();
    let (code, _, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 0);
    let check = remote_id(dir, "checks.gateway-ping");
    emulator.call(
        "PUT",
        &format!("/v1/checks/icmp/{check}"),
        Some(serde_json::json!({"muted": true})),
    );
    let (_, json, _) = plan(&emulator, dir, &["--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        value["changes"][0]["fields"][0]["drift"],
        serde_json::json!(true),
        "{json}"
    );
}

#[test]
fn secret_values_are_never_printed() {
    let (emulator, project) = applied();
    let dir = project.path();
    let second = "second-token-value-0815";
    let output = emulator
        .monform(dir)
        .args(["plan", "--detailed-exitcode"])
        .env("SHOP_API_TOKEN", second)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    // What the plan shows (`(sensitive value changed)`) is snapshotted below.
    let human = stdout(&output);
    for format in ["json", "markdown"] {
        let output = emulator
            .monform(dir)
            .args(["plan", "--format", format])
            .env("SHOP_API_TOKEN", second)
            .output()
            .unwrap();
        let all = format!("{}{}{human}", stdout(&output), stderr(&output));
        assert!(
            !all.contains(second) && !all.contains(TOKEN),
            "a secret leaked in {format} output"
        );
    }
    let state = std::fs::read_to_string(dir.join(".monform/state.json")).unwrap();
    assert!(!state.contains(TOKEN), "the state holds no secret");
    insta::assert_snapshot!("secret_human", redact_ids(&human));
}

#[test]
fn objects_of_others_are_left_alone() {
    let (emulator, project) = applied();
    let dir = project.path();
    emulator.call(
        "POST",
        "/v1/checks/icmp?autoAssignAlerts=false",
        Some(serde_json::json!({
            "name": "Made by hand", "request": {"hostname": "example.org"}, "heartbeat": {}, "script": ""
        })),
    );
    emulator.call("POST", "/v1/checks/icmp?autoAssignAlerts=false", Some(serde_json::json!({
        "name": "Another project's", "tags": ["monform:other/gateway-ping"], "request": {"hostname": "example.org"}, "heartbeat": {}, "script": ""
    })));
    emulator.call(
        "POST",
        "/v1/snippets",
        Some(serde_json::json!({"name": "Someone else's snippet", "script": "x"})),
    );
    let (code, human, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(
        (code, human.as_str()),
        (0, "No changes. Your monitors match the configuration.\n")
    );
}

#[test]
fn targets_limit_the_plan() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let (_, json, _) = plan(
        &emulator,
        project.path(),
        &["--format", "json", "--target", "checks.gateway-ping"],
    );
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let addresses: Vec<&str> = value["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    assert_eq!(addresses, ["groups.production", "checks.gateway-ping"]);
    let mut command = emulator.monform(project.path());
    command.env("SHOP_API_TOKEN", TOKEN);
    assert_run!("unknown_target_section", command.args(["plan", "--target", "chekcs.x"]));
}
