//! Adopting objects: one by address and id, and `--all-unmanaged` next to
//! other projects (references to their objects left out, the current
//! project's own objects skipped).

use super::*;

#[test]
fn import_one_object_then_plan_shows_only_the_differences() {
    let emulator = Emulator::start();
    let made = post(
        &emulator,
        "/v1/checks/url?autoAssignAlerts=false",
        json!({"name": "Home", "frequency": 5, "request": {"url": "https://www.example.com/"}}),
    );
    let id = made["id"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"shop\"\n").unwrap();
    std::fs::write(
        dir.path().join("checks.yaml"),
        "checks:\n  home:\n    checkType: URL\n    name: Home\n    frequency: 10\n    request: { url: https://www.example.com/ }\n",
    )
    .unwrap();
    let output = emulator
        .monform(dir.path())
        .args(["import", "checks.home", &id])
        .output()
        .unwrap();
    assert_ok(&output, "import");
    let check = emulator.call("GET", &format!("/v1/checks/{id}"), None);
    assert!(
        check["tags"].as_array().unwrap().contains(&json!("monform:shop/home")),
        "{check}"
    );
    let output = emulator
        .monform(dir.path())
        .args(["plan", "--detailed-exitcode", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let plan: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        plan["summary"],
        json!({"create": 0, "update": 1, "delete": 0, "replace": 0, "import": 0, "moved": 0, "forget": 0, "noop": 0}),
        "{plan}"
    );
    let fields: Vec<&str> = plan["changes"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["frequency"], "only the difference: {plan}");
    // Importing again is refused.
    let output = emulator
        .monform(dir.path())
        .args(["import", "checks.home", &id])
        .output()
        .unwrap();
    assert!(!output.status.success());
    // An unknown address is refused.
    let output = emulator
        .monform(dir.path())
        .args(["import", "checks.nope", &id])
        .output()
        .unwrap();
    insta::assert_snapshot!("import_unknown_address", transcript(&output));
}

#[test]
fn import_leaves_out_references_to_other_projects_objects() {
    let emulator = Emulator::start();
    let theirs = post(
        &emulator,
        "/v2/check-groups",
        json!({"name": "Theirs", "concurrency": 1, "tags": ["monform:other/theirs"]}),
    );
    post(
        &emulator,
        "/v1/checks/url?autoAssignAlerts=false",
        json!({"name": "Mine", "groupId": theirs["id"], "request": {"url": "https://e.com"}}),
    );
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let output = emulator
        .monform(work.path())
        .args(["import", "--all-unmanaged", "--project", "mine", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&output, "import");
    insta::assert_snapshot!("import_leaves_out_a_reference", transcript(&output));
    let checks = std::fs::read_to_string(out.join("checks.yaml")).unwrap();
    insta::assert_snapshot!("import_without_the_group", checks);
    assert!(!out.join("groups.yaml").exists());
    let output = emulator
        .monform(&out)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn import_skips_what_the_current_project_manages() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("monform.toml"), "[project]\nname = \"shop\"\n").unwrap();
    std::fs::write(
        project.path().join("resources.yaml"),
        "snippets:\n  login: { name: Login, script: \"console.log(1)\" }\nchecks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: https://www.example.com/ }\n",
    )
    .unwrap();
    let output = emulator
        .monform(project.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_ok(&output, "apply");
    post(
        &emulator,
        "/v1/snippets",
        json!({"name": "Hand made", "script": "console.log(2)"}),
    );
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    // The current project's name (the default) owns objects: refused.
    let output = emulator
        .monform(project.path())
        .args(["import", "--all-unmanaged", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    insta::assert_snapshot!("import_under_an_owning_name", transcript(&output));
    let output = emulator
        .monform(project.path())
        .args(["import", "--all-unmanaged", "--project", "hand", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    insta::assert_snapshot!("import_skips_the_projects_own", transcript(&output));
    // The hand-made snippet, not the project's own `Login`.
    let snippets = std::fs::read_to_string(out.join("snippets.yaml")).unwrap();
    insta::assert_snapshot!("import_only_the_hand_made", snippets);
    // Both projects see no changes.
    for dir in [project.path(), out.as_path()] {
        let output = emulator
            .monform(dir)
            .args(["plan", "--detailed-exitcode"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    }
}
