//! Conflicts and complete drift (issue 45), end to end: the real binary
//! against the real emulator. A field changed both in the files and in the
//! service since the last apply shows its three values in every format and
//! needs a person (or `--allow-conflicts`, or `lifecycle.drift: revert`) to
//! be applied; a rotated secret variable is drift; a changed list item is
//! the one shown.

use crate::common;

use std::path::Path;

use common::conflicts::{FIRST_TOKEN, SECRET_VARIABLE, planned_field, rotate_secret, ui_edit_check, with_token};
use common::*;
use serde_json::{Value, json};

const MONITORS: &str = r#"checks:
  login:
    checkType: API
    name: Login
    frequency: 5
    maxResponseTime: 5000
    request:
      method: GET
      url: https://example.com/login
      headers:
        - { key: Accept, value: application/json }
        - { key: Authorization, value: "Bearer ${env:LOGIN_TOKEN}" }
"#;

const TOKEN: &str = FIRST_TOKEN;

fn project(monitors: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"conflicts\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator
        .monform(dir)
        .args(args)
        .env("LOGIN_TOKEN", TOKEN)
        .env("API_TOKEN", TOKEN)
        .output()
        .unwrap()
}

/// `plan --format json` (ids redacted), parsed.
fn plan_json(emulator: &Emulator, dir: &Path) -> Value {
    let (_, json) = plan(emulator, dir, &["--format", "json"]);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// `plan ARGS`: exit code and standard output, ids redacted.
fn plan(emulator: &Emulator, dir: &Path, args: &[&str]) -> (i32, String) {
    let output = run(emulator, dir, &[&["plan"], args].concat());
    assert!(!stdout(&output).contains(TOKEN), "{}", stdout(&output));
    (output.status.code().unwrap_or(-1), redact_ids(&stdout(&output)))
}

fn apply(emulator: &Emulator, dir: &Path) {
    let output = run(emulator, dir, &["apply", "--auto-approve"]);
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
}

/// The check `Login` as the service holds it.
fn login(emulator: &Emulator) -> Value {
    check_named(emulator, "Login")
}

/// Scenario 1: applied 5000, raised to 9000 in the UI during an incident,
/// changed to 7000 by a pull request.
fn conflicted() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = project(MONITORS);
    let dir = project.path();
    apply(&emulator, dir);
    ui_edit_check(&emulator, "Login", json!({"maxResponseTime": 9000}));
    edit(dir, "monitors.yaml", "maxResponseTime: 5000", "maxResponseTime: 7000");
    (emulator, project)
}

#[test]
fn a_field_changed_in_the_files_and_in_the_service_is_a_conflict_in_every_format() {
    let (emulator, project) = conflicted();
    let dir = project.path();
    let (code, human) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2, "{human}");
    insta::assert_snapshot!("conflict_human", human);
    let (_, markdown) = plan(&emulator, dir, &["--format", "markdown"]);
    insta::assert_snapshot!("conflict_markdown", markdown);
    let value = plan_json(&emulator, dir);
    assert_eq!(value["summary"]["conflict"], json!(1), "{value:#}");
    let change = &value["changes"][0];
    assert_eq!(change["reason"], "changed in the files and outside monform (conflict)");
    let field = planned_field(&value, "maxResponseTime");
    assert_eq!(
        field["conflict"],
        json!({"applied": 5000, "service": 9000, "files": 7000}),
        "{value:#}"
    );
    assert_eq!((&field["before"], &field["after"]), (&json!(9000), &json!(7000)));
}

/// A file edit alone, and a UI edit alone, are no conflict.
#[test]
fn one_side_changed_is_no_conflict() {
    let emulator = Emulator::start();
    let project = project(MONITORS);
    let dir = project.path();
    apply(&emulator, dir);
    edit(dir, "monitors.yaml", "maxResponseTime: 5000", "maxResponseTime: 7000");
    // Another field changed in the UI: the object's version moves.
    ui_edit_check(&emulator, "Login", json!({"frequency": 10}));
    let value = plan_json(&emulator, dir);
    assert!(value["summary"].get("conflict").is_none(), "{value:#}");
    let of = |path: &str| planned_field(&value, path);
    assert_eq!(of("maxResponseTime")["drift"], json!(false));
    assert!(of("maxResponseTime").get("conflict").is_none(), "{value:#}");
    assert_eq!(of("frequency")["drift"], json!(true));
}

/// Applying a conflict: asked as a destroy is; unattended, refused without
/// `--allow-conflicts`, which (or `lifecycle.drift: revert`) lets it through.
#[test]
fn an_unattended_apply_refuses_a_conflict_without_allow_conflicts() {
    let (emulator, project) = conflicted();
    let dir = project.path();
    let refused = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    insta::assert_snapshot!("conflict_apply_refused", tail_from(&stderr(&refused), "error:"));
    assert_eq!(login(&emulator)["maxResponseTime"], json!(9000), "nothing was applied");

    // Asked in a terminal (here a pipe): "no" keeps the service's value.
    let mut asked = emulator.monform(dir);
    asked.args(["apply"]).env("LOGIN_TOKEN", TOKEN).write_stdin("no\n");
    let asked = asked.output().unwrap();
    assert!(
        stderr(&asked).contains(
            "Do you want to perform these actions and overwrite 1 change made outside monform (the conflict above)?"
        ),
        "{}",
        stderr(&asked)
    );
    assert_eq!(login(&emulator)["maxResponseTime"], json!(9000));

    let allowed = run(&emulator, dir, &["apply", "--auto-approve", "--allow-conflicts"]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(login(&emulator)["maxResponseTime"], json!(7000));
    let (code, human) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(
        (code, human.as_str()),
        (0, "No changes. Your monitors match the configuration.\n")
    );
}

#[test]
fn a_yes_in_a_terminal_or_lifecycle_drift_revert_applies_a_conflict() {
    let (emulator, project) = conflicted();
    let dir = project.path();
    let mut asked = emulator.monform(dir);
    asked.args(["apply"]).env("LOGIN_TOKEN", TOKEN).write_stdin("yes\n");
    let asked = asked.output().unwrap();
    assert!(asked.status.success(), "{}", stderr(&asked));
    assert_eq!(login(&emulator)["maxResponseTime"], json!(7000));

    // `revert`: the files always win, unattended too.
    ui_edit_check(&emulator, "Login", json!({"maxResponseTime": 9500}));
    edit(
        dir,
        "monitors.yaml",
        "maxResponseTime: 7000",
        "maxResponseTime: 6000\n    lifecycle: { drift: revert }",
    );
    let (_, json) = plan(&emulator, dir, &["--format", "json"]);
    assert!(json.contains("\"conflict\""), "{json}");
    apply(&emulator, dir);
    assert_eq!(login(&emulator)["maxResponseTime"], json!(6000));
}

/// Scenario 3: a secret variable rotated in the web UI is drift, though
/// its value cannot be read.
#[test]
fn a_secret_variable_set_in_the_service_is_drift() {
    let emulator = Emulator::start();
    let project = project(SECRET_VARIABLE);
    let dir = project.path();
    apply(&emulator, dir);
    let (code, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 0);
    rotate_secret(&emulator, "rotated-in-the-ui");
    let (code, human) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2, "{human}");
    insta::assert_snapshot!("secret_drift_human", human);
    let (_, json) = plan(&emulator, dir, &["--format", "json"]);
    assert!(!json.contains("rotated-in-the-ui"), "{json}");
    let value: Value = serde_json::from_str(&json).unwrap();
    let field = &value["changes"][0]["fields"][0];
    assert_eq!(
        (&field["path"], &field["sensitive"], &field["drift"], &field["before"]),
        (&json!("value"), &json!(true), &json!(true), &Value::Null),
        "{json}"
    );
    // Applied, the files' value is back and the plan is empty.
    apply(&emulator, dir);
    let (code, _) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 0);

    // Rotated in the service and changed in the files: a conflict, whose
    // values are fingerprints (the service's cannot be read).
    rotate_secret(&emulator, "rotated-again");
    let output = with_token(&emulator, dir, "tok-second-4712", &["plan", "--format", "json"]);
    let json = stdout(&output);
    assert!(!json.contains("tok-second-4712") && !json.contains("rotated-again") && !json.contains(TOKEN));
    let value: Value = serde_json::from_str(&json).unwrap();
    let conflict = &value["changes"][0]["fields"][0]["conflict"];
    assert_eq!(conflict["service"], Value::Null, "{json}");
    for side in ["applied", "files"] {
        let shown = conflict[side].as_str().unwrap_or_default();
        assert!(shown.starts_with("(sensitive, fingerprint "), "{json}");
    }
    assert_ne!(conflict["applied"], conflict["files"], "{json}");
    let output = with_token(&emulator, dir, "tok-second-4712", &["plan"]);
    let human = stdout(&output);
    assert!(
        human.contains("value = (sensitive value changed)  # conflict: applied (sensitive, fingerprint ")
            && human.contains("service (not readable) (changed outside monform), files (sensitive, fingerprint "),
        "{human}"
    );
}

/// Scenario 4: a credential header changed in the web UI: the changed item
/// is the one shown (by name, its value masked), not hidden.
#[test]
fn a_credential_header_changed_in_the_service_is_the_item_shown() {
    let emulator = Emulator::start();
    let project = project(MONITORS);
    let dir = project.path();
    apply(&emulator, dir);
    let mut request = login(&emulator)["request"].clone();
    request["headers"] = json!([
        {"key": "Accept", "value": "application/json"},
        {"key": "Authorization", "value": "Bearer tok-from-the-ui"},
    ]);
    ui_edit_check(&emulator, "Login", json!({"request": request}));
    let (code, human) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2, "{human}");
    assert!(!human.contains("tok-from-the-ui"), "{human}");
    insta::assert_snapshot!("credential_header_drift_human", human);
    let (_, json) = plan(&emulator, dir, &["--format", "json"]);
    assert!(!json.contains("tok-from-the-ui") && !json.contains(TOKEN), "{json}");
}

/// A reviewed plan keeps its conflicts (`show` says them as `plan` did);
/// applied from the file (unattended), it needs `--allow-conflicts`.
#[test]
fn a_saved_plan_shows_its_conflicts_and_applies_them_only_when_allowed() {
    let (emulator, project) = conflicted();
    let dir = project.path();
    let saved = dir.join("reviewed.plan");
    let planned = run(&emulator, dir, &["plan", "--out", saved.to_str().unwrap()]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let shown = monform()
        .args(["--color", "never", "show"])
        .arg(&saved)
        .output()
        .unwrap();
    let shown = stdout(&shown);
    assert!(
        shown.contains("# conflict: applied 5000, service 9000 (changed outside monform), files 7000")
            && shown.contains(", 1 conflict."),
        "{shown}"
    );
    let refused = run(&emulator, dir, &["apply", saved.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(stderr(&refused).contains("--allow-conflicts"), "{}", stderr(&refused));
    assert_eq!(login(&emulator)["maxResponseTime"], json!(9000));
    let allowed = run(&emulator, dir, &["apply", "--allow-conflicts", saved.to_str().unwrap()]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(login(&emulator)["maxResponseTime"], json!(7000));
}

/// A team rule can deny conflicts: the policy input has them
/// (`examples/policies/conflicts.rego`).
#[test]
fn a_policy_can_deny_a_conflict() {
    let (emulator, project) = conflicted();
    let dir = project.path();
    let policies = dir.join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::copy(
        repo_root().join("examples/policies/conflicts.rego"),
        policies.join("conflicts.rego"),
    )
    .unwrap();
    let planned = run(&emulator, dir, &["plan"]);
    assert_eq!(planned.status.code(), Some(1), "{}", stdout(&planned));
    // At the field's own line, with both values.
    let said = stderr(&planned);
    assert!(
        said.contains("`maxResponseTime` was changed in the service (to 9000)")
            && said.contains("the files change it to 7000")
            && said.contains("monitors.yaml:6:5"),
        "{said}"
    );
    let overridden = run(
        &emulator,
        dir,
        &[
            "apply",
            "--auto-approve",
            "--allow-conflicts",
            "--policy-override",
            "monform.conflicts",
        ],
    );
    assert!(overridden.status.success(), "{}", stderr(&overridden));
}

const REMOVABLE: &str = r#"checks:
  login:
    checkType: API
    name: Login
    description: Logs in
    maxResponseTime: 5000
    request:
      method: GET
      url: https://example.com/login
      headers:
        - { key: Accept, value: application/json }
        - { key: X-Trace, value: "on" }
"#;

/// Taken out of the files (back to its default) and changed in the service
/// since the last apply is a conflict too: a field with a default
/// (`maxResponseTime`, the files' value `20000 (default)`), one without
/// (`description`, `(default)`), and a list's item (a header whose value
/// the service changed). Counted, and refused unattended, as any conflict.
#[test]
fn a_field_taken_out_of_the_files_and_changed_in_the_service_is_a_conflict() {
    let emulator = Emulator::start();
    let project = project(REMOVABLE);
    let dir = project.path();
    apply(&emulator, dir);
    let mut request = login(&emulator)["request"].clone();
    request["headers"] = json!([
        {"key": "Accept", "value": "application/json"},
        {"key": "X-Trace", "value": "verbose"},
    ]);
    ui_edit_check(
        &emulator,
        "Login",
        json!({"maxResponseTime": 9000, "description": "Logs in, raised", "request": request}),
    );
    edit(
        dir,
        "monitors.yaml",
        "    description: Logs in\n    maxResponseTime: 5000\n",
        "",
    );
    edit(dir, "monitors.yaml", "        - { key: X-Trace, value: \"on\" }\n", "");

    let value = plan_json(&emulator, dir);
    assert_eq!(value["summary"]["conflict"], json!(3), "{value:#}");
    assert_eq!(
        planned_field(&value, "maxResponseTime")["conflict"],
        json!({"applied": 5000, "service": 9000, "files": 20000, "filesDefault": true})
    );
    assert_eq!(
        planned_field(&value, "description")["conflict"],
        json!({"applied": "Logs in", "service": "Logs in, raised", "files": null, "filesDefault": true})
    );
    let headers = &planned_field(&value, "request.headers")["conflict"];
    assert_eq!(headers["service"][1]["value"], "verbose", "{value:#}");
    assert_eq!(headers["files"].as_array().map(Vec::len), Some(1), "{value:#}");
    let (code, human) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(code, 2, "{human}");
    insta::assert_snapshot!("taken_out_conflict_human", human);
    let (_, markdown) = plan(&emulator, dir, &["--format", "markdown"]);
    assert!(
        markdown.contains("| `checks.login` | `description` | `\"Logs in\"` | `\"Logs in, raised\"` | (default) |")
            && markdown.contains("| `9000` | `20000` (default) |"),
        "{markdown}"
    );

    let refused = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(stderr(&refused).contains("--allow-conflicts"), "{}", stderr(&refused));
    assert_eq!(
        login(&emulator)["description"],
        "Logs in, raised",
        "nothing was applied"
    );
    let allowed = run(&emulator, dir, &["apply", "--auto-approve", "--allow-conflicts"]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(login(&emulator)["maxResponseTime"], json!(20000));
    let (code, human) = plan(&emulator, dir, &["--detailed-exitcode"]);
    assert_eq!(
        (code, human.as_str()),
        (0, "No changes. Your monitors match the configuration.\n")
    );
}

/// Plain text applied is recorded, so a conflict on a name shows what was
/// applied; a secret's text never is: text from `${env:}` and a URL with a
/// credential in its query conflict with `(not recorded)`, and neither
/// reaches the state.
#[test]
fn a_text_conflict_shows_its_applied_value_and_a_secret_text_stays_hidden() {
    let emulator = Emulator::start();
    let monitors = MONITORS
        .replace(
            "name: Login",
            "name: Login\n    description: \"Logs in as ${env:LOGIN_TOKEN}\"",
        )
        .replace("https://example.com/login", "https://example.com/login?apikey=key-4711");
    let project = project(&monitors);
    let dir = project.path();
    apply(&emulator, dir);
    let state = std::fs::read_to_string(dir.join(".monform/state.json")).unwrap();
    assert!(
        state.contains("\"Login\"") && !state.contains(TOKEN) && !state.contains("key-4711"),
        "{state}"
    );
    let mut request = login(&emulator)["request"].clone();
    request["url"] = json!("https://example.com/login?apikey=key-4712");
    ui_edit_check(
        &emulator,
        "Login",
        json!({"name": "Login (UI)", "description": "changed in the UI", "request": request}),
    );
    edit(dir, "monitors.yaml", "name: Login\n", "name: Sign-in\n");
    edit(dir, "monitors.yaml", "Logs in as", "Signs in as");
    edit(dir, "monitors.yaml", "apikey=key-4711", "apikey=key-4713");
    let value = plan_json(&emulator, dir);
    let text = value.to_string();
    assert!(!text.contains(TOKEN) && !text.contains("key-471"), "{text}");
    assert_eq!(
        planned_field(&value, "name")["conflict"],
        json!({"applied": "Login", "service": "Login (UI)", "files": "Sign-in"})
    );
    let url = &planned_field(&value, "request.url")["conflict"];
    assert!(url.is_object() && url["applied"].is_null(), "{value:#}");
    let (_, human) = plan(&emulator, dir, &[]);
    assert!(
        human.contains(
            r#"# conflict: applied "Login", service "Login (UI)" (changed outside monform), files "Sign-in""#
        ),
        "{human}"
    );
}
