//! The exit codes of real runs are the ones the generated exit-code table
//! (docs/src/reference/output.md, from crates/cli/src/exit.rs) declares.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;

use super::Fixture;
use crate::common::*;

/// The exit-code table of the generated reference page: command -> codes.
fn exit_table() -> BTreeMap<String, BTreeSet<i32>> {
    let out = tempfile::tempdir().unwrap();
    let output = monform().args(["docs", "--out"]).arg(out.path()).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let page = std::fs::read_to_string(out.path().join("output.md")).unwrap();
    let section = page.split("## Exit codes").nth(1).expect("an exit-code section");
    let mut table: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    let mut command = String::new();
    for row in section.lines().filter(|l| l.starts_with('|')).skip(2) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        if !cells[0].is_empty() {
            command = cells[0].trim_matches('`').to_owned();
        }
        if let Ok(code) = cells[1].parse() {
            table.entry(command.clone()).or_default().insert(code);
        }
    }
    table
}

fn assert_declared(table: &BTreeMap<String, BTreeSet<i32>>, command: &str, output: &Output) {
    let code = output.status.code().expect("an exit code");
    assert!(
        table.get(command).is_some_and(|codes| codes.contains(&code)),
        "`{command}` exited {code}, which the table does not declare: {:?}\n{}",
        table.get(command),
        stderr(output)
    );
}

#[test]
fn real_exit_codes_are_the_ones_the_table_declares() {
    let table = exit_table();
    for command in [
        "validate",
        "plan",
        "apply",
        "codify",
        "test",
        "status",
        "gate",
        "any command",
    ] {
        assert!(table.contains_key(command), "no row for {command}: {table:?}");
    }
    let fixture = Fixture::new();
    let path = fixture.path();
    let run = |args: &[&str]| fixture.run(args);

    // Changes to make: 2 with --detailed-exitcode.
    let plan = run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "{}", stderr(&plan));
    assert_declared(&table, "plan", &plan);
    let apply = run(&["apply", "--auto-approve"]);
    assert_eq!(apply.status.code(), Some(0), "{}", stderr(&apply));
    assert_declared(&table, "apply", &apply);
    // In sync: the reconciler's and codify's 0, through the same table.
    let reconciled = run(&["reconcile", "--once"]);
    assert_eq!(reconciled.status.code(), Some(0), "{}", stderr(&reconciled));
    assert_declared(&table, "reconcile --once", &reconciled);
    let codified = run(&["codify", "--check"]);
    assert_eq!(codified.status.code(), Some(0), "{}", stderr(&codified));
    assert_declared(&table, "codify", &codified);
    let stale = run(&["apply", "missing.plan"]);
    assert_eq!(stale.status.code(), Some(1));
    assert_declared(&table, "apply", &stale);

    // A broken file: 1.
    edit(path, "monitors.yaml", "frequency: 10", "frequency: often");
    let broken = run(&["validate"]);
    assert_eq!(broken.status.code(), Some(1), "{}", stderr(&broken));
    assert_declared(&table, "validate", &broken);

    // A failing run: 1.
    edit(path, "monitors.yaml", "frequency: often", "frequency: 10");
    edit(path, "monitors.yaml", "/ok", "/fail");
    let test = run(&["test", "--local"]);
    assert_eq!(test.status.code(), Some(1), "{}", stderr(&test));
    assert_declared(&table, "test", &test);

    // Bad arguments: 2, whatever the command.
    let usage = run(&["status", "--no-such-flag"]);
    assert_eq!(usage.status.code(), Some(2));
    assert_declared(&table, "any command", &usage);
    let unknown = monform().args(["schema", "--output", "nonsense"]).output().unwrap();
    assert_declared(&table, "any command", &unknown);
    assert_declared(&table, "status", &run(&["status", "--out", "x.html"]));
}
