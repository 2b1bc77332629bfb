//! The run budget of `monform plan` (issue 20, item 4): runs a month before
//! and after, and `[budget] max-runs-per-month`, against the real emulator.

use crate::common;

use common::*;

const TOKEN: &str = "first-token-value-4711";

fn run(emulator: &Emulator, project: &std::path::Path, args: &[&str]) -> std::process::Output {
    emulator
        .monform(project)
        .args(args)
        .env("SHOP_API_TOKEN", TOKEN)
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap()
}

/// The plan fixture applied, then a one-minute check in three parallel
/// locations added (30 × 1440 × 3 = 129,600 runs a month).
fn applied_then_grown(budget: Option<u64>) -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let output = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let path = project.path().join("monitors.yaml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "checks:\n",
        "checks:\n  busy:\n    checkType: ICMP\n    name: Busy\n    frequency: 1\n    runParallel: true\n    \
         locations: [eu-west-1, us-east-1, ap-southeast-2]\n    request: { hostname: busy.example.com }\n    \
         alertChannels: [oncall]\n",
    );
    std::fs::write(&path, text).unwrap();
    if let Some(max) = budget {
        let toml = project.path().join("monform.toml");
        let mut text = std::fs::read_to_string(&toml).unwrap();
        text.push_str(&format!("\n[budget]\nmax-runs-per-month = {max}\n"));
        std::fs::write(&toml, text).unwrap();
    }
    (emulator, project)
}

#[test]
fn the_plan_shows_runs_a_month_before_and_after() {
    let (emulator, project) = applied_then_grown(None);
    let human = run(&emulator, project.path(), &["plan"]);
    assert_eq!(human.status.code(), Some(0), "{}", stderr(&human));
    let human = stdout(&human);
    // orders-api every 5 minutes and gateway-ping every 10 (the default),
    // each in one location: 8,640 + 4,320 = 12,960 before, 142,560 after.
    insta::assert_snapshot!("human", redact_ids(&human));

    let markdown = stdout(&run(&emulator, project.path(), &["plan", "--format", "markdown"]));
    insta::assert_snapshot!("markdown", redact_ids(&markdown));

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&emulator, project.path(), &["plan", "--format", "json"]))).unwrap();
    assert_eq!(json["runsPerMonth"]["byType"]["ICMP"]["after"], 4_320 + 129_600);
    insta::assert_json_snapshot!("json", json["runsPerMonth"]);
}

#[test]
fn a_plan_over_the_budget_fails_and_names_the_check() {
    let (emulator, project) = applied_then_grown(Some(1_000));
    let saved = project.path().join("plan.json");
    let output = run(&emulator, project.path(), &["plan", "--out", saved.to_str().unwrap()]);
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!saved.exists(), "a plan over the budget is not saved");
    // Over the budget of 1,000, naming checks.busy's 129,600 runs a month.
    insta::assert_snapshot!("over_budget", stderr);

    // Within the budget the same plan passes.
    let toml = project.path().join("monform.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace("= 1000", "= 200000");
    std::fs::write(&toml, text).unwrap();
    let output = run(&emulator, project.path(), &["plan"]);
    assert_eq!(output.status.code(), Some(0), "{}", common::stderr(&output));
}

#[test]
fn plan_effective_shows_checks_as_their_group_makes_them_run() {
    let (emulator, project) = applied_then_grown(None);
    let path = project.path().join("monitors.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(
            "production: { name: Production, concurrency: 2 }",
            "production: { name: Production, concurrency: 2, locations: [us-east-1] }",
        )
        .replace(
            "    group: production\n    frequency: 5\n",
            "    group: production\n    frequency: 10\n",
        );
    std::fs::write(&path, text).unwrap();

    let human = run(&emulator, project.path(), &["plan", "--effective"]);
    assert_eq!(human.status.code(), Some(0), "{}", stderr(&human));
    let human = stdout(&human);
    let section = &human[human.find("As they will run").expect("the section")..];
    // checks.busy as written; orders-api with its group's locations.
    insta::assert_snapshot!("effective_section", section);

    let json = run(&emulator, project.path(), &["plan", "--format", "json", "--effective"]);
    let plan: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let changes = plan["changes"].as_array().unwrap();
    let orders = changes.iter().find(|c| c["address"] == "checks.orders-api").unwrap();
    assert_eq!(
        orders["effective"]["locations"],
        serde_json::json!(["us-east-1"]),
        "{orders}"
    );
    assert_eq!(orders["effective"]["frequency"], 10);
    let group = changes.iter().find(|c| c["address"] == "groups.production").unwrap();
    assert!(group.get("effective").is_none(), "only checks: {group}");
    // Without the flag the JSON stays as it was.
    let plain = run(&emulator, project.path(), &["plan", "--format", "json"]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("\"effective\""));
}

#[test]
fn apply_shows_the_runs_line_and_refuses_a_plan_over_the_budget() {
    let (emulator, project) = applied_then_grown(Some(1_000));
    let refused = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let shown = stdout(&refused);
    let line = shown
        .lines()
        .find(|l| l.starts_with("Check runs a month"))
        .unwrap_or_else(|| panic!("no runs line: {shown}"));
    insta::assert_snapshot!("apply_runs_line", line);
    insta::assert_snapshot!("apply_over_budget", transcript(&refused));
    // Nothing was written: the busy check is still to be created.
    let planned = run(&emulator, project.path(), &["plan", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&planned)).unwrap();
    assert_eq!(json["summary"]["create"], 1, "{json}");

    // Within the budget, apply shows the same line and goes on.
    let toml = project.path().join("monform.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace("= 1000", "= 200000");
    std::fs::write(&toml, text).unwrap();
    let applied = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    insta::assert_snapshot!("within_budget_apply", redact_ids(&stdout(&applied)));
}
