//! `plan --refresh=changed|none` end to end: the real binary against the
//! real emulator, the requests counted by the emulator's metrics; and the
//! parse cache under `.monform/cache/` that the CLI's loads keep.

use crate::common;

use std::path::Path;

use common::*;

const FILES: &str = "groups:
  web: { name: Web, concurrency: 1 }
checks:
  edited:
    checkType: ICMP
    name: Edited
    group: web
    request: { hostname: a.example.com }
  edited-and-drifted:
    checkType: ICMP
    name: Edited and drifted
    request: { hostname: b.example.com }
  drifted:
    checkType: ICMP
    name: Drifted
    request: { hostname: c.example.com }
  deleted-remotely:
    checkType: ICMP
    name: Deleted remotely
    request: { hostname: d.example.com }
";

/// A project `refresh` in eu-west-1 by default (no files of resources yet).
fn project() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("monform.toml"),
        "[project]\nname = \"refresh\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[lint]\nunrouted-checks = \"off\"\n",
    )
    .unwrap();
    project
}

/// Four checks and a group, applied.
fn applied() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    std::fs::write(dir.join("checks.yaml"), FILES).unwrap();
    emulator.applied(dir);
    (emulator, project)
}

fn remote_id(project: &Path, address: &str) -> String {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".monform/state.json")).unwrap()).unwrap();
    state["resources"][address]["remoteId"].as_str().unwrap().to_owned()
}

/// Requests served so far, by `METHOD route`, from the emulator's metrics.
fn requests(emulator: &Emulator) -> std::collections::BTreeMap<String, u64> {
    let mut counts = std::collections::BTreeMap::new();
    for line in emulator.server.app.metrics.render().lines() {
        let Some(rest) = line.strip_prefix("monform_emulator_requests_total{") else {
            continue;
        };
        let label = |name: &str| {
            rest.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or("")
                .to_owned()
        };
        let count: u64 = line.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        *counts
            .entry(format!("{} {}", label("method"), label("route")))
            .or_default() += count;
    }
    counts
}

/// What was requested between two readings.
fn since(
    before: &std::collections::BTreeMap<String, u64>,
    after: &std::collections::BTreeMap<String, u64>,
) -> Vec<(String, u64)> {
    after
        .iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Two checks edited in the files (one also changed in the UI), one
/// changed in the UI only, one deleted in the UI.
fn edit_and_drift(emulator: &Emulator, dir: &Path) {
    edit(dir, "checks.yaml", "name: Edited\n", "name: Edited in the files\n");
    edit(
        dir,
        "checks.yaml",
        "hostname: b.example.com",
        "hostname: b2.example.com",
    );
    for (address, name) in [
        ("checks.edited-and-drifted", "Renamed in the UI"),
        ("checks.drifted", "Also renamed in the UI"),
    ] {
        let id = remote_id(dir, address);
        emulator.call(
            "PUT",
            &format!("/v1/checks/icmp/{id}"),
            Some(serde_json::json!({ "name": name })),
        );
    }
    let gone = remote_id(dir, "checks.deleted-remotely");
    emulator.call("DELETE", &format!("/v1/checks/{gone}"), None);
}

/// A full plan starts listing the account while the files load
/// (`ops::prefetch`) and plans from that listing: every kind is listed
/// once, nothing is read twice or by id.
#[test]
fn a_full_plan_lists_every_kind_once() {
    let (emulator, project) = applied();
    let dir = project.path();
    let before = requests(&emulator);
    let output = emulator
        .monform(dir)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let sent = since(&before, &requests(&emulator));
    let listed: Vec<&str> = sent.iter().map(|(route, _)| route.as_str()).collect();
    assert!(sent.iter().all(|(_, n)| *n == 1), "{sent:?}");
    assert!(
        listed.iter().all(|r| r.starts_with("GET ") && !r.contains('{')),
        "{sent:?}"
    );
    // Every kind the service holds, once (slos are local: never listed).
    assert_eq!(listed.len(), monform_model::Kind::REMOTE.len(), "{sent:?}");
}

#[test]
fn changed_reads_only_the_changed_objects_and_finds_their_drift() {
    let (emulator, project) = applied();
    let dir = project.path();
    edit_and_drift(&emulator, dir);
    let before = requests(&emulator);
    let output = emulator
        .monform(dir)
        .args(["plan", "--refresh=changed", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let sent = since(&before, &requests(&emulator));
    // One GET by id per edited check, and the project's ownership record
    // (which an apply rewrites): no listing.
    assert_eq!(
        sent,
        [
            ("GET /v1/checks/{id}".to_owned(), 2),
            ("GET /v1/variables/{id}".to_owned(), 1)
        ],
        "{sent:?}"
    );
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let changes = plan["changes"].as_array().unwrap();
    let addresses: Vec<&str> = changes.iter().map(|c| c["address"].as_str().unwrap()).collect();
    assert_eq!(addresses, ["checks.edited", "checks.edited-and-drifted"]);
    // The UI's rename of an edited check is seen, and told to be drift.
    let drifted = &changes[1];
    assert_eq!(drifted["reason"], "changed outside monform (drift)");
    let name = drifted["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "name")
        .unwrap();
    assert_eq!(name["before"], "Renamed in the UI");
    assert_eq!(name["drift"], true);
    assert_eq!(plan["refresh"]["mode"], "changed");
    assert_eq!(plan["refresh"]["notRefreshed"], 3);
}

#[test]
fn changed_does_not_see_what_happened_behind_unchanged_resources_and_says_so() {
    let (emulator, project) = applied();
    let dir = project.path();
    edit_and_drift(&emulator, dir);
    let output = emulator
        .monform(dir)
        .args(["plan", "--refresh=changed"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    // Neither checks.deleted-remotely nor checks.drifted shows.
    let human = redact_ids(&stdout(&output));
    insta::assert_snapshot!("changed_human", human);
    let mut markdown = emulator.monform(dir);
    markdown.args(["plan", "--refresh=changed", "--format", "markdown"]);
    assert_run!("changed_markdown", markdown);

    // Read all, both are seen, and nothing is said to be not refreshed.
    assert_run!("all_human", emulator.monform(dir).arg("plan"));
}

#[test]
fn apply_changed_applies_the_edits_and_a_stale_saved_plan_is_refused() {
    let (emulator, project) = applied();
    let dir = project.path();
    edit_and_drift(&emulator, dir);
    let saved = dir.join("reviewed.json");
    let output = emulator
        .monform(dir)
        .args(["plan", "--refresh=changed", "--out"])
        .arg(&saved)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    // A refreshed object changes after the review: the saved plan is refused.
    let id = remote_id(dir, "checks.edited");
    emulator.call(
        "PUT",
        &format!("/v1/checks/icmp/{id}"),
        Some(serde_json::json!({ "muted": true })),
    );
    assert_run!("stale_saved_plan", emulator.monform(dir).arg("apply").arg(&saved));

    let output = emulator
        .monform(dir)
        .args(["apply", "--auto-approve", "--refresh=changed"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    // What was not read is still there to find: the full plan sees it.
    let json: serde_json::Value = serde_json::from_str(&stdout(
        &emulator
            .monform(dir)
            .args(["plan", "--format", "json"])
            .output()
            .unwrap(),
    ))
    .unwrap();
    let left: Vec<&str> = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["checks.deleted-remotely", "checks.drifted"]);
    let mut offline = emulator.monform(dir);
    assert_run!("apply_refresh_none", offline.args(["apply", "--refresh=none"]));
}

#[test]
fn none_plans_from_the_state_alone_without_a_service() {
    let (emulator, project) = applied();
    let dir = project.path();
    edit(dir, "checks.yaml", "name: Edited\n", "name: Edited in the files\n");
    drop(emulator);
    // No URL, no key: nothing is read.
    let output = monform()
        .arg("--dir")
        .arg(dir)
        .args(["--color", "never", "plan", "--refresh=none"])
        .env_remove("MONFORM_API_URL")
        .env_remove("MONFORM_API_KEY")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    insta::assert_snapshot!("none_human", redact_ids(&stdout(&output)));
}

/// The parse cache's entries.
/// A replace whose old object's delete the service never confirmed
/// leaves it in the state as `retired` (a lost DELETE: the engine's
/// `zero_diff::lost_writes` makes one). `--refresh=changed` reads it by
/// its id and plans its delete, as a full plan does; it read only the
/// addresses' own objects, so only the next full plan deleted it (issue 45).
#[test]
fn changed_plans_the_delete_of_a_replaced_object_still_there() {
    let (emulator, project) = applied();
    let dir = project.path();
    // The old object of a replace of checks.drifted: tagged as it is.
    let id = remote_id(dir, "checks.drifted");
    let tags = emulator.call("GET", &format!("/v1/checks/{id}"), None)["tags"].clone();
    let old = emulator.call(
        "POST",
        "/v1/checks/icmp",
        Some(serde_json::json!({
            "name": "Drifted",
            "tags": tags,
            "request": { "hostname": "c.example.com" },
            "heartbeat": {},
            "script": "",
        })),
    );
    let old = old["id"].as_str().expect("an id").to_owned();
    let state_file = dir.join(".monform/state.json");
    let mut state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&state_file).unwrap()).unwrap();
    state["resources"]["checks.drifted"]["retired"] = serde_json::json!([old]);
    std::fs::write(&state_file, state.to_string()).unwrap();

    let output = emulator
        .monform(dir)
        .args(["plan", "--refresh=changed", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let changes: Vec<(&str, &str, &str)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = |field: &str| c[field].as_str().unwrap_or_default();
            (text("address"), text("action"), text("remoteId"))
        })
        .collect();
    assert_eq!(changes, [("checks.drifted", "delete", old.as_str())], "{plan:#}");

    let output = emulator
        .monform(dir)
        .args(["apply", "--auto-approve", "--refresh=changed"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    // Deleted, and no longer in the state: a full plan has nothing to do.
    let output = emulator
        .monform(dir)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let state = std::fs::read_to_string(&state_file).unwrap();
    assert!(!state.contains(&old), "{state}");
}

fn cache_entries(project: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(project.join(".monform/cache/files"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn the_parse_cache_survives_a_corrupt_or_foreign_entry() {
    let (emulator, project) = applied();
    let dir = project.path();
    let entries = cache_entries(dir);
    assert_eq!(entries.len(), 1, "the one resource file is cached");
    let clean = stdout(&assert_run!("cached_plan", emulator.monform(dir).arg("plan")));
    for garbage in [
        &b"{ torn"[..],
        br#"{"format":1,"key":"not-this-one","file":"checks.yaml","resources":[]}"#,
    ] {
        std::fs::write(&entries[0], garbage).unwrap();
        let output = emulator.monform(dir).arg("plan").output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        // Ignored: the same plan as from the files.
        assert_eq!(stdout(&output), clean);
        // And rewritten.
        let entry: serde_json::Value = serde_json::from_slice(&std::fs::read(&entries[0]).unwrap()).unwrap();
        assert_eq!(entry["resources"].as_array().unwrap().len(), 5);
    }
    // An edit is seen through the cache.
    edit(dir, "checks.yaml", "name: Edited\n", "name: Edited again\n");
    assert_run!("edit_seen_through_the_cache", emulator.monform(dir).arg("plan"));
}

/// `apply --refresh=changed` of two edited checks in a project of 250
/// (three pages): the plan reads the two by id, the apply writes them, and
/// the verification reads back those two, not the whole kind nor a kind
/// the project does not use (private locations).
#[test]
fn apply_changed_reads_back_only_what_it_changed() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    let mut checks = String::from("checks:\n");
    for i in 0..250 {
        checks.push_str(&format!(
            "  c{i}:\n    checkType: ICMP\n    name: C{i}\n    request: {{ hostname: h{i}.example.com }}\n"
        ));
    }
    std::fs::write(dir.join("checks.yaml"), checks).unwrap();
    emulator.applied(dir);
    edit(dir, "checks.yaml", "name: C7\n", "name: Seven\n");
    edit(dir, "checks.yaml", "name: C200\n", "name: Two hundred\n");

    let before = requests(&emulator);
    let output = emulator
        .monform(dir)
        .args(["apply", "--auto-approve", "--refresh=changed"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    let sent = since(&before, &requests(&emulator));
    // Plan: the two checks and the ownership record by id; apply: the two
    // updates; verification: the two checks by id again.
    assert_eq!(
        sent,
        [
            ("GET /v1/checks/{id}".to_owned(), 4),
            ("GET /v1/variables/{id}".to_owned(), 1),
            ("PUT /v1/checks/icmp/{id}".to_owned(), 2),
        ],
        "{sent:?}"
    );
    let id = remote_id(dir, "checks.c200");
    let held = emulator.call("GET", &format!("/v1/checks/{id}"), None);
    assert_eq!(held["name"], "Two hundred");
}
