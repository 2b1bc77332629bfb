//! `monform import` and `monform export` end to end: objects made through
//! the API (not monform), adopted into a new project whose plan shows no
//! changes, exported, destroyed and applied again.

use crate::common;

mod adopt;
mod round_trip;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::{Value, json};

const SECRET: (&str, &str) = ("SECRET_TOKEN", "s3cr3t-value");
const WEBHOOK_SECRET: &str = "whsec-1234";

fn post(emulator: &Emulator, path: &str, body: Value) -> Value {
    emulator.call("POST", path, Some(body))
}

fn list(emulator: &Emulator, path: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for page in 1.. {
        let separator = if path.contains('?') { '&' } else { '?' };
        let body = emulator.call("GET", &format!("{path}{separator}limit=100&page={page}"), None);
        let items = match body {
            Value::Array(items) => items,
            other => {
                // Cursor listings (status pages) return every entry on one page here.
                let items = other["entries"].as_array().cloned().unwrap_or_default();
                all.extend(items);
                return all;
            }
        };
        let short = items.len() < 100;
        all.extend(items);
        if short {
            break;
        }
    }
    all
}

const LISTS: &[&str] = &[
    "/v1/checks",
    "/v1/check-groups",
    "/v1/snippets",
    "/v1/variables",
    "/v1/alert-channels",
    "/v1/maintenance-windows",
    "/v1/status-pages",
    "/v1/status-pages/services",
    "/v1/dashboards",
    "/v1/private-locations",
];

/// 300 objects of every kind, made through the API.
fn populate(emulator: &Emulator) -> usize {
    let mut made = 0;
    let mut channels = Vec::new();
    for i in 0..19 {
        let c = post(
            emulator,
            "/v1/alert-channels",
            json!({"type": "EMAIL", "config": {"address": format!("team{i}@example.com")}}),
        );
        channels.push(c["id"].clone());
    }
    post(
        emulator,
        "/v1/alert-channels",
        json!({"type": "WEBHOOK", "config": {"name": "Ops bot", "url": "https://hooks.example.com/x", "method": "POST", "webhookSecret": WEBHOOK_SECRET}}),
    );
    made += 20;
    let mut snippets = Vec::new();
    for i in 0..10 {
        let s = post(
            emulator,
            "/v1/snippets",
            json!({"name": format!("Snippet {i}"), "script": format!("// snippet {i}\nconsole.log(`${{process.env.X}}`)\n")}),
        );
        snippets.push(s["id"].clone());
    }
    made += 10;
    let mut locations = Vec::new();
    for i in 0..5 {
        let slug = format!("office-{i}");
        post(
            emulator,
            "/v1/private-locations",
            json!({"name": format!("Office {i}"), "slugName": slug, "icon": "building"}),
        );
        locations.push(slug);
    }
    made += 5;
    let mut groups = Vec::new();
    for i in 0..10 {
        let g = post(
            emulator,
            "/v2/check-groups",
            json!({"name": format!("Group {i}"), "concurrency": 2, "locations": ["eu-west-1"],
                   "tags": [format!("team:{i}")], "setupSnippetId": snippets[i],
                   "alertChannelSubscriptions": [{"alertChannelId": channels[i], "activated": true}]}),
        );
        groups.push(g["id"].clone());
    }
    made += 10;
    for i in 0..200 {
        let group = &groups[i % 10];
        let channel = &channels[i % 19];
        let common = json!({
            "name": format!("Check {i}: the {} monitor", i % 7),
            "groupId": group,
            "frequency": 10,
            "tags": ["made-by-hand"],
            "alertChannelSubscriptions": [{"alertChannelId": channel, "activated": true}],
        });
        let (path, extra) = match i % 5 {
            0 => (
                "/v1/checks/api",
                json!({"request": {"method": "GET", "url": format!("https://api.example.com/{i}")}}),
            ),
            1 => (
                "/v1/checks/url",
                json!({"request": {"url": format!("https://www.example.com/{i}")}}),
            ),
            2 => (
                "/v1/checks/icmp",
                json!({"request": {"hostname": format!("host{i}.example.com")}, "heartbeat": {}, "script": ""}),
            ),
            3 => (
                "/v1/checks/browser",
                json!({"script": format!("const page = 1;\n// check {i}\nawait page.goto(`https://e.com/${{page}}`)\n")}),
            ),
            _ => (
                "/v1/checks/tcp",
                json!({"request": {"hostname": format!("db{i}.example.com"), "port": 5432},
                       "privateLocations": [locations[i % 5]]}),
            ),
        };
        let mut body = common;
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        post(emulator, &format!("{path}?autoAssignAlerts=false"), body);
    }
    made += 200;
    for i in 0..19 {
        post(
            emulator,
            "/v1/variables",
            json!({"key": format!("VAR_{i}"), "value": format!("value {i}")}),
        );
    }
    post(
        emulator,
        "/v1/variables",
        json!({"key": SECRET.0, "value": SECRET.1, "secret": true}),
    );
    made += 20;
    for i in 0..10 {
        post(
            emulator,
            "/v1/maintenance-windows",
            json!({"name": format!("Window {i}"), "tags": ["ops"], "startsAt": "2026-12-06T02:00:00Z",
                   "endsAt": "2026-12-06T03:00:00Z", "repeatInterval": 1, "repeatUnit": "WEEK"}),
        );
    }
    made += 10;
    let mut services = Vec::new();
    for i in 0..10 {
        let s = post(
            emulator,
            "/v1/status-pages/services",
            json!({"name": format!("Service {i}")}),
        );
        services.push(s["id"].clone());
    }
    made += 10;
    for i in 0..5 {
        post(
            emulator,
            "/v1/status-pages",
            json!({"name": format!("Status {i}"), "url": format!("status-{i}"),
                   "cards": [{"name": "Main", "services": [{"id": services[2 * i]}, {"id": services[2 * i + 1]}]}]}),
        );
    }
    made += 5;
    for i in 0..10 {
        post(
            emulator,
            "/v1/dashboards",
            json!({"header": format!("Board {i}"), "customUrl": format!("board-{i}"), "tags": ["wall"]}),
        );
    }
    made += 10;
    made
}

/// The account's objects, comparable across ids: names and key fields,
/// references by the referenced object's name.
fn snapshot(emulator: &Emulator) -> BTreeMap<&'static str, Vec<String>> {
    let mut names: BTreeMap<(String, String), String> = BTreeMap::new();
    // Projects' ownership records are monform's bookkeeping, not objects of a project.
    let all: Vec<(&'static str, Vec<Value>)> = LISTS
        .iter()
        .map(|l| {
            let mut items = list(emulator, l);
            items.retain(|i| !i["key"].as_str().is_some_and(|k| k.starts_with("MONFORM_OWNER_")));
            (*l, items)
        })
        .collect();
    for (path, items) in &all {
        for item in items {
            let id = item
                .get("id")
                .or(item.get("dashboardId"))
                .cloned()
                .unwrap_or(Value::Null);
            let name = item
                .get("name")
                .or(item.get("header"))
                .or(item.get("key"))
                .cloned()
                .unwrap_or(Value::Null);
            names.insert((path.to_string(), id.to_string()), name.to_string());
        }
    }
    let name_of = |path: &str, id: &Value| {
        names
            .get(&(path.to_owned(), id.to_string()))
            .cloned()
            .unwrap_or_default()
    };
    let mut out = BTreeMap::new();
    for (path, items) in all {
        let mut rows: Vec<String> = items
            .iter()
            .map(|o| {
                let tags: Vec<&str> = o["tags"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|t| !t.starts_with("monform:"))
                    .collect();
                let subscriptions: Vec<String> = o["alertChannelSubscriptions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| name_of("/v1/alert-channels", &s["alertChannelId"]) + &s["type"].to_string())
                    .collect();
                let row = match path {
                    "/v1/checks" => json!([
                        o["name"],
                        o["checkType"],
                        o["frequency"],
                        name_of("/v1/check-groups", &o["groupId"]),
                        tags,
                        subscriptions,
                        o["request"],
                        o["script"],
                        o["privateLocations"],
                        o["locations"]
                    ]),
                    "/v1/check-groups" => json!([
                        o["name"],
                        o["concurrency"],
                        tags,
                        o["locations"],
                        name_of("/v1/snippets", &o["setupSnippetId"]),
                        subscriptions.len()
                    ]),
                    "/v1/snippets" => json!([o["name"], o["script"]]),
                    "/v1/variables" => json!([o["key"], o["value"], o["secret"], o["locked"]]),
                    "/v1/alert-channels" => json!([
                        o["type"],
                        o["config"]["address"],
                        o["config"]["url"],
                        o["config"]["name"],
                        o["sendFailure"]
                    ]),
                    "/v1/maintenance-windows" => json!([o["name"], tags, o["startsAt"], o["endsAt"], o["repeatUnit"]]),
                    "/v1/status-pages" => {
                        let cards: Vec<Value> = o["cards"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|c| {
                                let services: Vec<String> = c["services"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .map(|s| name_of("/v1/status-pages/services", &s["id"]))
                                    .collect();
                                json!([c["name"], services])
                            })
                            .collect();
                        json!([o["name"], o["url"], cards])
                    }
                    "/v1/status-pages/services" => json!([o["name"]]),
                    "/v1/dashboards" => json!([o["header"], o["customUrl"], tags]),
                    _ => json!([o["name"], o["slugName"], o["icon"]]),
                };
                row.to_string()
            })
            .collect();
        rows.sort();
        out.insert(path, rows);
    }
    out
}

fn assert_ok(output: &std::process::Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

/// The environment variables ENVIRONMENT.md lists, with the test's values.
fn secrets_of(project: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(project.join("ENVIRONMENT.md")).expect("ENVIRONMENT.md");
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(|c| c.trim().trim_matches('`')).collect();
            let (name, field) = (cells.get(1)?, cells.get(3)?);
            let value = match *field {
                "value" => SECRET.1,
                "config.webhookSecret" => WEBHOOK_SECRET,
                _ => return None,
            };
            Some((name.to_string(), value.to_owned()))
        })
        .collect()
}

/// The files of an exported project, YAML parsed (key order ignored).
fn project_files(dir: &Path) -> BTreeMap<String, Value> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let value = if name.ends_with(".yaml") {
                serde_saphyr::from_str(&text).unwrap()
            } else {
                Value::String(text)
            };
            files.insert(name, value);
        }
    }
    files
}

fn with_env(mut command: assert_cmd::Command, env: &[(String, String)]) -> assert_cmd::Command {
    for (name, value) in env {
        command.env(name, value);
    }
    command
}
