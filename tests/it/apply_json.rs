//! `apply --format json` and `--format markdown` (issue 32, item 7) with
//! the real binary against the real emulator: every stdout line one JSON
//! object, the last the result; secrets never in either.

use crate::common;

use common::*;

const SECRET: &str = "s3cret-value-for-apply-json";

const MONITORS: &str = "checks:
  home:
    checkType: TCP
    name: Home
    locations: [eu-west-1]
    request: { hostname: example.com, port: 443 }
variables:
  API_TOKEN: { value: \"${env:API_TOKEN}\", secret: true }
";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"applyjson\"\n").unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), MONITORS).unwrap();
    dir
}

#[test]
fn apply_json_is_one_object_per_line_ending_with_the_result() {
    let emulator = Emulator::start();
    let dir = project();
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve", "--format", "json"])
        .env("API_TOKEN", SECRET)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(!text.contains(SECRET) && !stderr(&output).contains(SECRET));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not one JSON object: {line}: {e}")))
        .collect();
    assert_eq!(lines[0]["type"], "plan");
    assert_eq!(lines[0]["summary"]["create"], 2);
    for address in ["checks.home", "variables.API_TOKEN"] {
        for kind in ["started", "done", "verified"] {
            assert!(
                lines.iter().any(|l| l["type"] == kind && l["address"] == address),
                "no {kind} for {address} in {text}"
            );
        }
    }
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(
        (result["complete"].as_bool(), result["exitCode"].as_u64()),
        (Some(true), Some(0))
    );
    assert_eq!(result["counts"]["done"], 2);
    let resources = result["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 2);
    for resource in resources {
        assert_eq!(resource["outcome"], "done", "{resource}");
        assert!(
            resource["remoteId"].as_str().is_some_and(|id| !id.is_empty()),
            "{resource}"
        );
    }
}

#[test]
fn apply_markdown_summarises_what_was_applied() {
    let emulator = Emulator::start();
    let dir = project();
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve", "--format", "markdown"])
        .env("API_TOKEN", SECRET)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = redact_ids(&stdout(&output));
    assert!(!text.contains(SECRET));
    insta::assert_snapshot!("markdown", text);
}

#[test]
fn an_apply_that_cannot_start_still_ends_with_a_result() {
    let emulator = Emulator::start();
    let dir = project();
    // Unset: the files have a problem, and nothing starts.
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve", "--format", "json"])
        .env_remove("API_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (last["type"].as_str(), last["exitCode"].as_u64()),
        (Some("result"), Some(1))
    );
    assert!(last["error"].is_string());
}
