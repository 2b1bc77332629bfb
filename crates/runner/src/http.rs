//! URL and API checks: one HTTP request (reqwest, rustls) and assertions on
//! STATUS_CODE, HEADERS, JSON_BODY, TEXT_BODY and RESPONSE_TIME.
//!
//! Choices: `skipSSL` turns certificate checks off (it changes nothing for
//! plain http); `followRedirects` follows up to 10 redirects; bodies are read
//! up to 1 MiB and kept up to 16 KiB in the result; `bodyType` JSON and
//! GRAPHQL send `Content-Type: application/json`, FORM sends
//! `application/x-www-form-urlencoded`, RAW sends the body as it is (no
//! type), NONE sends no body, unless the check's headers set the type.

use std::sync::OnceLock;
use std::time::Instant;

use monform_model::resources::CheckType;
use serde_json::{Map, Value, json};

use super::{Probe, assertions};

/// Body bytes read from a response.
const READ_LIMIT: usize = 1 << 20;
/// Body characters kept in the result.
const KEEP_LIMIT: usize = 16 * 1024;

/// The client for one combination of `followRedirects` and `skipSSL`,
/// built once: building one parses every system root certificate, which
/// cost a trigger of a few hundred checks seconds of CPU. Idle
/// connections are never kept, so each run still opens its own connection
/// (and its timings include it), as a fresh probe of the service would.
fn client(follow: bool, skip_ssl: bool) -> Result<reqwest::Client, String> {
    static CLIENTS: [OnceLock<Result<reqwest::Client, String>>; 4] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CLIENTS[usize::from(follow) * 2 + usize::from(skip_ssl)]
        .get_or_init(|| {
            monform_http::client()
                .redirect(if follow {
                    reqwest::redirect::Policy::limited(10)
                } else {
                    reqwest::redirect::Policy::none()
                })
                .tls_danger_accept_invalid_certs(skip_ssl)
                .no_proxy()
                .pool_max_idle_per_host(0)
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
}

/// `[{key, value}]` (headers, query parameters) as pairs; entries without a key are dropped.
pub fn pairs(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| {
            Some((
                kv["key"].as_str()?.to_owned(),
                kv["value"].as_str().unwrap_or("").to_owned(),
            ))
        })
        .collect()
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

pub(crate) async fn probe(check: &Value) -> Probe {
    let is_api = CheckType::of_check(check) == Ok(CheckType::Api);
    let request = &check["request"];
    let url = request["url"].as_str().unwrap_or_default();
    let method = if is_api {
        request["method"].as_str().unwrap_or("GET")
    } else {
        "GET"
    };
    let follow = request["followRedirects"].as_bool().unwrap_or(true);
    let skip_ssl = request["skipSSL"].as_bool().unwrap_or(false);
    let mut notes = Vec::new();
    for field in [
        "setupSnippetId",
        "tearDownSnippetId",
        "localSetupScript",
        "localTearDownScript",
    ] {
        if check[field].as_str().is_some_and(|s| !s.is_empty()) || check[field].is_number() {
            notes.push(format!(
                "{field} skipped: the local runner does not run snippets or scripts"
            ));
        }
    }
    let headers = pairs(&request["headers"]);
    let query = pairs(&request["queryParameters"]);
    let body = if is_api {
        request["body"].as_str().unwrap_or_default().to_owned()
    } else {
        String::new()
    };
    let body_type = request["bodyType"].as_str().unwrap_or("NONE");
    let request_summary = json!({
        "method": method,
        "url": url,
        "data": body,
        "headers": headers.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<Map<_, _>>(),
        "params": query.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<Map<_, _>>(),
    });
    let fail = |message: String, notes: Vec<String>| Probe {
        error: Some(message.clone()),
        api_result: json!({
            "assertions": [], "request": request_summary.clone(), "response": null,
            "requestError": message, "jobLog": null, "jobAssets": null,
        }),
        notes,
        ..Probe::default()
    };
    let client = match client(follow, skip_ssl) {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot build the HTTP client: {e}"), notes),
    };
    let Ok(method_value) = reqwest::Method::from_bytes(method.as_bytes()) else {
        return fail(format!("`{method}` is not an HTTP method"), notes);
    };
    let mut builder = client.request(method_value, url);
    if !query.is_empty() {
        builder = builder.query(&query);
    }
    let has_content_type = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    for (key, value) in &headers {
        builder = builder.header(key.as_str(), value.as_str());
    }
    if let Some(user) = request["basicAuth"]["username"].as_str().filter(|u| !u.is_empty()) {
        builder = builder.basic_auth(user, request["basicAuth"]["password"].as_str());
    }
    if is_api && body_type != "NONE" && !(body.is_empty() && body_type == "RAW") {
        let content_type = match body_type {
            "JSON" | "GRAPHQL" => Some("application/json"),
            "FORM" => Some("application/x-www-form-urlencoded"),
            _ => None,
        };
        if let (Some(t), false) = (content_type, has_content_type) {
            builder = builder.header("content-type", t);
        }
        builder = builder.body(body.clone());
    }
    let started = Instant::now();
    let mut response = match builder.send().await {
        Ok(r) => r,
        Err(e) => return fail(format!("request to {url} failed: {}", error_chain(&e)), notes),
    };
    let first_byte = ms(started);
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = READ_LIMIT.saturating_sub(bytes.len());
                bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if room <= chunk.len() {
                    notes.push(format!("response body cut at {READ_LIMIT} bytes"));
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                return fail(
                    format!("reading the response of {url} failed: {}", error_chain(&e)),
                    notes,
                );
            }
        }
    }
    let total = ms(started);
    let status = response.status();
    let response_headers: Map<String, Value> = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), json!(String::from_utf8_lossy(v.as_bytes()))))
        .collect();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let code = status.as_u16();
    let results = assertions::evaluate(&request["assertions"], |source, property| match source {
        "STATUS_CODE" => Some(json!(code)),
        "RESPONSE_TIME" => Some(json!((total * 100.0).round() / 100.0)),
        "TEXT_BODY" => Some(json!(text)),
        "JSON_BODY" => parsed.as_ref().and_then(|b| assertions::json_path(b, property)),
        "HEADERS" if property.is_empty() => Some(Value::Object(response_headers.clone())),
        "HEADERS" => response_headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(property))
            .map(|(_, v)| v.clone()),
        _ => None,
    });
    let should_fail = check["shouldFail"] == true;
    let failure = match (code >= 400, should_fail) {
        (true, false) => Some(format!("{url} answered {status}")),
        (false, true) => Some(format!(
            "{url} answered {status}; shouldFail expects an error status (400 or above)"
        )),
        _ => None,
    };
    let round = |x: f64| (x * 100.0).round() / 100.0;
    let kept: String = text.chars().take(KEEP_LIMIT).collect();
    Probe {
        response_time: total,
        failure,
        api_result: json!({
            "assertions": results,
            "request": request_summary,
            "response": {
                "status": code,
                "statusText": status.canonical_reason().unwrap_or(""),
                "body": kept,
                "headers": response_headers,
                "timings": {},
                "timingPhases": {
                    "wait": 0.0, "dns": 0.0, "tcp": 0.0,
                    "firstByte": round(first_byte), "download": round(total - first_byte), "total": round(total),
                },
            },
            "requestError": null,
            "jobLog": null,
            "jobAssets": null,
        }),
        assertions: results,
        notes,
        ..Probe::default()
    }
}

/// An error and its sources, e.g. "error sending request: connection refused".
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let more = inner.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = inner.source();
    }
    text
}
