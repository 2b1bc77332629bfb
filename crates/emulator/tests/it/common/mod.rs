//! Shared set-up for the emulator's integration tests: a real server on a
//! loopback port and an authenticated client.

#![allow(dead_code)]

use monform_emulator::{Config, Server};
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;

pub mod targets;

pub struct TestServer {
    pub server: Server,
    pub client: reqwest::Client,
}

impl TestServer {
    /// An in-memory emulator with rate limiting off and quick sessions.
    /// Checks are not executed (their targets, e.g. example.com, are not
    /// reachable from tests): every run passes. `tests/it/runner.rs` executes.
    pub async fn start() -> TestServer {
        TestServer::with(Config {
            rate_limit: None,
            execute_checks: false,
            ..Config::default()
        })
        .await
    }

    /// The emulator as `config` says, started by testkit (the one home of
    /// the emulator's start-up for every harness).
    pub async fn with(config: Config) -> TestServer {
        let server = monform_testkit::start_emulator_with(config).await;
        TestServer {
            server,
            client: monform_http::client().build().expect("an HTTP client"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url())
    }

    /// A request with the development key.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(&self.server.api_key)
    }

    pub async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path).send().await.expect("request sent")
    }

    pub async fn post(&self, path: &str, body: &Value) -> Response {
        self.request(Method::POST, path)
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    pub async fn put(&self, path: &str, body: &Value) -> Response {
        self.request(Method::PUT, path)
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.request(Method::DELETE, path).send().await.expect("request sent")
    }

    /// POSTs and returns the JSON body, asserting the status.
    pub async fn create(&self, path: &str, body: &Value, status: u16) -> Value {
        let response = self.post(path, body).await;
        let got = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(got, status, "POST {path}: {body}");
        body
    }
}

/// Status and JSON body of a response.
pub async fn parts(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Minimal valid bodies, one per kind (check types by name).
pub mod bodies {
    use serde_json::{Value, json};

    pub fn icmp(name: &str) -> Value {
        json!({ "name": name, "request": { "hostname": "example.com" }, "heartbeat": {}, "script": "" })
    }
    pub fn api(name: &str) -> Value {
        json!({ "name": name, "request": { "url": "https://example.com", "method": "GET" } })
    }
    pub fn group(name: &str) -> Value {
        json!({ "name": name })
    }
    pub fn snippet(name: &str) -> Value {
        json!({ "name": name, "script": "console.log(1)" })
    }
    pub fn email_channel(address: &str) -> Value {
        json!({ "type": "EMAIL", "config": { "address": address } })
    }
}

// ---- Helpers for the CRUD, validation, paging and protocol tests ----

impl TestServer {
    /// Any request with the development key; a JSON body when given.
    pub async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        parts(request.send().await.expect("request sent")).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Response {
        self.request(Method::PATCH, path)
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    /// GETs and returns the JSON body, asserting 200.
    pub async fn read(&self, path: &str) -> Value {
        let (status, body) = parts(self.get(path).await).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// PUTs and returns the JSON body, asserting the status.
    pub async fn update(&self, path: &str, body: &Value, status: u16) -> Value {
        let (got, response) = parts(self.put(path, body).await).await;
        assert_eq!(got, status, "PUT {path} {body}: {response}");
        response
    }

    /// DELETEs, asserting 204 and an empty body, then that a GET answers 404.
    pub async fn delete_gone(&self, path: &str) {
        let response = self.delete(path).await;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        assert_eq!(status, 204, "DELETE {path}: {text}");
        assert!(text.is_empty(), "204 has no body: {text}");
        let (status, body) = parts(self.get(path).await).await;
        assert_error(status, &body, 404);
        let (status, body) = parts(self.delete(path).await).await;
        assert_error(status, &body, 404);
    }
}

/// Asserts the status and the error body `{statusCode, error, message, attributes}`.
#[track_caller]
pub fn assert_error(status: u16, body: &Value, expected: u16) {
    assert_eq!(status, expected, "status of {body}");
    assert_eq!(body["statusCode"], expected, "statusCode in {body}");
    assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "error in {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "message in {body}"
    );
    assert!(body["attributes"].is_object(), "attributes in {body}");
    let keys: Vec<&str> = body
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys.len(), 4, "only the four error fields: {body}");
}

/// Asserts a 400 whose `attributes` name every one of `fields`.
#[track_caller]
pub fn assert_invalid(status: u16, body: &Value, fields: &[&str]) {
    assert_error(status, body, 400);
    for field in fields {
        assert!(
            body["attributes"]
                .get(*field)
                .and_then(Value::as_str)
                .is_some_and(|m| !m.is_empty()),
            "attributes name `{field}`: {body}"
        );
    }
}

/// The field names in a 400's `attributes`, sorted.
pub fn attribute_keys(body: &Value) -> Vec<String> {
    let mut keys: Vec<String> = body["attributes"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

/// Asserts `created_at` and `updated_at` are ISO 8601 text.
#[track_caller]
pub fn assert_timestamps(object: &Value) {
    for field in ["created_at", "updated_at"] {
        let text = object[field].as_str().unwrap_or_else(|| panic!("{field} in {object}"));
        assert!(
            text.len() >= 20 && text.as_bytes()[4] == b'-' && text.contains('T'),
            "{field} is a date-time: {text}"
        );
    }
}

/// Merges `extra` into a copy of `base` (`null` removes a field).
pub fn with(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(target), Value::Object(extra)) = (out.as_object_mut(), extra) {
        for (key, value) in extra {
            if value.is_null() {
                target.remove(&key);
            } else {
                target.insert(key, value);
            }
        }
    }
    out
}

/// A valid create body for each of the ten check types, by path segment.
pub fn check_bodies() -> Vec<(&'static str, &'static str, Value)> {
    use serde_json::json;
    vec![
        (
            "agentic",
            "AGENTIC",
            json!({ "name": "Agent", "prompt": "Log in and check the cart" }),
        ),
        ("api", "API", bodies::api("Api")),
        (
            "browser",
            "BROWSER",
            json!({ "name": "Browser", "script": "await page.goto('https://example.com')" }),
        ),
        (
            "heartbeat",
            "HEARTBEAT",
            json!({ "name": "Heartbeat", "heartbeat": { "period": 1, "periodUnit": "hours", "grace": 5, "graceUnit": "minutes" } }),
        ),
        ("icmp", "ICMP", bodies::icmp("Ping")),
        (
            "multistep",
            "MULTI_STEP",
            json!({ "name": "Multi", "script": "await request.get('/')" }),
        ),
        (
            "tcp",
            "TCP",
            json!({ "name": "Tcp", "request": { "hostname": "example.com", "port": 443 } }),
        ),
        (
            "playwright",
            "PLAYWRIGHT",
            json!({ "name": "Suite", "codeBundlePath": "bundles/suite.tgz" }),
        ),
        (
            "url",
            "URL",
            json!({ "name": "Url", "request": { "url": "https://example.com" } }),
        ),
        (
            "dns",
            "DNS",
            json!({ "name": "Dns", "request": { "query": "example.com", "recordType": "A" } }),
        ),
    ]
}
