//! forEach, forEachFile, `${var:}` and environments end to end: the real
//! binary on examples/environments against the real emulator.

use crate::common;

use std::path::Path;

use common::*;

fn run(emulator: &Emulator, project: &Path, args: &[&str]) -> std::process::Output {
    let output = emulator.monform(project).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "monform {args:?} failed:\n{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    output
}

fn plan(emulator: &Emulator, project: &Path, environment: &str) -> String {
    stdout(&run(emulator, project, &["--env", environment, "plan"]))
}

/// `monform --env production plan ARGS`, not yet run: for `assert_run!`.
fn production_plan(emulator: &Emulator, project: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = emulator.monform(project);
    command.args(["--env", "production", "plan"]).args(args);
    command
}

/// The ownership tags of every check in the account.
fn check_owners(emulator: &Emulator) -> Vec<String> {
    let checks = emulator.call("GET", "/v1/checks?limit=100", None);
    let mut owners: Vec<String> = checks
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["tags"].as_array().unwrap().clone())
        .filter_map(|t| t.as_str().filter(|t| t.starts_with("monform:")).map(str::to_owned))
        .collect();
    owners.sort();
    owners
}

#[test]
fn staging_and_production_stay_apart_in_one_account() {
    let emulator = Emulator::start();
    let project = copy_example("environments");
    let dir = project.path();
    let staging = plan(&emulator, dir, "staging");
    assert!(
        staging.starts_with("Project acme-shop-staging, environment staging\n"),
        "{staging}"
    );
    run(&emulator, dir, &["--env", "staging", "apply", "--auto-approve"]);
    run(&emulator, dir, &["--env", "production", "apply", "--auto-approve"]);
    assert!(dir.join(".monform/state.staging.json").is_file());
    assert!(dir.join(".monform/state.production.json").is_file());
    assert!(!dir.join(".monform/state.json").exists());
    for environment in ["staging", "production"] {
        assert_clean(&emulator, dir, environment);
    }
    // 12 API + 3 home + 3 e2e in production; 12 API + 1 home + 1 seed in staging.
    insta::assert_snapshot!("owner_tags_of_both", check_owners(&emulator).join("\n"));

    run(
        &emulator,
        dir,
        &["--env", "staging", "destroy", "--auto-approve", "--allow-mass-delete"],
    );
    let owners = check_owners(&emulator);
    assert!(
        !owners.iter().any(|t| t.starts_with("monform:acme-shop-staging/")),
        "{owners:?}"
    );
    assert_eq!(owners.len(), 18);
    assert_clean(&emulator, dir, "production");
}

#[test]
fn commands_that_use_the_api_need_an_environment() {
    let project = copy_example("environments");
    let out = project.path().join("adopted");
    for args in [
        vec!["plan"],
        vec!["import", "--all-unmanaged", "--out", out.to_str().unwrap()],
    ] {
        let mut command = monform();
        command
            .args(&args)
            .args(["--color", "never", "--dir"])
            .arg(project.path())
            .env_remove("MONFORM_ENV");
        // After the linter's warnings about the project's checks.
        assert_run!(format!("needs_an_environment_{}", args[0]), command);
    }
}

/// examples/environments applied in production to a fresh emulator.
fn applied_production() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_example("environments");
    run(
        &emulator,
        project.path(),
        &["--env", "production", "apply", "--auto-approve"],
    );
    (emulator, project)
}

#[test]
fn removing_one_item_deletes_exactly_that_object() {
    let (emulator, project) = applied_production();
    let dir = project.path();
    edit(
        dir,
        "monitors/api.yaml",
        "      reviews: { path: /v1/products/42/reviews }\n",
        "",
    );
    assert_run!("removed_item_plan", production_plan(&emulator, dir, &[]));
    run(&emulator, dir, &["--env", "production", "apply", "--auto-approve"]);
    assert_eq!(check_owners(&emulator).len(), 17);
    assert_clean(&emulator, dir, "production");
}

#[test]
fn a_changed_var_updates_exactly_the_objects_that_use_it() {
    let (emulator, project) = applied_production();
    let dir = project.path();
    edit(
        dir,
        "monform.toml",
        "site = \"https://shop.example.com\"",
        "site = \"https://www.shop.example.com\"",
    );
    // ${var:site}: the three home checks (URL) and the three e2e checks
    // (BASE_URL) are updated, nothing else.
    assert_run!("changed_var_plan", production_plan(&emulator, dir, &[]));
    run(&emulator, dir, &["--env", "production", "apply", "--auto-approve"]);
    assert_clean(&emulator, dir, "production");
}

/// The environment's plan is "No changes." (one snapshot per environment).
fn assert_clean(emulator: &Emulator, dir: &Path, environment: &str) {
    insta::assert_snapshot!(format!("clean_{environment}"), plan(emulator, dir, environment));
}

#[test]
fn a_renamed_item_key_moves_with_state_mv_and_targets_name_items() {
    let (emulator, project) = applied_production();
    let dir = project.path();
    edit(dir, "monitors/api.yaml", "      orders: {", "      order-list: {");
    assert_run!("renamed_item_plan", production_plan(&emulator, dir, &[]));
    assert_run!(
        "targeted_item_plan",
        production_plan(&emulator, dir, &["--target", "checks.api[orders]"])
    );
    run(
        &emulator,
        dir,
        &[
            "--env",
            "production",
            "state",
            "mv",
            "checks.api[orders]",
            "checks.api[order-list]",
        ],
    );
    // The check keeps its id; only its name follows the new key.
    assert_run!("moved_item_plan", production_plan(&emulator, dir, &[]));
}

/// With the PostgreSQL backend each environment has its own state row and
/// lock, keyed by its project name.
#[test]
fn each_environment_has_its_own_postgres_state() {
    let Some(url) = postgres() else { return };
    let emulator = Emulator::start();
    let project = copy_example("environments");
    let dir = project.path();
    // A project name no earlier run used in the shared database.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let name = format!("shop-{}-{nanos}", std::process::id());
    edit(
        dir,
        "monform.toml",
        "name = \"acme-shop\"",
        &format!("name = \"{name}\""),
    );
    edit(
        dir,
        "monform.toml",
        "project = \"acme-shop\"             # keeps the objects it already owns",
        "",
    );
    std::fs::write(
        dir.join("monform.toml"),
        std::fs::read_to_string(dir.join("monform.toml")).unwrap() + "\n[state]\nbackend = \"postgres\"\n",
    )
    .unwrap();
    let postgres = |args: &[&str]| {
        let output = emulator
            .monform(dir)
            .env("MONFORM_STATE_URL", &url)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        stdout(&output)
    };
    for environment in ["staging", "production"] {
        postgres(&["--env", environment, "apply", "--auto-approve"]);
    }
    assert!(!dir.join(".monform/state.staging.json").exists());
    // Each environment's own addresses (the remote ids after them vary).
    for environment in ["staging", "production"] {
        let listed = postgres(&["--env", environment, "state", "list"]);
        let addresses: Vec<&str> = listed.lines().filter_map(|l| l.split_whitespace().next()).collect();
        insta::assert_snapshot!(format!("postgres_{environment}_addresses"), addresses.join("\n"));
        // The project's name is unique to this run.
        let plan = postgres(&["--env", environment, "plan"]).replace(&name, "[project]");
        insta::assert_snapshot!(format!("postgres_clean_{environment}"), plan);
    }
}

/// Issue 27 item 3: environments in one account (one API URL) that would
/// claim one account-wide object are found offline by `validate`, which
/// says how to write it; other API URLs (other accounts) do not clash.
#[test]
fn validate_finds_an_object_two_environments_of_one_account_would_claim() {
    let project = copy_example("environments");
    let dir = project.path();
    edit(
        dir,
        "monitors/shared.yaml",
        "    environments: [production]          # production owns it; staging uses it as is\n",
        "",
    );
    let output = monform()
        .args(["--color", "never", "validate", "--dir"])
        .arg(dir)
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let text = stderr(&output);
    let start = text
        .find("monform::shared-object")
        .unwrap_or_else(|| panic!("no shared-object finding:\n{text}"));
    insta::assert_snapshot!("shared_object", &text[start..]);

    // Staging in an account of its own: nothing is shared.
    edit(
        dir,
        "monform.toml",
        "defaults = { tags = [\"team:shop\", \"env:staging\"] }",
        "defaults = { tags = [\"team:shop\", \"env:staging\"] }\napi = { url = \"https://staging-api.example.com\" }",
    );
    let output = monform()
        .args(["validate", "--dir"])
        .arg(dir)
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}
