//! `monform validate` tells which of a check's own settings its group
//! overrides (issue 20, item 1), at the check's field.

mod common;

use common::*;

#[test]
fn a_grouped_checks_own_locations_are_reported_at_their_line() {
    let project = copy_fixture("plan-project");
    let dir = project.path();
    edit(
        dir,
        "monitors.yaml",
        "  production: { name: Production, concurrency: 2 }",
        "  production: { name: Production, concurrency: 2, locations: [eu-west-1] }",
    );
    edit(
        dir,
        "monitors.yaml",
        "    request: { hostname: gw.example.com }",
        "    request: { hostname: gw.example.com }\n    locations: [us-east-1]\n    runtimeId: \"2024.09\"",
    );
    let output = monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir)
        .env_remove("MONFORM_ENV")
        .env("SHOP_API_TOKEN", "token")
        .output()
        .unwrap();
    let stderr = stderr(&output);
    // A warning, not an error: the project still validates.
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("`locations` is ignored: group `production` sets locations"),
        "{stderr}"
    );
    // The group sets no runtime, so the check's own one applies.
    assert!(!stderr.contains("`runtimeId` is ignored"), "{stderr}");
    insta::assert_snapshot!(stderr);
}

/// `monform validate` of `dir`, colourless.
fn validate(dir: &std::path::Path) -> std::process::Output {
    monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir)
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap()
}

/// A project whose `lonely` check has no channel and whose `quiet` check's
/// only channel does not send failures; `paged` is routed, `paused` is off.
fn unrouted_project(lint: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("[project]\nname = \"unrouted\"\n\n[lint]\n{lint}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("checks.yaml"),
        "\
alertChannels:
  pager: { type: EMAIL, config: { address: oncall@example.com } }
  digest: { type: EMAIL, config: { address: digest@example.com }, sendFailure: false }
checks:
  lonely:
    checkType: ICMP
    name: Lonely
    request: { hostname: a.example.com }
  quiet:
    checkType: ICMP
    name: Quiet
    request: { hostname: b.example.com }
    alertChannels: [digest]
  paged:
    checkType: ICMP
    name: Paged
    request: { hostname: c.example.com }
    alertChannels: [digest, pager]
  paused:
    checkType: ICMP
    name: Paused
    activated: false
    request: { hostname: d.example.com }
",
    )
    .unwrap();
    dir
}

#[test]
fn a_check_alerting_nobody_fails_under_error_and_warns_under_warn() {
    let project = unrouted_project("unrouted-checks = \"error\"");
    let output = validate(project.path());
    let failed = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{failed}");
    assert!(failed.contains("checks.yaml:5:"), "{failed}");
    assert!(failed.contains("checks.lonely: a failure alerts nobody"), "{failed}");
    assert!(failed.contains("checks.quiet: a failure alerts nobody"), "{failed}");
    assert!(!failed.contains("checks.paged: a failure"), "{failed}");
    assert!(!failed.contains("checks.paused"), "{failed}");
    insta::assert_snapshot!("unrouted_error", failed);

    let project = unrouted_project("unrouted-checks = \"warn\"");
    let output = validate(project.path());
    let warned = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{warned}");
    assert!(warned.contains("checks.lonely: a failure alerts nobody"), "{warned}");
    assert!(stdout(&output).contains("OK"), "{}", stdout(&output));

    let project = unrouted_project("unrouted-checks = \"off\"");
    let output = validate(project.path());
    assert_eq!(output.status.code(), Some(0));
    assert!(!stderr(&output).contains("alerts nobody"), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("global alert settings"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn checks_on_the_accounts_alert_settings_are_a_note_never_a_finding() {
    // `paged` reaches a channel and alerts by the account's settings (the
    // default): a note, which even `error` does not make fail.
    let project = unrouted_project("unrouted-checks = \"error\"");
    std::fs::write(
        project.path().join("checks.yaml"),
        "\
alertChannels:
  pager: { type: EMAIL, config: { address: oncall@example.com } }
checks:
  paged:
    checkType: ICMP
    name: Paged
    request: { hostname: c.example.com }
    alertChannels: [pager]
  own-settings:
    checkType: ICMP
    name: Own settings
    request: { hostname: d.example.com }
    alertChannels: [pager]
    useGlobalAlertSettings: false
",
    )
    .unwrap();
    let output = validate(project.path());
    let noted = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{noted}");
    assert!(noted.contains("checks.yaml:4:"), "{noted}");
    assert!(!noted.contains("own-settings"), "{noted}");
    insta::assert_snapshot!("global_alert_settings_note", noted);

    // A plan stays quiet about it: notes are `validate`'s.
    let emulator = Emulator::start();
    let planned = emulator.monform(project.path()).arg("plan").output().unwrap();
    assert!(planned.status.success(), "{}", stderr(&planned));
    assert!(
        !stderr(&planned).contains("global alert settings"),
        "{}",
        stderr(&planned)
    );
}

#[test]
fn unknown_lint_keys_and_levels_are_diagnostics() {
    let project = unrouted_project("unrouted-check = \"error\"\nignored-fields = \"loud\"");
    let output = validate(project.path());
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("unrouted-check"), "{stderr}");
    assert!(stderr.contains("lint.ignored-fields `loud` is not known"), "{stderr}");
}
