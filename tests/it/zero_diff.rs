//! Zero spurious diffs through the real binary (issue 45, part 2): a few
//! projects drawn from the resource model (`monform_testkit::projects`, the
//! generator of the engine's in-process property test, which runs hundreds)
//! applied with `monform apply` to `monform serve` as the service that
//! rewrites what it stores (`--normalise-urls`) and as the unreliable one
//! (`--fault-rate`, `--fault-lost-writes`); `monform plan --detailed-exitcode`
//! must then say "no changes" (exit 0), show exactly a random edit of the
//! files, and say "no changes" again after its apply.
//!
//! `MONFORM_TEST_SEED` (default 45) and `MONFORM_TEST_CLI_CASES` (default 3
//! per service) for longer runs.

use std::path::Path;

use monform_testkit::projects::{self, Expect, Project, Rng, Size, files_of};

use crate::common::{Served, monform, serve, stderr, stdout};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn run(served: &Served, dir: &Path, args: &[&str]) -> std::process::Output {
    monform()
        .arg("--dir")
        .arg(dir)
        .args(["--api-url", &served.url, "--color", "never"])
        .args(args)
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .output()
        .expect("monform runs")
}

/// `monform apply --auto-approve`, run again while it fails (a faulty
/// service), at most `attempts` times.
fn apply(served: &Served, dir: &Path, attempts: usize, what: &str) {
    let mut last = String::new();
    for _ in 0..attempts {
        let output = run(served, dir, &["apply", "--auto-approve"]);
        if output.status.success() {
            return;
        }
        last = format!("{}{}", stdout(&output), stderr(&output));
    }
    panic!(
        "{what}: apply failed {attempts} times; the last:\n{last}\nfiles:\n{}",
        files_of(dir)
    );
}

/// `monform plan --format json` (run again while it fails): its changes.
fn planned_changes(served: &Served, dir: &Path, attempts: usize) -> Vec<serde_json::Value> {
    let mut last = String::new();
    for _ in 0..attempts {
        let output = run(served, dir, &["plan", "--format", "json", "--detailed-exitcode"]);
        match output.status.code() {
            Some(0 | 2) => {
                let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("plan JSON");
                let changes = plan["changes"].as_array().cloned().unwrap_or_default();
                let changed: Vec<serde_json::Value> = changes.into_iter().filter(|c| c["action"] != "noop").collect();
                // The exit code says the same as the JSON.
                assert_eq!(
                    output.status.code() == Some(2),
                    !changed.is_empty(),
                    "{}",
                    stdout(&output)
                );
                return changed;
            }
            _ => last = format!("{}{}", stdout(&output), stderr(&output)),
        }
    }
    panic!("plan failed {attempts} times; the last:\n{last}");
}

fn cases(extra: &[&str], attempts: usize) {
    let seed = setting("MONFORM_TEST_SEED", 45);
    let count = setting("MONFORM_TEST_CLI_CASES", 3);
    for case in 0..count {
        let case_seed = projects::case_seed(seed, 1_000_000 + case);
        let what = format!("case {case} (MONFORM_TEST_SEED={seed}, serve {extra:?})");
        let db = tempfile::tempdir().expect("temporary folder");
        let (served, _) = serve(&db.path().join("emulator.db"), extra);
        let dir = tempfile::tempdir().expect("temporary folder");
        let (project, _) = Project::generate(case_seed, Size::default());
        project.write(dir.path()).expect("project written");
        apply(&served, dir.path(), attempts, &what);
        let changes = planned_changes(&served, dir.path(), attempts);
        assert!(
            changes.is_empty(),
            "{what}: the plan after apply has changes: {changes:#?}\nfiles:\n{}",
            files_of(dir.path())
        );
        let mut rng = Rng::new(case_seed ^ 0x5EED);
        let Some((edited, edit)) = projects::edit(&project, &mut rng) else {
            continue;
        };
        edited.write(dir.path()).expect("project written");
        let changes = planned_changes(&served, dir.path(), attempts);
        match &edit.expect {
            Expect::Nothing => assert!(
                changes.is_empty(),
                "{what}: {} changes nothing, but the plan has {changes:#?}",
                edit.description
            ),
            Expect::Change {
                may_be_nothing: true, ..
            } if changes.is_empty() => {}
            Expect::Change {
                address, path, also, ..
            } => {
                assert!(
                    changes.len() == 1 && changes[0]["address"] == address.as_str(),
                    "{what}: {} should change {address} at {path} only; the plan has {changes:#?}",
                    edit.description
                );
                for field in changes[0]["fields"].as_array().into_iter().flatten() {
                    let shown = field["path"].as_str().unwrap_or_default();
                    let edited = path.to_string();
                    let base = |p: &str| p.split(['.', '[']).next().unwrap_or_default().to_owned();
                    assert!(
                        base(shown) == base(&edited) || also.contains(&base(shown)),
                        "{what}: {}: {changes:#?}",
                        edit.description
                    );
                }
            }
        }
        apply(&served, dir.path(), attempts, &what);
        let changes = planned_changes(&served, dir.path(), attempts);
        assert!(
            changes.is_empty(),
            "{what}: after applying {}, the plan has changes: {changes:#?}",
            edit.description
        );
    }
}

#[test]
fn generated_projects_never_plan_a_spurious_diff_against_a_normalising_service() {
    cases(&["--rate-limit", "off", "--normalise-urls"], 1);
}

#[test]
fn generated_projects_never_plan_a_spurious_diff_against_a_faulty_service() {
    cases(
        &[
            "--rate-limit",
            "off",
            "--fault-rate",
            "0.05",
            "--fault-lost-writes",
            "0.05",
            "--fault-seed",
            "45",
        ],
        6,
    );
}
