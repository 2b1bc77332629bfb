//! `monform validate` on broken projects: every problem, each at its place.

use crate::common;

use common::*;

/// Ten different kinds of mistakes in a copy of examples/full.
#[test]
fn ten_mistakes_give_ten_diagnostics() {
    let project = copy_example("full");
    let dir = project.path();
    // 1. syntax error (a file of its own, so the others still load)
    std::fs::write(dir.join("monitors/legacy.yaml"), "checks:\n  old-check: [unclosed\n").unwrap();
    // 2. unknown field, with a suggestion
    edit(dir, "monitors/web.yaml", "    frequency: 5\n", "    frequncy: 5\n");
    // 3. wrong type
    edit(dir, "monitors/shared.yaml", "concurrency: 3", "concurrency: three");
    // 4. rule across fields (spec 2.4)
    edit(
        dir,
        "monitors/infra.toml",
        "frequency = 60\n",
        "frequency = 60\nfrequencyOffset = 700\n",
    );
    // 5. dangling reference
    edit(
        dir,
        "monitors/web.yaml",
        "name: Login flow\n    group: production",
        "name: Login flow\n    group: prodution",
    );
    // 6. duplicate logical id across files
    edit(
        dir,
        "monitors/infra.toml",
        "[groups.infrastructure]",
        "[alertChannels.oncall]\ntype = \"EMAIL\"\nconfig = { address = \"other@example.com\" }\n\n[groups.infrastructure]",
    );
    // 7. missing script file
    edit(
        dir,
        "monitors/web.yaml",
        "../scripts/checkout.js",
        "../scripts/checkout-v2.js",
    );
    // 8. unset environment variable
    edit(
        dir,
        "monitors/infra.toml",
        "${env:SIGNING_KEY:-local-signing-key}",
        "${env:SIGNING_KEY}",
    );
    // 9. location not in the allowed list
    edit(
        dir,
        "monitors/shared.yaml",
        "[eu-west-1, us-east-1, ap-southeast-2]",
        "[eu-west-1, us-east-1, ap-southeast-9]",
    );
    // 10. out of range
    edit(dir, "monitors/infra.toml", "pingCount = 10", "pingCount = 60");

    let output = monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir)
        .env_remove("SIGNING_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr(&output);
    assert!(
        stderr.ends_with("error: 10 problems found; nothing was checked against the API\n"),
        "{stderr}"
    );
    insta::assert_snapshot!(stderr);
}

#[test]
fn missing_project_file_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut validate = monform();
    assert_run!(
        "missing_project_file",
        validate.args(["validate", "--dir"]).arg(dir.path())
    );
}

#[test]
fn unknown_section_and_project_settings_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[projet]\nname = \"x\"\n\n[defaults]\nfrequncy = 5\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.yaml"), "chekcs:\n  a: {}\n").unwrap();
    let output = monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&output));
}

#[test]
fn script_files_must_be_regular_files_in_the_project() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "snippets:\n  s: { name: S, script: { file: /dev/zero } }\n  t: { name: T, script: { file: scripts } }\n",
    )
    .unwrap();
    let mut validate = monform();
    assert_run!(
        "script_files_outside_or_not_regular",
        validate.args(["validate", "--color", "never", "--dir"]).arg(dir.path())
    );
}

/// `monform validate` of `dir`, colourless, with no environment chosen
/// unless `args` choose one.
fn validate(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir)
        .args(args)
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap()
}

/// Ten independent mistakes packed into three resources: shape, rule and
/// reference errors in the same resource do not hide each other.
#[test]
fn mistakes_in_one_resource_do_not_hide_each_other() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"mixed\"\n").unwrap();
    std::fs::write(
        dir.path().join("checks.yaml"),
        r#"alertChannels:
  oncall:
    type: EMAIL
    config: { address: ops@example.com }
checks:
  orders:
    checkType: API
    name: Orders
    frequency: 5
    frequencyOffset: 700
    locations: [eu-west-1, mars-north-1]
    alertChannels: [oncal]
    request:
      url: https://api.example.com/orders
      method: FETCH
  ping:
    checkType: ICMP
    name: Ping
    colour: red
    degradedPacketLossThreshold: 50
    maxPacketLossThreshold: 20
    group: edge
    request: { hostname: gw.example.com }
  home:
    checkType: URL
    name: Home
    frequency: 0
    retryStrategy: { type: SINGLE_RETRY, maxRetries: 2 }
    alertChannels: [oncall]
    request: { url: "https://example.com/", followRedirects: maybe }
"#,
    )
    .unwrap();
    let output = validate(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr(&output);
    assert!(
        stderr.ends_with("error: 10 problems found; nothing was checked against the API\n"),
        "{stderr}"
    );
    insta::assert_snapshot!(stderr);
}

/// A folder with its own monform.toml (an `import --out sub`) is another
/// project: skipped with a warning that does not fail validation.
#[test]
fn nested_project_is_skipped_with_a_warning() {
    let project = copy_example("quickstart");
    let dir = project.path();
    let nested = dir.join("monitors/imported");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("monform.toml"), "[project]\nname = \"other\"\n").unwrap();
    std::fs::write(nested.join("checks.yaml"), "checks:\n  x: { bogus: 1 }\n").unwrap();
    // One warning, nothing of the nested project's own mistakes.
    let output = validate(dir, &[]);
    insta::assert_snapshot!("nested_project", transcript(&output));
}

/// The mistakes forEach, forEachFile, vars and environments allow, each at
/// its file and line, in one run.
#[test]
fn expansion_mistakes_are_reported_at_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("monform.toml"),
        "[project]\nname = \"shop\"\n\n[vars]\nbase = \"https://example.com\"\n\n[environments.staging]\n\n[environments.production]\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("monitors")).unwrap();
    std::fs::create_dir_all(root.join("e2e/a")).unwrap();
    std::fs::create_dir_all(root.join("e2e/b")).unwrap();
    std::fs::write(root.join("e2e/a/login.spec.js"), "test('a')\n").unwrap();
    std::fs::write(root.join("e2e/b/login.spec.js"), "test('b')\n").unwrap();
    std::fs::write(
        root.join("monitors/checks.yaml"),
        r#"checks:
  api:
    forEach:
      users: { path: /users }
      orders: { path: /orders, frequency: often }
    checkType: API
    name: "API ${each.key}"
    frequency: ${each.value.frequency:-5}
    frequencyOffset: ${each.value.offset:-700}
    request:
      url: "${var:bsae_url}${each.value.path}"
      method: ${each.value.verb}
  home:
    forEach: [eu-west-1, eu-west-1]
    checkType: URL
    name: "Home ${each.key}"
    request: { url: "${var:base}/" }
  e2e:
    forEachFile: "../e2e/**/*.spec.js"
    checkType: BROWSER
    name: "E2E ${each.key}"
    script: { file: "${each.value}" }
  smoke:
    forEachFile: "../smoke/*.spec.js"
    checkType: BROWSER
    name: "Smoke ${each.key}"
    script: { file: "${each.value}" }
  both:
    forEach: [a]
    forEachFile: "../e2e/**/*.js"
    checkType: URL
    name: Both
    request: { url: "${var:base}" }
  qa-only:
    checkType: URL
    name: "QA ${each.key}"
    request: { url: "${var:base}/qa" }
    environments: [qa, staging]
variables:
  TOKEN:
    forEach: [a, b]
    value: x
"#,
    )
    .unwrap();
    let output = validate(root, &[]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&output));

    let output = validate(root, &["--env", "qa"]);
    insta::assert_snapshot!("unknown_environment", transcript(&output));
}

/// `validate --format json`: every diagnostic as an object on stdout, with
/// counts; the exit code is the human form's.
#[test]
fn validate_as_json_lists_every_diagnostic_with_counts() {
    let project = copy_example("quickstart");
    let dir = project.path();
    let nested = dir.join("monitors/imported");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("monform.toml"), "[project]\nname = \"other\"\n").unwrap();
    let clean = validate(dir, &["--format", "json"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    let report: serde_json::Value = serde_json::from_str(&stdout(&clean)).expect("JSON on stdout");
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(report["counts"]["errors"], 0, "{report:#}");
    // The counts are the diagnostics' (quickstart has an unrouted check and a note).
    let diagnostics = report["diagnostics"].as_array().unwrap();
    for (severity, count) in [("warning", "warnings"), ("note", "notes")] {
        let listed = diagnostics.iter().filter(|d| d["severity"] == severity).count();
        assert_eq!(report["counts"][count], listed, "{report:#}");
        assert!(listed > 0, "{report:#}");
    }
    assert_eq!(report["diagnostics"][0]["code"], "monform::nested-project");
    assert_eq!(report["diagnostics"][0]["severity"], "warning");
    assert!(report["resources"].as_u64().unwrap() > 0, "{report:#}");

    std::fs::write(
        dir.join("monitors/broken.yaml"),
        "checks:\n  broken:\n    checkType: ICMP\n    name: Broken\n    frequncy: 5\n    request: { hostname: a.example.com }\n",
    )
    .unwrap();
    let failed = validate(dir, &["--format", "json"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let report: serde_json::Value = serde_json::from_str(&stdout(&failed)).expect("JSON on stdout");
    assert_eq!(report["ok"], false, "{report:#}");
    assert_eq!(report["counts"]["errors"], 1, "{report:#}");
    let error = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["severity"] == "error")
        .expect("the error");
    assert_eq!(error["code"], "monform::invalid", "{error:#}");
    assert_eq!(error["file"], "monitors/broken.yaml", "{error:#}");
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(5), Some(5)),
        "{error:#}"
    );
    let told = format!(
        "{}\nhelp: {}",
        error["message"].as_str().unwrap(),
        error["help"].as_str().unwrap()
    );
    insta::assert_snapshot!("json_error_message_and_help", told);
    assert!(error["label"].is_string(), "{error:#}");
}
