//! The published outputs of the commands that set up and keep house:
//! `init`, `trust`, `location-keys`, `state rm|mv|migrate`, `agent-skill`,
//! `docs`.
//! Each run for real and validated against its schema, as the parent's.

use std::process::Output;

use super::{Checked, Fixture, SECRET};
use crate::common::*;

fn ok(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
}

/// A key created (its raw value in this reply only, as the human output
/// shows it once), listed masked, revoked.
pub(super) fn location_keys(fixture: &Fixture, checked: &mut Checked) {
    let location = "privateLocations.office";
    let created = fixture.run(&["location-keys", "create", location, "--format", "json"]);
    ok(&created);
    let created = checked.check("location-keys-create", false, &created);
    let raw = created[0]["rawKey"].as_str().unwrap();
    assert!(raw.len() > 8 && created[0]["maskedKey"] != raw, "{created:?}");
    let id = created[0]["id"].as_str().unwrap();
    let listed = fixture.run(&["location-keys", "list", location, "--format", "json"]);
    let keys = checked.check("location-keys-list", false, &listed);
    assert!(keys[0]["keys"].as_array().is_some_and(|k| !k.is_empty()), "{keys:?}");
    assert!(!stdout(&listed).contains(raw), "the list shows the raw key");
    let revoked = fixture.run(&["location-keys", "revoke", location, id, "--format", "json"]);
    ok(&revoked);
    let revoked = checked.check("location-keys-revoke", false, &revoked);
    assert_eq!(revoked[0]["id"], id, "{revoked:?}");
    assert!(!stdout(&fixture.run(&["location-keys", "list", location])).contains(id));
}

/// The snippet `import` adopted, renamed in the state, then let go (its
/// object kept); taken out of the files so that `destroy` leaves it.
pub(super) fn state_rm_and_mv(fixture: &Fixture, checked: &mut Checked) {
    let moved = fixture.run(&[
        "state",
        "mv",
        "snippets.another",
        "snippets.renamed",
        "--format",
        "json",
    ]);
    ok(&moved);
    let moved = checked.check("state-mv", false, &moved);
    assert_eq!(moved[0]["to"], "snippets.renamed", "{moved:?}");
    assert_eq!(moved[0]["filesNameOld"], true, "{moved:?}");
    let removed = fixture.run(&["state", "rm", "snippets.renamed", "--format", "json"]);
    ok(&removed);
    let removed = checked.check("state-rm", false, &removed);
    assert_eq!(removed[0]["address"], "snippets.renamed", "{removed:?}");
    assert_eq!(removed[0]["stillInFiles"], false, "{removed:?}");
    edit(
        fixture.path(),
        "monitors.yaml",
        "snippets:\n  another: { name: Another, script: \"y\" }\n",
        "",
    );
}

/// The state copied to PostgreSQL, then copied again (already there).
/// Without a database this machine cannot run it; CI must
/// (`MONFORM_REQUIRE_POSTGRES=1` fails instead of skipping).
pub(super) fn state_migrate(fixture: &Fixture, checked: &mut Checked) {
    let Some(url) = postgres() else {
        checked.skipped("state-migrate");
        return;
    };
    let run = |args: &[&str]| {
        fixture
            .emulator
            .monform(fixture.path())
            .env("MONFORM_STATE_URL", &url)
            .env("API_TOKEN", SECRET)
            .args(args)
            .output()
            .unwrap()
    };
    // --force: an earlier run of this test left the project's state there.
    let copied = run(&["state", "migrate", "--to", "postgres", "--force", "--format", "json"]);
    ok(&copied);
    let password = url.split('@').next().and_then(|s| s.rsplit(':').next()).unwrap();
    assert!(!stdout(&copied).contains(password), "{}", stdout(&copied));
    let copied = checked.check("state-migrate", false, &copied);
    assert_eq!(copied[0]["copied"], true, "{copied:?}");
    assert_eq!(copied[0]["configured"], false, "{copied:?}");
    let again = run(&["state", "migrate", "--to", "postgres", "--format", "json"]);
    ok(&again);
    let again = checked.check("state-migrate", false, &again);
    assert_eq!(again[0]["copied"], false, "{again:?}");
    assert!(again[0]["addresses"].is_null(), "{again:?}");
}

/// A project's URL trusted, listed, revoked, in a user folder of its own.
pub(super) fn trust(checked: &mut Checked) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"trusting\"\n\n[api]\nurl = \"https://monitoring.example.com\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let output = monform()
            .env("XDG_CONFIG_HOME", home.path())
            .arg("--dir")
            .arg(dir.path())
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        ok(&output);
        output
    };
    let trusted = checked.check("trust", false, &run(&["trust"]));
    assert_eq!(trusted[0]["result"], "trusted", "{trusted:?}");
    assert_eq!(
        trusted[0]["record"]["url"], "https://monitoring.example.com",
        "{trusted:?}"
    );
    assert!(
        trusted[0]["source"]
            .as_str()
            .is_some_and(|s| s.contains("monform.toml")),
        "{trusted:?}"
    );
    let listed = checked.check("trust", false, &run(&["trust", "--list"]));
    assert_eq!(listed[0]["result"], "list", "{listed:?}");
    assert_eq!(listed[0]["trusted"].as_array().map(Vec::len), Some(1), "{listed:?}");
    let revoked = checked.check("trust", false, &run(&["trust", "--revoke"]));
    assert_eq!(revoked[0]["result"], "revoked", "{revoked:?}");
    assert_eq!(revoked[0]["revoked"].as_array().map(Vec::len), Some(1), "{revoked:?}");
}

/// A project started from the example, then one adopting a hand-made
/// object of the account.
pub(super) fn init(fixture: &Fixture, checked: &mut Checked) {
    let fresh = tempfile::tempdir().unwrap();
    let started = monform()
        .arg("--dir")
        .arg(fresh.path())
        .args(["init", "--name", "shop", "--format", "json"])
        .output()
        .unwrap();
    ok(&started);
    let started = checked.check("init", false, &started);
    assert_eq!(started[0]["name"], "shop", "{started:?}");
    assert_eq!(started[0]["gitignore"], "created", "{started:?}");
    let written = started[0]["written"].as_array().unwrap();
    assert!(written.iter().any(|f| f == "monform.toml"), "{started:?}");
    assert!(written.iter().all(|f| fresh.path().join(f.as_str().unwrap()).is_file()));

    let hand = fixture.emulator.call(
        "POST",
        "/v1/snippets",
        Some(serde_json::json!({"name": "Third", "script": "z"})),
    );
    let other = tempfile::tempdir().unwrap();
    let adopted = fixture
        .emulator
        .monform(other.path())
        .args(["init", "--from-account", "--name", "adopting", "--format", "json"])
        .args(["--include", &format!("snippets:{}", hand["id"])])
        .output()
        .unwrap();
    ok(&adopted);
    let adopted = checked.check("init", false, &adopted);
    let from_account = &adopted[0]["fromAccount"];
    assert_eq!(
        from_account["adopted"][0]["remoteId"],
        hand["id"].to_string(),
        "{adopted:?}"
    );
    assert_eq!(adopted[0]["gitignore"], "created", "{adopted:?}");
}

/// The skill's files, named as written.
pub(super) fn agent_skill(checked: &mut Checked) {
    let out = tempfile::tempdir().unwrap();
    let skill = out.path().join("monform");
    let wrote = monform()
        .args(["agent-skill", "--format", "json", "--out"])
        .arg(&skill)
        .output()
        .unwrap();
    ok(&wrote);
    let wrote = checked.check("agent-skill", false, &wrote);
    let files = wrote[0]["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{wrote:?}");
    assert!(
        files
            .iter()
            .all(|f| std::path::Path::new(f.as_str().unwrap()).is_file())
    );
}

/// The reference pages, named as written.
pub(super) fn docs(checked: &mut Checked) {
    let out = tempfile::tempdir().unwrap();
    let wrote = monform()
        .args(["docs", "--format", "json", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    ok(&wrote);
    let wrote = checked.check("docs", false, &wrote);
    let pages = wrote[0]["pages"].as_array().unwrap();
    assert!(pages.iter().any(|p| p == "output.md"), "{wrote:?}");
    assert!(pages.iter().all(|p| out.path().join(p.as_str().unwrap()).is_file()));
}
