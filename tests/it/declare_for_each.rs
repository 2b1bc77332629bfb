//! A `moved` entry naming a whole `forEach` definition (Terraform's habit
//! for a `for_each` resource), end to end: the real binary against the
//! real emulator.

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

fn state(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap()).unwrap()
}

/// A `forEach` check of three items named `name`, then `extra` (top-level lists).
fn api_yaml(name: &str, extra: &str) -> String {
    format!(
        "checks:\n  {name}:\n    forEach: [users, orders, billing]\n    checkType: ICMP\n    name: API ${{each.key}}\n    request: {{ hostname: \"${{each.key}}.example.org\" }}\n{extra}"
    )
}

const KEYS: [&str; 3] = ["users", "orders", "billing"];

#[test]
fn renaming_a_for_each_definition_with_a_whole_resource_move_keeps_every_item() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    std::fs::write(dir.join("api.yaml"), api_yaml("api", "")).unwrap();
    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    let before = state(dir);
    let ids: Vec<String> = KEYS
        .iter()
        .map(|k| {
            before["resources"][format!("checks.api[{k}]")]["remoteId"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();

    std::fs::write(
        dir.join("api.yaml"),
        api_yaml(
            "backend-api",
            "moved:\n  - { from: checks.api, to: checks.backend-api }\n",
        ),
    )
    .unwrap();

    // Every item moves, nothing is created or deleted, and no warning
    // about the entry (the lint's findings about routing are not its business).
    assert_run!(
        "whole_resource_move_plan",
        command(&emulator, dir, &["plan", "--detailed-exitcode"])
    );

    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    let after = state(dir);
    for (key, id) in KEYS.iter().zip(&ids) {
        assert!(after["resources"].get(format!("checks.api[{key}]")).is_none());
        assert_eq!(
            after["resources"][format!("checks.backend-api[{key}]")]["remoteId"],
            id.as_str()
        );
    }

    // The entry stays in the files: a no-op from now on, and quiet.
    assert_run!(
        "quiet_after_the_move",
        command(&emulator, dir, &["plan", "--detailed-exitcode"])
    );
}

#[test]
fn an_entry_that_moves_nothing_onto_an_address_without_state_is_warned_about_with_its_line() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    // A typo'd `from` (`apis`): nothing moves, and the new definition is
    // simply created. The plan goes on, with a warning at the entry.
    std::fs::write(
        dir.join("api.yaml"),
        api_yaml(
            "backend-api",
            "moved:\n  - { from: checks.apis, to: checks.backend-api }\n",
        ),
    )
    .unwrap();
    assert_run!(
        "moves_nothing_plan",
        command(&emulator, dir, &["plan", "--detailed-exitcode"])
    );

    // Once the definition is applied, the entry is a quiet no-op.
    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));
    assert_run!(
        "quiet_once_applied",
        command(&emulator, dir, &["plan", "--detailed-exitcode"])
    );
}

/// Issue 27 item 6: the apply's summary counts what a pull request of
/// refactorings did: the moves of a renamed `forEach` (which make no API
/// call), an import, a delete and a forget; it said "3 done" for these
/// six, leaving every move out.
#[test]
fn the_apply_summary_counts_moves_imports_deletes_and_forgets() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    std::fs::write(dir.join("api.yaml"), api_yaml("api", "")).unwrap();
    assert_ok(&run(&emulator, dir, &["apply", "--auto-approve"]));

    // A check made by hand, to import.
    let made = emulator.call(
        "POST",
        "/v1/checks/icmp?autoAssignAlerts=false",
        Some(serde_json::json!({
            "name": "Legacy", "request": {"hostname": "legacy.example.org"}, "heartbeat": {}, "script": ""
        })),
    );
    let legacy = made["id"]
        .as_str()
        .map_or_else(|| made["id"].to_string(), str::to_owned);
    std::fs::write(
        dir.join("api.yaml"),
        api_yaml(
            "backend-api",
            &format!(
                "  legacy:\n    checkType: ICMP\n    name: Legacy\n    request: {{ hostname: legacy.example.org }}\n\
                 moved:\n  - {{ from: checks.api, to: checks.backend-api }}\n\
                 import:\n  - {{ to: checks.legacy, id: \"{legacy}\" }}\n\
                 removed:\n  - {{ from: variables.API_TOKEN, destroy: false }}\n"
            ),
        ),
    )
    .unwrap();
    // The staging group leaves the files (a delete), the variable is forgotten.
    edit(dir, "monitors.yaml", "  staging: { name: Staging }\n", "");
    edit(
        dir,
        "monitors.yaml",
        "variables:\n  API_TOKEN: { value: \"${env:SHOP_API_TOKEN}\", secret: true }\n",
        "",
    );
    let plan = run(&emulator, dir, &["plan"]);
    assert_ok(&plan);
    assert!(
        stdout(&plan)
            .contains("Plan: 0 to create, 0 to update, 1 to delete, 0 to replace, 1 to import, 3 moved, 1 to forget."),
        "{}",
        stdout(&plan)
    );

    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert_ok(&applied);
    let text = stderr(&applied);
    assert!(text.contains("Apply complete: 6 done, 0 failed, 0 skipped."), "{text}");
    // What was done is said as the files name it.
    for line in [
        "checks.legacy: imported",
        "groups.staging: deleted",
        "variables.API_TOKEN: forgotten",
        "checks.backend-api[users]: ownership tag moved (was checks.api[users])",
    ] {
        assert!(text.contains(line), "no `{line}`:\n{text}");
    }
}
