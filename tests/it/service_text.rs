//! Issue 43, item 3: text from the service written into the files by
//! `codify` (and `--include-unmanaged`), `import --all-unmanaged` and the
//! reconciler's drift policy `codify` reads back as that text. A check
//! named `x ${env:MONFORM_LEAK_MARKER}` in the service must not make the
//! next apply, in a CI job holding that variable, send its value there.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Emulator, Monform, check_named, git_repository, stderr, stdout};

/// The variable's value in every run: it must never reach the service nor
/// any output.
const MARKER: &str = "secretvalue";
const NAME: &str = "x ${env:MONFORM_LEAK_MARKER}";

const PROJECT: &str = "[project]\nname = \"text\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n";
const CHECKS: &str = "checks:\n  web:\n    checkType: URL\n    name: Web\n    tags: [web]\n    request: { url: \"https://example.com/\" }\n";

/// `monform ARGS` with the marker in the environment, as a CI job has it.
fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    let output = emulator
        .monform(dir)
        .env("MONFORM_LEAK_MARKER", MARKER)
        .args(args)
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!text.contains(MARKER), "monform {args:?} printed the marker:\n{text}");
    output
}

fn code(output: &std::process::Output) -> Option<i32> {
    output.status.code()
}

fn project(monform_toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), monform_toml).unwrap();
    std::fs::write(dir.path().join("checks.yaml"), CHECKS).unwrap();
    dir
}

/// The service's `web` check renamed to [`NAME`], with tags that spell a
/// substitution and an escape.
fn rename_in_service(emulator: &Emulator) {
    let web = check_named(emulator, "Web");
    let id = web["id"].as_str().unwrap().to_owned();
    // Added to the tags it has: one of them says which project owns it.
    let mut tags = web["tags"].as_array().unwrap().clone();
    tags.extend([
        json!("${env:MONFORM_LEAK_MARKER}"),
        json!("$${env:MONFORM_LEAK_MARKER}"),
    ]);
    emulator.call(
        "PUT",
        &format!("/v1/checks/url/{id}"),
        Some(json!({"name": NAME, "tags": tags})),
    );
}

/// A check made in the service that no project owns.
fn make_unmanaged(emulator: &Emulator, name: &str) {
    emulator.call(
        "POST",
        "/v1/checks/api?autoAssignAlerts=false",
        Some(json!({"name": name, "locations": ["eu-west-1"],
            "request": {"method": "GET", "url": "https://ui.example.com/?q=${env:MONFORM_LEAK_MARKER}"}})),
    );
}

/// The service holds the text as it was, and the marker nowhere.
fn service_unchanged(emulator: &Emulator) {
    let checks = emulator.call("GET", "/v1/checks?limit=100", None);
    assert!(
        !checks.to_string().contains(MARKER),
        "the service received the marker: {checks}"
    );
    let tags = check_named(emulator, NAME)["tags"].clone();
    let tags: Vec<&str> = tags.as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(
        tags.ends_with(&["${env:MONFORM_LEAK_MARKER}", "$${env:MONFORM_LEAK_MARKER}"]),
        "{tags:?}"
    );
}

#[test]
fn codify_writes_service_text_that_the_next_apply_leaves_as_text() {
    let emulator = Emulator::start();
    let project = project(PROJECT);
    let dir = project.path();
    emulator.applied(dir);
    rename_in_service(&emulator);
    make_unmanaged(&emulator, "y ${env:MONFORM_LEAK_MARKER}");

    let written = run(&emulator, dir, &["codify", "--write", "--include-unmanaged"]);
    assert_eq!(code(&written), Some(0), "{}", stderr(&written));
    let checks = std::fs::read_to_string(dir.join("checks.yaml")).unwrap();
    assert!(checks.contains("x $${env:MONFORM_LEAK_MARKER}"), "{checks}");
    assert!(
        checks.contains(r#"[web, "$${env:MONFORM_LEAK_MARKER}", "$$${env:MONFORM_LEAK_MARKER}"]"#),
        "{checks}"
    );
    let unmanaged = std::fs::read_to_string(dir.join("unmanaged/checks.yaml")).unwrap();
    assert!(unmanaged.contains("y $${env:MONFORM_LEAK_MARKER}"), "{unmanaged}");
    assert!(!unmanaged.contains("q=${env:"), "{unmanaged}");

    // The drifted check is in sync; the unmanaged one is to import.
    let web = run(
        &emulator,
        dir,
        &["plan", "--detailed-exitcode", "--target", "checks.web"],
    );
    assert_eq!(code(&web), Some(0), "{}", stdout(&web));
    let applied = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert_eq!(code(&applied), Some(0), "{}", stderr(&applied));
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(code(&clean), Some(0), "{}", stdout(&clean));
    service_unchanged(&emulator);
    check_named(&emulator, "y ${env:MONFORM_LEAK_MARKER}");
}

#[test]
fn import_all_unmanaged_writes_service_text_that_the_next_apply_leaves_as_text() {
    let emulator = Emulator::start();
    let made = tempfile::tempdir().unwrap();
    std::fs::write(made.path().join("monform.toml"), "[project]\nname = \"other\"\n").unwrap();
    make_unmanaged(&emulator, NAME);
    let out = made.path().join("imported");
    let imported = run(
        &emulator,
        made.path(),
        &["import", "--all-unmanaged", "--out", out.to_str().unwrap()],
    );
    assert_eq!(code(&imported), Some(0), "{}", stderr(&imported));
    let checks = std::fs::read_to_string(out.join("checks.yaml")).unwrap();
    assert!(checks.contains("x $${env:MONFORM_LEAK_MARKER}"), "{checks}");
    let plan = run(&emulator, &out, &["plan", "--detailed-exitcode"]);
    assert_eq!(code(&plan), Some(0), "{}", stdout(&plan));
    let applied = run(&emulator, &out, &["apply", "--auto-approve"]);
    assert_eq!(code(&applied), Some(0), "{}", stderr(&applied));
    let check = check_named(&emulator, NAME);
    assert!(!check.to_string().contains(MARKER), "{check}");
}

#[test]
fn reconcile_codify_policy_writes_service_text_that_the_next_apply_leaves_as_text() {
    let emulator = Emulator::start();
    let project = project(&format!("{PROJECT}\n[reconcile]\ndrift = \"codify\"\n"));
    let root = project.path();
    git_repository(root, ("Reconciler", "rec@example.com"), ".monform/\n");
    let git = |args: &[&str]| crate::common::git(root, args);
    emulator.applied(root);
    rename_in_service(&emulator);

    let once = run(&emulator, root, &["reconcile", "--once"]);
    assert_eq!(code(&once), Some(2), "{}", stderr(&once));
    let branch = git(&["branch", "--list", "--format=%(refname:short)", "monform/*"]);
    let branch = branch.trim();
    assert!(branch.starts_with("monform/codify-text-"), "{branch:?}");
    git(&["checkout", "--quiet", branch]);
    let checks = std::fs::read_to_string(root.join("checks.yaml")).unwrap();
    assert!(checks.contains("x $${env:MONFORM_LEAK_MARKER}"), "{checks}");

    let plan = run(&emulator, root, &["plan", "--detailed-exitcode"]);
    assert_eq!(code(&plan), Some(0), "{}", stdout(&plan));
    let applied = run(&emulator, root, &["apply", "--auto-approve"]);
    assert_eq!(code(&applied), Some(0), "{}", stderr(&applied));
    service_unchanged(&emulator);
}
