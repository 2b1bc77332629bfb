//! Issue 43, item 4: the API key goes only to a URL the user chose. A
//! project's `[api] url` (a cloned repository, a pull request) receives
//! nothing, from the CLI or the editor, until the user trusts that project
//! with that URL (`monform trust`) or chooses the API themselves; plain
//! `http://` goes only to this machine, whoever chose it.

use std::path::Path;

use crate::common::receiver::Receiver;
use crate::common::*;

const KEY: &str = "mf-user-key-5b1e0c";

/// A project whose monform.toml names `url` on line 5, with one check.
fn project(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_project(dir.path(), url);
    std::fs::write(
        dir.path().join("checks.yaml"),
        "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"https://example.com\" }\n",
    )
    .unwrap();
    dir
}

fn write_project(dir: &Path, url: &str) {
    std::fs::write(
        dir.join("monform.toml"),
        format!("[project]\nname = \"trust\"\n\n[api]\nurl = \"{url}\"\n\n[lint]\nunrouted-checks = \"off\"\n"),
    )
    .unwrap();
}

/// `monform ARGS` in `dir` as a user with `KEY` in their environment and
/// their monform folder in `home`.
fn user(dir: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    monform()
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", home)
        .env("MONFORM_API_KEY", KEY)
        .args(["--color", "never"])
        .args(args)
        .output()
        .unwrap()
}

/// Nothing reached the listener, least of all the key.
fn assert_untouched(listener: &Receiver) {
    let received = listener.received();
    assert!(received.is_empty(), "the project's URL was sent {received:#?}");
}

#[test]
fn a_project_s_url_gets_no_key_until_the_user_trusts_it() {
    let listener = Receiver::start();
    let dir = project(&listener.url);
    let home = tempfile::tempdir().unwrap();

    let refused = user(dir.path(), home.path(), &["plan"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let text = stderr(&refused);
    insta::assert_snapshot!(
        "refused",
        steady(&tail_from(&text, "error:").replace(&listener.url, "[the project's URL]"))
    );
    assert_untouched(&listener);
    // Every command that talks to the service asks the same rule.
    for args in [
        &["apply", "--auto-approve"][..],
        &["destroy", "--auto-approve"],
        &["import", "checks.home", "1"],
    ] {
        let output = user(dir.path(), home.path(), args);
        assert!(!output.status.success(), "{args:?}");
        assert!(
            stderr(&output).contains("monform trust"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert_untouched(&listener);

    // Trusted, against the real service as the project's URL: the plan goes through.
    let emulator = Emulator::start();
    write_project(dir.path(), &emulator.url());
    let as_user = |args: &[&str]| {
        monform()
            .current_dir(dir.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("MONFORM_API_KEY", &emulator.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id)
            .args(["--color", "never"])
            .args(args)
            .output()
            .unwrap()
    };
    let before = as_user(&["plan"]);
    assert!(stderr(&before).contains("monform trust"), "{}", stderr(&before));
    let trusted = as_user(&["trust"]);
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let canonical = dir.path().canonicalize().unwrap();
    let shown = stdout(&trusted)
        .replace(&canonical.display().to_string(), "[project]")
        .replace(&home.path().display().to_string(), "[home]")
        .replace(&emulator.url(), "[the emulator]");
    let at = regex::Regex::new(r"since [0-9T:-]+Z").unwrap();
    insta::assert_snapshot!("trusted", at.replace_all(&shown, "since [time]"));
    let record = std::fs::read_to_string(home.path().join("monform/trusted.toml")).unwrap();
    assert!(
        record.contains(&format!("path = \"{}\"", canonical.display())),
        "{record}"
    );
    assert!(record.contains(&format!("url = \"{}\"", emulator.url())), "{record}");
    let planned = as_user(&["plan"]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    assert!(stdout(&planned).contains("checks.home"), "{}", stdout(&planned));

    // The trust is for that URL: naming another asks again.
    write_project(dir.path(), &listener.url);
    let again = user(dir.path(), home.path(), &["plan"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains(&listener.url), "{}", stderr(&again));
    assert_untouched(&listener);

    // Revoked: the emulator's URL is refused again.
    write_project(dir.path(), &emulator.url());
    let revoked = as_user(&["trust", "--revoke"]);
    assert!(stdout(&revoked).starts_with("revoked: "), "{}", stdout(&revoked));
    let after = as_user(&["plan"]);
    assert_eq!(after.status.code(), Some(1), "{}", stderr(&after));
}

#[test]
fn the_user_s_own_choices_need_no_trust() {
    let emulator = Emulator::start();
    let dir = project(&emulator.url());
    let home = tempfile::tempdir().unwrap();
    let run = |home: &Path, env_url: Option<&str>| {
        let mut command = monform();
        command
            .current_dir(dir.path())
            .env("XDG_CONFIG_HOME", home)
            .env("MONFORM_API_KEY", &emulator.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id);
        if let Some(url) = env_url {
            command.env("MONFORM_API_URL", url);
        }
        command.arg("plan").output().unwrap()
    };
    // MONFORM_API_URL, as CI sets it.
    let output = run(home.path(), Some(&emulator.url()));
    assert!(output.status.success(), "{}", stderr(&output));
    // The user's config.toml naming the project's URL.
    std::fs::create_dir_all(home.path().join("monform")).unwrap();
    std::fs::write(
        home.path().join("monform/config.toml"),
        format!("[api]\nurl = \"{}/\"\n", emulator.url()),
    )
    .unwrap();
    let output = run(home.path(), None);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn plain_http_goes_only_to_this_machine() {
    let dir = project("http://monitoring.internal:8080");
    let home = tempfile::tempdir().unwrap();
    let refused = user(dir.path(), home.path(), &["plan"]);
    assert_eq!(refused.status.code(), Some(1));
    insta::assert_snapshot!("plain_http", tail_from(&stderr(&refused), "error:"));
    // Trusting does not lift it.
    let trust = user(dir.path(), home.path(), &["trust"]);
    assert_eq!(trust.status.code(), Some(1));
    assert!(stderr(&trust).contains("plain http://"), "{}", stderr(&trust));
    assert!(!home.path().join("monform/trusted.toml").exists());
    // Nor does the user's environment or flag choose it.
    for (flag, env) in [
        (None, Some("http://10.20.30.40:8080")),
        (Some("http://ci-runner:8080"), None),
    ] {
        let mut command = monform();
        command
            .current_dir(dir.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("MONFORM_API_KEY", KEY);
        if let Some(url) = env {
            command.env("MONFORM_API_URL", url);
        }
        if let Some(url) = flag {
            command.args(["--api-url", url]);
        }
        let output = command.arg("plan").output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        let text = stderr(&output);
        let source = if env.is_some() {
            "(from MONFORM_API_URL)"
        } else {
            "(from --api-url)"
        };
        assert!(text.contains("plain http://") && text.contains(source), "{text}");
    }
}

/// The editor: opening a file of a project naming a listener sends
/// nothing there, and the editor is told why.
#[test]
fn the_language_server_sends_nothing_to_an_untrusted_url() {
    use crate::common::lsp::{CHECKS, Client, hover_text, position_of, write};
    let listener = Receiver::start();
    let dir = crate::common::lsp::project();
    write(
        dir.path(),
        "monform.toml",
        &format!(
            "[project]\nname = \"editor\"\n\n[api]\nurl = \"{}\"\n\n[lint]\nunrouted-checks = \"off\"\n",
            listener.url
        ),
    );
    let home = tempfile::tempdir().unwrap();
    let home_text = home.path().display().to_string();
    let mut client = Client::start(&[("MONFORM_API_KEY", KEY), ("XDG_CONFIG_HOME", &home_text)]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    let shown = client.shown_until(|m| m.contains("live facts off"));
    assert!(shown.contains(&listener.url), "{shown}");
    assert!(shown.contains("monform.toml:5"), "{shown}");
    assert!(shown.contains("monform trust"), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    let hover = hover_text(&mut client, &checks, position_of(CHECKS, "homepage", 0, 1));
    assert!(hover.contains("live facts unavailable"), "{hover}");
    // Long enough for a refresh that would have gone out.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_untouched(&listener);
}

/// An environment's own `[api] url` is trusted on its own, and the
/// refusal names its line and the `--env` to trust it with.
#[test]
fn an_environment_s_url_is_trusted_on_its_own() {
    let emulator = Emulator::start();
    let dir = project("https://prod.example.com");
    std::fs::write(
        dir.path().join("monform.toml"),
        format!(
            "[project]\nname = \"trust\"\n\n[api]\nurl = \"https://prod.example.com\"\n\n[environments.staging]\napi = {{ url = \"{}\" }}\n\n[environments.prod]\n",
            emulator.url()
        ),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        monform()
            .current_dir(dir.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("MONFORM_API_KEY", &emulator.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id)
            .args(args)
            .output()
            .unwrap()
    };
    let refused = run(&["--env", "staging", "plan"]);
    let text = stderr(&refused);
    assert!(text.contains("./monform.toml:8 names the API at"), "{text}");
    assert!(text.contains("run `monform trust --env staging`"), "{text}");
    let trusted = run(&["--env", "staging", "trust"]);
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let planned = run(&["--env", "staging", "plan"]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let prod = run(&["--env", "prod", "plan"]);
    assert!(
        stderr(&prod).contains("./monform.toml:5 names the API at https://prod.example.com"),
        "{}",
        stderr(&prod)
    );
}
