//! What the reconciler tells its `[reconcile] notify` channels (issue 45):
//! a revert, with what the service had and what the files restored;
//! fields as `service` and `files`; a conflict as a conflict; and a
//! `codify` policy that writes an environment's edit only where that
//! environment alone reads it.

use std::path::Path;

use serde_json::{Value, json};

use super::{CHECKS, check, project, ui_edit};
use crate::common::conflicts::{FIRST_TOKEN, SECRET_VARIABLE, apply_then_rotate, with_token};
use crate::common::receiver::Receiver;
use crate::common::*;

fn once(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator
        .monform(dir)
        .args(args)
        .args(["reconcile", "--once"])
        .output()
        .unwrap()
}

/// A report with its time made steady, for a snapshot.
fn steady_report(report: &Value) -> String {
    let mut report = report.clone();
    report["time"] = json!("[time]");
    steady(&serde_json::to_string_pretty(&report).unwrap())
}

/// The issue's scenario 7: `drift = "revert"` reverts a UI edit and says
/// so to the channels, each field as the service had it and as the files
/// restored it.
#[test]
fn a_revert_is_reported_with_what_the_service_had_and_what_the_files_restored() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project("1m", "", &receiver.url, CHECKS);
    let dir = project.path();
    emulator.applied(dir);
    ui_edit(&emulator, "API", json!({"frequency": 15}));
    let output = once(&emulator, dir, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(check(&emulator, "API")["frequency"], 5, "reverted");
    let reports = receiver.reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    insta::assert_snapshot!("reverted_report", steady_report(&reports[0]));
    // Reverted is over: the next interval is in sync and reports nothing.
    let again = once(&emulator, dir, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(receiver.reports().len(), 1);
}

/// A field changed in the files (not applied yet) and in the UI: the
/// `notify` and `codify` reports mark it a conflict, with the value last
/// applied; `codify` writes no branch for it (a person decides).
#[test]
fn notify_and_codify_report_a_conflict_as_a_conflict() {
    for policy in ["notify", "codify"] {
        let emulator = Emulator::start();
        let receiver = Receiver::start();
        let settings = format!("drift = \"{policy}\"\n");
        let project = project("1m", &settings, &receiver.url, CHECKS);
        let dir = project.path();
        git_repository(dir, ("Reconciler", "rec@example.com"), ".monform/\n");
        emulator.applied(dir);
        edit(
            dir,
            "monitors.yaml",
            "name: Homepage\n    frequency: 5",
            "name: Homepage\n    frequency: 10",
        );
        ui_edit(&emulator, "Homepage", json!({"frequency": 15}));
        let output = once(&emulator, dir, &[]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(check(&emulator, "Homepage")["frequency"], 15, "a person decides");
        assert_eq!(git(dir, &["branch", "--list", "monform/*"]), "", "{policy}");
        let reports = receiver.reports();
        assert_eq!(reports.len(), 1, "{reports:?}");
        let drifted = &reports[0]["drifted"][0];
        assert_eq!(drifted["address"], "checks.homepage", "{drifted}");
        assert_eq!(drifted["policy"], policy, "{drifted}");
        assert_eq!(drifted["reason"], "changed in the files and outside monform (conflict)");
        assert_eq!(
            drifted["fields"],
            json!([{"path": "frequency", "service": 15, "files": 10, "conflict": true, "applied": 5, "sensitive": false}])
        );
    }
}

const ENVIRONMENTS: &str = r#"[project]
name = "shop"

[defaults]
locations = ["eu-west-1"]

[vars]
env = "none"

[environments.staging]
vars = { env = "staging" }

[environments.production]
vars = { env = "production" }

[reconcile]
drift = "codify"
notify = ["ops-webhook"]
"#;

/// The issue's scenario 5, the reconciler's side: its `codify` policy does
/// not write production's edit into a definition staging reads too.
#[test]
fn the_codify_policy_leaves_a_shared_definition_alone_and_reports_the_drift() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("monform.toml"), ENVIRONMENTS).unwrap();
    let monitors = format!(
        "checks:\n  home:\n    checkType: URL\n    name: \"Home ${{var:env}}\"\n    request: {{ url: \"https://example.com/\" }}\nalertChannels:\n  ops-webhook:\n    environments: [production]\n    type: WEBHOOK\n    config: {{ name: ops, url: \"{}\" }}\n    sendRecovery: false\n    sendFailure: false\n    sendDegraded: false\n",
        receiver.url
    );
    std::fs::write(root.join("monitors.yaml"), &monitors).unwrap();
    git_repository(root, ("Reconciler", "rec@example.com"), ".monform/\n");
    let applied = emulator
        .monform(root)
        .args(["--env", "production", "apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));
    ui_edit(&emulator, "Home production", json!({"muted": true}));

    let output = once(&emulator, root, &["--env", "production"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        git(root, &["branch", "--list", "monform/*"]),
        "",
        "no branch: {}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(root.join("monitors.yaml")).unwrap(), monitors);
    let reports = receiver.reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let drifted = &reports[0]["drifted"][0];
    assert_eq!(drifted["policy"], "codify", "{drifted}");
    assert!(drifted.get("codifiedBranch").is_none(), "{drifted}");
    assert_eq!(
        drifted["fields"],
        json!([{"path": "muted", "service": true, "files": false, "sensitive": false}])
    );
}

/// The issue's scenario 3, the reconciler's side: a secret variable
/// rotated in the UI is reported, without a value.
#[test]
fn a_rotated_secret_is_reported_without_its_value() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project("1m", "", &receiver.url, SECRET_VARIABLE);
    let dir = project.path();
    let run = |args: &[&str]| with_token(&emulator, dir, FIRST_TOKEN, args);
    apply_then_rotate(&emulator, run);
    let output = run(&["reconcile", "--once"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let reports = receiver.reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let text = reports[0].to_string();
    assert!(!text.contains("tok-first") && !text.contains("rotated-in"), "{text}");
    let drifted = &reports[0]["drifted"][0];
    assert_eq!(drifted["address"], "variables.API_TOKEN", "{drifted}");
    assert_eq!(drifted["fields"], json!([{"path": "value", "sensitive": true}]));
}

/// The reconciler records the service's values as applied only where the
/// files say the same: its codified branch merged (files = service, the
/// state still at the old value), the next interval records them, so a
/// later UI edit is drift codified as usual, not a conflict with files
/// that only caught up.
#[test]
fn files_that_caught_up_with_the_service_are_recorded_so_the_next_edit_is_drift() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let checks = "checks:\n  web:\n    checkType: URL\n    name: Web\n    frequency: 5\n    request: { url: \"https://example.com/\" }\n";
    let project = project("1m", "drift = \"codify\"\n", &receiver.url, checks);
    let root = project.path();
    git_repository(root, ("Reconciler", "rec@example.com"), ".monform/\n");
    emulator.applied(root);
    ui_edit(&emulator, "Web", json!({"frequency": 15}));
    let first = once(&emulator, root, &[]);
    assert_eq!(first.status.code(), Some(2), "{}", stderr(&first));
    // The branch merged by hand (here: its value written and committed).
    edit(root, "monitors.yaml", "frequency: 5\n", "frequency: 15\n");
    git(root, &["commit", "-qam", "merge the codified branch"]);
    let caught_up = once(&emulator, root, &[]);
    assert_eq!(caught_up.status.code(), Some(0), "in sync: {}", stderr(&caught_up));

    ui_edit(&emulator, "Web", json!({"frequency": 30}));
    let again = once(&emulator, root, &[]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    let drift: Vec<Value> = receiver
        .reports()
        .into_iter()
        .filter(|r| r["type"] == "drift")
        .collect();
    assert_eq!(drift.len(), 2, "{drift:?}");
    let last = &drift[1]["drifted"][0];
    assert_eq!(
        last["fields"],
        json!([{"path": "frequency", "service": 30, "files": 15, "sensitive": false}]),
        "drift, not a conflict: {last}"
    );
    assert!(last["codifiedBranch"].is_string(), "{last}");
}
