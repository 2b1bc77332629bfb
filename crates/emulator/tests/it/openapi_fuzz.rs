//! Property-based: requests built from `/openapi.json` alone, for every
//! operation, against the real emulator on a loopback port. Bodies are
//! generated from the operation's schema (valid ones, and ones made invalid
//! on purpose), with path parameters (ids of objects that exist, and ids
//! that do not) and query parameters; some requests lack the key or the
//! JSON content type. No request may get a 5xx or a status the document
//! does not list for the operation, every error carries the documented
//! error body, and a body the schema rejects is never accepted.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use monform_emulator::Config;
use proptest::prelude::*;
use proptest::strategy::{Union, ValueTree};
use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value, json};

/// Schema-derived generation stops nesting here (the model's are not recursive).
const MAX_DEPTH: usize = 12;
/// Cases per operation: 66 operations, about 400 requests in all.
const CASES: u32 = 6;

/// Resolves `#/components/schemas/X`.
fn resolve<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    while let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        schema = &document["components"]["schemas"][name];
    }
    schema
}

/// A strategy for values valid under `schema` (the subset of JSON Schema
/// the document uses; an unknown keyword would surface as a rejected body).
fn valid(document: &Value, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
    let schema = resolve(document, schema);
    if let Some(constant) = schema.get("const") {
        return Just(constant.clone()).boxed();
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return proptest::sample::select(values.clone()).boxed();
    }
    for combinator in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(combinator) {
            let mut options: Vec<BoxedStrategy<Value>> =
                branches.iter().map(|b| valid(document, b, depth + 1)).collect();
            // Keywords beside the combinator (the generic check update's `required`).
            if let Some(Value::Array(required)) = schema.get("required") {
                let required = required.clone();
                options = options
                    .into_iter()
                    .map(|s| {
                        let required = required.clone();
                        s.prop_map(move |mut v| {
                            for field in &required {
                                if let (Some(object), Some(name)) = (v.as_object_mut(), field.as_str()) {
                                    object.entry(name).or_insert(Value::Null);
                                }
                            }
                            v
                        })
                        .boxed()
                    })
                    .collect();
            }
            return Union::new(options).boxed();
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ => Vec::new(),
    };
    if types.is_empty() {
        return any_json().boxed();
    }
    Union::new(types.into_iter().map(|t| of_type(document, schema, t, depth))).boxed()
}

fn of_type(document: &Value, schema: &Value, json_type: &str, depth: usize) -> BoxedStrategy<Value> {
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    match json_type {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let low = number("minimum")
                .or_else(|| number("exclusiveMinimum").map(|m| m + 1.0))
                .unwrap_or(-1000.0) as i64;
            let high = number("maximum").map_or(low.saturating_add(1000), |m| m as i64);
            // Mostly small values, sometimes the bounds themselves.
            prop_oneof![
                4 => (low..=high.min(low.saturating_add(200))).prop_map(Value::from),
                1 => proptest::sample::select(vec![low, high]).prop_map(Value::from),
            ]
            .boxed()
        }
        "number" => {
            let low = number("minimum").unwrap_or(-1000.0);
            let high = number("maximum").unwrap_or(low + 1000.0);
            (low..=high).prop_map(|n| json!(n)).boxed()
        }
        "string" => string(schema),
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(min + 3, |m| m as usize);
            let items = match schema.get("items") {
                Some(items) if depth < MAX_DEPTH => valid(document, items, depth + 1),
                _ => any_json().boxed(),
            };
            proptest::collection::vec(items, min..=max.min(min + 3))
                .prop_map(Value::Array)
                .boxed()
        }
        _ => object(document, schema, depth),
    }
}

fn string(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        // proptest generates whole matches; anchors are implied.
        let core = pattern.trim_start_matches('^').trim_end_matches('$');
        let generator = proptest::string::string_regex(core).expect("the document's patterns are regexes");
        return generator.prop_map(Value::String).boxed();
    }
    if schema.get("format").and_then(Value::as_str) == Some("date-time") {
        let dates = [
            "2026-12-01T02:00:00Z",
            "2027-01-15T10:30:00Z",
            "2027-03-01T00:00:00+01:00",
        ];
        return proptest::sample::select(dates.to_vec())
            .prop_map(|d| Value::String(d.to_owned()))
            .boxed();
    }
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(min + 12, |m| m as usize);
    let max = max.min(min + 12);
    proptest::string::string_regex(&format!("[a-zA-Z0-9 ._:/-]{{{min},{max}}}"))
        .expect("a valid regex")
        .prop_map(Value::String)
        .boxed()
}

fn object(document: &Value, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if depth < MAX_DEPTH {
        for (name, property) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let value = valid(document, property, depth + 1);
            let name = name.clone();
            if required.contains(&name) {
                fields.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
            } else {
                // Optional fields mostly left out, so bodies stay plausible.
                fields.push(
                    proptest::option::weighted(0.3, value)
                        .prop_map(move |v| v.map(|v| (name.clone(), v)))
                        .boxed(),
                );
            }
        }
    }
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<String, Value>>()))
        .boxed()
}

/// Free-form JSON (fields documented as any value).
fn any_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-100i64..100).prop_map(Value::from),
        "[a-z]{0,8}".prop_map(Value::String),
        Just(json!({})),
        Just(json!([1, "a"])),
    ]
}

/// How a generated request departs from the document, if at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Twist {
    None,
    /// The body broken: unknown field, wrong type, missing field or not an object.
    InvalidBody(u8),
    NoKey,
    NotJson,
    /// Sent twice (a create then clashes with itself where values are unique).
    Twice,
    /// Larger than the body limit.
    TooLarge,
}

#[derive(Clone)]
struct Case {
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
    twist: Twist,
}

/// Shown by proptest on failure: bodies can be a megabyte, their start is enough.
impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body: String = self
            .body
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
            .chars()
            .take(400)
            .collect();
        write!(f, "{:?} {} {:?} body {body}", self.twist, self.path, self.query)
    }
}

/// Ids of objects created so far, by the path segment naming their collection.
type Pool = BTreeMap<String, Vec<String>>;

/// Where an id of `param` in `path` comes from: the segment before it.
fn collection_of(path: &str, param: &str) -> String {
    if param == "checkId" {
        return "checks".to_owned();
    }
    let marker = format!("{{{param}}}");
    let segments: Vec<&str> = path.split('/').collect();
    let at = segments.iter().position(|s| *s == marker).unwrap_or(0);
    segments[..at].last().copied().unwrap_or_default().to_owned()
}

fn query_text(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(query_text).collect(),
        other => vec![other.to_string()],
    }
}

fn case_strategy(document: &Value, path: &str, operation: &Value, pool: &Pool) -> BoxedStrategy<Case> {
    let mut path_parts: Vec<BoxedStrategy<(String, String)>> = Vec::new();
    let mut query_parts: Vec<BoxedStrategy<Vec<(String, String)>>> = Vec::new();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        let name = parameter["name"].as_str().unwrap_or_default().to_owned();
        match parameter["in"].as_str() {
            Some("path") => {
                let known = pool.get(&collection_of(path, &name)).cloned().unwrap_or_default();
                let unknown = "[a-z0-9-]{1,12}".prop_map(|s| s).boxed();
                let value = if known.is_empty() {
                    unknown
                } else {
                    prop_oneof![3 => proptest::sample::select(known), 1 => unknown].boxed()
                };
                path_parts.push(value.prop_map(move |v| (name.clone(), v)).boxed());
            }
            Some("query") => {
                let schema = &parameter["schema"];
                let good = valid(document, schema, 0).prop_map(|v| query_text(&v)).boxed();
                // Now and then a value no schema allows.
                let bad = Just(vec!["not-a-valid-value".to_owned()]).boxed();
                let value = proptest::option::weighted(0.5, prop_oneof![6 => good, 1 => bad]);
                query_parts.push(
                    value
                        .prop_map(move |v| {
                            v.unwrap_or_default()
                                .into_iter()
                                .map(|text| (name.clone(), text))
                                .collect()
                        })
                        .boxed(),
                );
            }
            _ => {}
        }
    }
    let body_schema = operation["requestBody"]["content"]["application/json"]["schema"].clone();
    let has_body = !body_schema.is_null();
    let body = if has_body {
        valid(document, &body_schema, 0).prop_map(Some).boxed()
    } else {
        Just(None).boxed()
    };
    let twist = if has_body {
        prop_oneof![
            6 => Just(Twist::None),
            3 => (0u8..4).prop_map(Twist::InvalidBody),
            1 => Just(Twist::NoKey),
            1 => Just(Twist::NotJson),
            2 => Just(Twist::Twice),
            1 => Just(Twist::TooLarge),
        ]
        .boxed()
    } else {
        prop_oneof![8 => Just(Twist::None), 1 => Just(Twist::NoKey)].boxed()
    };
    let template = path.to_owned();
    (path_parts, query_parts, body, twist)
        .prop_map(move |(params, query, body, twist)| {
            let mut path = template.clone();
            for (name, value) in params {
                path = path.replace(&format!("{{{name}}}"), &value);
            }
            let body = match (twist, body) {
                (Twist::InvalidBody(how), Some(body)) => Some(broken(body, how)),
                (Twist::TooLarge, Some(_)) => Some(json!({ "padding": "x".repeat(1024 * 1024) })),
                (_, body) => body,
            };
            Case {
                path,
                query: query.into_iter().flatten().collect(),
                body,
                twist,
            }
        })
        .boxed()
}

/// A body made invalid; whether the schema really rejects it is asked of
/// the schema itself (a free-form field accepts anything).
fn broken(mut body: Value, how: u8) -> Value {
    let Some(object) = body.as_object_mut() else {
        return json!([]);
    };
    match how {
        0 => {
            object.insert("notAField".into(), json!(1));
        }
        1 => match object.keys().next().cloned() {
            Some(first) => {
                object.insert(first, json!({ "wrong": ["type"] }));
            }
            None => return json!("text"),
        },
        2 => {
            let first = object.keys().next().cloned();
            if let Some(first) = first {
                object.remove(&first);
            }
        }
        _ => return json!([body.clone()]),
    }
    body
}

/// The id a created object answers with.
fn created_id(body: &Value) -> Option<String> {
    ["id", "dashboardId", "key"]
        .iter()
        .find_map(|field| match body.get(*field)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

struct Target {
    base: String,
    key: String,
    client: reqwest::blocking::Client,
}

impl Target {
    fn send(&self, method: &str, case: &Case) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("an HTTP method");
        let mut request = self
            .client
            .request(method, format!("{}{}", self.base, case.path))
            .query(&case.query);
        if case.twist != Twist::NoKey {
            request = request.bearer_auth(&self.key);
        }
        if let Some(body) = &case.body {
            let content_type = if case.twist == Twist::NotJson {
                "text/plain"
            } else {
                "application/json"
            };
            request = request.header("content-type", content_type).body(body.to_string());
        }
        let response = request.send().expect("the emulator answers");
        let status = response.status().as_u16();
        let text = response.text().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

fn validator(document: &Value, schema: &Value) -> jsonschema::Validator {
    let wrapped = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [schema],
        "components": document["components"],
    });
    jsonschema::options()
        .build(&wrapped)
        .expect("the document's schemas compile")
}

/// Creates objects of every kind from generated bodies, so that path
/// parameters can name objects that exist.
fn seed(document: &Value, target: &Target, pool: &mut Pool) {
    let mut rng = TestRunner::new_with_rng(
        RunnerConfig::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        let Some(operation) = item.get("post").filter(|_| !path.contains('{')) else {
            continue;
        };
        let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
        if schema.is_null() || schema.get("$ref").is_none() {
            continue;
        }
        let strategy = valid(document, schema, 0);
        for _ in 0..40 {
            let body = strategy.new_tree(&mut rng).expect("a value").current();
            let case = Case {
                path: path.clone(),
                query: vec![("autoAssignAlerts".into(), "false".into())],
                body: Some(body),
                twist: Twist::None,
            };
            let (status, answer) = target.send("POST", &case);
            if (200..300).contains(&status)
                && let Some(id) = created_id(&answer)
            {
                for segment in path.split('/').filter(|s| !s.is_empty() && *s != "v1" && *s != "v2") {
                    pool.entry(segment.to_owned()).or_default().push(id.clone());
                }
                break;
            }
        }
    }
}

#[test]
fn requests_built_from_the_document_get_documented_statuses() {
    let emulator = monform_testkit::Emulator::with(Config {
        rate_limit: None,
        // Cases without a valid key are many and from one address: not key guessing.
        auth_failure_limit: None,
        execute_checks: false,
        session_duration: Duration::from_millis(20),
        ..Config::default()
    });
    let target = Target {
        base: emulator.url(),
        key: emulator.server.api_key.clone(),
        client: monform_http::blocking()
            .timeout(Duration::from_secs(40))
            .build()
            .expect("a client"),
    };
    let document: Value = target
        .client
        .get(format!("{}/openapi.json", target.base))
        .send()
        .and_then(|r| r.json())
        .expect("the document");
    let error_body = validator(&document, &json!({ "$ref": "#/components/schemas/Error" }));

    let mut pool = Pool::new();
    seed(&document, &target, &mut pool);
    for kind in [
        "checks",
        "check-groups",
        "snippets",
        "variables",
        "alert-channels",
        "dashboards",
    ] {
        assert!(
            pool.contains_key(kind),
            "no {kind} could be created from the document's bodies: {pool:?}"
        );
    }

    let tally: RefCell<BTreeMap<u16, usize>> = RefCell::default();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let method = method.to_uppercase();
            let listed: Vec<String> = operation["responses"]
                .as_object()
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default();
            let body_schema = &operation["requestBody"]["content"]["application/json"]["schema"];
            let body_validator = (!body_schema.is_null()).then(|| validator(&document, body_schema));
            let mut runner = TestRunner::new_with_rng(
                RunnerConfig {
                    cases: CASES,
                    failure_persistence: None,
                    ..RunnerConfig::default()
                },
                TestRng::deterministic_rng(RngAlgorithm::ChaCha),
            );
            let strategy = case_strategy(&document, path, operation, &pool);
            let result = runner.run(&strategy, |case| {
                if case.twist == Twist::Twice {
                    let (status, answer) = target.send(&method, &case);
                    *tally.borrow_mut().entry(status).or_default() += 1;
                    prop_assert!(
                        listed.contains(&status.to_string()),
                        "undocumented status: {method} {} -> {status} {answer}",
                        case.path
                    );
                }
                let (status, answer) = target.send(&method, &case);
                *tally.borrow_mut().entry(status).or_default() += 1;
                let context = format!("{method} {case:?} -> {status} {answer}");
                prop_assert!(status < 500, "server error: {}", context);
                prop_assert!(listed.contains(&status.to_string()), "undocumented status: {}", context);
                if status >= 400 {
                    prop_assert!(error_body.is_valid(&answer), "not the error body: {}", context);
                }
                if let (Twist::InvalidBody(_), Some(body), Some(validator)) = (case.twist, &case.body, &body_validator)
                    && !validator.is_valid(body)
                {
                    prop_assert!(status >= 400, "a body the schema rejects was accepted: {}", context);
                }
                Ok(())
            });
            if let Err(failure) = result {
                panic!("{method} {path}: {failure}");
            }
        }
    }
    // The run exercised successes and refusals alike.
    let tally = tally.into_inner();
    let successes: usize = tally.iter().filter(|(s, _)| **s < 300).map(|(_, n)| n).sum();
    assert!(successes >= 40, "few successes: {tally:?}");
    eprintln!("statuses: {tally:?}");
    drop(emulator);
}
