//! Private location keys as a user meets them (issue 27, item 15): apply
//! says where a new location's key comes from, and `location-keys list`
//! shows the masked key and its date apart.

use crate::common;

use common::*;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"keys\"\n").unwrap();
    std::fs::write(
        dir.path().join("locations.yaml"),
        "privateLocations:\n  office: { name: Office, slugName: office }\n",
    )
    .unwrap();
    dir
}

#[test]
fn apply_says_how_agents_get_a_key_and_list_shows_columns() {
    let emulator = Emulator::start();
    let dir = project();
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));
    // After the progress lines (in the order the work finished): the note.
    let note = tail_from(&stderr(&applied), "privateLocations.office: its agents need a key").to_owned();
    insta::assert_snapshot!("agents_need_a_key", note);
    let created = emulator
        .monform(dir.path())
        .args(["location-keys", "create", "privateLocations.office"])
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", stderr(&created));
    let key = stdout(&created).trim().to_owned();
    let listed = emulator
        .monform(dir.path())
        .args(["location-keys", "list", "privateLocations.office"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", stderr(&listed));
    let listed = stdout(&listed);
    assert!(!listed.contains(&key), "the raw key is never listed:\n{listed}");
    let redacted = regex::Regex::new(r"[0-9a-f]{4}(  )|[0-9a-f-]{36}|\d{4}-\d\d-\d\d \d\d:\d\d UTC")
        .unwrap()
        .replace_all(&listed, |c: &regex::Captures| match c.get(1) {
            Some(gap) => format!("TAIL{}", gap.as_str()),
            None if c[0].contains("UTC") => "YYYY-MM-DD HH:MM UTC".to_owned(),
            None => format!("{:36}", "KEY-ID"),
        })
        .into_owned();
    insta::assert_snapshot!("location_keys_list", redacted);
}
