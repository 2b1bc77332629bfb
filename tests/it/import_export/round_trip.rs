//! The whole account imported, exported, destroyed and applied again; an
//! export split by group.

use super::*;

#[test]
fn import_all_unmanaged_plans_no_changes_and_export_round_trips() {
    let emulator = Emulator::start();
    let made = populate(&emulator);
    assert_eq!(made, 300);
    // Another project's object is not imported.
    let other = post(
        &emulator,
        "/v1/checks/icmp?autoAssignAlerts=false",
        json!({"name": "Another project's", "tags": ["monform:other/gw"], "request": {"hostname": "example.org"}, "heartbeat": {}, "script": ""}),
    );
    // That project keeps its ownership record (it owns no object without tags).
    post(
        &emulator,
        "/v1/variables",
        json!({"key": "MONFORM_OWNER_OTHER", "value": "{\"project\":\"other\",\"owns\":{}}"}),
    );
    let before = snapshot(&emulator);
    let total: usize = before.values().map(Vec::len).sum();
    assert_eq!(total, 301);

    let work = tempfile::tempdir().unwrap();
    let imported = work.path().join("imported");
    let output = emulator
        .monform(work.path())
        .env(SECRET.0, SECRET.1)
        .args(["import", "--all-unmanaged", "--project", "imported", "--out"])
        .arg(&imported)
        .output()
        .unwrap();
    assert_ok(&output, "import --all-unmanaged");
    insta::assert_snapshot!("import_all_unmanaged", steady(&stderr(&output)));
    assert!(imported.join(".monform/state.json").exists());
    assert!(imported.join("scripts/checks").is_dir());
    let checks = std::fs::read_to_string(imported.join("checks.yaml")).unwrap();
    // 200 checks: looked into, not snapshotted.
    assert!(
        !checks.contains("Another project"),
        "another project's check is not imported"
    );
    assert!(!checks.contains("monform:"), "no ownership tags in the files");
    let env = secrets_of(&imported);
    assert!(env.iter().any(|(n, _)| n == SECRET.0), "{env:?}");
    assert_eq!(env.len(), 2, "{env:?}");

    let output = with_env(emulator.monform(&imported), &env)
        .arg("validate")
        .output()
        .unwrap();
    assert_ok(&output, "validate");
    let output = with_env(emulator.monform(&imported), &env)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "plan after import:\n{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    // Every imported object with tags carries the new project's tag.
    let tagged = list(&emulator, "/v1/checks")
        .iter()
        .filter(|c| {
            c["tags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t.as_str().unwrap().starts_with("monform:imported/"))
        })
        .count();
    assert_eq!(tagged, 200);

    // Round trip: export, destroy everything, apply the export.
    emulator.call("DELETE", &format!("/v1/checks/{}", other["id"].as_str().unwrap()), None);
    let before = snapshot(&emulator);
    let exported = work.path().join("exported");
    let output = emulator
        .monform(&imported)
        .args(["export", "--project", "restored", "--out"])
        .arg(&exported)
        .output()
        .unwrap();
    assert_ok(&output, "export");
    let output = with_env(emulator.monform(&imported), &env)
        .args(["destroy", "--auto-approve", "--allow-mass-delete"])
        .output()
        .unwrap();
    assert_ok(&output, "destroy");
    let emptied = snapshot(&emulator);
    assert!(emptied.values().all(Vec::is_empty), "{emptied:#?}");

    let env = secrets_of(&exported);
    let output = with_env(emulator.monform(&exported), &env)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_ok(&output, "apply of the export");
    let after = snapshot(&emulator);
    for (kind, rows) in &before {
        assert_eq!(rows, &after[kind], "{kind} differ after the round trip");
    }
    // Every field of every object: a second export is the same as the first.
    let again = work.path().join("again");
    let output = emulator
        .monform(&exported)
        .args(["export", "--project", "restored", "--out"])
        .arg(&again)
        .output()
        .unwrap();
    assert_ok(&output, "second export");
    assert_eq!(project_files(&exported), project_files(&again));
    let output = with_env(emulator.monform(&exported), &env)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn export_splits_by_group() {
    let emulator = Emulator::start();
    let group = post(&emulator, "/v2/check-groups", json!({"name": "Edge", "concurrency": 1}));
    post(
        &emulator,
        "/v1/checks/url?autoAssignAlerts=false",
        json!({"name": "Home", "groupId": group["id"], "request": {"url": "https://e.com"}}),
    );
    post(
        &emulator,
        "/v1/checks/url?autoAssignAlerts=false",
        json!({"name": "Home", "request": {"url": "https://e.com/2"}}),
    );
    post(
        &emulator,
        "/v1/checks/browser?autoAssignAlerts=false",
        json!({"name": "Flow", "groupId": group["id"], "script": "await page.goto('https://e.com')\nawait page.close()\n"}),
    );
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let output = emulator
        .monform(work.path())
        .args(["export", "--split-by", "group", "--project", "p", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&output, "export");
    // The group with its checks (the browser check's script in a file of
    // its own); the rest, with names made unique.
    let edge = std::fs::read_to_string(out.join("groups/edge.yaml")).unwrap();
    insta::assert_snapshot!("split_group_file", edge);
    let rest = std::fs::read_to_string(out.join("checks.yaml")).unwrap();
    insta::assert_snapshot!("split_rest_file", rest);
    assert!(out.join("scripts/checks/flow.js").exists());
    let output = emulator.monform(&out).arg("validate").output().unwrap();
    assert_ok(&output, "validate");
}
