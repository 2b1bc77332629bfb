//! A mistake in a `forEach` definition is one problem (issue 46 item 6):
//! reported once, at the definition, naming the items it is in; the count
//! is what is printed.

use crate::common;

use common::*;

fn project(monitors: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"shop\"\n\n[lint]\nunrouted-checks = \"off\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

fn validate(dir: &std::path::Path) -> assert_cmd::Command {
    let mut command = monform();
    command.args(["validate", "--color", "never", "--dir"]).arg(dir);
    command
}

const TWO_MISTAKES: &str = r#"checks:
  api:
    forEach: [users, orders, carts]
    checkType: API
    name: API ${each.key}
    request:
      url: https://api.example.com/${each.key}
      method: GET
      assertions:
        - { source: STATUS_CODE, comparison: EQUAL, target: "200" }
  home:
    checkType: ICMP
    name: Home
    frequncy: 5
    request: { hostname: www.example.org }
"#;

#[test]
fn a_typo_in_a_for_each_definition_is_one_problem_naming_its_items() {
    let project = project(TWO_MISTAKES);
    let output = assert_run!("two_mistakes", validate(project.path()));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("2 problems found"), "{}", stderr(&output));

    let mut json = validate(project.path());
    let output = json.args(["--format", "json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["counts"]["errors"], 2, "{report:#}");
    assert_eq!(report["diagnostics"].as_array().map(Vec::len), Some(2), "{report:#}");
}

#[test]
fn a_mistake_in_one_item_names_that_item() {
    // The value comes from the item: the diagnostic points at it, once.
    let project = project(
        r#"checks:
  api:
    forEach: { users: 5, orders: "often" }
    checkType: ICMP
    name: API ${each.key}
    frequency: ${each.value}
    request: { hostname: "${each.key}.example.org" }
"#,
    );
    let output = assert_run!("one_item", validate(project.path()));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("1 problem found"), "{}", stderr(&output));
}
