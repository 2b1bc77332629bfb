//! `/openapi.json` as standard tooling reads it: valid under the OpenAPI
//! Initiative's 3.1 schema (vendored in `fixtures/openapi-3.1`), parsed by
//! a typed 3.1 model (`oas3`), every body schema compiling as JSON Schema
//! 2020-12 (references resolve, patterns are valid), and the tagged unions
//! in the form generators support.

use crate::common;

use common::TestServer;
use reqwest::Method;
use serde_json::{Value, json};

async fn served_document() -> Value {
    let server = TestServer::start().await;
    let response = server
        .client
        .get(server.url("/openapi.json"))
        .send()
        .await
        .expect("request sent");
    assert_eq!(response.status(), 200);
    response.json().await.expect("a JSON document")
}

fn meta_schema() -> Value {
    let text = include_str!("../fixtures/openapi-3.1/schema.json");
    serde_json::from_str(text).expect("the vendored OpenAPI 3.1 schema is JSON")
}

/// A validator for one component of the document (its `$ref`s resolved in it).
fn component_validator(document: &Value, name: &str) -> jsonschema::Validator {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/components/schemas/{name}"),
        "components": document["components"],
    });
    jsonschema::options()
        .build(&schema)
        .unwrap_or_else(|e| panic!("component {name} does not compile: {e}"))
}

fn operations(document: &Value) -> Vec<(String, String, &Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            all.push((method.to_uppercase(), path.clone(), operation));
        }
    }
    all
}

#[tokio::test]
async fn the_document_is_valid_openapi_3_1() {
    let document = served_document().await;
    let validator = jsonschema::options()
        .build(&meta_schema())
        .expect("the OpenAPI 3.1 schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "not valid OpenAPI 3.1:\n{}", errors.join("\n"));

    let spec = oas3::from_json(document.to_string()).expect("oas3 parses the document");
    assert_eq!(spec.validate_version().expect("a 3.1 version").minor, 1);
    let operations = spec.operations().count();
    assert!(operations >= 60, "only {operations} operations");
    for (path, method, operation) in spec.operations() {
        assert!(operation.operation_id.is_some(), "{method} {path} has no operationId");
    }
}

#[tokio::test]
async fn every_component_compiles_as_json_schema_2020_12() {
    let document = served_document().await;
    for (name, schema) in document["components"]["schemas"].as_object().expect("components") {
        let mut with_dialect = schema.clone();
        with_dialect["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        if let Err(e) = jsonschema::meta::validate(&with_dialect) {
            panic!("component {name} is not a valid JSON Schema: {e}");
        }
        component_validator(&document, name);
    }
}

#[tokio::test]
async fn every_operation_lists_the_statuses_of_its_kind_of_route() {
    let document = served_document().await;
    for (method, path, operation) in operations(&document) {
        let responses = operation["responses"].as_object().expect("responses");
        let has = |status: &str| responses.contains_key(status);
        let context = format!("{method} {path}");
        for status in ["429", "500", "502", "503"] {
            assert!(has(status), "{context} does not list {status}");
        }
        if path.starts_with("/v") {
            for status in ["400", "401", "403"] {
                assert!(has(status), "{context} does not list {status}");
            }
        }
        if path.contains('{') {
            assert!(has("404"), "{context} does not list 404");
        }
        if operation.get("requestBody").is_some() {
            assert!(has("413") && has("415"), "{context} does not list 413 and 415");
        }
        for (status, response) in responses {
            if !status.starts_with('2') {
                assert_eq!(
                    response["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Error",
                    "{context} {status} has no error body"
                );
            }
        }
    }
    let conflict = |method: &str, path: &str| document["paths"][path][method]["responses"].get("409").is_some();
    assert!(conflict("post", "/v1/variables"), "variable keys clash");
    assert!(conflict("put", "/v1/status-pages/{id}"), "status page urls clash");
    assert!(
        conflict("delete", "/v1/check-groups/{id}"),
        "a group in use is not deleted"
    );
    assert!(!conflict("post", "/v1/snippets"), "snippets have no unique field");
    let timeout = &document["paths"]["/v2/check-sessions/{checkSessionId}/completion"]["get"]["responses"];
    assert!(timeout.get("408").is_some(), "a completion wait can time out");
}

#[tokio::test]
async fn tagged_unions_have_a_discriminator_mapping_every_variant() {
    let document = served_document().await;
    let schemas = &document["components"]["schemas"];
    for (union, tag, variants) in [("CheckUpdate", "checkType", 10), ("AlertChannelCreate", "type", 8)] {
        let discriminator = &schemas[union]["discriminator"];
        assert_eq!(discriminator["propertyName"], tag, "{union}");
        let mapping = discriminator["mapping"].as_object().expect("a mapping");
        assert_eq!(mapping.len(), variants, "{union}");
        for (value, target) in mapping {
            let name = target
                .as_str()
                .and_then(|t| t.strip_prefix("#/components/schemas/"))
                .expect("a component");
            assert_eq!(
                schemas[name]["properties"][tag]["const"], *value,
                "{union} maps {value} to {name}"
            );
        }
    }
    // Check creates need no union: each type has its endpoint and component.
    let create = &document["paths"]["/v1/checks/api"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(create["$ref"], "#/components/schemas/CheckApiCreate");
}

#[tokio::test]
async fn body_schemas_follow_the_servers_reading() {
    let document = served_document().await;
    let check = |name: &str, body: Value| component_validator(&document, name).is_valid(&body);
    // The endpoint names the type; the quirk fields are free-form.
    assert!(check(
        "CheckApiCreate",
        json!({"name": "x", "request": {"url": "https://e.com"}})
    ));
    assert!(!check(
        "CheckApiCreate",
        json!({"checkType": "TCP", "name": "x", "request": {"url": "https://e.com"}})
    ));
    assert!(check(
        "CheckApiCreate",
        json!({"name": "x", "request": {"url": "https://e.com"}, "script": 3})
    ));
    assert!(!check(
        "CheckIcmpCreate",
        json!({"name": "x", "request": {"hostname": "e.com"}})
    ));
    assert!(check(
        "CheckIcmpCreate",
        json!({"name": "x", "request": {"hostname": "e.com"}, "heartbeat": {}, "script": ""})
    ));
    // Updates are partial; null clears optional fields only.
    assert!(check(
        "CheckApiUpdate",
        json!({"muted": true, "groupId": null, "tags": null})
    ));
    assert!(!check("CheckApiUpdate", json!({"name": null})));
    assert!(!check("CheckUpdate", json!({"muted": true})));
    assert!(check(
        "CheckUpdate",
        json!({"muted": true, "heartbeat": null, "script": null})
    ));
    assert!(check("GroupUpdate", json!({"name": "g"})));
    assert!(!check("GroupUpdate", json!({"muted": true})));
    assert!(check("VariableCreate", json!({"key": "API_KEY", "value": "v"})));
    assert!(!check("VariableCreate", json!({"key": " ", "value": "v"})));
    assert!(!check(
        "SnippetCreate",
        json!({"name": "s", "script": "x", "unknown": 1})
    ));
    assert!(!check(
        "DashboardCreate",
        json!({"customUrl": "a", "header": "h", "refreshRate": 4294967296u64})
    ));
}

/// Statuses random requests rarely reach, provoked on purpose: each must be
/// one the document lists for the operation that answered it.
#[tokio::test]
async fn provoked_statuses_are_listed_by_their_operation() {
    let server = TestServer::with(monform_emulator::Config {
        rate_limit: None,
        execute_checks: false,
        session_duration: std::time::Duration::from_secs(60),
        ..monform_emulator::Config::default()
    })
    .await;
    let document: Value = server
        .client
        .get(server.url("/openapi.json"))
        .send()
        .await
        .expect("request sent")
        .json()
        .await
        .expect("a document");
    let listed = |method: &str, template: &str, status: u16| {
        let operation = &document["paths"][template][method];
        assert!(operation.is_object(), "{method} {template} is not in the document");
        assert!(
            operation["responses"].get(status.to_string()).is_some(),
            "{method} {template} answered {status}, which the document does not list"
        );
    };
    let send = |method: reqwest::Method, path: &str, body: Option<Value>| {
        let mut request = server.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await.expect("request sent");
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };

    let (status, group) = send(Method::POST, "/v2/check-groups", Some(json!({ "name": "g" }))).await;
    assert_eq!(status, 201, "{group}");
    let check = json!({ "name": "c", "groupId": group["id"], "request": { "url": "https://example.com" } });
    let (status, check) = send(Method::POST, "/v1/checks/api?autoAssignAlerts=false", Some(check)).await;
    assert_eq!(status, 201, "{check}");
    let (status, _) = send(Method::DELETE, &format!("/v1/check-groups/{}", group["id"]), None).await;
    assert_eq!(status, 409, "a group in use is not deleted");
    listed("delete", "/v1/check-groups/{id}", status);

    let variable = json!({ "key": "TOKEN", "value": "v" });
    send(Method::POST, "/v1/variables", Some(variable.clone())).await;
    let (status, _) = send(Method::POST, "/v1/variables", Some(variable)).await;
    assert_eq!(status, 409, "a variable key is unique");
    listed("post", "/v1/variables", status);

    let (status, sessions) = send(
        Method::POST,
        "/v2/check-sessions/trigger",
        Some(json!({ "target": { "checkId": [check["id"]] } })),
    )
    .await;
    assert_eq!(status, 201, "{sessions}");
    let session = sessions["sessions"][0]["checkSessionId"]
        .as_str()
        .expect("a session id");
    let path = format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=1");
    let (status, _) = send(Method::GET, &path, None).await;
    assert_eq!(status, 408, "the session runs a minute");
    listed("get", "/v2/check-sessions/{checkSessionId}/completion", status);

    let response = server
        .request(Method::GET, "/v1/checks")
        .header("x-service-account", "someone-else")
        .send()
        .await
        .expect("request sent");
    listed("get", "/v1/checks", response.status().as_u16());
    assert_eq!(response.status(), 403);

    // A method a path does not have is no operation: 405, naming the allowed ones.
    let response = server
        .request(Method::PATCH, "/v1/checks")
        .send()
        .await
        .expect("request sent");
    assert_eq!(response.status(), 405);
    let allow = response
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(allow.contains("GET"), "Allow: {allow}");
    assert!(document["paths"]["/v1/checks"].get("patch").is_none());
}

/// Stateful tools need ids they cannot make up: every operation with a
/// path parameter is the target of a link (from a create, a session
/// trigger or a listing) whose parameters are exactly its path
/// parameters, and every link names an operation of the document.
#[tokio::test]
async fn links_lead_to_every_operation_that_needs_an_id() {
    let document = served_document().await;
    let all = operations(&document);
    let by_id: std::collections::HashMap<&str, (&str, &str)> = all
        .iter()
        .map(|(method, path, op)| (op["operationId"].as_str().unwrap(), (method.as_str(), path.as_str())))
        .collect();
    let path_parameters = |path: &str| -> Vec<String> {
        let mut names: Vec<String> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_owned)
            .collect();
        names.sort();
        names
    };
    let mut reached = std::collections::BTreeSet::new();
    let mut from = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (method, path, operation) in &all {
        for response in operation["responses"].as_object().unwrap().values() {
            for link in response["links"].as_object().into_iter().flat_map(|l| l.values()) {
                let target = link["operationId"].as_str().expect("a link names its operation");
                let (target_method, target_path) = by_id[target];
                let mut given: Vec<String> = link["parameters"].as_object().unwrap().keys().cloned().collect();
                given.sort();
                assert_eq!(given, path_parameters(target_path), "{method} {path} -> {target}");
                for value in link["parameters"].as_object().unwrap().values() {
                    let value = value.as_str().unwrap();
                    assert!(
                        value.starts_with("$response.body#/") || value.starts_with("$request.path."),
                        "{value}"
                    );
                }
                let target = format!("{target_method} {target_path}");
                from.entry(format!("{method} {path}")).or_default().push(target.clone());
                reached.insert(target);
            }
        }
    }
    // The agents' own protocol: its ids come from leases, not from the API.
    let unreached: Vec<String> = all
        .iter()
        .filter(|(_, path, _)| path.contains('{') && !path.starts_with("/v1/agent/"))
        .map(|(method, path, _)| format!("{method} {path}"))
        .filter(|op| !reached.contains(op))
        .collect();
    assert!(unreached.is_empty(), "no link leads to: {unreached:#?}");
    let api = &from["POST /v1/checks/api"];
    for target in [
        "GET /v1/checks/{id}",
        "PUT /v1/checks/{id}",
        "PUT /v1/checks/api/{id}",
        "DELETE /v1/checks/{id}",
        "GET /v1/analytics/api-checks/{id}",
        "GET /v2/check-results/{checkId}",
    ] {
        assert!(api.contains(&target.to_owned()), "api create -> {target}: {api:?}");
    }
    assert!(!api.contains(&"PUT /v1/checks/tcp/{id}".to_owned()), "{api:?}");
    let trigger = &from["POST /v2/check-sessions/trigger"];
    assert!(trigger.contains(&"GET /v2/check-sessions/{checkSessionId}/completion".to_owned()));
    assert!(trigger.contains(&"POST /v1/check-sessions/{checkSessionId}/cancel".to_owned()));
    eprintln!("{} operations reached by links", reached.len());
}
