//! An API that does not answer (issue 27, item 11): the retries show as
//! they happen, and the error names the URL and where it came from.

use crate::common;

use common::*;

/// A project whose monform.toml points `[api] url` at `url` on line 5.
fn project(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("[project]\nname = \"unreachable\"\n\n[api]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("checks.yaml"),
        "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"https://example.com\" }\n",
    )
    .unwrap();
    dir
}

/// A loopback URL nothing listens on.
fn closed_url() -> String {
    format!("http://127.0.0.1:{}", free_port())
}

/// `monform plan` in `project`, the user's folder in `home`.
fn plan(project: &std::path::Path, home: &std::path::Path, args: &[&str], env_url: Option<&str>) -> String {
    let mut command = monform();
    command
        .current_dir(project)
        .env("XDG_CONFIG_HOME", home)
        .env("MONFORM_API_KEY", "k")
        .env_remove("MONFORM_API_URL");
    if let Some(url) = env_url {
        command.env("MONFORM_API_URL", url);
    }
    let output = command.arg("plan").args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    stderr(&output)
}

/// The retry lines come before the error, and both name the API at `url`
/// and its source: snapshotted as `name`, with `url` as `[the URL]` (any
/// other loopback URL would show as `127.0.0.1:[port]`) and the request
/// that failed first as `[request]` (the account's kinds are read at once).
fn assert_names(name: &str, stderr: &str, url: &str) {
    let request = regex::Regex::new(r"GET /v[0-9]/[a-z/-]+ failed").unwrap();
    let stderr = request.replace_all(stderr, "[request] failed");
    insta::assert_snapshot!(name, steady(&stderr.replace(url, "[the URL]")));
}

#[test]
fn the_file_s_url_is_named_with_its_line() {
    let url = closed_url();
    let dir = project(&url);
    // The project's own URL gets the key once the user trusts it (issue 43).
    let home = tempfile::tempdir().unwrap();
    monform()
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", home.path())
        .arg("trust")
        .assert()
        .success();
    assert_names("from_the_file", &plan(dir.path(), home.path(), &[], None), &url);
}

#[test]
fn the_environment_variable_and_the_flag_are_named() {
    let in_file = closed_url();
    let dir = project(&in_file);
    let from_env = closed_url();
    let home = user_config_home();
    assert_names(
        "from_the_environment",
        &plan(dir.path(), &home, &[], Some(&from_env)),
        &from_env,
    );
    let from_flag = closed_url();
    assert_names(
        "from_the_flag",
        &plan(dir.path(), &home, &["--api-url", &from_flag], Some(&from_env)),
        &from_flag,
    );
}
