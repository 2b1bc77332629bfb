//! A saved plan knows its environment (issue 46 item 3): `apply PLANFILE`
//! applies it there without `--env`, `show` and the Markdown heading name
//! it, and a contradicting `--env` is refused naming both.

use crate::common;

use std::path::Path;

use common::*;

const PROJECT: &str = r#"[project]
name = "shop"

[lint]
unrouted-checks = "off"

[vars]
env = "production"

[environments.staging]
vars = { env = "staging" }

[environments.production]
project = "shop"
"#;

const MONITORS: &str = r#"checks:
  ping:
    checkType: ICMP
    name: Ping ${var:env}
    request: { hostname: ping.example.org }
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), PROJECT).unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), MONITORS).unwrap();
    dir
}

fn command(emulator: &Emulator, dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = emulator.monform(dir);
    command.current_dir(dir).env_remove("MONFORM_ENV").args(args);
    command
}

#[test]
fn a_plan_saved_for_production_is_applied_there_without_env() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    let saved = command(&emulator, dir, &["--env", "production", "plan", "-out", "prod.plan"])
        .output()
        .unwrap();
    assert!(saved.status.success(), "{}", stderr(&saved));

    assert_run!("show", command(&emulator, dir, &["show", "prod.plan"]));
    assert_run!(
        "show_markdown",
        command(&emulator, dir, &["show", "prod.plan", "--format", "markdown"])
    );

    // Another environment named: refused, naming both, nothing applied.
    let refused = assert_run!(
        "other_environment",
        command(&emulator, dir, &["--env", "staging", "apply", "prod.plan"])
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(!dir.join(".monform/state.staging.json").exists());

    let applied = assert_run!("apply_without_env", command(&emulator, dir, &["apply", "prod.plan"]));
    assert!(applied.status.success());
    assert!(dir.join(".monform/state.production.json").is_file());
    assert!(!dir.join(".monform/state.staging.json").exists());
    check_named(&emulator, "Ping production");

    // The same environment named again is no contradiction.
    let again = command(&emulator, dir, &["--env", "production", "plan", "-out", "prod.plan"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let same = command(&emulator, dir, &["--env", "production", "apply", "prod.plan"])
        .output()
        .unwrap();
    assert!(same.status.success(), "{}", stderr(&same));
}
