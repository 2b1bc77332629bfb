//! `monform destroy` in its own words (issue 46 item 4): its plan says
//! "(destroy)", not "(removed from configuration)" (the objects are still
//! in the files), and its own confirmation is enough for any number of
//! objects: the mass-delete guard is for applies.

use crate::common;

use common::*;

/// Thirteen checks from one definition, applied.
fn applied_thirteen() -> (Emulator, tempfile::TempDir) {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::write(
        dir.join("monform.toml"),
        "[project]\nname = \"shop\"\n\n[lint]\nunrouted-checks = \"off\"\n",
    )
    .unwrap();
    let keys: Vec<String> = (1..=13).map(|i| format!("p{i:02}")).collect();
    std::fs::write(
        dir.join("monitors.yaml"),
        format!(
            "checks:\n  ping:\n    forEach: [{}]\n    checkType: ICMP\n    name: Ping ${{each.key}}\n    request: {{ hostname: \"${{each.key}}.example.org\" }}\n",
            keys.join(", ")
        ),
    )
    .unwrap();
    emulator.applied(dir);
    (emulator, project)
}

#[test]
fn destroy_of_thirteen_objects_with_a_piped_yes_says_destroy_and_needs_no_flag() {
    let (emulator, project) = applied_thirteen();
    let dir = project.path();
    let mut destroy = emulator.monform(dir);
    destroy.arg("destroy").write_stdin("yes\n");
    let output = destroy.output().unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    // The plan, as the user reads it before answering.
    insta::assert_snapshot!("destroy_plan", steady(&stdout(&output)));
    // The progress lines come in the order the deletes finish: the summary does not.
    insta::assert_snapshot!("destroy_summary", tail_from(&stderr(&output), "Destroy complete"));
    assert!(
        !stdout(&output).contains("removed from configuration"),
        "{}",
        stdout(&output)
    );
    let left = emulator.call("GET", "/v1/checks?limit=100", None);
    assert_eq!(left.as_array().map(Vec::len), Some(0), "{left}");
}

#[test]
fn an_apply_deleting_thirteen_objects_still_needs_the_flag() {
    let (emulator, project) = applied_thirteen();
    let dir = project.path();
    std::fs::write(dir.join("monitors.yaml"), "checks: {}\n").unwrap();
    let output = emulator
        .monform(dir)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("--allow-mass-delete"), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("(removed from configuration, id"),
        "{}",
        stdout(&output)
    );
}
