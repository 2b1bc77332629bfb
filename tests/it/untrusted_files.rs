//! `monform validate` on the files of a hostile pull request (issue 25):
//! they cannot read outside the project nor monform's credentials, and a
//! symbolic link is followed inside the project, never silently skipped.

use crate::common;

use std::path::Path;

use common::*;

/// A credential and a file content that must never appear in any output.
const KEY: &str = "mk_live_marker_0c4f1e";
const STATE_URL: &str = "postgres://monform:pg_marker_7d2a@db/monform";
const OUTSIDE: &str = "outside_marker_91b3";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `monform validate` of `dir` with the CI's credentials in its environment.
fn validate(dir: &Path) -> std::process::Output {
    monform()
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir)
        .env("MONFORM_API_KEY", KEY)
        .env("MONFORM_STATE_URL", STATE_URL)
        .env("DEPLOY_TOKEN", "deploy_marker_55e0")
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap()
}

fn assert_no_secret(output: &std::process::Output) {
    let all = format!("{}{}", stdout(output), stderr(output));
    for secret in [KEY, "pg_marker_7d2a", "deploy_marker_55e0", OUTSIDE, "root:x:0"] {
        assert!(!all.contains(secret), "{secret} printed:\n{all}");
    }
}

/// Every way the issue found to read a file outside the project or a
/// credential: each is a diagnostic at its field, and nothing is read.
#[test]
fn files_cannot_read_outside_the_project_or_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write(&dir.path().join("private/token.js"), &format!("// {OUTSIDE}\n"));
    write(
        &root.join("monform.toml"),
        "[project]\nname = \"pr\"\nsecret-env = [\"DEPLOY_TOKEN\"]\n\n[vars]\nstate = \"${env:MONFORM_STATE_URL}\"\n",
    );
    write(
        &root.join("monitors/steal.yaml"),
        r#"snippets:
  key: { name: "k=${env:MONFORM_API_KEY}", script: x }
  nested: { name: "${env:UNSET:-${env:MONFORM_API_KEY}}", script: x }
  deploy: { name: "${env:DEPLOY_TOKEN}", script: x }
  environ: { name: Environ, script: { file: /proc/self/environ } }
  passwd: { name: Passwd, script: { file: ../../../../../../../../etc/passwd } }
  sibling: { name: Sibling, script: { file: ../../private/token.js } }
checks:
  glob:
    forEachFile: "../../private/*.js"
    checkType: BROWSER
    name: "Glob ${each.key}"
    script: { file: "${each.value}" }
"#,
    );
    let output = validate(&root);
    assert_eq!(output.status.code(), Some(1));
    assert_no_secret(&output);
    let text = stderr(&output);
    assert!(
        text.ends_with("error: 8 problems found; nothing was checked against the API\n"),
        "{text}"
    );
    insta::assert_snapshot!(text);

    // monform.toml may widen the project to a trusted folder, and only that.
    write(
        &root.join("monform.toml"),
        "[project]\nname = \"pr\"\nallow-paths = [\"../private\"]\n",
    );
    write(
        &root.join("monitors/steal.yaml"),
        "snippets:\n  sibling: { name: Sibling, script: { file: ../../private/token.js } }\n  passwd: { name: Passwd, script: { file: /etc/passwd } }\n",
    );
    let output = validate(&root);
    let stderr = stderr(&output);
    // Exit 1: /etc/passwd is outside; token.js is in an allowed path.
    insta::assert_snapshot!("outside_and_allowed", transcript(&output));
    assert!(
        stderr.ends_with("error: 1 problem found; nothing was checked against the API\n"),
        "{stderr}"
    );
}

/// Symbolic links to resource files and folders inside the project are
/// followed (the plan keeps what they define); outside, broken or looping
/// links are errors, never a silent skip.
#[cfg(unix)]
#[test]
fn symbolic_links_are_followed_inside_the_project_only() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write(&root.join("monform.toml"), "[project]\nname = \"links\"\n");
    write(
        &root.join("shared/alerts.yaml"),
        "alertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n",
    );
    write(
        &root.join("v2/web.yaml"),
        "snippets:\n  login: { name: Login, script: x }\n",
    );
    symlink(root.join("shared/alerts.yaml"), root.join("alerts.yaml")).unwrap();
    symlink(root.join("v2"), root.join("monitors")).unwrap();
    let output = validate(&root);
    let stdout = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Each resource once, though two paths reach each file.
    assert!(stdout.ends_with("2 resources in 2 files: OK\n"), "{stdout}");

    write(
        &dir.path().join("outside/more.yaml"),
        &format!("# {OUTSIDE}\nsnippets:\n  more: {{ name: M, script: x }}\n"),
    );
    symlink(dir.path().join("outside/more.yaml"), root.join("more.yaml")).unwrap();
    symlink(dir.path().join("outside"), root.join("vendor")).unwrap();
    symlink(root.join("gone.yaml"), root.join("broken.yaml")).unwrap();
    symlink(&root, root.join("v2/up")).unwrap();
    let output = validate(&root);
    assert_eq!(output.status.code(), Some(1));
    assert_no_secret(&output);
    insta::assert_snapshot!(stderr(&output));
}
