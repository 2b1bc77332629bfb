//! `monform validate` tells which of a check's own settings its group
//! overrides (issue 20, item 1), at the check's field.

use crate::common;

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
    // `locations` is ignored (the group sets them); the group sets no
    // runtime, so the check's own one applies and is not mentioned.
    insta::assert_snapshot!(stderr);
}

/// `monform validate` of `dir`, colourless.
fn validate(dir: &std::path::Path) -> std::process::Output {
    validate_command(dir).output().unwrap()
}

/// As [`validate`], not yet run: for `assert_run!`.
fn validate_command(dir: &std::path::Path) -> assert_cmd::Command {
    let mut command = monform();
    command
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir)
        .env_remove("MONFORM_ENV");
    command
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
    // lonely and quiet at their lines; neither paged (routed) nor paused.
    insta::assert_snapshot!("unrouted_error", failed);

    let project = unrouted_project("unrouted-checks = \"warn\"");
    assert_run!("unrouted_warn", validate_command(project.path()));

    // Off: the note on the account's alert settings (its own key) stays.
    let project = unrouted_project("unrouted-checks = \"off\"");
    assert_run!("unrouted_off", validate_command(project.path()));
}

#[test]
fn every_lint_and_note_has_its_own_lint_key() {
    // A finding made a note is said by validate only, never a warning;
    // the account's alert settings are not mentioned.
    let project = unrouted_project("global-alert-settings = \"off\"\nunrouted-checks = \"note\"");
    assert_run!("notes_only", validate_command(project.path()));
    let emulator = Emulator::start();
    let mut plan = emulator.monform(project.path());
    assert_run!("notes_only_plan", plan.arg("plan"));

    let project = unrouted_project("global-alert-settings = \"error\"");
    assert_run!("global_alert_settings_error", validate_command(project.path()));
}

/// A project of `count` activated checks with no alert channel: a finding each.
fn many_unrouted(count: usize, lint: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("[project]\nname = \"many\"\n\n[lint]\n{lint}\n"),
    )
    .unwrap();
    let mut checks = String::from("checks:\n");
    for n in 0..count {
        checks.push_str(&format!(
            "  c{n:03}:\n    checkType: ICMP\n    name: Check {n}\n    request: {{ hostname: h{n}.example.com }}\n"
        ));
    }
    std::fs::write(dir.path().join("checks.yaml"), checks).unwrap();
    dir
}

#[test]
fn many_findings_of_one_rule_are_summarised_not_printed_each() {
    let project = many_unrouted(40, "");
    let output = validate(project.path());
    let summarised = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{summarised}");
    insta::assert_snapshot!("many_findings_summary_line", stdout(&output));
    // The first in full (its excerpt), the next two by file:line, the count.
    insta::assert_snapshot!("many_findings_summarised", summarised);

    // --all-findings: every one, each with its excerpt.
    let output = monform()
        .args(["validate", "--all-findings", "--color", "never", "--dir"])
        .arg(project.path())
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap();
    let all = stderr(&output);
    assert_eq!(all.matches("a failure alerts nobody").count(), 40, "{all}");
    // Not summarised (forty excerpts: counted, not snapshotted).
    assert!(!all.contains("in all"), "{all}");

    // Errors are summarised too, and still fail.
    let project = many_unrouted(40, "unrouted-checks = \"error\"");
    assert_run!("many_errors_summarised", validate_command(project.path()));

    // plan and apply summarise the same way and take --all-findings.
    let project = many_unrouted(40, "");
    let emulator = Emulator::start();
    let planned = emulator.monform(project.path()).arg("plan").output().unwrap();
    let plan_stderr = common::stderr(&planned);
    assert!(planned.status.success(), "{plan_stderr}");
    insta::assert_snapshot!("plan_summarised", plan_stderr);
    let applied = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve", "--all-findings"])
        .output()
        .unwrap();
    let apply_stderr = common::stderr(&applied);
    assert!(applied.status.success(), "{apply_stderr}");
    assert_eq!(
        apply_stderr.matches("a failure alerts nobody").count(),
        40,
        "{apply_stderr}"
    );
}

#[test]
fn lint_findings_stay_out_of_commands_not_about_the_files() {
    let project = many_unrouted(2, "");
    let emulator = Emulator::start();
    let applied = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", common::stderr(&applied));
    // Among progress lines in the order the work finished: looked for.
    assert!(common::stderr(&applied).contains("alerts nobody"));
    for args in [
        &["status"][..],
        &["test"],
        &["location-keys", "list"],
        &["destroy", "--auto-approve"],
    ] {
        let output = emulator.monform(project.path()).args(args).output().unwrap();
        let stderr = common::stderr(&output);
        assert!(!stderr.contains("alerts nobody"), "{args:?}: {stderr}");
        assert!(!stderr.contains("global alert settings"), "{args:?}: {stderr}");
    }
    // Not even as an error: the linter's level is no reason for `status` to fail.
    std::fs::write(
        project.path().join("monform.toml"),
        "[project]\nname = \"many\"\n\n[lint]\nunrouted-checks = \"error\"\n",
    )
    .unwrap();
    let status = emulator.monform(project.path()).arg("status").output().unwrap();
    let stderr = common::stderr(&status);
    assert!(status.status.success(), "{stderr}");
    // Nothing at all on stderr.
    insta::assert_snapshot!("status_under_an_error_level", stderr);
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
    // At paged's line; own-settings is not mentioned.
    insta::assert_snapshot!("global_alert_settings_note", noted);

    // A plan stays quiet about it: notes are `validate`'s.
    let emulator = Emulator::start();
    let mut plan = emulator.monform(project.path());
    assert_run!("global_alert_settings_not_in_plan", plan.arg("plan"));
}

#[test]
fn unknown_lint_keys_and_levels_are_diagnostics() {
    let project = unrouted_project("unrouted-check = \"error\"\nignored-fields = \"loud\"");
    assert_run!("unknown_lint_keys", validate_command(project.path()));
}
