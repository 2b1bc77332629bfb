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

/// Issue 25 item 1: a value read from `${env:}` is `(sensitive)` in every
/// plan format, also through `[vars]`, unless `[project] public-env` lists
/// the variable: then it shows as it is. Item 9: a default of `${env:}`
/// may itself read the environment (it was taken as literal text).
#[test]
fn environment_values_show_only_when_public_env_lists_them() {
    const PUBLIC: &str = "zq-public-region";
    const HIDDEN: [&str; 2] = ["zq-owner-hidden", "zq-token-hidden"];
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("monform.toml"),
        "[project]\nname = \"public-env\"\npublic-env = [\"MF_REGION\"]\n\n[vars]\nshown = \"${env:MF_REGION}\"\nhidden = \"${env:MF_TOKEN}\"\n",
    );
    write(
        &dir.path().join("monitors.yaml"),
        r#"checks:
  api:
    checkType: API
    name: "API in ${env:MF_UNSET:-${env:MF_REGION}}"
    description: "owner ${env:MF_UNSET:-${env:MF_OWNER}}"
    locations: [eu-west-1]
    tags: ["${var:shown}", "${var:hidden}"]
    request: { method: GET, url: "https://example.com/${env:MF_REGION}" }
"#,
    );
    let plan = |format: &str| {
        let output = monform()
            .args([
                "plan",
                "--refresh",
                "none",
                "--color",
                "never",
                "--format",
                format,
                "--dir",
            ])
            .arg(dir.path())
            .env("MF_REGION", PUBLIC)
            .env("MF_OWNER", HIDDEN[0])
            .env("MF_TOKEN", HIDDEN[1])
            .env_remove("MONFORM_ENV")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let all = format!("{}{}", stdout(&output), stderr(&output));
        for hidden in HIDDEN {
            assert!(!all.contains(hidden), "{format}: {hidden} shown:\n{all}");
        }
        stdout(&output)
    };
    let json: serde_json::Value = serde_json::from_str(&plan("json")).unwrap();
    let fields = json["changes"][0]["fields"].as_array().unwrap();
    let field = |path: &str| {
        fields
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("no {path} in {fields:?}"))
    };
    assert_eq!(field("name")["after"], "API in zq-public-region");
    assert_eq!(field("name")["sensitive"], false);
    assert_eq!(field("request.url")["after"], "https://example.com/zq-public-region");
    // A whole field masked is `null` and `sensitive` in JSON.
    assert_eq!(field("description")["after"], serde_json::Value::Null);
    assert_eq!(field("description")["sensitive"], true);
    assert_eq!(field("tags")["after"], serde_json::json!([PUBLIC, "(sensitive)"]));
    let human = plan("human");
    assert!(
        human.contains(r#"name                    = "API in zq-public-region""#),
        "{human}"
    );
    assert!(human.contains("description             = (sensitive)"), "{human}");
    let markdown = plan("markdown");
    assert!(markdown.contains(PUBLIC), "{markdown}");
    assert!(markdown.contains("(sensitive)"), "{markdown}");

    // Without public-env the same value is sensitive: public-env is what shows it.
    write(
        &dir.path().join("monform.toml"),
        "[project]\nname = \"public-env\"\n\n[vars]\nshown = \"${env:MF_REGION}\"\nhidden = \"${env:MF_TOKEN}\"\n",
    );
    let json = plan("json");
    assert!(!json.contains(PUBLIC), "{json}");
}

/// Issue 25 item 6: a diagnostic past column 65,535 of a one-line file of
/// more than 100 KB renders (miette panicked there) a window of the line,
/// with its true column, not the 100 KB.
#[test]
fn a_diagnostic_on_a_100_kb_line_shows_a_window_of_it() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("monform.toml"), "[project]\nname = \"long\"\n");
    let snippets: Vec<String> = (0..1_700)
        .map(|i| format!("s{i}: {{name: \"Snippet number {i} with a fairly long name\", script: x}}"))
        .collect();
    let text = format!(
        "{{snippets: {{{}, last: {{name: L, script: x, colour: red}}}}}}\n",
        snippets.join(", ")
    );
    assert!(text.len() > 100_000);
    write(&dir.path().join("long.yaml"), &text);
    let column = text.find("colour").unwrap() + 1;
    assert!(column > 65_535);
    let output = validate(dir.path());
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.len() < 2_000, "{} bytes printed", stderr.len());
    // The true column, and a window of the line around it.
    assert!(stderr.contains(&format!("long.yaml:1:{column}")), "{stderr}");
    insta::assert_snapshot!("long_line", stderr);
}

/// Issue 25 item 4: a 96 KB file whose aliases repeat a 60 KB string
/// 9,000 times (540 MB of values) is refused at the alias that passes the
/// budget, naming it, and `validate` stays far below that in memory (such
/// a file used 3.9 GB when aliases were counted as values, not bytes).
#[cfg(target_os = "linux")]
#[test]
fn an_alias_bomb_stops_at_the_budget_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("monform.toml"), "[project]\nname = \"bomb\"\n");
    let text = format!(
        "s: &s {}\nsnippets:\n  a: {{ name: A, script: x, description: [{}] }}\n",
        "x".repeat(60_000),
        "*s, ".repeat(9_000)
    );
    assert!(text.len() < 100_000);
    write(&dir.path().join("bomb.yaml"), &text);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .args(["validate", "--color", "never", "--dir"])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The child's own high-water mark (VmHWM, kept across samples): wait4's
    // ru_maxrss would count this test process's from before exec.
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
        peak_kib = peak_kib.max(hwm.unwrap_or(0));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "validate still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    insta::assert_snapshot!("alias_bomb", stderr);
    assert!(peak_kib > 0, "no sample of the child's memory");
    assert!(peak_kib < 400 * 1024, "validate peaked at {} MiB", peak_kib / 1024);
    eprintln!("validate of the alias bomb peaked at {} MiB", peak_kib / 1024);
}

/// Issue 25 items 5, 10 and 14 through `monform validate`: substitutions
/// nested 14,000 deep are a diagnostic (the loader overflowed its stack:
/// SIGABRT), a file that is not UTF-8 names line, column and byte offset,
/// and an inline script past the service's 1 MiB is refused.
#[test]
fn deep_substitutions_non_utf8_files_and_large_inline_scripts_are_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("monform.toml"), "[project]\nname = \"limits\"\n");
    let depth = 14_000;
    write(
        &dir.path().join("deep.yaml"),
        &format!(
            "snippets:\n  deep: {{ name: \"{}x{}\", script: x }}\n",
            "${var:x:-".repeat(depth),
            "}".repeat(depth)
        ),
    );
    std::fs::write(
        dir.path().join("latin.yaml"),
        b"snippets:\n  latin: { name: \"caf\xE9\", script: x }\n",
    )
    .unwrap();
    write(
        &dir.path().join("inline.yaml"),
        &format!(
            "snippets:\n  inline: {{ name: I, script: \"{}\" }}\n",
            "x".repeat(3 << 20)
        ),
    );
    let output = validate(dir.path());
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{}", &stderr[..stderr.len().min(2_000)]);
    for expected in [
        "substitutions are nested more than 16 deep",
        "deep.yaml:2:",
        "latin.yaml is not UTF-8: byte 0xE9 at line 2, column 22 (byte offset 31)",
        // The message wraps at the terminal's width.
        "snippets.inline.script: the script takes 3145730 bytes in a request",
        "most 1048576 (1 MiB)",
        "error: 3 problems found",
    ] {
        assert!(
            stderr.contains(expected),
            "{expected} not in:\n{}",
            &stderr[..stderr.len().min(4_000)]
        );
    }
    assert!(stderr.len() < 8_000, "{} bytes printed", stderr.len());
}
