//! Verified applies (issue 20, item 5), end to end: the real binary against
//! the real emulator, which can acknowledge writes without storing them.

use crate::common;

use std::path::Path;

use common::*;

const TOKEN: (&str, &str) = ("SHOP_API_TOKEN", "tok-4242-secret");

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).env(TOKEN.0, TOKEN.1).args(args).output().unwrap()
}

fn emulator(db: &Path, lost_write_rate: f64) -> Emulator {
    Emulator::with(monform_emulator::Config {
        db: Some(db.to_owned()),
        rate_limit: None,
        lost_write_rate,
        ..Default::default()
    })
}

/// The lines of the apply's report about verification.
fn verification_lines(output: &std::process::Output) -> String {
    stderr(output)
        .lines()
        .filter(|l| l.contains("verified"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_apply_reads_back_what_it_changed_and_says_so() {
    let service = tempfile::tempdir().unwrap();
    let emulator = emulator(&service.path().join("service.db"), 0.0);
    let project = copy_fixture("plan-project");
    let applied = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let lines = verification_lines(&applied);
    let count = lines
        .strip_prefix("verified: ")
        .and_then(|rest| rest.split_once(" of "))
        .unwrap_or_else(|| panic!("no verified line: {}", stderr(&applied)));
    assert_eq!(count.0, count.1, "{lines}");
    assert_ne!(count.0, "0", "{lines}");
}

#[test]
fn a_write_acknowledged_but_not_stored_fails_the_apply_naming_the_field() {
    let service = tempfile::tempdir().unwrap();
    let db = service.path().join("service.db");
    let project = copy_fixture("plan-project");
    let dir = project.path();
    {
        let honest = emulator(&db, 0.0);
        let applied = run(&honest, dir, &["apply", "--auto-approve"]);
        assert!(applied.status.success(), "{}", stderr(&applied));
    }
    // The same service, now losing every write it acknowledges.
    let lossy = emulator(&db, 1.0);
    edit(
        dir,
        "monitors.yaml",
        "hostname: gw.example.com",
        "hostname: gw2.example.com",
    );
    let applied = run(&lossy, dir, &["apply", "--auto-approve"]);
    assert_eq!(applied.status.code(), Some(1), "{}", stderr(&applied));
    insta::assert_snapshot!("lost_write", verification_lines(&applied));

    // Nothing landed: the next plan still wants the change.
    let planned = run(&lossy, dir, &["plan", "--detailed-exitcode"]);
    insta::assert_snapshot!("still_wanted", redact_ids(&transcript(&planned)));
}

#[test]
fn a_value_the_service_rewrites_is_recorded_once_as_its_normal_form() {
    let service = tempfile::tempdir().unwrap();
    let emulator = Emulator::with(monform_emulator::Config {
        db: Some(service.path().join("service.db")),
        rate_limit: None,
        normalise_urls: true,
        ..Default::default()
    });
    let project = copy_fixture("plan-project");
    let dir = project.path();
    edit(
        dir,
        "monitors.yaml",
        "url: https://api.example.com/orders",
        "url: HTTPS://API.Example.com/orders",
    );
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let report = stderr(&applied);
    let notes: Vec<&str> = report.lines().filter(|l| l.contains("normal form")).collect();
    insta::assert_snapshot!("normal_form", notes.join("\n"));
    assert!(!report.contains("not verified"), "{report}");

    // The service holds `https://api.example.com/orders`; the files still
    // say otherwise, and that is no change.
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));

    // Another URL is a change again, and is recorded anew.
    edit(
        dir,
        "monitors.yaml",
        "url: HTTPS://API.Example.com/orders",
        "url: HTTPS://API.Example.com/v2/orders",
    );
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(2), "{}", stdout(&planned));
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
}
