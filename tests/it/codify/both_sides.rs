//! Issue 45, codify's side: a field changed in the files and in the
//! service since the last apply (a conflict) is listed, never "No drift",
//! and written only with `--take-service`; what an apply records as
//! applied is the service's value only where the files say the same.

use std::path::Path;

use serde_json::json;

use crate::common::conflicts::{FIRST_TOKEN, SECRET_VARIABLE, apply_then_rotate, ui_edit_check, with_token};
use crate::common::{Emulator, Monform, assert_run, stderr, stdout};

const PROJECT: &str = "[project]\nname = \"both\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n";

const CHECKS: &str = r#"checks:
  api:
    checkType: API
    name: API
    maxResponseTime: 5000   # raised during incidents
    request: { method: GET, url: "https://api.example.com/" }
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), PROJECT).unwrap();
    std::fs::write(dir.path().join("checks.yaml"), CHECKS).unwrap();
    dir
}

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).args(args).output().unwrap()
}

/// `maxResponseTime` set in the web UI.
fn ui_edit(emulator: &Emulator, max: u64) {
    ui_edit_check(emulator, "API", json!({ "maxResponseTime": max }));
}

fn files(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("checks.yaml")).unwrap()
}

/// The issue's scenario 2: codified (files = service = 7000) and not
/// applied (the state says 5000), then edited in the UI again (9000).
#[test]
fn a_conflict_is_listed_and_written_only_with_take_service() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    emulator.applied(dir);
    ui_edit(&emulator, 7000);
    let written = run(&emulator, dir, &["codify", "--write"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert_eq!(files(dir), CHECKS.replace("5000", "7000"));
    ui_edit(&emulator, 9000);

    // Listed with its three values; exit 3 (a person decides); nothing written.
    let listed = assert_run!("conflict_listed", emulator.monform(dir).args(["codify", "--write"]));
    assert_eq!(listed.status.code(), Some(3));
    assert!(!stderr(&listed).contains("No drift"), "{}", stderr(&listed));
    assert_eq!(files(dir), CHECKS.replace("5000", "7000"));

    let taken = assert_run!(
        "conflict_taken",
        emulator.monform(dir).args(["codify", "--write", "--take-service"])
    );
    assert_eq!(taken.status.code(), Some(0));
    assert_eq!(files(dir), CHECKS.replace("5000", "9000"));
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
}

/// A no-change apply records the service's values as applied where the
/// files say the same: after `codify --write` and its apply, the next UI
/// edit is drift (codified as usual), not a conflict.
#[test]
fn codify_write_then_its_apply_records_the_service_values_as_applied() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    emulator.applied(dir);
    ui_edit(&emulator, 7000);
    let written = run(&emulator, dir, &["codify", "--write"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    ui_edit(&emulator, 9000);
    let again = run(&emulator, dir, &["codify", "--write"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("Codified 1 field:\n  checks.api.maxResponseTime\n"),
        "{}",
        stderr(&again)
    );
    assert_eq!(files(dir), CHECKS.replace("5000", "9000"));
}

/// The files changed and the service did not: no drift, and not "the
/// files say what the service has" either.
#[test]
fn no_drift_with_file_changes_says_the_files_change_something() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    emulator.applied(dir);
    std::fs::write(dir.join("checks.yaml"), CHECKS.replace("5000", "7000")).unwrap();
    let checked = run(&emulator, dir, &["codify", "--check"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    assert_eq!(
        stderr(&checked),
        "No drift: the service has what was last applied. The files change 1 resource (monform plan shows them).\n"
    );
}

/// The issue's scenario 3: a secret variable rotated in the web UI cannot
/// be read, but its change can be seen: a secret to set, and where.
#[test]
fn a_secret_rotated_in_the_service_is_listed_as_a_secret_to_set() {
    let emulator = Emulator::start();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("monform.toml"), PROJECT).unwrap();
    std::fs::write(dir.join("variables.yaml"), SECRET_VARIABLE).unwrap();
    let run = |args: &[&str]| with_token(&emulator, dir, FIRST_TOKEN, args);
    apply_then_rotate(&emulator, run);
    let checked = run(&["codify", "--check"]);
    assert_eq!(checked.status.code(), Some(3), "{}", stderr(&checked));
    assert_eq!(stdout(&checked), "", "nothing to write");
    assert_eq!(
        stderr(&checked),
        "Secrets to set: changed in the service, their values not readable (1):\n  variables.API_TOKEN.value (read from ${env:API_TOKEN})\n"
    );
    assert!(!stderr(&checked).contains("tok-first") && !stderr(&checked).contains("rotated"));
}
