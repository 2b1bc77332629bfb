//! The language server reports what `monform validate` reports (issue 44):
//! on each example project and on projects with Rego policies (with and
//! without environments, a policy that does not load), the diagnostics
//! `monform lsp` publishes over every file equal `validate --format
//! json`'s findings: the same files, lines, columns, codes, severities,
//! messages (with their help) and related places. Both go through
//! `ops::validate`; before it, the editor left the policies out and did
//! not name the environments a finding is limited to.

use std::path::Path;

use lsp_types::{DiagnosticSeverity, NumberOrString};
use serde_json::Value;

use crate::common::lsp::{Client, write};
use crate::common::{monform, repo_root};

/// One finding, as both sides can say it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    file: String,
    line: u64,
    column: u64,
    code: String,
    severity: &'static str,
    /// The message, then `help: ...` on a line of its own.
    message: String,
    related: Vec<(String, u64, u64, String)>,
}

/// `validate --format json`'s findings; one without a place is where the
/// editor shows it, at the top of monform.toml.
fn validated(dir: &Path) -> Vec<Finding> {
    let output = monform()
        .args(["validate", "--format", "json", "--all-findings", "--dir"])
        .arg(dir)
        .env_remove("MONFORM_ENV")
        .output()
        .expect("monform validate runs");
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("validate's JSON: {e}\n{}", String::from_utf8_lossy(&output.stderr)));
    let place = |d: &Value| match d["file"].as_str() {
        Some(file) => (
            file.to_owned(),
            d["line"].as_u64().expect("a line"),
            d["column"].as_u64().expect("a column"),
        ),
        None => ("monform.toml".to_owned(), 1, 1),
    };
    let mut found: Vec<Finding> = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            let (file, line, column) = place(d);
            let mut message = d["message"].as_str().expect("a message").to_owned();
            if let Some(help) = d["help"].as_str() {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            let related = d["related"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["file"].is_string())
                .map(|r| {
                    let (file, line, column) = place(r);
                    (file, line, column, r["message"].as_str().unwrap_or_default().to_owned())
                })
                .collect();
            Finding {
                file,
                line,
                column,
                code: d["code"].as_str().expect("a code").to_owned(),
                severity: match d["severity"].as_str() {
                    Some("error") => "error",
                    Some("warning") => "warning",
                    _ => "note",
                },
                message,
                related,
            }
        })
        .collect();
    found.sort();
    found
}

/// The diagnostics `monform lsp` publishes for the project at `dir` once
/// monform.toml is opened: every file's, as validate words places (path
/// from the project's folder, 1-based line and column in characters).
fn published(dir: &Path) -> Vec<Finding> {
    let mut client = Client::start(&[]);
    let toml = client.open(&dir.join("monform.toml"));
    client.diagnostics_until(&toml, |_| true);
    // Every file of one load is published before the next message is
    // read: an answer to a request sent now comes after them all.
    let _ = client.request_value("workspace/symbol", serde_json::json!({ "query": "" }));
    held(&client, dir)
}

/// The diagnostics `client` holds (the latest of each file), as validate
/// words places (the files' text read from the disk).
fn held(client: &Client, dir: &Path) -> Vec<Finding> {
    let place = |uri: &lsp_types::Url, position: lsp_types::Position| {
        let path = uri.to_file_path().expect("a file");
        let file = path
            .strip_prefix(dir)
            .unwrap_or_else(|_| panic!("{} is not in the project", path.display()))
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let line = text.split('\n').nth(position.line as usize).unwrap_or_default();
        // LSP counts UTF-16 code units, validate characters.
        let mut units = 0;
        let column = line
            .chars()
            .take_while(|c| {
                units += c.len_utf16() as u32;
                units <= position.character
            })
            .count();
        (file, u64::from(position.line) + 1, column as u64 + 1)
    };
    let mut found = Vec::new();
    for (uri, params) in &client.diagnostics {
        for d in &params.diagnostics {
            let (file, line, column) = place(uri, d.range.start);
            let related = d
                .related_information
                .iter()
                .flatten()
                .map(|r| {
                    let (file, line, column) = place(&r.location.uri, r.location.range.start);
                    (file, line, column, r.message.clone())
                })
                .collect();
            found.push(Finding {
                file,
                line,
                column,
                code: match &d.code {
                    Some(NumberOrString::String(code)) => code.clone(),
                    other => format!("{other:?}"),
                },
                severity: match d.severity {
                    Some(DiagnosticSeverity::ERROR) => "error",
                    Some(DiagnosticSeverity::WARNING) => "warning",
                    _ => "note",
                },
                message: d.message.clone(),
                related,
            });
        }
    }
    found.sort();
    found
}

/// Copies the folder `from` into `to` (files and folders only).
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("the example") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            if entry.file_name() != ".monform" {
                copy_folder(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), &target).expect("copied");
        }
    }
}

/// Waits until the server has validated `uri`'s latest text: a request
/// on it is answered from that validation, after its diagnostics.
fn settled(client: &mut Client, uri: &lsp_types::Url) {
    let _ = client.request_value(
        "textDocument/documentSymbol",
        serde_json::json!({ "textDocument": { "uri": uri } }),
    );
}

/// The whole text of `text` as a range (the server clamps past the end).
fn whole(text: &str) -> lsp_types::Range {
    let lines = text.split('\n').count() as u32;
    lsp_types::Range::new(lsp_types::Position::new(0, 0), lsp_types::Position::new(lines + 1, 0))
}

fn assert_same(dir: &Path, what: &str) {
    let expected = validated(dir);
    let shown = published(dir);
    assert!(!expected.is_empty(), "{what}: validate finds nothing to compare");
    assert_eq!(
        shown, expected,
        "{what}: the editor's diagnostics differ from validate's"
    );
}

#[test]
fn the_examples_diagnostics_equal_validates() {
    for example in ["quickstart", "full", "environments", "reconcile/project"] {
        let dir = tempfile::tempdir().expect("a folder");
        copy_folder(&repo_root().join("examples").join(example), dir.path());
        assert_same(dir.path(), example);
    }
}

/// The example policies' findings (deny, warn; with environments, one
/// only in production), and a policy that does not parse beside a typo,
/// in a project without and with environments.
#[test]
fn policies_and_environments_diagnostics_equal_validates() {
    let environments = "[environments.staging]\n\n[environments.production]\n";
    let cases = [
        ("policies", "", MONITORS, false),
        ("policies in environments", environments, MONITORS, false),
        ("a broken policy and a typo", "", TYPO, true),
        ("a broken policy and a typo in environments", environments, TYPO, true),
    ];
    for (what, toml_extra, monitors, broken) in cases {
        let dir = tempfile::tempdir().expect("a folder");
        copy_folder(&repo_root().join("examples/policies"), &dir.path().join("policies"));
        if broken {
            write(
                dir.path(),
                "policies/broken.rego",
                "package monform.broken\n\ndeny contains msg if {\n",
            );
        }
        write(
            dir.path(),
            "monform.toml",
            &format!("[project]\nname = \"rules\"\n{toml_extra}"),
        );
        write(dir.path(), "monitors.yaml", monitors);
        let expected = validated(dir.path());
        let codes: Vec<&str> = expected.iter().map(|f| f.code.as_str()).collect();
        let wanted = if broken {
            "monform::policy-error"
        } else {
            "monform.owner_tag"
        };
        assert!(
            codes.iter().any(|c| c.starts_with(wanted)),
            "{what}: no {wanted} to compare: {codes:?}"
        );
        if toml_extra == environments && !broken {
            assert!(
                expected.iter().any(|f| f.message.contains("(environment production)")),
                "{what}: no finding of one environment: {expected:#?}"
            );
        }
        assert_same(dir.path(), what);
    }
}

/// Violates frequency_by_tag, owner_tag, min_locations (in production)
/// and browser_max_response_time, and unrouted_checks (a warning).
const MONITORS: &str = "checks:
  home:
    checkType: TCP
    name: Home
    frequency: 10
    tags: [critical]
    locations: [eu-west-1]
    request: { hostname: example.com, port: 443 }
  login:
    checkType: BROWSER
    name: Login
    tags: [owner:web]
    locations: [eu-west-1, us-east-1]
    script: \"await page.goto('https://example.com')\"
";

/// A field misspelt: the policies do not run over files with errors.
const TYPO: &str = "checks:
  typo:
    checkType: HEARTBEAT
    name: Typo
    heartbeat: { period: 1, periodUnit: hours, grace: 1, graceUnit: hours }
    colour: red
";

/// Typing re-checks only what an edit can affect (issue 48): after each
/// edit of a file (a name, a field made invalid, a reference left
/// dangling and fixed, an id renamed, an id defined twice), the
/// diagnostics the editor holds for every file equal `validate --format
/// json`'s over the same text saved.
#[test]
fn edited_files_diagnostics_equal_validates() {
    let dir = tempfile::tempdir().expect("a folder");
    copy_folder(&repo_root().join("examples/full"), dir.path());
    let path = dir.path().join("monitors/web.yaml");
    let original = std::fs::read_to_string(&path).expect("web.yaml");
    let mut client = Client::start(&[]);
    let uri = client.open(&path);
    settled(&mut client, &uri);
    let edits = [
        ("a name typed", original.replace("name: Homepage", "name: Homepage x")),
        (
            "a field made invalid",
            original.replace("frequency: 5", "frequency: often"),
        ),
        ("a dangling group", original.replace("group: production", "group: prod")),
        ("the original again", original.clone()),
        ("an id renamed", original.replace("  homepage:", "  homepage-v2:")),
        ("an id defined twice", original.replace("  homepage:", "  api-orders:")),
        ("the original at last", original.clone()),
    ];
    let mut text = original.clone();
    for (what, edited) in edits {
        client.edit(&uri, whole(&text), &edited);
        text = edited;
        settled(&mut client, &uri);
        write(dir.path(), "monitors/web.yaml", &text);
        let expected = validated(dir.path());
        assert!(!expected.is_empty(), "{what}: validate finds nothing to compare");
        assert_eq!(
            held(&client, dir.path()),
            expected,
            "{what}: the editor's diagnostics differ from validate's"
        );
    }
}

/// A keystroke in a project of 20,000 checks in 200 files is re-checked
/// alone: its diagnostics come within seconds (a debug build on a busy
/// machine), where the whole project validated again, its ids indexed
/// pairwise, took minutes (issue 48).
#[test]
fn a_keystroke_in_a_large_project_is_rechecked_alone() {
    let dir = tempfile::tempdir().expect("a folder");
    write(dir.path(), "monform.toml", "[project]\nname = \"large\"\n");
    write(
        dir.path(),
        "shared.yaml",
        "groups:\n  web:\n    name: Web\n    locations: [eu-west-1]\n    alertChannels: [oncall]\nalertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n",
    );
    for file in 0..200 {
        let mut text = String::from("checks:\n");
        for n in file * 100..file * 100 + 100 {
            text.push_str(&format!(
                "  c{n:05}:\n    checkType: URL\n    name: Check {n}\n    group: web\n    alertChannels: [oncall]\n    request: {{ url: https://example.com/{n} }}\n"
            ));
        }
        write(dir.path(), &format!("checks/c{file:03}.yaml"), &text);
    }
    let path = dir.path().join("checks/c000.yaml");
    let text = std::fs::read_to_string(&path).expect("the file");
    let mut client = Client::start(&[]);
    let uri = client.open(&path);
    settled(&mut client, &uri);
    let name = crate::common::lsp::position_of(&text, "name: Check 1\n", 0, "name: Check 1".len() as u32);
    let started = std::time::Instant::now();
    client.edit(&uri, lsp_types::Range::new(name, name), "x");
    settled(&mut client, &uri);
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(5),
        "a keystroke's diagnostics took {took:?}"
    );
    // A reference broken in the file is found there.
    let group = crate::common::lsp::range_of(&text, "group: web", 0);
    client.edit(&uri, group, "group: wbe");
    settled(&mut client, &uri);
    let found = client.diagnostics_until(&uri, |d| !d.is_empty());
    assert!(
        found
            .iter()
            .any(|d| matches!(&d.code, Some(NumberOrString::String(c)) if c == "monform::dangling-reference")),
        "{found:#?}"
    );
}
