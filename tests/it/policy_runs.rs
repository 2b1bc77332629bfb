//! Rego policies (issue 32) beyond `plan` and `apply`, with the real binary
//! against the real emulator: `reconcile` checks each interval's apply,
//! `destroy` its deletes, and a saved plan keeps its overrides and findings
//! for `apply PLANFILE` and `show`.

use std::path::Path;

use crate::common;

use common::*;

use super::policy::{ALMOST, five_without_owner, project_with as project};
use serde_json::Value;

fn checks(emulator: &Emulator) -> usize {
    emulator
        .call("GET", "/v1/checks?limit=100", None)
        .as_array()
        .map_or(0, Vec::len)
}

#[test]
fn the_reconcilers_log_counts_many_findings_of_one_rule_and_its_event_has_each() {
    let emulator = Emulator::start();
    let dir = project(
        &five_without_owner(),
        "\n[reconcile]\ninterval = \"1m\"\napply-changes = true\n",
    );
    let events = dir.path().join("events.jsonl");
    let output = emulator
        .monform(dir.path())
        .args(["reconcile", "--once", "--events"])
        .arg(&events)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let log = stderr(&output);
    assert_eq!(log.matches("has no owner").count(), 3, "{log}");
    assert!(log.contains("policy: 2 more of monform.owner_tag.deny"), "{log}");
    let text = std::fs::read_to_string(&events).unwrap();
    let policy = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["event"] == "policy")
        .unwrap();
    assert_eq!(policy["findings"].as_array().unwrap().len(), 5, "{policy}");
}

#[test]
fn reconcile_refuses_an_interval_the_policies_deny_in_its_log_and_events() {
    let emulator = Emulator::start();
    let dir = project(ALMOST, "\n[reconcile]\ninterval = \"1m\"\napply-changes = true\n");
    let events = dir.path().join("events.jsonl");
    let once = |dir: &Path| {
        emulator
            .monform(dir)
            .args(["reconcile", "--once", "--events"])
            .arg(&events)
            .output()
            .unwrap()
    };
    let output = once(dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    insta::assert_snapshot!("reconcile_denied_log", steady(&stderr(&output)));
    assert_eq!(checks(&emulator), 0, "the denied interval created a check");
    let policy: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == "policy")
        .collect();
    assert_eq!(policy.len(), 1, "{policy:?}");
    assert_eq!(policy[0]["blocks"], true, "{policy:?}");
    assert_eq!(policy[0]["findings"][0]["rule"], "monform.owner_tag.deny");
    assert_eq!(policy[0]["findings"][0]["at"], "monitors.yaml:2:3");

    // Fixed in the files: the next interval applies.
    edit(
        dir.path(),
        "monitors.yaml",
        "    frequency: 10\n",
        "    frequency: 10\n    tags: [owner:web]\n",
    );
    let output = once(dir.path());
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(checks(&emulator), 1);
}

#[test]
fn destroy_is_refused_on_an_slo_check_unless_overridden_and_files_rules_do_not_block_it() {
    let emulator = Emulator::start();
    // home is tagged slo; owner_tag's deny on `other` (no owner) is about
    // the files, which a destroy does not run.
    let monitors = "checks:
  home:
    checkType: TCP
    name: Home
    frequency: 10
    tags: [slo, owner:web]
    locations: [eu-west-1]
    alertChannels: [oncall]
    request: { hostname: example.com, port: 443 }
  other:
    checkType: TCP
    name: Other
    locations: [eu-west-1]
    alertChannels: [oncall]
    request: { hostname: example.org, port: 443 }
alertChannels:
  oncall: { type: EMAIL, config: { address: oncall@example.com } }
";
    let dir = project(monitors, "");
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve", "--policy-override", "monform.owner_tag"])
        .output()
        .unwrap();
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    assert_eq!(checks(&emulator), 2);

    let output = emulator
        .monform(dir.path())
        .args(["destroy", "--auto-approve"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    // Only the slo rule: owner_tag's deny is about the files.
    insta::assert_snapshot!("destroy_refused", steady(&transcript(&output)));
    assert_eq!(checks(&emulator), 2, "the refused destroy deleted something");

    let output = emulator
        .monform(dir.path())
        .args(["destroy", "--auto-approve", "--policy-override", "monform.slo_deletes"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(checks(&emulator), 0);
}

#[test]
fn a_saved_plan_keeps_its_overrides_and_findings_for_apply_and_show() {
    let emulator = Emulator::start();
    let dir = project(ALMOST, "");
    let plan = |args: &[&str]| {
        emulator
            .monform(dir.path())
            // The saved plan's path is relative to the working directory.
            .current_dir(dir.path())
            .args(["plan", "--out"])
            .args(args)
            .output()
            .unwrap()
    };
    // Saved without an override: apply re-checks it and refuses, and a
    // late --policy-override is not taken.
    let output = plan(&["denied.plan"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let apply = |args: &[&str]| {
        let mut command = emulator.monform(dir.path());
        command
            .current_dir(dir.path())
            .arg("apply")
            .args(args)
            .output()
            .unwrap()
    };
    let output = apply(&["denied.plan"]);
    insta::assert_snapshot!("saved_plan_denied", steady(&transcript(&output)));
    let output = apply(&["denied.plan", "--policy-override", "monform.owner_tag"]);
    insta::assert_snapshot!("saved_plan_late_override", steady(&transcript(&output)));
    assert_eq!(checks(&emulator), 0);

    // Saved with the override: show has the findings and the override in
    // every format, and apply honours it without being told again.
    let output = plan(&["reviewed.plan", "--policy-override", "monform.owner_tag"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let show = |format: &str| {
        let output = monform()
            .arg("--dir")
            .arg(dir.path())
            .current_dir(dir.path())
            .args(["show", "reviewed.plan", "--format", format])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
    };
    insta::assert_snapshot!("show_human", steady(&show("human")));
    let json: Value = serde_json::from_str(&show("json")).unwrap();
    assert_eq!(json["policy"]["overrides"], serde_json::json!(["monform.owner_tag"]));
    assert_eq!(json["policy"]["blocks"], false);
    assert_eq!(json["policy"]["findings"][0]["code"], "monform.owner_tag.deny");
    assert_eq!(json["policy"]["findings"][0]["line"], 2);
    insta::assert_snapshot!("show_markdown", steady(&show("markdown")));
    let output = apply(&["reviewed.plan"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(checks(&emulator), 1);
}

/// A finding's field is at its own key, by the loader's spans: nested
/// (`request.assertions`), in a list, in a forEach template, and not at a
/// commented-out key of the same name before it.
#[test]
fn a_findings_field_is_at_its_own_key_nested_and_in_for_each() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"fields\"\n").unwrap();
    std::fs::create_dir_all(dir.path().join("policies")).unwrap();
    std::fs::write(
        dir.path().join("policies/fields.rego"),
        r#"package monform.fields

deny contains {"msg": "assert on the body, not only the status", "address": r.address, "field": "request.assertions[0].source"} if {
	some r in input.resources
	r.fields.checkType == "API"
	r.fields.request.assertions[0].source == "STATUS_CODE"
}

warn contains {"msg": "regional checks run every minute", "address": r.address, "field": "frequency"} if {
	some r in input.resources
	startswith(r.address, "checks.regional[")
	r.fields.frequency > 1
}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("monitors.yaml"),
        r#"checks:
  orders:
    checkType: API
    name: Orders
    # request: kept below, with its assertions
    request:
      method: GET
      url: https://api.example.com/orders
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
  regional:
    forEach: [eu-west-1, us-east-1]
    checkType: URL
    name: "Home from ${each.key}"
    # frequency: 1 once the budget allows
    frequency: 10
    locations: ["${each.value}"]
    request: { url: "https://example.com/" }
"#,
    )
    .unwrap();
    let output = assert_run!(
        "field_spans",
        monform()
            .arg("--dir")
            .arg(dir.path())
            .args(["validate", "--format", "github"])
    );
    assert_eq!(output.status.code(), Some(1));
}
