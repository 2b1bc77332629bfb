//! `monform migrate terraform` end to end: the example Terraform project
//! (examples/terraform) and its committed `terraform show -json` fixture.
//! The account Terraform left is made first through the emulator's API
//! (as the provider would have made it); the emulator gives its own ids,
//! so the fixture's ids are rewritten to those (the one thing that differs
//! from a real migration). Then the migrated project's first plan imports
//! every object and changes, creates, deletes and replaces nothing, its
//! secrets included: the import entries carry the fingerprints of the
//! secrets Terraform's state holds, and the environment holds the same.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::*;

/// The secrets as Terraform set them: the account and the fixture's state hold the same.
const API_TOKEN: &str = "tok-fixture-never-written";
const WEBHOOK_SECRET: &str = "whsec-fixture-never-written";

/// The alert settings the provider writes when a check sets none.
fn alert_settings() -> Value {
    json!({"escalationType": "RUN_BASED", "runBasedEscalation": {"failedRunThreshold": 1},
           "reminders": {"amount": 0, "interval": 5},
           "parallelRunFailureThreshold": {"enabled": false, "percentage": 10}})
}

/// Makes an object; its id as the API gives it (a number or a text).
fn post(emulator: &Emulator, path: &str, body: Value) -> Value {
    let made = emulator.call("POST", path, Some(body));
    // A dashboard is named by its `dashboardId` (its `id` is a number beside it).
    let id = if path == "/v1/dashboards" {
        &made["dashboardId"]
    } else {
        &made["id"]
    };
    assert!(id.is_string() || id.is_number(), "{path}: no id in {made}");
    id.clone()
}

fn text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Makes the objects of the example in the emulator; returns the fixture's
/// id of each to the emulator's.
fn account(emulator: &Emulator) -> BTreeMap<String, String> {
    let mut ids = BTreeMap::new();
    let mut made = |fixture: &str, id: Value| {
        ids.insert(fixture.to_owned(), text(&id));
        id
    };
    let oncall = made(
        "101",
        post(
            emulator,
            "/v1/alert-channels",
            json!({"type": "EMAIL", "config": {"address": "oncall@example.com"}, "sendRecovery": true, "sendFailure": true, "sendDegraded": false}),
        ),
    );
    let chatops = made(
        "102",
        post(
            emulator,
            "/v1/alert-channels",
            json!({"type": "WEBHOOK", "config": {"name": "Chat ops", "url": "https://hooks.example.com/monitoring", "method": "POST", "webhookSecret": WEBHOOK_SECRET}}),
        ),
    );
    let auth = made(
        "201",
        post(
            emulator,
            "/v1/snippets",
            json!({"name": "Fetch a token", "script": "const token = process.env.API_TOKEN;\nrequest.headers['Authorization'] = `Bearer ${token}`;\n"}),
        ),
    );
    let group = made(
        "301",
        post(
            emulator,
            "/v2/check-groups?autoAssignAlerts=false",
            json!({"name": "Production", "activated": true, "concurrency": 2, "locations": ["eu-west-1", "us-east-1"],
                   "tags": ["team:shop", "terraform"], "doubleCheck": false, "useGlobalAlertSettings": false,
                   "alertSettings": alert_settings(),
                   "apiCheckDefaults": {"url": "", "headers": [], "queryParameters": [], "assertions": []},
                   "alertChannelSubscriptions": [{"alertChannelId": oncall, "activated": true}]}),
        ),
    );
    // A variable's id is its key.
    emulator.call(
        "POST",
        "/v1/variables",
        Some(json!({"key": "API_TOKEN", "value": API_TOKEN, "secret": true})),
    );
    emulator.call(
        "POST",
        "/v1/variables",
        Some(json!({"key": "BASE_URL", "value": "https://shop.example.com"})),
    );
    let check = |path: &str, body: Value| post(emulator, &format!("{path}?autoAssignAlerts=false"), body);
    for (n, (key, page)) in [("home", "/"), ("login", "/login"), ("pricing", "/pricing")]
        .into_iter()
        .enumerate()
    {
        let id = check(
            "/v1/checks/url",
            json!({"name": format!("Page {key}"), "activated": true, "frequency": 5, "groupId": group,
                   "degradedResponseTime": 3000, "maxResponseTime": 5000, "useGlobalAlertSettings": true,
                   "alertSettings": alert_settings(),
                   "request": {"url": format!("https://shop.example.com{page}"), "followRedirects": true,
                               "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}]}}),
        );
        made(&format!("1f0c8a6e-3b7d-4c39-9f4e-6b0b5a1d2c2{n}"), id);
    }
    let api = |name: &str, frequency: u32, extra: Value, request: Value| {
        let mut body = json!({"name": name, "activated": true, "frequency": frequency, "groupId": group,
            "degradedResponseTime": 15000, "maxResponseTime": 30000, "doubleCheck": false,
            "useGlobalAlertSettings": false, "alertSettings": alert_settings(), "request": request});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        check("/v1/checks/api", body)
    };
    let health = api(
        "API health",
        1,
        json!({"description": "HEALTH OF THE SHOP API", "setupSnippetId": auth,
               "alertChannelSubscriptions": [{"alertChannelId": chatops, "activated": true}]}),
        json!({"method": "GET", "url": "https://shop.example.com/api/health", "followRedirects": false,
               "headers": [{"key": "Accept", "value": "application/json"}, {"key": "Authorization", "value": "Bearer {{API_TOKEN}}"}],
               "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"},
                              {"source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "ok"}]}),
    );
    made("1f0c8a6e-3b7d-4c39-9f4e-6b0b5a1d2c01", health);
    for (n, key) in ["charges", "refunds"].into_iter().enumerate() {
        let id = api(
            &format!("Payments {key}"),
            2,
            json!({"alertChannelSubscriptions": [{"alertChannelId": oncall, "activated": true}]}),
            json!({"method": "GET", "url": format!("https://shop.example.com/payments/v1/{key}"), "followRedirects": false,
                   "assertions": [{"source": "STATUS_CODE", "comparison": "LESS_THAN", "target": "500"}]}),
        );
        made(&format!("1f0c8a6e-3b7d-4c39-9f4e-6b0b5a1d2c3{n}"), id);
    }
    let script = std::fs::read_to_string(repo_root().join("examples/terraform/scripts/login.js")).unwrap();
    let login = check(
        "/v1/checks/browser",
        json!({"name": "Login journey", "activated": true, "frequency": 10, "locations": ["eu-west-1", "us-east-1"],
               "degradedResponseTime": 15000, "maxResponseTime": 30000, "doubleCheck": false,
               "useGlobalAlertSettings": false, "alertSettings": alert_settings(), "script": script}),
    );
    made("1f0c8a6e-3b7d-4c39-9f4e-6b0b5a1d2c02", login);
    let backup = check(
        "/v1/checks/heartbeat",
        json!({"name": "Nightly backup", "activated": true, "tags": ["team:shop", "terraform"],
               "useGlobalAlertSettings": false, "alertSettings": alert_settings(),
               "heartbeat": {"period": 1, "periodUnit": "days", "grace": 2, "graceUnit": "hours"}}),
    );
    made("1f0c8a6e-3b7d-4c39-9f4e-6b0b5a1d2c03", backup);
    for i in 0..2 {
        let id = check(
            "/v1/checks/tcp",
            json!({"name": format!("Database replica {i}"), "activated": true, "frequency": 1, "locations": ["eu-west-1"],
                   "degradedResponseTime": 4000, "maxResponseTime": 5000, "useGlobalAlertSettings": false,
                   "alertSettings": alert_settings(),
                   "request": {"hostname": format!("db-{i}.internal.example.com"), "port": 5432}}),
        );
        made(&format!("1f0c8a6e-3b7d-4c39-9f4e-6b0b5a1d2c1{i}"), id);
    }
    let office = post(
        emulator,
        "/v1/private-locations",
        json!({"name": "Berlin office", "slugName": "berlin-office", "icon": "building"}),
    );
    made("6a1d0c2e-8f9b-4e57-a3c1-2b4d6e8f0a11", office);
    let weekly = post(
        emulator,
        "/v1/maintenance-windows",
        json!({"name": "Weekly deploy window", "startsAt": "2026-01-04T02:00:00.000Z", "endsAt": "2026-01-04T03:00:00.000Z",
               "repeatUnit": "WEEK", "repeatInterval": 1, "tags": ["terraform"]}),
    );
    made("501", weekly);
    let service = post(emulator, "/v1/status-pages/services", json!({"name": "Shop API"}));
    let service = made("8c3f2e4a-0b1d-4a79-85e3-4d6f8a0b2c33", service);
    let page = post(
        emulator,
        "/v1/status-pages",
        json!({"name": "Shop status", "url": "shop-status", "defaultTheme": "DARK",
               "cards": [{"name": "API", "services": [{"id": service}]}]}),
    );
    made("7b2e1d3f-9a0c-4f68-b4d2-3c5e7f9a1b22", page);
    let dashboard = post(
        emulator,
        "/v1/dashboards",
        json!({"customUrl": "shop-ops", "header": "Shop operations", "tags": ["terraform"], "refreshRate": 60, "checksPerPage": 10}),
    );
    made("d-7f3a2b", dashboard);
    ids
}

/// The fixture with every id the provider recorded (`id` and the
/// reference attributes) as the emulator's.
fn rewrite_ids(value: &mut Value, ids: &BTreeMap<String, String>) {
    const ID_FIELDS: &[&str] = &[
        "id",
        "group_id",
        "channel_id",
        "setup_snippet_id",
        "teardown_snippet_id",
        "service_id",
    ];
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                let text = match &*field {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                };
                match text.and_then(|t| ids.get(&t)) {
                    // A number stays a number where the new id is one (as the provider records it).
                    Some(new) if ID_FIELDS.contains(&key.as_str()) => {
                        *field = match (&*field, new.parse::<u64>()) {
                            (Value::Number(_), Ok(n)) => Value::from(n),
                            _ => Value::String(new.clone()),
                        }
                    }
                    _ => rewrite_ids(field, ids),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite_ids(i, ids)),
        _ => {}
    }
}

fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for entry in walkdir(dir) {
        if let Ok(text) = std::fs::read_to_string(&entry) {
            files.push((entry.strip_prefix(dir).unwrap().display().to_string(), text));
        }
    }
    files
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_terraform_project_migrates_with_an_empty_first_plan() {
    let emulator = Emulator::start();
    let ids = account(&emulator);
    let terraform = copy_example("terraform");
    let fixture = terraform.path().join("terraform.show.json");
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    rewrite_ids(&mut state, &ids);
    std::fs::write(&fixture, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let project = out.path().join("shop");
    let output = monform()
        .args(["migrate", "terraform"])
        .arg(terraform.path())
        .arg("--state")
        .arg(&fixture)
        .arg("--out")
        .arg(&project)
        .args(["--project", "shop"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    let report = stdout(&output);
    // What is not translated is listed with its file and line, printed and in MIGRATION.md.
    for expected in [
        "main.tf:77: checks.api_health: `description` = `upper(\"health of the ${local.team} API\")`: the function `upper()` is not translated",
        "main.tf:146: `data \"checkly_static_ips\" \"all\"` is not migrated",
        "Migrated 17 definitions (21 objects to import, 5 [vars])",
    ] {
        assert!(report.contains(expected), "missing `{expected}` in:\n{report}");
    }
    let migration_md = std::fs::read_to_string(project.join("MIGRATION.md")).unwrap();
    assert!(migration_md.contains("`main.tf:77`"), "{migration_md}");
    // No secret is written: the state's, the account's, nor the fixture's.
    for (path, text) in files_under(&project) {
        for secret in [
            API_TOKEN,
            WEBHOOK_SECRET,
            "whsec-fixture-never-written",
            "tok-fixture-never-written",
            "pl_fixture_key",
        ] {
            assert!(!text.contains(secret), "{path} holds a secret:\n{text}");
        }
    }
    let main = std::fs::read_to_string(project.join("main.yaml")).unwrap();
    assert!(main.contains("forEach: ${var:pages}"), "{main}");
    assert!(main.contains("webhookSecret: ${env:WEBHOOK_SECRET}"), "{main}");
    // `lifecycle { ignore_changes = [description] }` is monform's `lifecycle: { ignoreChanges }`.
    assert!(main.contains("ignoreChanges:\n      - description"), "{main}");
    let toml = std::fs::read_to_string(project.join("monform.toml")).unwrap();
    assert!(toml.contains("[vars.pages]"), "{toml}");

    let plan = emulator
        .monform(&project)
        .args(["plan", "--format", "json"])
        .env("API_TOKEN", API_TOKEN)
        .env("WEBHOOK_SECRET", WEBHOOK_SECRET)
        .output()
        .unwrap();
    assert!(plan.status.success(), "{}\n{}", stdout(&plan), stderr(&plan));
    let shown = format!("{}{}", stdout(&plan), stderr(&plan));
    for secret in [API_TOKEN, WEBHOOK_SECRET] {
        assert!(!shown.contains(secret), "the plan shows a secret:\n{shown}");
    }
    let plan: Value = serde_json::from_str(&stdout(&plan)).unwrap();
    let summary = &plan["summary"];
    for action in ["create", "delete", "replace", "moved", "forget"] {
        assert_eq!(summary[action], 0, "no {action}: {plan:#}");
    }
    // Every object of the state is in the plan: the 13 of the kinds monform
    // tags (checks, the group, the window, the dashboard) imported, the 8
    // of the kinds it knows by their key (snippets, alert channels,
    // variables, status pages and services, private locations) matched by
    // it, their import entries no-ops.
    assert_eq!(summary["import"], 13, "{plan:#}");
    let total: u64 = ["import", "update", "noop"]
        .iter()
        .map(|a| summary[a].as_u64().unwrap())
        .sum();
    assert_eq!(total, 21, "{plan:#}");
    // Nothing else: the secrets, which monform compares by fingerprint (a
    // secret variable's value the service never returns), match the
    // fingerprints the import entries took from Terraform's state.
    assert_eq!(summary["update"], 0, "{plan:#}");
    assert_eq!(summary["noop"], 8, "{plan:#}");
    let imports = std::fs::read_to_string(project.join("imports.yaml")).unwrap();
    for address in ["variables.API_TOKEN", "alertChannels.chatops", "checks.api_health"] {
        let entry = imports.split("- to: ").find(|e| e.starts_with(address)).unwrap();
        assert!(entry.contains("secretFingerprints:"), "{address}: {imports}");
    }

    // Another value in the environment than Terraform's is a secret to set:
    // the fingerprints are compared, not trusted blindly.
    let rotated = emulator
        .monform(&project)
        .args(["plan", "--format", "json"])
        .env("API_TOKEN", API_TOKEN)
        .env("WEBHOOK_SECRET", "whsec-rotated-4343")
        .output()
        .unwrap();
    assert!(rotated.status.success(), "{}", stderr(&rotated));
    let rotated_text = format!("{}{}", stdout(&rotated), stderr(&rotated));
    for secret in [API_TOKEN, WEBHOOK_SECRET, "whsec-rotated-4343"] {
        assert!(!rotated_text.contains(secret), "a plan shows a secret:\n{rotated_text}");
    }
    let rotated: Value = serde_json::from_str(&stdout(&rotated)).unwrap();
    let mut secrets = Vec::new();
    for change in rotated["changes"].as_array().unwrap() {
        for field in change["fields"].as_array().into_iter().flatten() {
            assert_eq!(field["sensitive"], true, "only the secret changes: {change:#}");
            secrets.push(format!(
                "{} {}",
                change["address"].as_str().unwrap(),
                field["path"].as_str().unwrap()
            ));
        }
    }
    assert_eq!(secrets, ["alertChannels.chatops config.webhookSecret"], "{rotated:#}");

    // Applied, the imports are adoptions: the next plan has nothing to do.
    let apply = emulator
        .monform(&project)
        .args(["apply", "--auto-approve"])
        .env("API_TOKEN", API_TOKEN)
        .env("WEBHOOK_SECRET", WEBHOOK_SECRET)
        .output()
        .unwrap();
    assert!(apply.status.success(), "{}\n{}", stdout(&apply), stderr(&apply));
    let again = emulator
        .monform(&project)
        .args(["plan", "--detailed-exitcode"])
        .env("API_TOKEN", API_TOKEN)
        .env("WEBHOOK_SECRET", WEBHOOK_SECRET)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}\n{}", stdout(&again), stderr(&again));
}

#[test]
fn without_a_state_nothing_is_imported_and_the_report_says_so() {
    let terraform = copy_example("terraform");
    let out = tempfile::tempdir().unwrap();
    let output = monform()
        .args(["migrate", "terraform"])
        .arg(terraform.path())
        .arg("--out")
        .arg(out.path().join("p"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("no --state: no import entries are written"),
        "{}",
        stdout(&output)
    );
    assert!(!out.path().join("p/imports.yaml").exists());
    // Writing over a project is refused.
    let again = monform()
        .args(["migrate", "terraform"])
        .arg(terraform.path())
        .arg("--out")
        .arg(out.path().join("p"))
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already holds a monform.toml"),
        "{}",
        stderr(&again)
    );
}
