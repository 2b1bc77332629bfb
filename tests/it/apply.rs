//! `monform apply` and `destroy` end to end: the real binary against the
//! real emulator on a loopback port, with faults, kills and rivals.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use monform_emulator::store::Objects;

fn with_secrets(mut command: assert_cmd::Command) -> assert_cmd::Command {
    for (name, value) in FULL_EXAMPLE_SECRETS {
        command.env(name, value);
    }
    command
}

fn run(emulator: &Emulator, project: &Path, args: &[&str]) -> std::process::Output {
    with_secrets(emulator.monform(project)).args(args).output().unwrap()
}

fn assert_ok(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "failed:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

/// Every object in the account, by kind, as (id, name-ish) pairs: straight from the database.
fn inventory(emulator: &Emulator) -> BTreeMap<String, BTreeSet<String>> {
    let store = &emulator.server.app.store;
    let db = store.lock();
    monform_model::Kind::ALL
        .iter()
        .map(|kind| {
            let rows = db.all(&emulator.server.account_id, kind.section()).unwrap();
            (kind.section().to_owned(), rows.into_iter().map(|r| r.id).collect())
        })
        .collect()
}

fn count_checks(emulator: &Emulator) -> (usize, usize) {
    let store = &emulator.server.app.store;
    let db = store.lock();
    let checks = db.all(&emulator.server.account_id, "checks").unwrap();
    let tags: BTreeSet<String> = checks
        .iter()
        .filter_map(|c| {
            c.body["tags"]
                .as_array()?
                .iter()
                .filter_map(|t| t.as_str())
                .find(|t| t.starts_with("monform:"))
                .map(str::to_owned)
        })
        .collect();
    (checks.len(), tags.len())
}

#[test]
fn full_lifecycle_converges_and_destroy_restores_the_account() {
    let emulator = Emulator::start();
    emulator.call(
        "POST",
        "/v1/snippets",
        Some(serde_json::json!({"name": "Made by hand", "script": "x"})),
    );
    emulator.call(
        "POST",
        "/v1/checks/icmp?autoAssignAlerts=false",
        Some(serde_json::json!({
            "name": "Hand-made ping", "request": {"hostname": "example.org"}, "heartbeat": {}, "script": ""
        })),
    );
    let before = inventory(&emulator);
    let project = copy_example("full");
    let dir = project.path();
    let mut outputs = Vec::new();

    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert_ok(&applied);
    outputs.push(applied);
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
    outputs.push(planned);

    // Change, add and remove resources.
    edit(dir, "monitors/web.yaml", "    frequency: 15\n", "    frequency: 30\n");
    edit(
        dir,
        "monitors/shared.yaml",
        "dashboards:\n  wallboard:",
        "dashboards:\n  wallboard-2:",
    );
    edit(
        dir,
        "monitors/infra.toml",
        "[groups.infrastructure]",
        "[checks.extra-ping]\ncheckType = \"ICMP\"\nname = \"Extra\"\nrequest = { hostname = \"extra.example.com\" }\n\n[groups.infrastructure]",
    );
    let plan_file = dir.join("saved.plan.json");
    let saved = run(&emulator, dir, &["plan", "--out", plan_file.to_str().unwrap()]);
    assert_ok(&saved);
    outputs.push(saved);
    let applied = run(&emulator, dir, &["apply", plan_file.to_str().unwrap()]);
    assert_ok(&applied);
    outputs.push(applied);
    let planned = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
    outputs.push(planned);

    // Deleting everything is destroy's purpose: no --allow-mass-delete (issue 46).
    let destroyed = run(&emulator, dir, &["destroy", "--auto-approve"]);
    assert_ok(&destroyed);
    outputs.push(destroyed);
    assert_eq!(
        inventory(&emulator),
        before,
        "destroy leaves exactly what was there before"
    );

    // No secret anywhere: output, state, saved plan.
    let mut everything: String = outputs.iter().map(|o| format!("{}{}", stdout(o), stderr(o))).collect();
    everything.push_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap());
    everything.push_str(&std::fs::read_to_string(&plan_file).unwrap());
    for (name, value) in FULL_EXAMPLE_SECRETS {
        assert!(!everything.contains(value), "the value of {name} leaked");
    }
}

#[test]
fn a_saved_plan_is_refused_once_the_account_changed() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    let token = [("SHOP_API_TOKEN", "t-1")];
    let monform = |args: &[&str]| emulator.monform(dir).envs(token).args(args).output().unwrap();
    assert_ok(&monform(&["apply", "--auto-approve"]));
    edit(dir, "monitors.yaml", "    frequency: 5\n", "    frequency: 10\n");
    let plan_file = dir.join("plan.json");
    assert_ok(&monform(&["plan", "--out", plan_file.to_str().unwrap()]));
    assert!(!std::fs::read_to_string(&plan_file).unwrap().contains("t-1"));

    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap()).unwrap();
    let check = state["resources"]["checks.orders-api"]["remoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    emulator.call(
        "PUT",
        &format!("/v1/checks/api/{check}"),
        Some(serde_json::json!({"name": "Edited in the UI"})),
    );
    let refused = monform(&["apply", plan_file.to_str().unwrap()]);
    insta::assert_snapshot!("stale_saved_plan", transcript(&refused));

    assert_ok(&monform(&["plan", "--out", plan_file.to_str().unwrap()]));
    assert_ok(&monform(&["apply", plan_file.to_str().unwrap()]));
    let after = monform(&["plan", "--detailed-exitcode"]);
    assert_eq!(after.status.code(), Some(0), "{}", stdout(&after));
}

/// A project of `n` checks in two groups.
fn generated_project(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"bulk\"\n").unwrap();
    let mut yaml = String::from("groups:\n  a: { name: Group A }\n  b: { name: Group B }\nchecks:\n");
    for i in 0..n {
        let group = if i % 2 == 0 { "a" } else { "b" };
        yaml.push_str(&format!(
            "  check-{i}:\n    checkType: ICMP\n    name: Check {i}\n    group: {group}\n    request: {{ hostname: host-{i}.example.com }}\n"
        ));
    }
    std::fs::write(dir.path().join("checks.yaml"), yaml).unwrap();
    dir
}

#[test]
fn apply_converges_under_injected_faults() {
    let config = monform_emulator::Config {
        rate_limit: None,
        fault_rate: 0.2,
        fault_seed: 42,
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    let project = generated_project(200);
    let mut runs = 0;
    loop {
        runs += 1;
        let output = emulator
            .monform(project.path())
            .args(["apply", "--auto-approve"])
            .output()
            .unwrap();
        if output.status.success() {
            break;
        }
        assert!(runs < 3, "not converged after {runs} runs:\n{}", stderr(&output));
    }
    let (checks, owners) = count_checks(&emulator);
    assert_eq!(
        (checks, owners),
        (200, 200),
        "exactly 200 checks, no duplicates, after {runs} runs"
    );
}

#[test]
fn apply_survives_being_killed_at_random_moments() {
    let config = monform_emulator::Config {
        rate_limit: None,
        latency: Duration::from_millis(5),
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    let project = generated_project(60);
    // MONFORM_TEST_SEED=<n> replays the kill moments; printed on failure.
    let seed = Seed::new();
    let mut random = seed.lcg();
    let started = Instant::now();
    for _ in 0..20 {
        if started.elapsed() > Duration::from_secs(90) {
            break;
        }
        emulator.kill_randomly(project.path(), &["apply", "--auto-approve"], &mut random, 20, 600);
    }
    let output = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(output.status.success(), "seed {seed}: {}", stderr(&output));
    let (checks, owners) = count_checks(&emulator);
    assert_eq!((checks, owners), (60, 60), "seed {seed}: no duplicates, no orphans");
    let state = std::fs::read_to_string(project.path().join(".monform/state.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).expect("the state is valid JSON");
    assert_eq!(state["resources"].as_object().unwrap().len(), 62);
    let planned = emulator
        .monform(project.path())
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(planned.status.code(), Some(0), "seed {seed}: {}", stdout(&planned));
}

/// The number of entries `monform state list` reports (snapshot + journal).
fn listed(emulator: &Emulator, project: &Path) -> usize {
    let output = emulator.monform(project).args(["state", "list"]).output().unwrap();
    assert_ok(&output);
    stdout(&output).lines().count()
}

#[test]
fn a_kill_leaves_a_journal_whose_torn_last_record_is_ignored_and_folded_next_time() {
    let config = monform_emulator::Config {
        rate_limit: None,
        latency: Duration::from_millis(20),
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    let project = generated_project(80);
    let monform_dir = project.path().join(".monform");
    let journal = monform_dir.join("state.journal");
    let mut child = emulator
        .background(project.path(), &["apply", "--auto-approve", "--parallelism", "2"])
        .spawn()
        .unwrap();
    // Killed once a few records are written, not after a fixed time: on a
    // loaded machine 150 ms after the journal appeared held 0 or 1 record.
    let records = || std::fs::read(&journal).map_or(0, |bytes| bytes.iter().filter(|b| **b == b'\n').count());
    let waited = Instant::now();
    while records() < 5 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(journal.exists(), "killed mid-apply, the journal is left");

    // Every change the journal holds is read, without a fold (no lock).
    let (created, _) = count_checks(&emulator);
    let recorded = listed(&emulator, project.path());
    assert!(
        recorded > 2 && recorded <= created + 2,
        "{recorded} recorded, {created} checks created"
    );
    // Killed in the middle of a record: detected and ignored.
    let mut file = std::fs::OpenOptions::new().append(true).open(&journal).unwrap();
    std::io::Write::write_all(&mut file, br#"{"serial":999999,"set":{"checks.check-1":{"remo"#).unwrap();
    drop(file);
    assert_eq!(listed(&emulator, project.path()), recorded);

    let output = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_ok(&output);
    assert_eq!(count_checks(&emulator), (80, 80), "nothing duplicated, nothing lost");
    assert!(!journal.exists(), "folded into state.json");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(monform_dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 82);
    let planned = emulator
        .monform(project.path())
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
}

#[test]
fn a_second_apply_fails_fast_naming_the_first() {
    let config = monform_emulator::Config {
        rate_limit: None,
        latency: Duration::from_millis(40),
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    let project = generated_project(40);
    let mut first = emulator
        .background(project.path(), &["apply", "--auto-approve"])
        .spawn()
        .unwrap();
    let lock = project.path().join(".monform/lock");
    let waited = Instant::now();
    while !lock.exists() && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let started = Instant::now();
    let second = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the second apply failed fast"
    );
    // Refused, naming the first apply (its pid; the host and time vary).
    let refused = steady_holder(&transcript(&second), first.id());
    insta::assert_snapshot!("lock_held", refused);
    assert!(first.wait().unwrap().success());
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".monform/state.json")).unwrap()).unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 42);
    assert!(!lock.exists(), "the lock is released");
}

#[test]
fn unattended_apply_needs_auto_approve() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let mut apply = emulator.monform(project.path());
    assert_run!("unattended_apply", apply.arg("apply").env("SHOP_API_TOKEN", "x"));
}

#[test]
fn prevent_destroy_and_mass_delete_are_enforced() {
    let emulator = Emulator::start();
    let project = generated_project(12);
    let dir = project.path();
    assert_ok(
        &emulator
            .monform(dir)
            .args(["apply", "--auto-approve"])
            .output()
            .unwrap(),
    );
    // Removing every check: more than 10 and more than 30% of the project.
    std::fs::write(
        dir.join("checks.yaml"),
        "groups:\n  a: { name: Group A }\n  b: { name: Group B, preventDestroy: true }\n",
    )
    .unwrap();
    let mut apply = emulator.monform(dir);
    assert_run!("mass_delete_refused", apply.args(["apply", "--auto-approve"]));
    assert_ok(
        &emulator
            .monform(dir)
            .args(["apply", "--auto-approve", "--allow-mass-delete"])
            .output()
            .unwrap(),
    );
    let mut destroy = emulator.monform(dir);
    assert_run!("prevent_destroy", destroy.args(["destroy", "--auto-approve"]));
}

#[test]
fn a_failure_stops_its_dependents_not_its_siblings() {
    let emulator = Emulator::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"partial\"\n").unwrap();
    // `no-such-slug` passes the loader (it may name a remote private location)
    // but the service rejects it: the group fails, its check is skipped, the
    // other group and its check are created.
    std::fs::write(
        dir.path().join("monitors.yaml"),
        "groups:\n  broken: { name: Broken, privateLocations: [no-such-slug] }\n  fine: { name: Fine }\n\
         checks:\n  in-broken:\n    checkType: ICMP\n    name: In broken\n    group: broken\n    request: { hostname: a.example.com }\n\
         \x20 in-fine:\n    checkType: ICMP\n    name: In fine\n    group: fine\n    request: { hostname: b.example.com }\n",
    )
    .unwrap();
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    // The progress lines come in the order the work finished: the summary
    // after them does not.
    let text = stderr(&output);
    insta::assert_snapshot!("partial_summary", tail_from(&text, "Apply incomplete"));
    assert_eq!(count_checks(&emulator), (1, 1));
}

#[test]
fn sigint_finishes_what_is_in_flight_saves_state_and_exits_130() {
    let config = monform_emulator::Config {
        rate_limit: None,
        latency: Duration::from_millis(60),
        ..Default::default()
    };
    let emulator = Emulator::with(config);
    let project = generated_project(40);
    let child = emulator
        .background(project.path(), &["apply", "--auto-approve", "--parallelism", "2"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let state_path = project.path().join(".monform/state.json");
    let waited = Instant::now();
    while !state_path.exists() && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = std::process::Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&state_path).unwrap()).unwrap();
    let recorded = state["resources"].as_object().unwrap().len();
    let (checks, _) = count_checks(&emulator);
    assert!(recorded < 42, "the apply stopped early ({recorded} recorded)");
    assert_eq!(
        recorded,
        checks + 2,
        "everything created is in the state: nothing in flight was lost"
    );
    let resumed = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(count_checks(&emulator), (40, 40));
}

/// What trips a Terraform user (issue 27 item 12): monform.toml is found
/// from a subfolder; `yes` may come through a pipe; an apply with nothing
/// to do needs no answer; a destroy with nobody to answer says destroy.
#[test]
fn the_project_is_found_from_a_subfolder_and_yes_can_be_piped() {
    let emulator = Emulator::start();
    let project = copy_example("quickstart");
    let subfolder = project.path().join("monitors");
    let from_subfolder = || {
        let mut command = monform();
        command
            .current_dir(&subfolder)
            .args(["--api-url", &emulator.server.url(), "--color", "never"])
            .env("MONFORM_API_KEY", &emulator.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id)
            .env("API_TOKEN", "token");
        command
    };
    let validated = from_subfolder().arg("validate").output().unwrap();
    assert_ok(&validated);

    let piped = from_subfolder().arg("apply").write_stdin("yes\n").output().unwrap();
    assert_ok(&piped);
    insta::assert_snapshot!("piped_summary", tail_from(&stderr(&piped), "Apply complete"));
    assert!(
        project.path().join(".monform/state.json").exists(),
        "the state is the project's"
    );

    // Nothing to do: no answer is needed, even with nobody to give one.
    let idle = from_subfolder().arg("apply").output().unwrap();
    assert_ok(&idle);

    assert_run!("destroy_declined", from_subfolder().arg("destroy").write_stdin("no\n"));
    assert_run!("destroy_unattended", from_subfolder().arg("destroy"));
    let (checks, _) = count_checks(&emulator);
    assert!(checks > 0, "nothing was destroyed");
}
