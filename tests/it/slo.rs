//! Service level objectives end to end (issue 50): the `slos:` kind's
//! diagnostics at the field, SLOs kept in the state (a second plan is
//! empty), `slo status` against the emulator's results with the numbers a
//! hand computation gives, `gate`, and OpenSLO's byte-identical round
//! trip of examples/slo. The outage scenario with the simulated clock is
//! tests/it/slo_outage.rs (the emulator's history and outages).

use crate::common;

use std::time::Duration;

use common::*;

fn check(id: &str, url: &str, extra: &str) -> String {
    format!(
        "  {id}:\n    checkType: API\n    name: {id}\n    frequency: 0\n    frequencyOffset: 10\n{extra}    request:\n      method: GET\n      url: {url}\n      assertions:\n        - {{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}\n"
    )
}

#[test]
fn mistakes_in_slos_are_said_at_the_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"slo-errors\"\n").unwrap();
    let checks = format!(
        "checks:\n{}{}",
        check("alpha", "https://example.com/", ""),
        check("inverted", "https://example.com/", "    shouldFail: true\n")
    )
    .replace(
        "frequencyOffset: 10\n",
        "frequencyOffset: 10\n    locations: [eu-west-1]\n",
    );
    let slos = "slos:
  full:
    checks: [checks.alpha]
    target: 100
    window: 28d
  long:
    checks: [checks.alpha]
    target: 99
    window: 60d
  threshold:
    checks: [checks.alpha]
    target: 99
    window: 7d
    threshold: 500
  unknown:
    checks: [checks.alpah]
    target: 99
    window: 7d
  untagged:
    tags: [team:nobody]
    target: 99
    window: 7d
  cannot-fail:
    checks: [checks.inverted]
    target: 99
    window: 7d
  thin-slices:
    checks: [checks.alpha]
    budgeting: timeslices
    timeslice: 5s
    target: 99
    window: 7d
";
    std::fs::write(dir.path().join("monitors.yaml"), format!("{checks}{slos}")).unwrap();
    let output = monform().current_dir(dir.path()).arg("validate").output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stderr(&output);
    for expected in [
        "slos.full.target: a target of 100% leaves no error budget",
        "slos.long.window: a window of 60d is longer than the 30 days of raw results the service keeps",
        "slos.threshold.threshold: `threshold` is for `indicator: latency` only",
        "slos.unknown.checks: `checks.alpah` names no check of the files",
        "did you mean `checks.alpha`?",
        "slos.untagged.tags: no check of the files has the tag `team:nobody`",
        "slos.cannot-fail: checks.inverted has `shouldFail: true`",
        "slos.thin-slices.timeslice: a slice of 5s is shorter than checks.alpha's frequency (10s)",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    // At the field: the line of `target: 100` (line numbers of the file).
    let line = format!("{checks}{slos}")
        .lines()
        .position(|l| l == "    target: 100")
        .unwrap()
        + 1;
    assert!(text.contains(&format!("monitors.yaml:{line}:")), "{text}");
}

#[test]
fn status_and_gate_from_the_emulators_results() {
    let base = fail_target();
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        session_duration: Duration::from_millis(300),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"slo-status\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    let slos = "slos:
  healthy:
    checks: [checks.alpha]
    target: 90
    window: 7d
  mixed:
    checks: [checks.alpha, checks.zulu]
    target: 99
    window: 7d
";
    std::fs::write(
        dir.path().join("monitors.yaml"),
        format!(
            "checks:\n{}{}{slos}",
            check("alpha", &format!("{base}/ok"), ""),
            check("zulu", &format!("{base}/fail"), "")
        ),
    )
    .unwrap();
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));
    // SLOs are kept in the state: nothing to do the second time.
    let again = emulator.monform(dir.path()).arg("plan").output().unwrap();
    assert!(
        stdout(&again).contains("No changes"),
        "{}\n{}",
        stdout(&again),
        stderr(&again)
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".monform/state.json")).unwrap()).unwrap();
    assert!(state["resources"]["slos.mixed"].is_object(), "{state}");
    let ids: Vec<&str> = ["checks.alpha", "checks.zulu"]
        .iter()
        .map(|a| state["resources"][a]["remoteId"].as_str().unwrap())
        .collect();
    // Two runs of each: alpha passes twice, zulu fails twice. Each
    // session awaited until final (not a sleep a loaded machine outlasts).
    for _ in 0..2 {
        let triggered = emulator.call(
            "POST",
            "/v2/check-sessions/trigger",
            Some(serde_json::json!({ "target": { "checkId": ids } })),
        );
        for session in triggered["sessions"].as_array().expect("sessions") {
            let id = session["checkSessionId"].as_str().expect("a session id");
            emulator.finished_session(id);
        }
    }
    // `slo status` reads results up to now in whole seconds (the API's
    // `to`): a run that stopped in this second is read from the next one.
    // A lower bound, not a guess of how long the runs take.
    std::thread::sleep(Duration::from_millis(1100));
    let output = emulator
        .monform(dir.path())
        .args(["slo", "status", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let figures: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let slo = |address: &str| {
        figures["slos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["address"] == address)
            .cloned()
            .unwrap()
    };
    // healthy: 2 good of 2; SLI 1, budget left 1 - 0 / 0.1 = 1.
    let healthy = slo("slos.healthy");
    assert_eq!(
        (healthy["good"].as_u64(), healthy["total"].as_u64()),
        (Some(2), Some(2)),
        "{healthy}"
    );
    assert_eq!(healthy["budgetLeft"].as_f64(), Some(1.0));
    // mixed: 2 good of 4; SLI 0.5; burn rate (1 - 0.5) / 0.01 = 50;
    // budget left 1 - 50 = -49; 50x >= 14.4 over 5m and 1h: fast burn.
    let mixed = slo("slos.mixed");
    assert_eq!(
        (mixed["good"].as_u64(), mixed["total"].as_u64()),
        (Some(2), Some(4)),
        "{mixed}"
    );
    assert!((mixed["sli"].as_f64().unwrap() - 0.5).abs() < 1e-9);
    assert!((mixed["burnRate"].as_f64().unwrap() - 50.0).abs() < 1e-9);
    assert!((mixed["budgetLeft"].as_f64().unwrap() + 49.0).abs() < 1e-9);
    assert_eq!(mixed["burningFast"], true);

    let human = emulator.monform(dir.path()).args(["slo", "status"]).output().unwrap();
    assert!(stdout(&human).contains("slos.mixed"), "{}", stdout(&human));
    assert!(
        stdout(&human).contains("FIRING: 14.4x over 1h and 5m"),
        "{}",
        stdout(&human)
    );

    let open = emulator
        .monform(dir.path())
        .args(["gate", "--slo", "slos.healthy", "--max-age", "0"])
        .output()
        .unwrap();
    assert_eq!(open.status.code(), Some(0), "{}", stderr(&open));
    let closed = emulator
        .monform(dir.path())
        .args([
            "gate",
            "--slo",
            "slos.healthy",
            "slos.mixed",
            "--min-budget",
            "25%",
            "--max-age",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(1), "{}", stderr(&closed));
    assert_eq!(
        stdout(&closed),
        "slos.mixed: burning fast: 14.4x the budget's rate over 1h and 5m\n"
    );
    // From the cached figures, without reading the results again: the
    // same words as a fresh read.
    let cached = emulator
        .monform(dir.path())
        .args(["gate", "--slo", "slos.mixed"])
        .output()
        .unwrap();
    assert_eq!(cached.status.code(), Some(1), "{}", stderr(&cached));
    assert_eq!(
        stdout(&cached),
        "slos.mixed: burning fast: 14.4x the budget's rate over 1h and 5m\n"
    );
}

#[test]
fn openslo_round_trips_the_example_byte_for_byte() {
    let project = copy_example("slo");
    let export = |dir: &std::path::Path| {
        let output = monform()
            .current_dir(dir)
            .args(["slo", "export", "--openslo"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
    };
    let first = export(project.path());
    assert!(first.contains("apiVersion: openslo/v1\nkind: SLO\n"), "{first}");
    assert!(first.contains("kind: AlertPolicy"), "{first}");
    assert!(first.contains("kind: SLI"), "{first}");
    // Outside the project: every YAML file of a project is a resource file.
    let elsewhere = tempfile::tempdir().unwrap();
    let openslo = elsewhere.path().join("openslo.yaml");
    std::fs::write(&openslo, &first).unwrap();
    let imported = project.path().join("monitors/slos.yaml");
    let output = monform()
        .current_dir(project.path())
        .args(["slo", "import"])
        .arg(&openslo)
        .arg("--out")
        .arg(&imported)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let second = export(project.path());
    assert_eq!(first, second, "export -> import -> export changed the text");
    insta::assert_snapshot!("openslo_export", first);
}

/// examples/ci gates the deploy on the SLOs before it applies.
#[test]
fn ci_examples_gate_before_apply() {
    for name in ["github-actions.yml", "gitlab-ci.yml"] {
        let text = std::fs::read_to_string(repo_root().join("examples/ci").join(name)).unwrap();
        let gate = text
            .find("monform gate --slo")
            .unwrap_or_else(|| panic!("{name} has no gate"));
        let apply = text.find("monform apply plan.json").unwrap();
        assert!(gate < apply, "{name}: the gate comes after apply");
    }
}

/// `enforce: true`: the plan updates the member checks to the schedule
/// the fast-burn alert needs (a warning says so without it).
#[test]
fn enforce_sets_the_members_schedule_in_the_plan() {
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"slo-enforce\"\n").unwrap();
    let files = |enforce: &str| {
        format!(
            "checks:\n  alpha:\n    checkType: API\n    name: Alpha\n    frequency: 10\n    locations: [eu-west-1]\n    request:\n      method: GET\n      url: https://example.com/\nslos:\n  alpha:\n    checks: [checks.alpha]\n    target: 99\n    window: 7d\n{enforce}"
        )
    };
    std::fs::write(dir.path().join("monitors.yaml"), files("")).unwrap();
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));
    // A 99% target needs 7 runs in 5 minutes; every 10 minutes is 0.
    assert!(
        stderr(&applied).contains("needs at least 7 runs in the 5m fast-burn window"),
        "{}",
        stderr(&applied)
    );
    std::fs::write(dir.path().join("monitors.yaml"), files("    enforce: true\n")).unwrap();
    let plan = emulator.monform(dir.path()).arg("plan").output().unwrap();
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = stdout(&plan);
    assert!(text.contains("checks.alpha will be updated"), "{text}");
    assert!(text.contains("frequency") && text.contains("frequencyOffset"), "{text}");
    assert!(text.contains("slos.alpha will be updated"), "{text}");
    assert!(!stderr(&plan).contains("slo-samples"), "{}", stderr(&plan));
}

/// Issue 50 item 2: the plan says what each SLO needs of its checks and
/// the run budget that costs, in words, in Markdown and in JSON.
#[test]
fn plan_shows_what_an_slo_needs_of_its_checks_and_the_runs_it_costs() {
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"slo-runs\"\n").unwrap();
    // 99.5%: 14 runs per 5 minutes from each check. web (a URL check,
    // once a minute at most) makes 5: every minute from 3 locations,
    // 43,200 -> 129,600 runs a month. api (every 10 minutes) makes 0:
    // every 20 s from one location (15), 4,320 -> 129,600.
    std::fs::write(
        dir.path().join("monitors.yaml"),
        "checks:
  web:
    checkType: URL
    name: Web
    frequency: 1
    locations: [eu-west-1]
    request: { url: https://example.com/ }
  api:
    checkType: API
    name: Api
    frequency: 10
    locations: [eu-west-1]
    request: { method: GET, url: https://example.com/ }
slos:
  shop:
    checks: [checks.web, checks.api]
    target: 99.5
    window: 28d
",
    )
    .unwrap();
    let plan = emulator.monform(dir.path()).arg("plan").output().unwrap();
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = stdout(&plan);
    insta::assert_snapshot!("slo_plan_runs", tail_from(&text, "Check runs a month"));
    let markdown = emulator
        .monform(dir.path())
        .args(["plan", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        stdout(&markdown).contains("- `slos.shop` needs 14 runs per 5m from each check for its fast-burn alert: 47,520 -> 259,200 runs a month (+211,680)"),
        "{}",
        stdout(&markdown)
    );
    assert!(
        stdout(&markdown)
            .contains("  - `checks.api`: a run every 20s from 1 location (the files: every 10m from 1 location)"),
        "{}",
        stdout(&markdown)
    );
    let json = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", stderr(&json));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(
        plan["sloRuns"],
        serde_json::json!([{
            "slo": "slos.shop", "samples": 14, "enforce": false, "before": 47_520, "after": 259_200,
            "members": [
                {"check": "checks.api", "everySeconds": 600, "locations": 1,
                 "needs": {"everySeconds": 20, "locations": 1}, "before": 4_320, "after": 129_600},
                {"check": "checks.web", "everySeconds": 60, "locations": 1,
                 "needs": {"everySeconds": 60, "locations": 3}, "before": 43_200, "after": 129_600},
            ]
        }]),
        "{plan}"
    );
}
