//! `import`, `moved` and `removed` entries in a project of two
//! environments (issue 46 item 2): an entry applies where its resource
//! exists, and takes an `environments:` list of its own.

use crate::common;

use std::path::Path;

use common::*;

const PROJECT: &str = r#"[project]
name = "shop"

[lint]
unrouted-checks = "off"

[environments.staging]

[environments.production]
project = "shop"
"#;

/// A check made by hand in the account, for an `import` entry.
fn hand_made_check(emulator: &Emulator, name: &str) -> String {
    let made = emulator.call(
        "POST",
        "/v1/checks/icmp?autoAssignAlerts=false",
        Some(serde_json::json!({
            "name": name, "tags": [], "request": {"hostname": "www.example.org"}, "heartbeat": {}, "script": ""
        })),
    );
    made["id"]
        .as_str()
        .map_or_else(|| made["id"].to_string(), str::to_owned)
}

fn project(monitors: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), PROJECT).unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

fn command(emulator: &Emulator, dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = emulator.monform(dir);
    command.args(args);
    command
}

#[test]
fn an_import_of_a_production_only_check_validates_and_plans_in_both_environments() {
    let emulator = Emulator::start();
    let id = hand_made_check(&emulator, "Homepage");
    let project = project(&format!(
        r#"checks:
  ping:
    checkType: ICMP
    name: Ping
    request: {{ hostname: ping.example.org }}
  homepage:
    environments: [production]
    checkType: ICMP
    name: Homepage
    request: {{ hostname: www.example.org }}
  site:
    environments: [production]
    forEach: [eu, us]
    checkType: ICMP
    name: Site ${{each.key}}
    request: {{ hostname: "${{each.key}}.example.org" }}
import:
  - {{ to: checks.homepage, id: "{id}" }}
moved:
  - {{ from: checks.eu-site, to: "checks.site[eu]" }}
removed:
  - {{ from: checks.old-probe, destroy: false, environments: [staging] }}
"#
    ));
    let dir = project.path();
    let output = assert_run!("validate_both", command(&emulator, dir, &["validate"]));
    assert!(output.status.success());
    let output = assert_run!(
        "staging_plan",
        command(&emulator, dir, &["--env", "staging", "plan", "--detailed-exitcode"])
    );
    assert_eq!(output.status.code(), Some(2), "changes, no error");
    let output = assert_run!(
        "production_plan",
        command(&emulator, dir, &["--env", "production", "plan", "--detailed-exitcode"])
    );
    assert_eq!(output.status.code(), Some(2), "changes, no error");
    assert!(stdout(&output).contains("import"), "{}", stdout(&output));
}

#[test]
fn an_entry_naming_an_unknown_environment_is_refused_at_its_line() {
    let project = project(
        r#"checks:
  ping:
    checkType: ICMP
    name: Ping
    request: { hostname: ping.example.org }
removed:
  - { from: checks.old-probe, destroy: false, environments: [stagign] }
"#,
    );
    let mut validate = monform();
    validate
        .args(["validate", "--color", "never", "--dir"])
        .arg(project.path());
    let output = assert_run!("unknown_environment", validate);
    assert_eq!(output.status.code(), Some(1));
}
