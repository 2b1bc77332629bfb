//! Issue 46, item 8: what a team reads in its first week of CI. Problems
//! counted in words and not sent to `validate` after being printed; a plan
//! that changes nothing but is over the run budget says so instead of "No
//! changes."; a piped answer ends the prompt's line; `export` keeps
//! references to the service's variables (`{{KEY}}`) as written and
//! names the schemas it writes beside the files.

use std::path::Path;

use crate::common;

use common::*;

const TOML: &str = "[project]\nname = \"words\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n";

/// A project of `monitors.yaml` as given.
fn project(monitors: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), TOML).unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

const ONE_CHECK: &str = "checks:
  home:
    checkType: URL
    name: Home
    frequency: 1
    request: { url: https://shop.example.com/ }
";

#[test]
fn one_problem_is_one_problem_and_it_was_shown() {
    let emulator = Emulator::start();
    let dir = project(&ONE_CHECK.replace("frequency: 1", "frequncy: 1"));
    let output = assert_run!("one_problem", emulator.monform(dir.path()).arg("plan"));
    let stderr = stderr(&output);
    assert!(
        stderr.contains("error: the files have 1 problem, shown above"),
        "{stderr}"
    );
    assert!(!stderr.contains("run `monform validate`"), "{stderr}");
}

#[test]
fn a_plan_without_changes_over_the_budget_says_the_budget_fails_it() {
    let emulator = Emulator::start();
    let dir = project(ONE_CHECK);
    emulator.applied(dir.path());
    // 43,200 runs a month as applied; the team then sets a budget of 1,000.
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("{TOML}\n[budget]\nmax-runs-per-month = 1000\n"),
    )
    .unwrap();
    let output = assert_run!("unchanged_over_budget", emulator.monform(dir.path()).arg("plan"));
    assert_eq!(output.status.code(), Some(1));
    assert!(
        !stdout(&output).contains("No changes. Your monitors match"),
        "{}",
        stdout(&output)
    );
    let markdown = emulator
        .monform(dir.path())
        .args(["plan", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        stdout(&markdown)
            .contains("**No changes, but the checks as applied already run more often than the run budget allows.**"),
        "{}",
        stdout(&markdown)
    );
}

#[test]
fn a_piped_answer_ends_the_prompts_line() {
    let emulator = Emulator::start();
    let dir = project(ONE_CHECK);
    let output = assert_run!(
        "piped_yes",
        emulator.monform(dir.path()).arg("apply").write_stdin("yes\n")
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let stderr = stderr(&output);
    assert!(stderr.contains("Enter a value: \n"), "{stderr}");
}

/// A check whose `Authorization` header names the service's variable
/// (`Bearer {{API_TOKEN}}`) and whose `X-Api-Key` holds a real secret.
fn check_with_headers(emulator: &Emulator) {
    emulator.call(
        "POST",
        "/v1/checks/api",
        Some(serde_json::json!({
            "name": "Orders API",
            "frequency": 10,
            "locations": ["eu-west-1"],
            "request": {
                "method": "GET",
                "url": "https://api.example.com/orders",
                "headers": [
                    { "key": "Authorization", "value": "Bearer {{API_TOKEN}}" },
                    { "key": "X-Api-Key", "value": "k-93f1-secret" },
                ],
            },
        })),
    );
}

#[test]
fn export_keeps_service_variables_and_names_its_schemas() {
    let emulator = Emulator::start();
    check_with_headers(&emulator);
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("exported");
    let here = tempfile::tempdir().unwrap();
    let output = emulator
        .monform(here.path())
        .args(["export", "--project", "exported", "--out"])
        .arg(&target)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = stderr(&output).replace(&target.display().to_string(), "[out]");
    insta::assert_snapshot!("export_report", shown);
    let checks = std::fs::read_to_string(target.join("checks.yaml")).unwrap();
    insta::assert_snapshot!("export_checks", redact_ids(&checks));
    assert!(checks.contains("Bearer {{API_TOKEN}}"), "{checks}");
    assert!(!checks.contains("k-93f1-secret"), "{checks}");
    // The schemas the files' comments name are there, relative to them.
    for schema in ["schema/resource-file.schema.json", "schema/monform.schema.json"] {
        let text = std::fs::read_to_string(target.join(schema)).unwrap();
        assert!(text.contains("\"$schema\""), "{schema}");
    }
    let toml = std::fs::read_to_string(target.join("monform.toml")).unwrap();
    assert!(toml.starts_with("#:schema schema/monform.schema.json\n"), "{toml}");
    // The written project validates with its one secret set.
    let validated = monform()
        .arg("--dir")
        .arg(&target)
        .arg("validate")
        .env("CHECKS_ORDERS_API_REQUEST_HEADERS_1_VALUE", "k-93f1-secret")
        .output()
        .unwrap();
    assert!(
        validated.status.success(),
        "{}{}",
        stdout(&validated),
        stderr(&validated)
    );
}

/// Issue 46, item 9: a PostgreSQL test run where there is none says it did
/// not run, in what `cargo test` shows without `--nocapture`. Runs this
/// test binary itself on one such test, without a database.
#[test]
fn a_test_that_cannot_run_says_so_without_nocapture() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["state::two_runners_share_one_postgres_state", "--exact"])
        .env_remove("MONFORM_TEST_POSTGRES_URL")
        .env_remove("MONFORM_REQUIRE_POSTGRES")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    let all = format!("{}{}", stdout(&output), stderr(&output));
    let shown: String = all
        .lines()
        .filter(|l| l.starts_with("SKIPPED") || l.starts_with("test state::"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("skipped_line", shown);
}
