//! `--exclude` (issue 30) on plan, apply and destroy, end to end: the
//! opposite of `--target`, globs over addresses, and what depends on an
//! excluded object is excluded too, as the plan says.

use crate::common;

use std::path::Path;

use common::*;

const MONITORS: &str = r#"checks:
  api:
    forEach: [orders, users]
    checkType: API
    name: "API ${each.key}"
    group: production
    request: { method: GET, url: "https://example.com/${each.key}" }
  homepage:
    checkType: URL
    name: Homepage
    request: { url: https://example.com/ }
    alertChannels: [oncall]
groups:
  production: { name: Production }
alertChannels:
  oncall: { type: EMAIL, config: { address: oncall@example.com } }
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"excl\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), MONITORS).unwrap();
    dir
}

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).args(args).output().unwrap()
}

fn names(emulator: &Emulator, path: &str) -> Vec<String> {
    let listed = emulator.call("GET", path, None);
    let mut names: Vec<String> = listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[test]
fn excluded_addresses_and_their_dependents_are_left_out_and_named() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();

    // checks.homepage planned; both items of checks.api excluded, named.
    let planned = run(&emulator, dir, &["plan", "--exclude", "checks.api[*]"]);
    insta::assert_snapshot!("items_excluded", transcript(&planned));

    // The group excluded: the checks in it are too, and the plan says why.
    let planned = run(
        &emulator,
        dir,
        &["plan", "--exclude", "groups.production", "--format", "json"],
    );
    assert!(planned.status.success(), "{}", stderr(&planned));
    let json: serde_json::Value = serde_json::from_str(&stdout(&planned)).unwrap();
    let excluded: Vec<(String, String)> = json["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["address"].as_str().unwrap().to_owned(),
                e["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        excluded,
        [
            (
                "checks.api[orders]".to_owned(),
                "depends on groups.production, which is excluded".to_owned()
            ),
            (
                "checks.api[users]".to_owned(),
                "depends on groups.production, which is excluded".to_owned()
            ),
            ("groups.production".to_owned(), "--exclude groups.production".to_owned()),
        ]
    );
    assert_eq!(json["summary"]["create"], 2, "{json}");

    // Applied without them; the next plan has only them to create.
    let applied = run(
        &emulator,
        dir,
        &["apply", "--auto-approve", "--exclude", "checks.api[*]"],
    );
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(names(&emulator, "/v1/checks?limit=100"), ["Homepage"]);
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode", "--format", "json"]);
    assert_eq!(planned.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_str(&stdout(&planned)).unwrap();
    assert_eq!(json["summary"]["create"], 2, "{json}");

    // Destroy keeps the excluded check and what it uses.
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let destroyed = run(
        &emulator,
        dir,
        &["destroy", "--auto-approve", "--exclude", "checks.homepage"],
    );
    assert!(destroyed.status.success(), "{}", stderr(&destroyed));
    // The progress lines come in the order the deletes finished.
    let shown = stdout(&destroyed);
    insta::assert_snapshot!("destroy_keeps_what_the_excluded_uses", redact_ids(&shown));
    assert_eq!(names(&emulator, "/v1/checks?limit=100"), ["Homepage"]);
    assert_eq!(names(&emulator, "/v1/check-groups?limit=100"), Vec::<String>::new());
    assert_eq!(
        emulator
            .call("GET", "/v1/alert-channels?limit=100", None)
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn a_malformed_pattern_is_refused_before_anything_is_read() {
    let project = project();
    let output = monform()
        .arg("--dir")
        .arg(project.path())
        .args(["--api-url", "http://127.0.0.1:9", "plan", "--exclude", "chekcs.api"])
        .output()
        .unwrap();
    insta::assert_snapshot!("malformed_pattern", transcript(&output));
}
