//! `/openapi.json`: generated from the route table and the model's wire
//! schemas, so it lists exactly what the server implements.

use std::collections::BTreeMap;

use monform_model::wire::wire_schemas;
use serde_json::{Map, Value, json};

use crate::routes::Route;

pub fn document(routes: &[Route]) -> Value {
    let mut paths: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    for route in routes {
        let mut operation = json!({
            "summary": route.summary,
            "parameters": parameters(&route.path),
            "responses": responses(route.method),
        });
        if route.path.starts_with("/v") {
            operation["security"] = json!([{ "bearer": [] }]);
        }
        if let Some(kind) = route.body {
            let schema = wire_schemas().kind(kind).clone();
            operation["requestBody"] =
                json!({ "required": true, "content": { "application/json": { "schema": schema } } });
        }
        paths
            .entry(route.path.as_str())
            .or_default()
            .insert(route.method.to_lowercase(), operation);
    }
    let definitions = wire_schemas().document()["definitions"].clone();
    let text = json!({
        "openapi": "3.0.3",
        "info": { "title": "Monitoring API (monform emulator)", "version": env!("CARGO_PKG_VERSION") },
        "paths": paths,
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": definitions,
        },
    })
    .to_string()
    // The model's schema uses draft-07 `definitions`; OpenAPI keeps them under components.
    .replace("#/definitions/", "#/components/schemas/");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn parameters(path: &str) -> Value {
    let mut list: Vec<Value> = path
        .split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .collect();
    if path.starts_with("/v") {
        list.push(
            json!({ "name": "X-Service-Account", "in": "header", "required": false, "schema": { "type": "string" } }),
        );
    }
    Value::Array(list)
}

fn responses(method: &str) -> Value {
    let success = match method {
        "POST" => "201",
        "DELETE" => "204",
        _ => "200",
    };
    let mut responses = json!({ success: { "description": "success" } });
    for (code, text) in [
        ("400", "invalid request"),
        ("401", "missing or unknown API key"),
        ("403", "wrong account"),
        ("404", "not found"),
        ("429", "rate limited"),
    ] {
        responses[code] = json!({ "description": text });
    }
    responses
}
