//! `monform init` (issue 46 item 7): a project started in an empty folder
//! validates and plans as written; an existing monform.toml is never
//! overwritten; `--from-account` adopts the account's unmanaged objects.

use crate::common;

use common::*;

/// An empty folder named `my shop` (a name the project name is made from).
fn empty_folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("my shop");
    std::fs::create_dir(&dir).unwrap();
    (base, dir)
}

/// `monform ARGS` run in `dir`, as a user there runs it (no --dir).
fn here(dir: &std::path::Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = monform();
    command.current_dir(dir).args(["--color", "never"]).args(args);
    command
}

#[test]
fn init_then_validate_and_plan_pass() {
    let (_base, dir) = empty_folder();
    let output = assert_run!("init", here(&dir, &["init"]));
    assert!(output.status.success());
    let toml = std::fs::read_to_string(dir.join("monform.toml")).unwrap();
    insta::assert_snapshot!("monform_toml", toml);
    assert!(toml.contains("name = \"my-shop\""), "{toml}");
    assert!(toml.contains("url = \"local\""), "{toml}");
    insta::assert_snapshot!(
        "example_yaml",
        std::fs::read_to_string(dir.join("monitors/example.yaml")).unwrap()
    );
    let ignore = std::fs::read_to_string(dir.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == ".monform/"), "{ignore}");
    // The schemas the files' first lines name are there.
    assert!(dir.join("schema/monform.schema.json").is_file());
    assert!(dir.join("schema/resource-file.schema.json").is_file());

    let validated = assert_run!("validate", here(&dir, &["validate"]));
    assert!(validated.status.success());
    let planned = assert_run!("plan", here(&dir, &["plan", "--detailed-exitcode"]));
    assert_eq!(planned.status.code(), Some(2), "changes, no error");

    // Again: refused, nothing overwritten.
    std::fs::write(dir.join("monform.toml"), "[project]\nname = \"kept\"\n").unwrap();
    let again = assert_run!("init_again", here(&dir, &["init"]));
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.join("monform.toml")).unwrap(),
        "[project]\nname = \"kept\"\n"
    );
}

#[test]
fn init_from_account_adopts_the_unmanaged_objects() {
    let emulator = Emulator::start();
    let made = emulator.call(
        "POST",
        "/v1/checks/icmp?autoAssignAlerts=false",
        Some(serde_json::json!({
            "name": "Legacy ping", "tags": [], "request": {"hostname": "legacy.example.org"}, "heartbeat": {}, "script": ""
        })),
    );
    assert!(made["id"].is_string() || made["id"].is_number(), "{made}");
    let (_base, dir) = empty_folder();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    let output = emulator
        .monform(&dir)
        .args(["init", "--from-account"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    insta::assert_snapshot!("from_account", steady(&stderr(&output)));
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitignore")).unwrap(),
        "target/\n.monform/\n"
    );
    let validated = emulator.monform(&dir).arg("validate").output().unwrap();
    assert!(validated.status.success(), "{}", stderr(&validated));
    let planned = emulator
        .monform(&dir)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        planned.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&planned),
        stderr(&planned)
    );
}
