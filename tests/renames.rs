//! Rename suggestions and the results a delete discards (issue 20, item 3),
//! end to end: the real binary against the real emulator.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

const TOKEN: (&str, &str) = ("SHOP_API_TOKEN", "tok-4242-secret");

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).env(TOKEN.0, TOKEN.1).args(args).output().unwrap()
}

fn applied_fixture() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let applied = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    (emulator, project)
}

#[test]
fn a_rename_without_moved_is_suggested_in_every_format() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    // The address and the name change; the hostname and the rest stay.
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    edit(dir, "monitors.yaml", "name: Gateway ping", "name: Gateway ICMP");

    let planned = run(&emulator, dir, &["plan"]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let text = stdout(&planned);
    let line = text
        .lines()
        .find(|l| l.starts_with("Suggestion:"))
        .unwrap_or_else(|| panic!("no suggestion:\n{text}"));
    insta::assert_snapshot!("rename_human", line);

    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    insta::assert_json_snapshot!("rename_json", plan["suggestedMoves"]);

    let markdown = run(&emulator, dir, &["plan", "--format", "markdown"]);
    let text = stdout(&markdown);
    let section = &text[text.find("#### Possible renames").expect("a renames section")..];
    let section = &section[..section.find("<details>").unwrap_or(section.len())];
    insta::assert_snapshot!("rename_markdown", section);
}

#[test]
fn an_unrelated_delete_and_create_are_not_called_a_rename() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    edit(dir, "monitors.yaml", "name: Gateway ping", "name: Gateway ICMP");
    edit(
        dir,
        "monitors.yaml",
        "hostname: gw.example.com",
        "hostname: other.example.com",
    );

    let json = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(plan["suggestedMoves"], serde_json::json!([]), "{plan:#}");
}
