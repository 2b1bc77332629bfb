//! `moved`, `import` and `removed` in the files, end to end: the real
//! binary against the real emulator.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

const TOKEN: (&str, &str) = ("SHOP_API_TOKEN", "tok-4242-secret");

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).env(TOKEN.0, TOKEN.1).args(args).output().unwrap()
}

/// As [`run`], not yet run: for `assert_run!`.
fn command(emulator: &Emulator, dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = emulator.monform(dir);
    command.env(TOKEN.0, TOKEN.1).args(args);
    command
}

fn assert_ok(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "failed:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

fn append(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    let before = std::fs::read_to_string(&path).unwrap();
    std::fs::write(path, format!("{before}\n{text}")).unwrap();
}

fn state(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap()).unwrap()
}

/// The plan-project fixture, applied.
fn applied_fixture() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    assert_ok(&run(&emulator, project.path(), &["apply", "--auto-approve"]));
    (emulator, project)
}

fn remote_id(dir: &Path, address: &str) -> String {
    state(dir)["resources"][address]["remoteId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn checks(emulator: &Emulator) -> Vec<Value> {
    match emulator.call("GET", "/v1/checks?limit=100", None) {
        Value::Array(items) => items,
        other => other["entries"].as_array().cloned().unwrap_or_default(),
    }
}

fn tags_of(object: &Value) -> Vec<&str> {
    object["tags"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .filter(|t| t.starts_with("monform:"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_renamed_check_declared_moved_keeps_its_id_and_the_next_plan_is_clean() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    let id = remote_id(dir, "checks.gateway-ping");
    let count = checks(&emulator).len();

    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    append(
        dir,
        "monitors.yaml",
        "moved:\n  - { from: checks.gateway-ping, to: checks.gw-ping }\n",
    );

    // A move, nothing created or deleted.
    assert_run!("moved_plan", command(&emulator, dir, &["plan", "--detailed-exitcode"]));

    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    let changes = plan["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{plan:#}");
    assert_eq!(changes[0]["action"], "move");
    assert_eq!(changes[0]["from"], "checks.gateway-ping");
    assert_eq!(changes[0]["address"], "checks.gw-ping");
    assert_eq!(changes[0]["remoteId"], id.as_str());
    insta::assert_snapshot!("moved_json", redact_ids(&String::from_utf8_lossy(&json.stdout)));

    // The move is counted with what was done (issue 27 item 6).
    assert_run!("moved_apply", command(&emulator, dir, &["apply", "--auto-approve"]));
    let after = checks(&emulator);
    assert_eq!(after.len(), count, "nothing recreated");
    let check = after.iter().find(|c| c["id"].as_str() == Some(id.as_str())).unwrap();
    assert_eq!(tags_of(check), ["monform:shop/gw-ping"]);
    let state = state(dir);
    assert!(state["resources"].get("checks.gateway-ping").is_none());
    assert_eq!(state["resources"]["checks.gw-ping"]["remoteId"], id.as_str());

    // The entry stays in the files: a no-op from now on.
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(clean.status.code(), Some(0), "{}\n{}", stdout(&clean), stderr(&clean));
}

#[test]
fn a_move_onto_an_address_that_has_an_object_is_refused_with_the_entry_line() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    // checks.gateway-ping stays defined under a new name, and another
    // applied check is declared moved onto it.
    let state = state(dir);
    let other = state["resources"]
        .as_object()
        .unwrap()
        .keys()
        .find(|k| k.starts_with("checks.") && *k != "checks.gateway-ping")
        .unwrap()
        .clone();
    let other_id = other.trim_start_matches("checks.").to_owned();
    edit(dir, "monitors.yaml", &format!("  {other_id}:\n"), "  renamed-away:\n");
    append(
        dir,
        "monitors.yaml",
        &format!("moved:\n  - {{ from: {other}, to: checks.gateway-ping }}\n"),
    );
    // Refused, at the entry's line.
    assert_run!("move_onto_an_object", command(&emulator, dir, &["plan"]));
}

fn hand_made_check(emulator: &Emulator, name: &str, tags: &[&str]) -> String {
    let made = emulator.call(
        "POST",
        "/v1/checks/icmp?autoAssignAlerts=false",
        Some(serde_json::json!({
            "name": name, "tags": tags, "request": {"hostname": "legacy.example.org"}, "heartbeat": {}, "script": ""
        })),
    );
    made["id"]
        .as_str()
        .map_or_else(|| made["id"].to_string(), str::to_owned)
}

#[test]
fn a_hand_made_check_is_adopted_through_import_then_shows_no_changes() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    let id = hand_made_check(&emulator, "Legacy login", &[]);
    let count = checks(&emulator).len();
    append(
        dir,
        "monitors.yaml",
        &format!("import:\n  - {{ to: checks.legacy-login, id: \"{id}\" }}\n"),
    );
    edit(
        dir,
        "monitors.yaml",
        "checks:\n",
        "checks:\n  legacy-login:\n    checkType: ICMP\n    name: Legacy login\n    frequency: 5\n    request: { hostname: legacy.example.org }\n",
    );

    // Imported, with the field changes shown.
    assert_run!("import_plan", command(&emulator, dir, &["plan", "--detailed-exitcode"]));
    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(plan["changes"][0]["action"], "import");
    assert_eq!(plan["changes"][0]["remoteId"], id.as_str());
    insta::assert_snapshot!("import_json", redact_ids(&String::from_utf8_lossy(&json.stdout)));

    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    let after = checks(&emulator);
    assert_eq!(after.len(), count, "adopted, not created");
    let check = after.iter().find(|c| c["id"].as_str() == Some(id.as_str())).unwrap();
    assert_eq!(tags_of(check), ["monform:shop/legacy-login"]);
    assert_eq!(check["frequency"], 5);
    assert_eq!(state(dir)["resources"]["checks.legacy-login"]["remoteId"], id.as_str());
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(clean.status.code(), Some(0), "{}\n{}", stdout(&clean), stderr(&clean));
}

#[test]
fn removed_without_destroy_keeps_the_object_without_ownership_mark() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    let id = remote_id(dir, "checks.gateway-ping");
    let count = checks(&emulator).len();
    edit(
        dir,
        "monitors.yaml",
        "  gateway-ping:\n    checkType: ICMP\n    name: Gateway ping\n    group: production\n    request: { hostname: gw.example.com }\n",
        "",
    );
    append(
        dir,
        "monitors.yaml",
        "removed:\n  - { from: checks.gateway-ping, destroy: false }\n",
    );

    // Forgotten, not deleted.
    assert_run!("forget_plan", command(&emulator, dir, &["plan", "--detailed-exitcode"]));
    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    insta::assert_snapshot!("forget_json", redact_ids(&String::from_utf8_lossy(&json.stdout)));

    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    let after = checks(&emulator);
    assert_eq!(after.len(), count, "not deleted");
    let check = after.iter().find(|c| c["id"].as_str() == Some(id.as_str())).unwrap();
    assert!(tags_of(check).is_empty(), "{check:#}");
    assert!(state(dir)["resources"].get("checks.gateway-ping").is_none());
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(clean.status.code(), Some(0), "{}\n{}", stdout(&clean), stderr(&clean));
}

#[test]
fn imports_that_cannot_be_planned_name_the_entry() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    let theirs = hand_made_check(&emulator, "Theirs", &["monform:other/x"]);
    let snippet = emulator.call(
        "POST",
        "/v1/snippets",
        Some(serde_json::json!({"name": "S", "script": "x"})),
    );
    let snippet = snippet["id"]
        .as_str()
        .map_or_else(|| snippet["id"].to_string(), str::to_owned);
    for (id, file) in [("no-such-id", "a"), (theirs.as_str(), "b"), (snippet.as_str(), "c")] {
        std::fs::write(
            dir.join(format!("{file}.yaml")),
            format!(
                "checks:\n  imp-{file}:\n    checkType: ICMP\n    name: Imp {file}\n    request: {{ hostname: x.example.org }}\nimport:\n  - {{ to: checks.imp-{file}, id: \"{id}\" }}\n"
            ),
        )
        .unwrap();
    }
    let planned = run(&emulator, dir, &["plan"]);
    assert_eq!(planned.status.code(), Some(1), "{}", stdout(&planned));
    let message = redact_ids(&stderr(&planned));
    insta::assert_snapshot!("import_errors", message);
}

#[test]
fn moves_within_for_each_keep_the_object() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    std::fs::write(
        dir.join("api.yaml"),
        "checks:\n  api:\n    forEach: [users, orders]\n    checkType: ICMP\n    name: API ${each.key}\n    request: { hostname: \"${each.key}.example.org\" }\n",
    )
    .unwrap();
    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    let id = remote_id(dir, "checks.api[users]");
    std::fs::write(
        dir.join("api.yaml"),
        "checks:\n  api:\n    forEach: [accounts, orders]\n    checkType: ICMP\n    name: API ${each.key}\n    request: { hostname: \"${each.key}.example.org\" }\nmoved:\n  - { from: \"checks.api[users]\", to: \"checks.api[accounts]\" }\n",
    )
    .unwrap();
    // Updated in place where it moved to, nothing created.
    assert_run!("for_each_move_plan", command(&emulator, dir, &["plan"]));
    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    assert_eq!(state(dir)["resources"]["checks.api[accounts]"]["remoteId"], id.as_str());
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(clean.status.code(), Some(0), "{}\n{}", stdout(&clean), stderr(&clean));
}

#[test]
fn every_invalid_entry_gives_its_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"shop\"\n").unwrap();
    std::fs::write(
        dir.path().join("checks.yaml"),
        "checks:\n  home:\n    checkType: ICMP\n    name: Home\n    request: { hostname: home.example.org }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("declared.yaml"),
        r#"moved:
  - { from: checks.a, to: checks.b }
  - { from: checks.b, to: checks.a }
  - { from: checks.homepage, to: checks.home }
  - { from: checks.front, to: checks.home }
  - { from: checks.home, to: checks.start }
  - { from: checks.x, to: groups.x }
  - { from: checks.y, too: checks.z }
  - { from: "checks.bad id", to: checks.z }
  - { from: variables.OLD_KEY, to: variables.NEW_KEY }
import:
  - { to: checks.nowhere, id: "123" }
removed:
  - { from: checks.home, destroy: false }
  - { from: checks.old, destroy: "no" }
"#,
    )
    .unwrap();
    let output = monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!("invalid_entries", stderr(&output));
}

#[test]
fn a_saved_import_plan_is_stale_once_the_object_changed_and_targets_select_entries() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    let id = hand_made_check(&emulator, "Legacy login", &[]);
    append(
        dir,
        "monitors.yaml",
        &format!("import:\n  - {{ to: checks.legacy-login, id: \"{id}\" }}\n"),
    );
    edit(
        dir,
        "monitors.yaml",
        "checks:\n",
        "checks:\n  legacy-login:\n    checkType: ICMP\n    name: Legacy login\n    request: { hostname: legacy.example.org }\n",
    );
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    append(
        dir,
        "monitors.yaml",
        "moved:\n  - { from: checks.gateway-ping, to: checks.gw-ping }\n",
    );

    // --target picks one of the two.
    assert_run!(
        "targeted_plan",
        command(&emulator, dir, &["plan", "--target", "checks.gw-ping"])
    );

    let plan_file = dir.join("saved.plan.json");
    assert_ok(&run(&emulator, dir, &["plan", "--out", plan_file.to_str().unwrap()]));
    emulator.call(
        "PUT",
        &format!("/v1/checks/icmp/{id}"),
        Some(serde_json::json!({"name": "Legacy login (edited)", "request": {"hostname": "legacy.example.org"}})),
    );
    assert_run!(
        "stale_import_plan",
        command(&emulator, dir, &["apply", plan_file.to_str().unwrap()])
    );

    assert_ok(&run(&emulator, dir, &["plan", "--out", plan_file.to_str().unwrap()]));
    assert_ok(&run(&emulator, dir, &["apply", plan_file.to_str().unwrap()]));
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(clean.status.code(), Some(0), "{}\n{}", stdout(&clean), stderr(&clean));
}
