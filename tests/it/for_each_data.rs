//! Issue 27 item 16: `forEach` items per environment from `${var:NAME}`,
//! and from data files (`forEach: { file: PATH }`: CSV, JSON or YAML rows),
//! which are not read as resource files: the real binary against the real
//! emulator.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The addresses a plan creates, sorted.
fn created(emulator: &Emulator, dir: &Path, env: &str) -> Vec<(String, String)> {
    let output = emulator
        .monform(dir)
        .args(["--env", env, "plan", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut found: Vec<(String, String)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "create")
        .map(|c| {
            let url = c["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == "request.url" || f["path"] == "request")
                .map(|f| match &f["after"] {
                    Value::String(url) => url.clone(),
                    other => other["url"].as_str().unwrap_or_default().to_owned(),
                })
                .unwrap_or_default();
            (c["address"].as_str().unwrap().to_owned(), url)
        })
        .collect();
    found.sort();
    found
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn for_each_takes_its_items_from_a_var_per_environment() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    write(
        dir,
        "monform.toml",
        r#"[project]
name = "per-env"

[vars]
endpoints = ["users"]

[environments.staging]
vars = { endpoints = ["users", "orders"] }

[environments.production]
vars = { endpoints = { users = { path = "/v2/users" }, billing = { path = "/billing" } } }
"#,
    );
    write(
        dir,
        "checks.yaml",
        "checks:\n  api:\n    forEach: \"${var:endpoints}\"\n    checkType: URL\n    name: API ${each.key}\n    activated: false\n    request: { url: \"https://shop.example.com${each.value.path:-/${each.key}}\" }\n",
    );
    assert_eq!(
        created(&emulator, dir, "staging"),
        pairs(&[
            ("checks.api[orders]", "https://shop.example.com/orders"),
            ("checks.api[users]", "https://shop.example.com/users"),
        ])
    );
    assert_eq!(
        created(&emulator, dir, "production"),
        pairs(&[
            ("checks.api[billing]", "https://shop.example.com/billing"),
            ("checks.api[users]", "https://shop.example.com/v2/users"),
        ])
    );
    // Not a list or map: said at the field.
    write(
        dir,
        "monform.toml",
        "[project]\nname = \"per-env\"\n\n[vars]\nendpoints = \"users\"\n",
    );
    assert_run!("not_a_list_or_map", monform().arg("--dir").arg(dir).arg("validate"));
}

#[test]
fn for_each_reads_data_files_which_are_not_resource_files() {
    let emulator = Emulator::start();
    let folder = tempfile::tempdir().unwrap();
    let dir = &folder.path().join("project");
    write(dir, "monform.toml", "[project]\nname = \"data\"\n");
    write(
        dir,
        "monitors/checks.yaml",
        r#"checks:
  api:
    forEach: { file: ../data/endpoints.csv }
    checkType: URL
    name: API ${each.key}
    activated: false
    request: { url: "https://shop.example.com${each.value.path}" }
  region:
    forEach: { file: ../data/regions.yaml }
    checkType: URL
    name: Home from ${each.key}
    activated: false
    locations: ["${each.value.location}"]
    request: { url: "https://${each.value.host}/" }
  legacy:
    forEach: { file: ../data/legacy.json }
    checkType: URL
    name: Legacy ${each.key}
    activated: false
    request: { url: "${each.value}" }
"#,
    );
    write(
        dir,
        "data/endpoints.csv",
        "key,path\nusers,/users\norders,\"/orders?page=1,2\"\n",
    );
    // A YAML file in the project: discovered, yet read as data only.
    write(
        dir,
        "data/regions.yaml",
        "- { key: eu, location: eu-west-1, host: eu.shop.example.com }\n- { key: us, location: us-east-1, host: us.shop.example.com }\n",
    );
    write(dir, "data/legacy.json", r#"{ "v1": "https://old.example.com/v1" }"#);
    let output = monform().arg("--dir").arg(dir).arg("validate").output().unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output).trim(), "5 resources in 1 file: OK");

    let output = emulator
        .monform(dir)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    let checks = emulator.call("GET", "/v1/checks", None);
    let mut urls: Vec<String> = checks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {} {}",
                c["name"].as_str().unwrap(),
                c["request"]["url"].as_str().unwrap(),
                c["locations"]
            )
        })
        .collect();
    urls.sort();
    assert_eq!(
        urls,
        [
            "API orders https://shop.example.com/orders?page=1,2 null",
            "API users https://shop.example.com/users null",
            "Home from eu https://eu.shop.example.com/ [\"eu-west-1\"]",
            "Home from us https://us.shop.example.com/ [\"us-east-1\"]",
            "Legacy v1 https://old.example.com/v1 null",
        ]
    );

    // Paths stay in the project, as every path of the files.
    write(dir, "../outside.csv", "key\nx\n");
    write(
        dir,
        "monitors/checks.yaml",
        "checks:\n  api:\n    forEach: { file: ../../outside.csv }\n    checkType: URL\n    name: API ${each.key}\n    request: { url: \"https://shop.example.com/\" }\n",
    );
    assert_run!(
        "file_outside_the_project",
        monform().arg("--dir").arg(dir).arg("validate")
    );
}
