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

fn plan(project: &std::path::Path, args: &[&str], env_url: Option<&str>) -> String {
    let mut command = monform();
    command
        .current_dir(project)
        .env("MONFORM_API_KEY", "k")
        .env_remove("MONFORM_API_URL");
    if let Some(url) = env_url {
        command.env("MONFORM_API_URL", url);
    }
    let output = command.arg("plan").args(args).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    stderr(&output)
}

/// The retry lines come before the error, and both name the API and its source.
fn assert_names(stderr: &str, url: &str, source: &str) {
    let named = format!("the API at {url} (from {source})");
    let retry = stderr
        .find(&format!("{named} did not answer"))
        .unwrap_or_else(|| panic!("no retry line naming {named}:\n{stderr}"));
    assert!(stderr[retry..].contains("retry 1 of 6 in"), "{stderr}");
    let error = stderr.find("error: ").unwrap_or_else(|| panic!("no error:\n{stderr}"));
    assert!(retry < error, "the retry is said before the error:\n{stderr}");
    assert!(
        stderr[error..].contains(&format!("hint: {named} did not answer")),
        "the error's hint names the API:\n{stderr}"
    );
}

#[test]
fn the_file_s_url_is_named_with_its_line() {
    let url = closed_url();
    let dir = project(&url);
    assert_names(&plan(dir.path(), &[], None), &url, "./monform.toml:5");
}

#[test]
fn the_environment_variable_and_the_flag_are_named() {
    let in_file = closed_url();
    let dir = project(&in_file);
    let from_env = closed_url();
    assert_names(&plan(dir.path(), &[], Some(&from_env)), &from_env, "MONFORM_API_URL");
    let from_flag = closed_url();
    assert_names(
        &plan(dir.path(), &["--api-url", &from_flag], Some(&from_env)),
        &from_flag,
        "--api-url",
    );
}
