//! Reviewing changes (issue 27 items 2, 7, 8 and 9), end to end: the real
//! binary against the real emulator. The Markdown plan's table and entries
//! without field changes, lists diffed item by item, `monform show` of a
//! saved plan, and rename suggestions that paste.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

const TOKEN: (&str, &str) = ("SHOP_API_TOKEN", "tok-4242-secret");

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).env(TOKEN.0, TOKEN.1).args(args).output().unwrap()
}

/// Standard output with remote ids and uuids replaced, after a success.
fn ok(output: std::process::Output) -> String {
    assert!(
        output.status.code().is_some_and(|c| c == 0 || c == 2),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    redact_ids(&stdout(&output))
}

fn applied_fixture() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = copy_fixture("plan-project");
    let applied = run(&emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    (emulator, project)
}

fn append(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    let mut all = std::fs::read_to_string(&path).unwrap();
    all.push_str(text);
    std::fs::write(path, all).unwrap();
}

/// A move, a forget and a delete: none has field changes.
fn moved_forgotten_deleted(dir: &Path) {
    edit(dir, "monitors.yaml", "  gateway-ping:\n", "  gw-ping:\n");
    edit(dir, "monitors.yaml", "  staging: { name: Staging }\n", "");
    append(
        dir,
        "monitors.yaml",
        "moved:\n  - { from: checks.gateway-ping, to: checks.gw-ping }\n",
    );
}

#[test]
fn the_markdown_table_counts_every_action_and_no_entry_is_an_empty_diff() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    moved_forgotten_deleted(dir);
    // Forget the alert channel: out of the files, kept in the account. The
    // check that used it stops naming it.
    edit(dir, "monitors.yaml", "    alertChannels: [oncall]\n", "");
    edit(
        dir,
        "monitors.yaml",
        "alertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n",
        "removed:\n  - { from: alertChannels.oncall, destroy: false }\n",
    );
    // No empty diff block: the snapshot would show one.
    let markdown = ok(run(&emulator, dir, &["plan", "--format", "markdown"]));
    // Groups are created concurrently, so which one got id 1 varies.
    insta::assert_snapshot!("markdown_every_action", redact_ids(&markdown));
}

/// The first check's id in the account.
fn check_id(emulator: &Emulator, name: &str) -> Value {
    let checks = emulator.call("GET", "/v1/checks", None);
    checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .map(|c| c["id"].clone())
        .unwrap()
}

#[test]
fn lists_are_diffed_item_by_item_and_unknown_ids_are_named() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    // An alert channel the project does not have, subscribed behind monform's back.
    let channel = emulator.call(
        "POST",
        "/v1/alert-channels",
        Some(json!({"type": "EMAIL", "config": {"address": "someone@example.com"}})),
    );
    let check = check_id(&emulator, "Orders API");
    emulator.call(
        "PUT",
        &format!("/v1/alert-channels/{}/subscriptions", channel["id"]),
        Some(json!({"checkId": check, "activated": true})),
    );
    edit(
        dir,
        "monitors.yaml",
        "        - { source: STATUS_CODE, comparison: EQUALS, target: \"200\" }\n",
        "        - { source: STATUS_CODE, comparison: EQUALS, target: \"201\" }\n        - { source: TEXT_BODY, comparison: CONTAINS, target: ok }\n",
    );
    let human = ok(run(&emulator, dir, &["plan"]));
    let channel_id = channel["id"].to_string();
    let human = human
        .replace(&format!("\"{channel_id}\""), "\"[channel]\"")
        .replace(&format!("id {channel_id} "), "id [channel] ");
    // Lists item by item, not as one-line arrays (`request.assertions = [{`).
    insta::assert_snapshot!("lists_human", human);

    let markdown = ok(run(&emulator, dir, &["plan", "--format", "markdown"]))
        .replace(&format!("\"{channel_id}\""), "\"[channel]\"")
        .replace(&format!("id {channel_id} "), "id [channel] ");
    // The added assertion item by item, and the unknown channel explained.
    insta::assert_snapshot!("lists_markdown", redact_ids(&markdown));

    let json: Value = serde_json::from_slice(&run(&emulator, dir, &["plan", "--format", "json"]).stdout).unwrap();
    let fields = json["changes"][0]["fields"].as_array().unwrap();
    let assertions = fields.iter().find(|f| f["path"] == "request.assertions").unwrap();
    assert_eq!(assertions["items"][0]["change"], "changed", "{assertions:#}");
    assert_eq!(assertions["items"][1]["change"], "added", "{assertions:#}");
    let channels = fields.iter().find(|f| f["path"] == "alertChannels").unwrap();
    // Which channel it is and whose (issue 27 item 8): made by hand, no project's.
    assert_eq!(
        channels["items"][0]["unknownId"],
        json!({"kind": "alertChannels", "id": channel_id, "label": "EMAIL someone@example.com", "owner": "nobody"}),
        "{channels:#}"
    );

    // A saved plan names it as the plan did.
    let saved = dir.join("lists.plan");
    let live = ok(run(&emulator, dir, &["plan", "--out", saved.to_str().unwrap()]));
    let shown = ok(monform()
        .args(["--color", "never", "show"])
        .arg(&saved)
        .output()
        .unwrap());
    assert!(shown.contains("(EMAIL someone@example.com), of no project"), "{shown}");
    let live: Vec<&str> = live.lines().filter(|l| !l.contains("Check runs a month")).collect();
    assert_eq!(shown.trim_end(), live.join("\n").trim_end());
}

/// Issue 27 item 8, "whose": a channel another project manages, subscribed
/// to one of this project's checks by hand, is named with that project.
#[test]
fn an_unknown_id_in_a_list_names_the_project_that_owns_it() {
    let (emulator, project) = applied_fixture();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("monform.toml"), "[project]\nname = \"payments\"\n").unwrap();
    std::fs::write(
        other.path().join("channels.yaml"),
        "alertChannels:\n  pager: { type: EMAIL, config: { address: pager@example.com } }\n",
    )
    .unwrap();
    let applied = run(&emulator, other.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let channels = emulator.call("GET", "/v1/alert-channels", None);
    let pager = channels
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["config"]["address"] == "pager@example.com")
        .map(|c| c["id"].clone())
        .unwrap();
    let check = check_id(&emulator, "Orders API");
    emulator.call(
        "PUT",
        &format!("/v1/alert-channels/{pager}/subscriptions"),
        Some(json!({"checkId": check, "activated": true})),
    );
    let human = stdout(&run(&emulator, project.path(), &["plan"]));
    let note = human
        .lines()
        .find(|l| l.contains(&format!("remote id {pager} ")))
        .unwrap_or_else(|| panic!("no note on the channel:\n{human}"));
    assert!(
        note.ends_with("of the account's alertChannels (EMAIL pager@example.com), of project `payments`: no object of this project has it"),
        "{note}"
    );
}

#[test]
fn a_credential_header_in_a_list_stays_masked() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    edit(
        dir,
        "monitors.yaml",
        "      url: https://api.example.com/orders\n",
        "      url: https://api.example.com/orders\n      headers:\n        - { key: Authorization, value: \"Bearer ${env:SHOP_API_TOKEN}\" }\n        - { key: X-Team, value: sre }\n",
    );
    for format in ["human", "json", "markdown"] {
        let text = ok(run(&emulator, dir, &["plan", "--format", format]));
        assert!(!text.contains(TOKEN.1), "{format}:\n{text}");
        assert!(text.contains("X-Team"), "{format}:\n{text}");
        if format != "json" {
            // Item by item: each header its own line, the credential masked.
            insta::assert_snapshot!(format!("credential_header_{format}"), redact_ids(&text));
        }
    }
}

#[test]
fn show_renders_a_saved_plan_in_every_format() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    edit(dir, "monitors.yaml", "    frequency: 5\n", "    frequency: 10\n");
    moved_forgotten_deleted(dir);
    let saved = dir.join("plan.out");
    let human = ok(run(&emulator, dir, &["plan", "--out", saved.to_str().unwrap()]));
    for (format, live) in [
        ("human", human),
        ("markdown", ok(run(&emulator, dir, &["plan", "--format", "markdown"]))),
    ] {
        let shown = monform()
            .args(["--color", "never", "show", "--format", format])
            .arg(&saved)
            .output()
            .unwrap();
        let shown = ok(shown);
        // The saved plan is the plan: the same text, but for the runs line
        // (which needs the account) and nothing else.
        let live: String = live
            .lines()
            .filter(|l| !l.contains("Check runs a month"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(shown.trim_end(), live.trim_end(), "{format}");
    }
    let json = monform()
        .args(["show", "--format", "json"])
        .arg(&saved)
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(shown["formatVersion"], 1);
    assert_eq!(shown["summary"]["update"], 1, "{shown:#}");
    assert_eq!(shown["changes"].as_array().unwrap().len(), 3, "{shown:#}");
}

#[test]
fn show_explains_a_file_that_is_not_a_saved_plan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "hello").unwrap();
    let output = monform().arg("show").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(
        "show_not_a_plan",
        stderr(&output).replace(&path.display().to_string(), "[path]")
    );
}

#[test]
fn terraforms_out_spelling_saves_the_plan() {
    let (emulator, project) = applied_fixture();
    let dir = project.path();
    edit(dir, "monitors.yaml", "    frequency: 5\n", "    frequency: 10\n");
    let saved = dir.join("tf.plan");
    ok(run(&emulator, dir, &["plan", "-out", saved.to_str().unwrap()]));
    assert!(saved.is_file(), "-out FILE saves the plan");
    let other = dir.join("tf2.plan");
    ok(run(&emulator, dir, &["plan", &format!("-out={}", other.display())]));
    assert!(other.is_file(), "-out=FILE saves the plan");
    let applied = run(&emulator, dir, &["apply", saved.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", stderr(&applied));
}

/// A `forEach` check of three items (one host: only the names tell them apart).
fn for_each_project(emulator: &Emulator) -> tempfile::TempDir {
    let project = copy_fixture("plan-project");
    append(
        project.path(),
        "monitors.yaml",
        "  api:\n    forEach: [auth, orders, users]\n    checkType: ICMP\n    name: API ${each.key}\n    request: { hostname: api.example.org }\n",
    );
    // The forEach definition goes under `checks:`, not after `variables:`.
    let text = std::fs::read_to_string(project.path().join("monitors.yaml")).unwrap();
    let (head, tail) = text.split_at(text.find("  api:\n    forEach").unwrap());
    let text = head.replace("checks:\n", &format!("checks:\n{tail}"));
    std::fs::write(project.path().join("monitors.yaml"), text).unwrap();
    let applied = run(emulator, project.path(), &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    project
}

#[test]
fn suggested_moves_paste_as_yaml_and_a_renamed_for_each_is_one_suggestion() {
    let emulator = Emulator::start();
    let project = for_each_project(&emulator);
    let dir = project.path();
    edit(
        dir,
        "monitors.yaml",
        "  api:\n    forEach",
        "  backend-api:\n    forEach",
    );
    let human = ok(run(&emulator, dir, &["plan"]));
    let suggestion = &human[human.find("Suggestion:").expect("a suggestion")..human.find("Plan:").unwrap()];
    insta::assert_snapshot!("for_each_rename_human", suggestion);
    let markdown = ok(run(&emulator, dir, &["plan", "--format", "markdown"]));
    let section = &markdown[markdown.find("#### Possible renames").unwrap()..];
    let section = &section[..section.find("<details>").unwrap_or(section.len())];
    insta::assert_snapshot!("for_each_rename_markdown", section);

    // Pasted as printed, the entries are valid and the plan moves every item.
    let yaml: String = suggestion
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| format!("{}\n", &l[2..]))
        .collect();
    append(dir, "monitors.yaml", &yaml);
    // Three moves, nothing deleted.
    let planned = ok(run(&emulator, dir, &["plan"]));
    insta::assert_snapshot!("suggestion_pasted_plan", redact_ids(&planned));
}

#[test]
fn one_renamed_item_is_suggested_with_quoted_addresses() {
    let emulator = Emulator::start();
    let project = for_each_project(&emulator);
    let dir = project.path();
    edit(
        dir,
        "monitors.yaml",
        "forEach: [auth, orders, users]",
        "forEach: [login, orders, users]",
    );
    let human = ok(run(&emulator, dir, &["plan"]));
    let line = human
        .lines()
        .find(|l| l.starts_with("Suggestion:"))
        .expect("a suggestion");
    insta::assert_snapshot!("one_renamed_suggestion", line);
}
