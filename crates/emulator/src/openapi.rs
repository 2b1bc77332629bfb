//! `/openapi.json`: generated from the route table and the model's wire
//! schemas, so it lists exactly what the server implements.
//!
//! OpenAPI 3.1 rather than 3.0: its schemas are JSON Schema (2020-12), so
//! the model's schemas go in as they are (`type: [.., "null"]`, `const`,
//! numeric `exclusiveMinimum`), where 3.0's dialect would need each
//! rewritten (`nullable`, one-value `enum`s, boolean exclusive bounds) and
//! loses what has no 3.0 form. Schemathesis and openapi-spec-validator
//! both take 3.1.
//!
//! Every operation lists every status the server can answer: derived from
//! the route's method, path and body, plus what the route table says it
//! adds (409, 408...), plus what the middleware answers on every route.

mod bodies;
mod links;

use std::collections::BTreeMap;

use axum::http::StatusCode;
use monform_model::wire::wire_schemas;
use serde_json::{Map, Value, json};

use crate::routes::{Body, Route};

pub fn document(routes: &[Route]) -> Value {
    let mut components = Map::new();
    components.insert("Error".into(), error_schema());
    let definitions = wire_schemas().document()["definitions"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    components.extend(definitions);
    let mut paths: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    let ids: Vec<String> = routes
        .iter()
        .enumerate()
        .map(|(index, route)| operation_id(route, index))
        .collect();
    for (route, id) in routes.iter().zip(&ids) {
        let mut responses = responses(route);
        let links = links::links(route, routes, &ids);
        if !links.is_empty() {
            responses[route.success.as_u16().to_string()]["links"] = Value::Object(links);
        }
        let mut operation = json!({
            "operationId": id,
            "summary": route.summary,
            "parameters": parameters(route),
            "responses": responses,
        });
        if is_api(route) {
            operation["security"] = json!([{ "bearer": [] }]);
        }
        if let Some(body) = route.body {
            let required = !matches!(body, Body::Json { required: false, .. });
            let schema = bodies::body_schema(body, &mut components);
            operation["requestBody"] =
                json!({ "required": required, "content": { "application/json": { "schema": schema } } });
        }
        paths
            .entry(route.path.as_str())
            .or_default()
            .insert(route.method.to_lowercase(), operation);
    }
    components
        .values_mut()
        .for_each(|schema| to_openapi_schema(schema, false));
    let paths = Value::from_iter(
        paths
            .into_iter()
            .map(|(path, item)| (path.to_owned(), Value::Object(item))),
    );
    let components = reachable(&paths, components);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Monitoring API (monform emulator)",
            "version": env!("CARGO_PKG_VERSION"),
            "description": bodies::RULES,
        },
        "paths": paths,
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": components,
        },
    })
}

/// Routes under `/v1`, `/v2`: they need a key (the heartbeat ping does not).
fn is_api(route: &Route) -> bool {
    route.path.starts_with("/v")
}

/// `get_v1_checks_id`; the index keeps ids unique should two routes read alike.
fn operation_id(route: &Route, index: usize) -> String {
    let words: Vec<&str> = route
        .path
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    format!("{}_{}_{index}", route.method.to_lowercase(), words.join("_"))
}

fn parameters(route: &Route) -> Value {
    let mut list: Vec<Value> = route
        .path
        .split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } }))
        .collect();
    for query in &route.query {
        list.push(json!({ "name": query.name, "in": "query", "required": query.required, "schema": query.schema }));
    }
    if is_api(route) {
        list.push(json!({
            "name": "X-Service-Account", "in": "header", "required": false, "schema": { "type": "string" },
            "description": "The account the key must belong to (403 otherwise).",
        }));
    }
    Value::Array(list)
}

/// Every status the route can answer, and why.
fn statuses(route: &Route) -> BTreeMap<u16, &'static str> {
    let mut all = BTreeMap::new();
    all.insert(route.success.as_u16(), "success");
    if is_api(route) {
        all.insert(
            400,
            "invalid request: the body, a query parameter or a rule (`attributes` names each field)",
        );
        all.insert(401, "missing, malformed or unknown API key");
        all.insert(403, "the key does not belong to the account named by X-Service-Account");
    }
    if route.path.contains('{') {
        all.insert(404, "not found");
    }
    if route.body.is_some() {
        all.insert(408, "body not received in time (`monform serve --body-timeout`)");
        all.insert(413, "body larger than 1 MiB");
        all.insert(415, "body not sent as JSON (`Content-Type: application/json`)");
    }
    // The middleware's, on every route: the rate limit and injected faults.
    all.insert(
        429,
        "rate limited (Retry-After, X-RateLimit-* headers), or too many failed authentications from this address (Retry-After)",
    );
    all.insert(500, "internal error, or an injected fault (fault rate)");
    all.insert(502, "injected fault (fault rate)");
    all.insert(503, "injected fault (fault rate)");
    for status in &route.statuses {
        let why = match *status {
            StatusCode::CONFLICT => "conflict: a unique value is taken, or the object is still in use",
            StatusCode::REQUEST_TIMEOUT => "still running after maxWaitSeconds",
            StatusCode::NOT_FOUND => "not found, or nothing matches",
            _ => "see the summary",
        };
        all.insert(status.as_u16(), why);
    }
    all
}

fn responses(route: &Route) -> Value {
    let success = route.success.as_u16();
    let mut responses = Map::new();
    for (status, description) in statuses(route) {
        let mut response = json!({ "description": description });
        if status != success {
            response["content"] = json!({ "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } });
        }
        responses.insert(status.to_string(), response);
    }
    Value::Object(responses)
}

/// The error body of every failed request (`error::ApiError::body`).
fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["statusCode", "error", "message", "attributes"],
        "properties": {
            "statusCode": { "type": "integer" },
            "error": { "type": "string" },
            "message": { "type": "string" },
            "attributes": {
                "type": "object",
                "description": "For 400: each offending field path and what is wrong with it.",
                "additionalProperties": { "type": "string" },
            },
        },
    })
}

/// The components `paths` uses, directly or through others: the model's
/// schemas of whole resources (file-side unions) are not request bodies.
fn reachable(paths: &Value, mut components: Map<String, Value>) -> Map<String, Value> {
    fn references<'v>(value: &'v Value, found: &mut Vec<&'v str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    found.extend(r.strip_prefix("#/components/schemas/"));
                }
                map.values().for_each(|v| references(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, found)),
            _ => {}
        }
    }
    let mut kept = Map::new();
    let mut pending = Vec::new();
    references(paths, &mut pending);
    let mut queue: Vec<String> = pending.into_iter().map(str::to_owned).collect();
    while let Some(name) = queue.pop() {
        if let Some(schema) = components.remove(&name) {
            let mut found = Vec::new();
            references(&schema, &mut found);
            queue.extend(found.into_iter().map(str::to_owned));
            kept.insert(name, schema);
        }
    }
    kept.sort_keys();
    kept
}

/// The model's draft-07 schemas as OpenAPI 3.1 schemas: references under
/// `components`, monform's `x-` annotations (file-side facts) dropped, and
/// `format: uint32` bounded as the model's types are (serde refuses more).
fn to_openapi_schema(value: &mut Value, in_properties: bool) {
    match value {
        Value::Object(map) => {
            if !in_properties {
                map.retain(|key, _| !key.starts_with("x-"));
                if let Some(Value::String(reference)) = map.get_mut("$ref") {
                    *reference = reference.replace("#/definitions/", "#/components/schemas/");
                }
                if map.get("format").and_then(Value::as_str) == Some("uint32") && !map.contains_key("maximum") {
                    map.insert("maximum".into(), json!(u32::MAX));
                }
            }
            for (key, child) in map.iter_mut() {
                let names_follow = !in_properties && (key == "properties" || key == "patternProperties");
                to_openapi_schema(child, names_follow);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| to_openapi_schema(v, false)),
        _ => {}
    }
}
