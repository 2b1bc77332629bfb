//! Objects of kinds without tags stay their project's: project A (state in
//! PostgreSQL) applies every kind; project B (local state) imports what no
//! project owns and adopts none of A's objects; both plans show no changes;
//! B's files naming one of A's objects are refused, naming A. The real
//! binary, the real emulator on a loopback port, a real PostgreSQL.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

fn run(emulator: &Emulator, dir: &Path, state_url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut command = emulator.monform(dir);
    for (name, value) in FULL_EXAMPLE_SECRETS {
        command.env(name, value);
    }
    match state_url {
        Some(url) => command.env("MONFORM_STATE_URL", url),
        None => command.env_remove("MONFORM_STATE_URL"),
    };
    command.args(args).output().unwrap()
}

fn assert_code(output: &std::process::Output, code: i32, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

#[test]
fn another_projects_objects_are_never_adopted_and_clashes_are_refused() {
    let Some(url) = postgres() else { return };
    let emulator = Emulator::start();
    // Project A: every kind, the state in PostgreSQL.
    let a = copy_example("full");
    let a_name = unique("team-a");
    let toml = std::fs::read_to_string(a.path().join("monform.toml")).unwrap();
    let toml = toml
        .replace("name = \"acme-web\"", &format!("name = \"{a_name}\""))
        .replace("backend = \"local\"", "backend = \"postgres\"");
    std::fs::write(a.path().join("monform.toml"), toml).unwrap();
    assert_code(
        &run(&emulator, a.path(), Some(&url), &["apply", "--auto-approve"]),
        0,
        "A applies",
    );
    // Objects nobody manages, made by hand.
    emulator.call(
        "POST",
        "/v1/snippets",
        Some(json!({"name": "Hand made", "script": "x"})),
    );
    emulator.call("POST", "/v1/variables", Some(json!({"key": "HAND_MADE", "value": "v"})));

    // Project B, local state, imports what no project owns.
    let work = tempfile::tempdir().unwrap();
    let b = work.path().join("b");
    std::fs::create_dir_all(&b).unwrap();
    let b_name = unique("team-b");
    std::fs::write(b.join("monform.toml"), format!("[project]\nname = \"{b_name}\"\n")).unwrap();
    let out = work.path().join("imported");
    let import = run(
        &emulator,
        &b,
        None,
        &["import", "--all-unmanaged", "--out", out.to_str().unwrap()],
    );
    assert_code(&import, 0, "B imports");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(".monform/state.json")).unwrap()).unwrap();
    let adopted: Vec<&String> = state["resources"].as_object().unwrap().keys().collect();
    assert_eq!(
        adopted,
        ["snippets.hand-made", "variables.HAND_MADE"],
        "only what no project owns"
    );
    // The unique project names (and A's ownership record, named after it)
    // and remote ids vary.
    let a_record = a_name.to_uppercase().replace('-', "_");
    let object_id = regex::Regex::new(r"object [0-9]+").unwrap();
    let steady_names = |text: &str| {
        let text = text.replace(&a_name, "[project A]").replace(&b_name, "[project B]");
        let text = text.replace(&a_record, "[PROJECT A]");
        object_id.replace_all(&text, "object [id]").into_owned()
    };
    insta::assert_snapshot!("import_leaves_others", steady_names(&transcript(&import)));
    for text in std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
    {
        assert!(
            !text.contains("Sign request") && !text.contains("SIGNING_KEY"),
            "{text}"
        );
    }

    // Neither project sees a change.
    assert_code(
        &run(&emulator, &out, None, &["plan", "--detailed-exitcode"]),
        0,
        "B's plan",
    );
    assert_code(
        &run(&emulator, a.path(), Some(&url), &["plan", "--detailed-exitcode"]),
        0,
        "A's plan",
    );

    // B's files claiming A's snippet (by name) and secret variable (by key): refused, naming A.
    std::fs::write(
        out.join("clash.yaml"),
        "snippets:\n  mine: { name: Sign request, script: \"y\" }\nvariables:\n  SIGNING_KEY: { value: other }\n  MONFORM_OWNER_X: { value: x }\n",
    )
    .unwrap();
    let plan = run(&emulator, &out, None, &["plan"]);
    insta::assert_snapshot!("clash_refused", steady_names(&transcript(&plan)));
    let apply = run(&emulator, &out, None, &["apply", "--auto-approve"]);
    assert_code(&apply, 1, "so is the apply");
    // A is untouched.
    assert_code(
        &run(&emulator, a.path(), Some(&url), &["plan", "--detailed-exitcode"]),
        0,
        "A's plan after B's attempt",
    );
}

/// A project seen by its tags that keeps no ownership record yet (applied
/// by an older monform): objects in no record cannot be told apart from
/// its own, so the import lists them, says how to include them, and
/// adopts one only when named.
#[test]
fn objects_whose_owner_cannot_be_told_are_listed_not_adopted() {
    let emulator = Emulator::start();
    emulator.call(
        "POST",
        "/v2/check-groups",
        Some(json!({"name": "Old", "concurrency": 1, "tags": ["monform:older/old"]})),
    );
    let snippet = emulator.call("POST", "/v1/snippets", Some(json!({"name": "Whose", "script": "x"})));
    let id = snippet["id"].to_string();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let import = |extra: &[&str]| {
        let mut command = emulator.monform(work.path());
        command
            .args(["import", "--all-unmanaged", "--project", "newer", "--out"])
            .arg(&out)
            .args(extra);
        command.output().unwrap()
    };
    let output = import(&[]);
    let steady_id = |text: &str| text.replace(&format!("snippets:{id}"), "snippets:[id]");
    insta::assert_snapshot!("owner_cannot_be_told", steady_id(&transcript(&output)));
    assert!(!out.join("snippets.yaml").exists(), "not adopted");
    std::fs::remove_dir_all(&out).unwrap();
    let output = import(&["--include", &format!("snippets:{id}")]);
    assert_code(&output, 0, "import with --include");
    let snippets = std::fs::read_to_string(out.join("snippets.yaml")).unwrap();
    insta::assert_snapshot!("included_snippet", steady_id(&snippets));
    assert_code(&run(&emulator, &out, None, &["plan", "--detailed-exitcode"]), 0, "plan");
}
