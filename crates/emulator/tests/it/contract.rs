//! The contract test (issue 28): for every operation the reference document
//! (`../shared/spec/reference-openapi.json`, from the workspace root)
//! defines and the emulator serves, valid requests are sent and each
//! response's status must be one the reference lists for the operation and
//! its body must validate against the reference's schema for that status
//! (the `jsonschema` crate, the document's OpenAPI 3.0 schemas read as JSON
//! Schema 2020-12: `nullable` as a `null` type, boolean `exclusiveMinimum`
//! as the number form). The deliberate differences of
//! `docs/api-contract-notes.md` are the only errors skipped, each by
//! operation and field; a listed difference that no longer occurs fails
//! the test too, so the list stays true.

use crate::common;
#[path = "contract/scenario.rs"]
mod scenario;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use common::TestServer;
use monform_emulator::Config;
use serde_json::{Map, Value, json};

/// The reference document: `MONFORM_REFERENCE_OPENAPI` when set, else the
/// shared spec folder beside the clone (`../shared/spec/`), else the copy
/// kept beside this test, so a clone alone (CI's) runs the test.
fn reference() -> Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = root.join("../shared/spec/reference-openapi.json");
    let path = std::env::var_os("MONFORM_REFERENCE_OPENAPI").map_or_else(
        || {
            if shared.is_file() {
                shared
            } else {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/reference-openapi.json")
            }
        },
        PathBuf::from,
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the contract test needs the reference document at {}: {e}",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("the reference document is JSON")
}

/// An OpenAPI 3.0 schema as JSON Schema 2020-12.
fn to_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(to_json_schema).collect()),
        Value::Object(object) => {
            let mut out: Map<String, Value> = object
                .iter()
                .filter(|(k, _)| !k.starts_with("x-") && *k != "example" && *k != "nullable")
                .map(|(k, v)| {
                    // Property maps hold schemas by name: convert their values only.
                    let converted = if k == "properties" {
                        Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(name, s)| (name.clone(), to_json_schema(s)))
                                .collect(),
                        )
                    } else {
                        to_json_schema(v)
                    };
                    (k.clone(), converted)
                })
                .collect();
            if object.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
                out.remove("exclusiveMinimum");
                if let Some(min) = out.remove("minimum") {
                    out.insert("exclusiveMinimum".into(), min);
                }
            } else if object.get("exclusiveMinimum") == Some(&Value::Bool(false)) {
                out.remove("exclusiveMinimum");
            }
            if object.get("nullable") == Some(&Value::Bool(true)) {
                if let Some(Value::String(t)) = out.get("type").cloned() {
                    out.insert("type".into(), json!([t, "null"]));
                }
                if let Some(Value::Array(values)) = out.get_mut("enum") {
                    values.push(Value::Null);
                }
                if out.contains_key("$ref") || out.contains_key("allOf") || out.contains_key("oneOf") {
                    let inner = Value::Object(std::mem::take(&mut out));
                    out.insert("anyOf".into(), json!([inner, { "type": "null" }]));
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A reference path with its parameters unnamed (`/v1/variables/{}`), to
/// match the emulator's `{id}` with the reference's `{key}`.
fn shape(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

/// A deliberate difference: errors of `operation` at an instance path
/// starting with `at` (`*` for any one segment) are skipped.
struct Difference {
    operation: &'static str,
    at: &'static str,
}

/// The deliberate differences of docs/api-contract-notes.md, by operation
/// and field (each explained there).
const DIFFERENCES: &[Difference] = &[
    // api-contract.md: `rawKey` is returned once, on key creation; later
    // reads return only `maskedKey` (the reference requires it on every read).
    Difference {
        operation: "GET /v1/private-locations",
        at: "/*/keys/*",
    },
    Difference {
        operation: "GET /v1/private-locations/{}",
        at: "/keys/*",
    },
    Difference {
        operation: "PUT /v1/private-locations/{}",
        at: "/keys/*",
    },
];

fn matches(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    path.len() >= pattern.len() && pattern.iter().zip(&path).all(|(p, s)| *p == "*" || p == s)
}

/// The leaf values of `value`, by path with array indexes as `*`.
fn fields(value: &Value, at: &str, out: &mut BTreeSet<String>) -> usize {
    match value {
        Value::Object(object) => object.iter().map(|(k, v)| fields(v, &format!("{at}/{k}"), out)).sum(),
        Value::Array(items) => items.iter().map(|v| fields(v, &format!("{at}/*"), out)).sum(),
        _ => {
            out.insert(at.to_owned());
            1
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_is_shaped_as_the_reference_says() {
    let reference = reference();
    let ts = TestServer::with(Config {
        rate_limit: None,
        execute_checks: false,
        session_duration: std::time::Duration::from_millis(300),
        ..Config::default()
    })
    .await;
    let served: BTreeSet<String> = ts.read_openapi().await;
    let components = to_json_schema(&reference["components"]);

    // Every reference operation the emulator serves, by method and shape.
    let mut operations: BTreeMap<String, &Value> = BTreeMap::new();
    for (path, item) in reference["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let key = format!("{} {}", method.to_uppercase(), shape(path));
            if served.contains(&key) {
                operations.insert(key, operation);
            }
        }
    }
    let exchanges = scenario::run(&ts).await;

    let mut failures = Vec::new();
    let mut skipped: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut checked_operations = BTreeSet::new();
    let mut field_paths = BTreeSet::new();
    let mut values = 0;
    for exchange in &exchanges {
        let key = format!("{} {}", exchange.method, shape(&exchange.template));
        let Some(operation) = operations.get(&key) else {
            failures.push(format!("{key}: not an operation of the reference the emulator serves"));
            continue;
        };
        checked_operations.insert(key.clone());
        let status = exchange.status.to_string();
        let Some(response) = operation["responses"].get(&status) else {
            failures.push(format!(
                "{key}: status {status} is not one the reference lists ({}): {}",
                operation["responses"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                exchange.body
            ));
            continue;
        };
        // A 204 has no body (the reference gives some a string schema).
        let Some(schema) = response
            .pointer("/content/application~1json/schema")
            .filter(|_| exchange.status != 204)
        else {
            continue;
        };
        let mut root = json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "components": components });
        root["$ref"] = json!("#/$defs/response");
        root["$defs"] = json!({ "response": to_json_schema(schema) });
        let validator = jsonschema::options()
            .build(&root)
            .unwrap_or_else(|e| panic!("{key}: the reference's schema does not compile: {e}"));
        values += fields(&exchange.body, "", &mut field_paths);
        for error in validator.iter_errors(&exchange.body) {
            let at = error.instance_path().to_string();
            if let Some(d) = DIFFERENCES.iter().find(|d| d.operation == key && matches(d.at, &at)) {
                skipped.insert((d.operation, d.at));
                continue;
            }
            failures.push(format!("{key} ({status}) at `{at}`: {error}"));
        }
    }
    for difference in DIFFERENCES {
        if !skipped.contains(&(difference.operation, difference.at)) {
            failures.push(format!(
                "listed difference {} at {} no longer occurs: remove it from the list and the notes",
                difference.operation, difference.at
            ));
        }
    }
    let missing: Vec<&String> = operations.keys().filter(|k| !checked_operations.contains(*k)).collect();
    for key in &missing {
        failures.push(format!("{key}: served, but the contract test sends it no request"));
    }
    let not_served = reference["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(p, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |m| format!("{} {}", m.to_uppercase(), shape(p)))
        })
        .filter(|k| !served.contains(k))
        .collect::<Vec<_>>();
    eprintln!(
        "contract: {} of the reference's operations checked ({} requests, {} response values at {} distinct \
         field paths); not served: {}",
        checked_operations.len(),
        exchanges.len(),
        values,
        field_paths.len(),
        if not_served.is_empty() {
            "none".to_owned()
        } else {
            not_served.join(", ")
        }
    );
    assert!(
        failures.is_empty(),
        "{} contract failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

impl TestServer {
    /// The operations `/openapi.json` lists, as `METHOD /path/{}`.
    async fn read_openapi(&self) -> BTreeSet<String> {
        let document: Value = self
            .client
            .get(self.url("/openapi.json"))
            .send()
            .await
            .expect("request sent")
            .json()
            .await
            .expect("a JSON document");
        let mut served = BTreeSet::new();
        for (path, item) in document["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("a path item").keys() {
                served.insert(format!("{} {}", method.to_uppercase(), shape(path)));
            }
        }
        served
    }
}

/// The copy kept beside the test is the shared spec's document, when the
/// shared folder is there to compare with.
#[test]
fn the_kept_copy_of_the_reference_is_current() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Ok(shared) = std::fs::read(root.join("../../../shared/spec/reference-openapi.json")) else {
        return;
    };
    let kept = std::fs::read(root.join("tests/it/reference-openapi.json")).expect("the kept copy");
    assert!(
        shared == kept,
        "crates/emulator/tests/it/reference-openapi.json differs from ../shared/spec/reference-openapi.json: copy it again"
    );
}
