//! Rego policies (issue 32) with the real binary: the example library
//! through `monform policy test`, findings at file:line in every format of
//! `validate`, a broken policy, and `apply` refusing on a `deny` (nothing
//! written) unless `--policy-override` names it, recorded in the plan; a
//! looping policy stopped by `[policy] timeout` or `max-instructions`
//! (issue 43).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common;

use common::*;

/// Violates frequency_by_tag (line 5), owner_tag (tags, line 6),
/// min_locations in production and browser_max_response_time (line 9),
/// and unrouted_checks (a warning).
const MONITORS: &str = "checks:
  home:
    checkType: TCP
    name: Home
    frequency: 10
    tags: [critical]
    locations: [eu-west-1]
    request: { hostname: example.com, port: 443 }
  login:
    checkType: BROWSER
    name: Login
    tags: [owner:web]
    locations: [eu-west-1, us-east-1]
    script: \"await page.goto('https://example.com')\"
";

/// A project with the example policies in `policies/`.
fn project(monitors: &str) -> tempfile::TempDir {
    project_with(monitors, "")
}

/// [`project`] with `toml_extra` after monform.toml's `[project]` table
/// (shared with `policy_runs`).
pub(crate) fn project_with(monitors: &str, toml_extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    for entry in std::fs::read_dir(repo_root().join("examples/policies")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), policies.join(entry.file_name())).unwrap();
    }
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("[project]\nname = \"rules\"\n{toml_extra}"),
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    command(dir, args).output().unwrap()
}

/// As [`run`], not yet run: for `assert_run!`.
fn command(dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = monform();
    command.arg("--dir").arg(dir).args(args);
    command
}

#[test]
fn the_example_policies_pass_their_tests() {
    let dir = project(MONITORS);
    let output = run(dir.path(), &["policy", "test"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(
        stdout(&output).ends_with("22 tests: 22 passed, 0 failed\n"),
        "{}",
        stdout(&output)
    );

    // A test that fails makes the run fail, at its file:line.
    std::fs::write(
        dir.path().join("policies/extra_test.rego"),
        "package monform.owner_tag\n\ntest_wrong if {\n\tcount(deny) == 5 with input as {\"resources\": []}\n}\n",
    )
    .unwrap();
    // Exit 1, the failing test at policies/extra_test.rego:3:1.
    assert_run!("policy_test_fails", command(dir.path(), &["policy", "test"]));
    assert_run!(
        "policy_test_fails_github",
        command(dir.path(), &["policy", "test", "--format", "github"])
    );
}

#[test]
fn findings_are_at_their_file_and_line_in_every_format() {
    let dir = project(MONITORS);
    let human = assert_run!("validate_human", monform().arg("--dir").arg(dir.path()).arg("validate"));
    assert_eq!(human.status.code(), Some(1));

    let json: serde_json::Value =
        serde_json::from_slice(&run(dir.path(), &["validate", "--format", "json"]).stdout).unwrap();
    let at: Vec<(String, String, u64)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with("monform."))
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["file"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("monform.browser_max_response_time.deny", "monitors.yaml", 9),
        ("monform.frequency_by_tag.deny", "monitors.yaml", 5),
        ("monform.owner_tag.deny", "monitors.yaml", 6),
        ("monform.unrouted_checks.warn", "monitors.yaml", 2),
    ];
    for (code, file, line) in expected {
        assert!(
            at.iter().any(|(c, f, l)| c == code && f == file && *l == line),
            "{code} at {file}:{line} in {at:?}"
        );
    }

    assert_run!(
        "validate_github",
        command(dir.path(), &["validate", "--format", "github"])
    );

    let sarif = run(dir.path(), &["validate", "--format", "sarif"]);
    assert_eq!(sarif.status.code(), Some(1));
    let sarif: serde_json::Value = serde_json::from_slice(&sarif.stdout).unwrap();
    // The published schema's `language` pattern has a stray `]`, a literal
    // in ECMA 262 that Rust's regex rejects: escaped, same meaning.
    let text = std::fs::read_to_string(repo_root().join("tests/fixtures/sarif/sarif-2.1.0-rtm.5.json"))
        .unwrap()
        .replace(r#"{2}-[a-zA-Z]{2}]?$""#, r#"{2}-[a-zA-Z]{2}\\]?$""#);
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::draft4::new(&schema).unwrap_or_else(|e| panic!("the SARIF schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let result = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "monform.owner_tag.deny")
        .unwrap();
    let region = &result["locations"][0]["physicalLocation"];
    assert_eq!(region["artifactLocation"]["uri"], "monitors.yaml");
    assert_eq!(region["region"]["startLine"], 6);
}

#[test]
fn a_broken_policy_is_a_diagnostic_at_its_line() {
    let dir = project(MONITORS);
    std::fs::write(
        dir.path().join("policies/broken.rego"),
        "package monform.broken\n\ndeny contains msg if {\n\tmsg := \n}\n",
    )
    .unwrap();
    // Exit 1, a diagnostic at policies/broken.rego (no panic).
    assert_run!("broken_policy", command(dir.path(), &["validate"]));
    let json: serde_json::Value =
        serde_json::from_slice(&run(dir.path(), &["validate", "--format", "json"]).stdout).unwrap();
    let broken = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "monform::policy-error")
        .unwrap();
    assert_eq!(broken["file"], "policies/broken.rego");
    assert!(matches!(broken["line"].as_u64(), Some(4 | 5)), "{broken}");
}

/// A rule reading a helper rule of another package that gives one key two
/// values (two TCP checks: `by_type["TCP"]` is each one's address) is an
/// error at the rule, naming the helper and the key, as on regorus's
/// interpreter: its VM took one of the values (issue 48: the VM reports
/// the conflict itself, `vendor/regorus` patch part 6).
#[test]
fn a_helper_rules_conflict_is_an_error_at_the_rule_reading_it() {
    let dir = project(
        "checks:\n  a:\n    checkType: TCP\n    name: A\n    tags: [owner:web]\n    locations: [eu-west-1, us-east-1]\n    request: { hostname: example.com, port: 443 }\n  b:\n    checkType: TCP\n    name: B\n    tags: [owner:web]\n    locations: [eu-west-1, us-east-1]\n    request: { hostname: example.com, port: 443 }\n",
    );
    std::fs::write(
        dir.path().join("policies/by_type.rego"),
        "package monform.lib\n\nby_type[r.fields.checkType] := r.address if {\n\tsome r in input.resources\n\tr.kind == \"checks\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("policies/one_per_type.rego"),
        "package monform.one_per_type\n\nwarn contains sprintf(\"%s is the %s check\", [address, kind]) if {\n\tsome kind, address in data.monform.lib.by_type\n}\n",
    )
    .unwrap();
    let output = run(dir.path(), &["validate", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors: Vec<&serde_json::Value> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "monform::policy-error")
        .collect();
    assert_eq!(errors.len(), 1, "{json}");
    assert_eq!(errors[0]["file"], "policies/one_per_type.rego");
    assert_eq!(errors[0]["line"], 3);
    let message = errors[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(
            "monform.one_per_type.warn: monform.lib.by_type[\"TCP\"]: rules must not produce multiple outputs"
        ),
        "{json}"
    );
    assert_eq!(output.status.code(), Some(1), "{json}");
}

/// Five checks without an owner tag (c1 to c5); each passes every other
/// example policy.
pub(crate) fn five_without_owner() -> String {
    std::iter::once("checks:\n".to_owned())
        .chain((1..=5).map(|i| {
            format!(
                "  c{i}:\n    checkType: TCP\n    name: C{i}\n    locations: [eu-west-1]\n    alertChannels: [oncall]\n    request: {{ hostname: example.com, port: 443 }}\n"
            )
        }))
        .chain(std::iter::once(
            "alertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n".to_owned(),
        ))
        .collect()
}

#[test]
fn many_findings_of_one_rule_are_summarised_as_the_linters_are() {
    let dir = project(&five_without_owner());
    // Exit 1: checks.c1 in full, then the rule's count and the next two by file:line.
    assert_run!("owner_tag_summarised", command(dir.path(), &["validate"]));
    let all = run(dir.path(), &["validate", "--all-findings"]);
    assert_eq!(stderr(&all).matches("has no owner").count(), 5, "{}", stderr(&all));
    assert!(
        !stderr(&all).contains("in all, the first shown above"),
        "{}",
        stderr(&all)
    );
}

/// Passes every example policy but owner_tag (checks.home, line 2).
pub(crate) const ALMOST: &str = "checks:
  home:
    checkType: TCP
    name: Home
    frequency: 10
    locations: [eu-west-1]
    alertChannels: [oncall]
    request: { hostname: example.com, port: 443 }
alertChannels:
  oncall: { type: EMAIL, config: { address: oncall@example.com } }
";

#[test]
fn apply_refuses_on_a_deny_and_writes_nothing_unless_overridden() {
    let emulator = Emulator::start();
    let dir = project(ALMOST);
    let mut apply = emulator.monform(dir.path());
    assert_run!("apply_denied", apply.args(["apply", "--auto-approve"]));
    assert!(
        !dir.path().join(".monform/state.json").exists(),
        "the state was written"
    );
    let plan = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(plan["summary"]["create"], 2, "nothing was created: {plan}");
    assert_eq!(plan["policy"]["blocks"], true);
    let mut github = emulator.monform(dir.path());
    assert_run!("plan_denied_github", github.args(["plan", "--format", "github"]));

    // Overridden: recorded in the plan's JSON and Markdown, and applied.
    let overridden = ["--policy-override", "monform.owner_tag"];
    let plan = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .args(overridden)
        .output()
        .unwrap();
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(plan["policy"]["overrides"], serde_json::json!(["monform.owner_tag"]));
    assert_eq!(plan["policy"]["blocks"], false);
    let mut markdown = emulator.monform(dir.path());
    markdown.args(["plan", "--format", "markdown"]).args(overridden);
    assert_run!("plan_overridden_markdown", markdown);
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .args(overridden)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(dir.path().join(".monform/state.json").exists());
}

#[test]
fn deleting_an_slo_check_needs_an_override() {
    let emulator = Emulator::start();
    let dir = project(&ALMOST.replace(
        "    locations: [eu-west-1]\n",
        "    locations: [eu-west-1]\n    tags: [slo, owner:web]\n",
    ));
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    edit(
        dir.path(),
        "monitors.yaml",
        "  home:\n",
        "  other:\n    checkType: TCP\n    name: Other\n    locations: [eu-west-1]\n    request: { hostname: example.org, port: 443 }\n    alertChannels: [oncall]\n    tags: [owner:web]\n  old-home:\n",
    );
    let text = std::fs::read_to_string(dir.path().join("monitors.yaml")).unwrap();
    // `home` is no longer in the files: the plan deletes it.
    assert!(!text.contains("\n  home:"), "{text}");
    let mut apply = emulator.monform(dir.path());
    assert_run!("slo_delete_denied", apply.args(["apply", "--auto-approve"]));
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve", "--policy-override", "monform.slo_deletes"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// Two nested loops of 100,000 (ten billion steps): a policy a pull
/// request can add, which held `validate` and `plan` forever (issue 43).
const SLOW: &str = "package monform.slow\n\ndeny contains \"never\" if {\n\tsome i in numbers.range(1, 100000)\n\tsome j in numbers.range(1, 100000)\n\ti + j < 0\n}\n";

/// Generous: the bounds below stop the policy within seconds; without
/// them the command is killed here and the test fails.
const ENDS_WITHIN: Duration = Duration::from_secs(60);

#[test]
fn a_looping_policy_is_stopped_with_a_diagnostic_naming_it() {
    // The timeout (the instruction limit out of the way).
    let dir = project_with(
        MONITORS,
        "\n[policy]\ntimeout = \"1s\"\nmax-instructions = 1000000000000\n",
    );
    std::fs::write(dir.path().join("policies/slow.rego"), SLOW).unwrap();
    let started = Instant::now();
    // Exit 1: the other policies' findings, and monform.slow.deny stopped
    // after 1s in its inner loop, policies/slow.rego:5, naming the setting.
    let output = assert_run!(
        "slow_policy_timeout",
        command(dir.path(), &["validate"]).timeout(ENDS_WITHIN)
    );
    assert!(started.elapsed() < ENDS_WITHIN, "{:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let json: serde_json::Value =
        serde_json::from_slice(&run(dir.path(), &["validate", "--format", "json"]).stdout).unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    let stopped: Vec<&serde_json::Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "monform::policy-limit")
        .collect();
    assert_eq!(stopped.len(), 1, "{json}");
    assert_eq!(stopped[0]["file"], "policies/slow.rego");
    // The inner loop.
    assert_eq!(stopped[0]["line"], 5);
    assert!(
        diagnostics.iter().any(|d| d["code"] == "monform.owner_tag.deny"),
        "the other policies ran: {json}"
    );

    // The instruction limit: deterministic, at the loop too.
    edit(
        dir.path(),
        "monform.toml",
        "timeout = \"1s\"\nmax-instructions = 1000000000000",
        "max-instructions = 1000000",
    );
    assert_run!(
        "slow_policy_instructions",
        command(dir.path(), &["validate"]).timeout(ENDS_WITHIN)
    );

    // The defaults stop it too (whichever comes first on this machine).
    edit(dir.path(), "monform.toml", "max-instructions = 1000000", "");
    let started = Instant::now();
    let output = command(dir.path(), &["validate", "--format", "json"])
        .timeout(ENDS_WITHIN)
        .output()
        .unwrap();
    assert!(started.elapsed() < ENDS_WITHIN, "{:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let stopped = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "monform::policy-limit")
        .unwrap_or_else(|| panic!("{json}"));
    let message = stopped["message"].as_str().unwrap();
    assert!(
        message.contains("ran more than 100000000 instructions") || message.contains("ran longer than 10s"),
        "{message}"
    );
}

#[test]
fn plan_stops_a_looping_policy_and_fails() {
    let emulator = Emulator::start();
    let dir = project_with(ALMOST, "\n[policy]\ntimeout = \"1s\"\n");
    std::fs::write(dir.path().join("policies/slow.rego"), SLOW).unwrap();
    let started = Instant::now();
    let output = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .timeout(ENDS_WITHIN)
        .output()
        .unwrap();
    assert!(started.elapsed() < ENDS_WITHIN, "{:?}", started.elapsed());
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(plan["policy"]["blocks"], true, "{plan}");
    let findings = plan["policy"]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["code"] == "monform::policy-limit" && f["file"] == "policies/slow.rego"),
        "{plan}"
    );
}
