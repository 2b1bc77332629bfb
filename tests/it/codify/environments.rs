//! Issue 45, codify's side: an edit made in one environment's service is
//! written where that environment alone reads it, or refused with the
//! choices; and a value written through `${each.value.X:-default}`.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Emulator, Monform, assert_run, check_named, stderr, stdout};

const PROJECT: &str = r#"[project]
name = "shop"

[defaults]
locations = ["eu-west-1"]

[vars]
site = "https://shop.example.com"
env = "none"

[environments.staging]
vars = { site = "https://staging.example.com", env = "staging" }

[environments.production]
vars = { site = "https://www.example.com", env = "production" }
"#;

const CHECKS: &str = r#"checks:
  home:
    checkType: URL
    name: "Home ${var:env}"
    request: { url: "${var:site}" }
  e2e:
    environments: [production]   # the end-to-end suite runs in production only
    checkType: URL
    name: E2E
    request: { url: "https://www.example.com/e2e" }
"#;

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).args(args).output().unwrap()
}

/// The check named `name` changed in the web UI.
fn ui_edit(emulator: &Emulator, name: &str, body: Value) {
    let check = check_named(emulator, name);
    let id = check["id"]
        .as_str()
        .map_or_else(|| check["id"].to_string(), str::to_owned);
    let kind = check["checkType"].as_str().unwrap().to_lowercase();
    emulator.call("PUT", &format!("/v1/checks/{kind}/{id}"), Some(body));
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// The issue's scenario 5: production's check muted in the UI.
#[test]
fn an_edit_in_one_environment_is_written_where_it_alone_reads_or_refused_with_the_choices() {
    let emulator = Emulator::start();
    let project = project(&[("monform.toml", PROJECT), ("checks.yaml", CHECKS)]);
    let dir = project.path();
    for environment in ["staging", "production"] {
        let applied = run(&emulator, dir, &["--env", environment, "apply", "--auto-approve"]);
        assert!(applied.status.success(), "{}", stderr(&applied));
    }
    ui_edit(
        &emulator,
        "Home production",
        json!({"muted": true, "request": {"url": "https://www2.example.com"}}),
    );
    ui_edit(&emulator, "E2E", json!({"muted": true}));

    // The check production alone has is written; the shared definition is not.
    let written = assert_run!(
        "production_refused_in_shared_definition",
        emulator.monform(dir).args(["--env", "production", "codify", "--write"])
    );
    assert_eq!(written.status.code(), Some(3));
    assert_eq!(
        read(dir, "checks.yaml"),
        CHECKS.replace("/e2e\" }\n", "/e2e\" }\n    muted: true\n")
    );
    assert_eq!(read(dir, "monform.toml"), PROJECT);
    let staging = run(&emulator, dir, &["--env", "staging", "plan", "--detailed-exitcode"]);
    assert_eq!(
        staging.status.code(),
        Some(0),
        "staging unchanged: {}",
        stdout(&staging)
    );

    // --edit-vars: the URL goes to production's own value of the variable.
    let vars = run(
        &emulator,
        dir,
        &[
            "--env",
            "production",
            "codify",
            "--write",
            "--edit-vars",
            "--target",
            "checks.home",
        ],
    );
    assert_eq!(vars.status.code(), Some(3), "muted is still refused: {}", stderr(&vars));
    assert_eq!(
        read(dir, "monform.toml"),
        PROJECT.replace(
            "vars = { site = \"https://www.example.com\"",
            "vars = { site = \"https://www2.example.com\""
        )
    );

    // --all-environments: written for every environment, and said so.
    let all = run(
        &emulator,
        dir,
        &[
            "--env",
            "production",
            "codify",
            "--write",
            "--all-environments",
            "--target",
            "checks.home",
        ],
    );
    assert_eq!(all.status.code(), Some(0), "{}", stderr(&all));
    assert!(
        stderr(&all).contains("written for every environment: staging changes too at the next apply\n"),
        "{}",
        stderr(&all)
    );
    let production = run(&emulator, dir, &["--env", "production", "plan", "--detailed-exitcode"]);
    assert_eq!(production.status.code(), Some(0), "{}", stdout(&production));
    let staging = run(&emulator, dir, &["--env", "staging", "plan", "--detailed-exitcode"]);
    assert_eq!(
        staging.status.code(),
        Some(2),
        "staging is to be muted too: {}",
        stdout(&staging)
    );
}

/// The issue's scenario 6: the README's pattern
/// `frequency: ${each.value.frequency:-${var:api_frequency}}`.
#[test]
fn codify_writes_through_each_value_with_a_default() {
    let emulator = Emulator::start();
    let toml = "[project]\nname = \"items\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[vars]\napi_frequency = 10\n";
    let yaml = r#"checks:
  api:
    forEach:
      orders: { path: /orders, frequency: 5 }
      users: { path: /users }
    checkType: API
    name: "API ${each.key}"
    frequency: ${each.value.frequency:-${var:api_frequency}}
    request: { method: GET, url: "https://api.example.com${each.value.path}" }
"#;
    let project = project(&[("monform.toml", toml), ("checks.yaml", yaml)]);
    let dir = project.path();
    emulator.applied(dir);
    ui_edit(&emulator, "API orders", json!({"frequency": 1}));
    ui_edit(&emulator, "API users", json!({"frequency": 30}));
    let written = assert_run!(
        "each_value_with_a_default",
        emulator.monform(dir).args(["codify", "--write"])
    );
    assert_eq!(written.status.code(), Some(0));
    assert_eq!(read(dir, "monform.toml"), toml, "[vars] unchanged");
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
}
