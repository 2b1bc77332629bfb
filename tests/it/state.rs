//! `monform state ...` and the PostgreSQL state backend end to end: the
//! real binary against the real emulator and, where `.ci/run` could start
//! one, a real PostgreSQL (`MONFORM_TEST_POSTGRES_URL`). Tests that need
//! PostgreSQL say why they skip when there is none.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const TOKEN: (&str, &str) = ("SHOP_API_TOKEN", "tok-4242-secret");

/// `monform` on `dir` against the emulator, with the secret set and the
/// state URL given (or removed).
fn monform_at(emulator: &Emulator, dir: &Path, state_url: Option<&str>) -> assert_cmd::Command {
    let mut command = emulator.monform(dir);
    command.env(TOKEN.0, TOKEN.1);
    match state_url {
        Some(url) => command.env("MONFORM_STATE_URL", url),
        None => command.env_remove("MONFORM_STATE_URL"),
    };
    command
}

fn run(emulator: &Emulator, dir: &Path, state_url: Option<&str>, args: &[&str]) -> std::process::Output {
    monform_at(emulator, dir, state_url).args(args).output().unwrap()
}

/// As [`run`], not yet run: for `assert_run!`.
fn command(emulator: &Emulator, dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = monform_at(emulator, dir, None);
    command.args(args);
    command
}

fn assert_ok(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "failed:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

fn assert_no_changes(output: &std::process::Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "expected no changes:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

/// Sets the project name (and the backend) of a project's monform.toml.
fn configure(dir: &Path, name: &str, backend: &str) {
    let path = dir.join("monform.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replacen("name = \"shop\"", &format!("name = \"{name}\""), 1);
    let text = match text.split_once("[state]") {
        Some((before, _)) => before.to_owned(),
        None => text,
    };
    std::fs::write(path, format!("{text}\n[state]\nbackend = \"{backend}\"\n")).unwrap();
}

/// Every object of a kind in the account, by id.
fn objects(emulator: &Emulator, list: &str) -> Vec<Value> {
    let body = emulator.call("GET", &format!("{list}?limit=100"), None);
    match body {
        Value::Array(items) => items,
        other => other["entries"].as_array().cloned().unwrap_or_default(),
    }
}

fn id_text(id: &Value) -> String {
    id.as_str().map_or_else(|| id.to_string(), str::to_owned)
}

fn by_id<'a>(items: &'a [Value], id: &str) -> &'a Value {
    items
        .iter()
        .find(|o| id_text(&o["id"]) == id)
        .expect("the object exists")
}

fn ownership_tags(object: &Value) -> Vec<String> {
    object["tags"]
        .as_array()
        .map(|tags| {
            tags.iter()
                .filter_map(Value::as_str)
                .filter(|t| t.starts_with("monform:"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// An object without what a tag move changes.
fn without_tags(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("tags");
        map.remove("updated_at");
    }
    object
}

fn local_state(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap()).unwrap()
}

#[test]
fn state_mv_then_plan_shows_no_changes_and_the_next_apply_moves_only_the_tag() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    assert_ok(&run(&emulator, dir, None, &["apply", "--auto-approve"]));
    let state = local_state(dir);
    let group_id = state["resources"]["groups.production"]["remoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let check_id = state["resources"]["checks.gateway-ping"]["remoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    let groups_before = objects(&emulator, "/v1/check-groups");
    let checks_before = objects(&emulator, "/v1/checks");

    // Rename a group (referenced by a check) and a check, in the state and in the files.
    for (old, new) in [
        ("groups.production", "groups.prod"),
        ("checks.gateway-ping", "checks.gw-ping"),
    ] {
        let name = format!("mv_to_{}", new.replace(['.', '-'], "_"));
        assert_run!(name, command(&emulator, dir, &["state", "mv", old, new]));
    }
    edit(
        dir,
        "monitors.yaml",
        "  production: { name: Production",
        "  prod: { name: Production",
    );
    edit(dir, "monitors.yaml", "    group: production\n", "    group: prod\n");
    edit(dir, "monitors.yaml", "    group: production\n", "    group: prod\n");
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");

    // No changes, and the plan says the tags move.
    assert_run!("mv_plan", command(&emulator, dir, &["plan", "--detailed-exitcode"]));

    assert_ok(&assert_run!(
        "mv_apply",
        command(&emulator, dir, &["apply", "--auto-approve"])
    ));

    // Same objects, same ids, only the tag changed; nothing else was touched.
    let groups_after = objects(&emulator, "/v1/check-groups");
    let checks_after = objects(&emulator, "/v1/checks");
    assert_eq!(groups_after.len(), groups_before.len());
    assert_eq!(checks_after.len(), checks_before.len());
    let group = by_id(&groups_after, &group_id);
    assert_eq!(ownership_tags(group), ["monform:shop/prod"]);
    assert_eq!(without_tags(group), without_tags(by_id(&groups_before, &group_id)));
    let check = by_id(&checks_after, &check_id);
    assert_eq!(ownership_tags(check), ["monform:shop/gw-ping"]);
    assert_eq!(without_tags(check), without_tags(by_id(&checks_before, &check_id)));
    for before in groups_before.iter().chain(&checks_before) {
        let id = id_text(&before["id"]);
        if id != group_id && id != check_id {
            let after = groups_after
                .iter()
                .chain(&checks_after)
                .find(|o| o["id"] == before["id"])
                .unwrap();
            assert_eq!(after, before, "an object that did not move was left alone");
        }
    }

    let state = local_state(dir);
    assert!(state["resources"].get("groups.production").is_none());
    assert!(state["resources"].get("groups.prod").is_some());
    // No changes, and nothing moves any more.
    assert_run!(
        "mv_plan_after_apply",
        command(&emulator, dir, &["plan", "--detailed-exitcode"])
    );
}

#[test]
fn state_mv_refuses_what_cannot_be_renamed() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    assert_ok(&run(&emulator, dir, None, &["apply", "--auto-approve"]));
    let cases: [(&[&str], &str); 4] = [
        (&["checks.orders-api", "groups.x"], "different kinds"),
        (&["variables.API_TOKEN", "variables.OTHER"], "its key"),
        (&["checks.orders-api", "checks.gateway-ping"], "already in the state"),
        (&["checks.nope", "checks.other"], "checks.nope is not in the state"),
    ];
    for (args, why) in cases {
        let name = format!("mv_refused_{}", why.replace([' ', '.'], "_"));
        assert_run!(name, command(&emulator, dir, &[&["state", "mv"][..], args].concat()));
    }
    // Moved in the state only: the next plan would delete and recreate, and says so.
    assert_run!(
        "mv_state_only",
        command(&emulator, dir, &["state", "mv", "groups.staging", "groups.stage"])
    );
}

#[test]
fn state_rm_stops_managing_an_object_without_deleting_it() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    assert_ok(&run(&emulator, dir, None, &["apply", "--auto-approve"]));

    let listed = run(&emulator, dir, None, &["state", "list"]);
    assert_ok(&listed);
    let state = local_state(dir);
    let check_id = state["resources"]["checks.gateway-ping"]["remoteId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        stdout(&listed)
            .lines()
            .any(|l| l.starts_with("checks.gateway-ping") && l.ends_with(&check_id)),
        "{}",
        stdout(&listed)
    );
    assert_eq!(stdout(&listed).lines().count(), 7);
    let shown = assert_run!(
        "show_variable",
        command(&emulator, dir, &["state", "show", "variables.API_TOKEN"])
    );
    assert!(!stdout(&shown).contains(TOKEN.1));
    assert_run!(
        "show_misspelt",
        command(&emulator, dir, &["state", "show", "checks.gateway-pin"])
    );

    assert_run!(
        "rm_still_in_files",
        command(&emulator, dir, &["state", "rm", "checks.gateway-ping"])
    );
    let check = emulator.call("GET", &format!("/v1/checks/{check_id}"), None);
    assert!(ownership_tags(&check).is_empty(), "the tag is gone: {check}");
    assert!(local_state(dir)["resources"].get("checks.gateway-ping").is_none());

    edit(
        dir,
        "monitors.yaml",
        "  gateway-ping:\n    checkType: ICMP\n    name: Gateway ping\n    group: production\n    request: { hostname: gw.example.com }\n",
        "",
    );
    let planned = run(&emulator, dir, None, &["plan", "--detailed-exitcode"]);
    assert_no_changes(&planned);
    assert_ok(&run(&emulator, dir, None, &["apply", "--auto-approve"]));
    let check = emulator.call("GET", &format!("/v1/checks/{check_id}"), None);
    assert_eq!(check["name"], "Gateway ping", "the object is still there, unmanaged");

    assert_run!(
        "rm_not_in_state",
        command(&emulator, dir, &["state", "rm", "checks.gateway-ping"])
    );
}

#[test]
fn postgres_backend_needs_its_url_and_never_shows_the_password() {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    configure(dir, &unique("nourl"), "postgres");
    let unset = run(&emulator, dir, None, &["plan"]);
    insta::assert_snapshot!("postgres_without_its_url", transcript(&unset));

    // Nothing listens on port 1: the error names the URL without its password.
    let url = "postgres://monform:Sup3r-Secret-pw@127.0.0.1:1/state";
    for args in [
        &["plan"][..],
        &["apply", "--auto-approve"],
        &["state", "list"],
        &["state", "history"],
    ] {
        let output = run(&emulator, dir, Some(url), args);
        let text = format!("{}{}", stdout(&output), stderr(&output));
        // The password is looked for in the raw output, before any redaction.
        assert!(
            !text.contains("Sup3r-Secret-pw"),
            "{args:?} leaked the password: {text}"
        );
        let name = format!("postgres_unreachable_{}", args.join("_").replace('-', ""));
        insta::assert_snapshot!(name, transcript(&output));
    }
    let history = run(&emulator, dir, None, &["state", "history"]);
    insta::assert_snapshot!("postgres_history_without_its_url", transcript(&history));
    configure(dir, &unique("local"), "local");
    let history = run(&emulator, dir, None, &["state", "history"]);
    insta::assert_snapshot!("local_state_has_no_history", transcript(&history));
}

/// `text` with what differs between test databases and runs replaced: the
/// state URL's user, host and database (its password must already be
/// `***`) and the unique project `name`.
fn steady_postgres(text: &str, name: &str) -> String {
    let url = regex::Regex::new(r"postgres://[^:@\s]+:\*\*\*@[^/\s]+/[A-Za-z0-9_]+").unwrap();
    url.replace_all(text, "postgres://[user]:***@[host]/[database]")
        .replace(name, "[project]")
}

/// `text` with each `serial N` written relative to the serial of the first
/// apply, which depends on how many writes that apply made.
fn relative_serials(text: &str, applied: u64) -> String {
    let serial = regex::Regex::new(r"serial ([0-9]+)").unwrap();
    serial
        .replace_all(text, |found: &regex::Captures| {
            let n: u64 = found[1].parse().unwrap();
            match n.checked_sub(applied) {
                Some(0) => "serial [applied]".to_owned(),
                Some(more) => format!("serial [applied + {more}]"),
                None => format!("serial [applied - {}]", applied - n),
            }
        })
        .into_owned()
}

/// The password of a PostgreSQL URL.
fn password(url: &str) -> String {
    let userinfo = url.split_once("://").map_or("", |(_, rest)| rest);
    let userinfo = userinfo.split_once('@').map_or("", |(userinfo, _)| userinfo);
    userinfo.split_once(':').map_or("", |(_, password)| password).to_owned()
}

/// A copy of a project in a second folder: another CI runner's checkout.
fn second_copy(dir: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
        }
    }
    copy
}

/// A project of `n` ICMP checks, with the fixture's secret variable.
fn bulk_project(name: &str, n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("[project]\nname = \"{name}\"\n\n[state]\nbackend = \"postgres\"\n"),
    )
    .unwrap();
    let mut yaml =
        String::from("variables:\n  API_TOKEN: { value: \"${env:SHOP_API_TOKEN}\", secret: true }\nchecks:\n");
    for i in 0..n {
        yaml.push_str(&format!(
            "  check-{i}:\n    checkType: ICMP\n    name: Check {i}\n    request: {{ hostname: host-{i}.example.com }}\n"
        ));
    }
    std::fs::write(dir.path().join("checks.yaml"), yaml).unwrap();
    dir
}

#[test]
fn two_runners_share_one_postgres_state() {
    let Some(url) = postgres() else { return };
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        latency: Duration::from_millis(30),
        ..Default::default()
    });
    let name = unique("runners");
    let a = bulk_project(&name, 30);
    let b = second_copy(a.path());

    // Runner A applies slowly; runner B tries meanwhile and fails fast naming A.
    let mut first = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .arg("--dir")
        .arg(a.path())
        .args(["--api-url", &emulator.server.url(), "--color", "never"])
        .args(["apply", "--auto-approve", "--parallelism", "1"])
        .env("MONFORM_API_KEY", &emulator.server.api_key)
        .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id)
        .env("MONFORM_STATE_URL", &url)
        .env(TOKEN.0, TOKEN.1)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(first.stderr.take().unwrap()).lines();
    let waited = Instant::now();
    let mut seen = Vec::new();
    loop {
        let line = lines.next().expect("runner A reports progress").unwrap();
        seen.push(line.clone());
        if line.contains(": created") {
            break;
        }
        assert!(waited.elapsed() < Duration::from_secs(60), "{seen:?}");
    }
    let started = Instant::now();
    let second = run(&emulator, b.path(), Some(&url), &["apply", "--auto-approve"]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the second apply failed fast"
    );
    // The holder is runner A: its pid; the host and start time vary.
    let refused = steady_holder(&transcript(&second), first.id());
    insta::assert_snapshot!("lock_held_by_another_runner", refused);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(first.wait().unwrap().success(), "{seen:?}\n{rest:?}");
    assert!(!a.path().join(".monform/state.json").exists(), "no local state");

    // B sees what A applied, secret fingerprints included: no perpetual diff.
    let planned = run(&emulator, b.path(), Some(&url), &["plan", "--detailed-exitcode"]);
    assert_no_changes(&planned);
    let mut changed = monform_at(&emulator, b.path(), Some(&url));
    changed
        .env(TOKEN.0, "another-value")
        .args(["plan", "--detailed-exitcode"]);
    let changed = changed.output().unwrap();
    let changed = steady_postgres(&transcript(&changed), &name);
    insta::assert_snapshot!("shared_state_sensitive_value_changed", changed);

    // B applies a change; A plans with B's state.
    edit(b.path(), "checks.yaml", "    name: Check 0\n", "    name: Check zero\n");
    assert_ok(&run(&emulator, b.path(), Some(&url), &["apply", "--auto-approve"]));
    edit(a.path(), "checks.yaml", "    name: Check 0\n", "    name: Check zero\n");
    assert_no_changes(&run(&emulator, a.path(), Some(&url), &["plan", "--detailed-exitcode"]));

    let history = run(&emulator, a.path(), Some(&url), &["state", "history", "--limit", "100"]);
    assert_ok(&history);
    let text = stdout(&history);
    let rows: Vec<&str> = text.lines().skip(1).collect();
    // Writes are coalesced, but every change advances the serial (the
    // service and account the state is applied to, recorded first; 31
    // creates; B's update) and every address shows in some row.
    assert!(rows[0].trim_start().starts_with("33 "), "{text}");
    for i in 0..30 {
        assert!(
            text.contains(&format!("+checks.check-{i} ")) || text.contains(&format!("+checks.check-{i}\n")),
            "{text}"
        );
    }
    assert!(text.contains("+variables.API_TOKEN"), "{text}");
    assert!(
        rows[0].contains("monform apply") && rows[0].contains("~checks.check-0"),
        "{text}"
    );
    assert!(rows.last().unwrap().trim_start().starts_with("1 "), "{text}");
    assert!(!text.contains(TOKEN.1) && !text.contains(&url));

    // The lock was released: a third run gets it.
    assert_ok(&run(&emulator, a.path(), Some(&url), &["apply", "--auto-approve"]));
}

#[test]
fn state_migrates_to_postgres_and_back() {
    let Some(url) = postgres() else { return };
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let dir = project.path();
    let name = unique("migrate");
    configure(dir, &name, "local");
    // The project's objects are named after the project in their tags.
    assert_ok(&run(&emulator, dir, None, &["apply", "--auto-approve"]));
    let local = local_state(dir);
    let serial = local["serial"].as_u64().unwrap();

    // Every migration is snapshotted with the database's URL and the
    // project's unique name replaced; the URL's password must not show.
    let migrate = |snapshot: &str, args: &[&str]| {
        let output = run(&emulator, dir, Some(&url), &[&["state", "migrate"][..], args].concat());
        let text = transcript(&output);
        assert!(!text.contains(&password(&url)), "the password leaked: {text}");
        let text = relative_serials(&steady_postgres(&text, &name), serial);
        insta::assert_snapshot!(snapshot, text);
        output
    };
    migrate("migrate_nothing_to_copy_down", &["--to", "local"]);
    migrate("migrate_up", &["--to", "postgres"]);
    migrate("migrate_up_again", &["--to", "postgres"]);

    // Switch to PostgreSQL and lose the local file: same state, no changes.
    configure(dir, &name, "postgres");
    std::fs::rename(dir.join(".monform/state.json"), dir.join("old-state.json")).unwrap();
    assert_no_changes(&run(&emulator, dir, Some(&url), &["plan", "--detailed-exitcode"]));
    let listed = run(&emulator, dir, Some(&url), &["state", "list"]);
    assert_ok(&listed);
    assert_eq!(stdout(&listed).lines().count(), 7);
    // The list's remote ids vary; its header (on stderr) does not.
    let header = relative_serials(&steady_postgres(&stderr(&listed), &name), serial);
    insta::assert_snapshot!("postgres_list_header", header);

    // A change applied with PostgreSQL, then copied down.
    edit(dir, "monitors.yaml", "    frequency: 5\n", "    frequency: 10\n");
    assert_ok(&run(&emulator, dir, Some(&url), &["apply", "--auto-approve"]));
    assert_ok(&migrate("migrate_down", &["--to", "local"]));
    let copied = local_state(dir);
    assert!(copied["serial"].as_u64().unwrap() > serial);
    assert_eq!(
        copied["salt"], local["salt"],
        "the salt travels: fingerprints stay valid"
    );
    configure(dir, &name, "local");
    assert_no_changes(&run(&emulator, dir, None, &["plan", "--detailed-exitcode"]));

    // An older local state does not overwrite a newer one without --force.
    std::fs::rename(dir.join("old-state.json"), dir.join(".monform/state.json")).unwrap();
    migrate("migrate_older_refused", &["--to", "postgres"]);
    assert_ok(&migrate("migrate_older_forced", &["--to", "postgres", "--force"]));
    configure(dir, &name, "postgres");
    let history = run(&emulator, dir, Some(&url), &["state", "history"]);
    assert_ok(&history);
    let text = stdout(&history);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .contains("monform state migrate --to postgres"),
        "{text}"
    );
}
