//! Limits and error statuses at the HTTP boundary: rate limits (429 with its
//! headers and the error body; per key, and per address for failed
//! authentications), body size (413), media type (415), 401, 403,
//! 404 and 405, each with the API's error body.

use crate::common;

use std::time::Duration;

use common::{TestServer, bodies, parts};
use monform_emulator::{Config, RateLimit};
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

fn limited(requests: u32, seconds: u64, keys: &[&str]) -> Config {
    Config {
        rate_limit: Some(RateLimit {
            requests,
            window: Duration::from_secs(seconds),
        }),
        api_keys: keys.iter().map(|k| (*k).to_owned()).collect(),
        ..Config::default()
    }
}

fn header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().unwrap().to_owned())
}

fn number(response: &Response, name: &str) -> u64 {
    header(response, name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number"))
}

/// Asserts the API's error body: `{statusCode, error, message, attributes}`.
async fn assert_error(response: Response, status: u16, reason: &str) -> Value {
    let (got, body) = parts(response).await;
    assert_eq!(got, status, "{body}");
    assert_eq!(body["statusCode"], json!(status), "{body}");
    assert_eq!(body["error"], json!(reason), "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    assert!(body["attributes"].is_object(), "{body}");
    body
}

async fn get_as(ts: &TestServer, key: &str, path: &str) -> Response {
    ts.client
        .get(ts.url(path))
        .bearer_auth(key)
        .send()
        .await
        .expect("request sent")
}

#[tokio::test]
async fn over_budget_is_429_with_retry_after_rate_limit_headers_and_the_error_body() {
    let ts = TestServer::with(limited(5, 60, &["key-a", "key-b"])).await;
    for expected_remaining in (0..5).rev() {
        let response = ts.get("/v1/checks").await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(number(&response, "x-ratelimit-limit"), 5);
        assert_eq!(number(&response, "x-ratelimit-remaining"), expected_remaining);
        let reset = number(&response, "x-ratelimit-reset");
        assert!((1..=60).contains(&reset), "{reset}");
    }
    // Every route draws from the same budget.
    for path in ["/v1/checks", "/v1/snippets", "/v1/no-such-route"] {
        let response = ts.get(path).await;
        assert_eq!(number(&response, "x-ratelimit-limit"), 5);
        assert_eq!(number(&response, "x-ratelimit-remaining"), 0);
        let retry_after = number(&response, "retry-after");
        assert!((1..=60).contains(&retry_after), "{retry_after}");
        assert_eq!(number(&response, "x-ratelimit-reset"), retry_after);
        let body = assert_error(response, 429, "Too Many Requests").await;
        assert!(body["message"].as_str().unwrap().contains("rate limit"), "{body}");
    }
    // Writes are refused before they happen.
    let response = ts.post("/v1/snippets", &bodies::snippet("late")).await;
    assert_error(response, 429, "Too Many Requests").await;
    let (status, listed) = parts(get_as(&ts, "key-b", "/v1/snippets").await).await;
    assert_eq!((status, listed), (200, json!([])));
    // Refused requests are counted like any other.
    assert_eq!(ts.server.app.metrics.with_status("429"), 4);
    assert_eq!(ts.server.app.metrics.total(None), 10);
}

#[tokio::test]
async fn budgets_are_per_key_and_unknown_keys_still_get_401() {
    let ts = TestServer::with(limited(3, 60, &["key-a", "key-b"])).await;
    for _ in 0..3 {
        assert_eq!(get_as(&ts, "key-a", "/v1/checks").await.status(), StatusCode::OK);
    }
    assert_error(get_as(&ts, "key-a", "/v1/checks").await, 429, "Too Many Requests").await;
    // key-b (same account) has its own budget.
    for expected_remaining in [2, 1, 0] {
        let response = get_as(&ts, "key-b", "/v1/checks").await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(number(&response, "x-ratelimit-remaining"), expected_remaining);
    }
    assert_error(get_as(&ts, "key-b", "/v1/checks").await, 429, "Too Many Requests").await;
    // Requests that fail authentication are not counted against a key (they
    // have a budget per address: the next test).
    for _ in 0..5 {
        let response = get_as(&ts, "key-unknown", "/v1/checks").await;
        assert!(header(&response, "x-ratelimit-limit").is_none());
        assert_error(response, 401, "Unauthorized").await;
        let response = ts.client.get(ts.url("/v1/checks")).send().await.unwrap();
        assert_error(response, 401, "Unauthorized").await;
    }
    // Neither are /openapi.json and /-/metrics.
    for _ in 0..5 {
        let response = get_as(&ts, "key-a", "/openapi.json").await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(header(&response, "x-ratelimit-limit").is_none());
        assert_eq!(get_as(&ts, "key-a", "/-/metrics").await.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn the_budget_comes_back_when_the_window_closes() {
    let ts = TestServer::with(limited(2, 1, &[])).await;
    assert_eq!(ts.get("/v1/checks").await.status(), StatusCode::OK);
    assert_eq!(ts.get("/v1/checks").await.status(), StatusCode::OK);
    let refused = ts.get("/v1/checks").await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(number(&refused, "retry-after"), 1);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let response = ts.get("/v1/checks").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(number(&response, "x-ratelimit-remaining"), 1);
}

#[tokio::test]
async fn the_default_is_600_per_60_s_and_off_means_no_headers() {
    let ts = TestServer::with(Config::default()).await;
    let response = ts.get("/v1/checks").await;
    assert_eq!(number(&response, "x-ratelimit-limit"), 600);
    assert_eq!(number(&response, "x-ratelimit-remaining"), 599);
    assert!((59..=60).contains(&number(&response, "x-ratelimit-reset")));

    let ts = TestServer::start().await; // rate_limit: None
    for _ in 0..20 {
        let response = ts.get("/v1/checks").await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(header(&response, "x-ratelimit-limit").is_none());
    }
}

#[tokio::test]
async fn a_body_over_1_mib_is_413_with_the_error_body() {
    let ts = TestServer::start().await;
    let script = "x".repeat(2 * 1024 * 1024);
    let body = serde_json::to_vec(&json!({ "name": "big", "script": script })).unwrap();
    let response = ts
        .request(Method::POST, "/v1/snippets")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("a response, not a reset connection");
    let body = assert_error(response, 413, "Payload Too Large").await;
    assert!(body["message"].as_str().unwrap().contains("1048576"), "{body}");
    // Just under the limit is accepted.
    let script = "x".repeat(1024 * 1024 - 100);
    let response = ts
        .post("/v1/snippets", &json!({ "name": "fits", "script": script }))
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415_with_the_error_body() {
    let ts = TestServer::start().await;
    let body = serde_json::to_string(&bodies::snippet("s")).unwrap();
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let mut request = ts.request(Method::POST, "/v1/snippets").body(body.clone());
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = request.send().await.unwrap();
        assert_error(response, 415, "Unsupported Media Type").await;
    }
    // With the JSON media type (and a charset) it goes through.
    let response = ts
        .request(Method::POST, "/v1/snippets")
        .header("content-type", "application/json; charset=utf-8")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn missing_malformed_or_unknown_keys_are_401() {
    let ts = TestServer::start().await;
    let url = ts.url("/v1/checks");
    let missing = ts.client.get(&url).send().await.unwrap();
    let body = assert_error(missing, 401, "Unauthorized").await;
    assert!(body["message"].as_str().unwrap().contains("missing"), "{body}");
    for authorization in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", &ts.server.api_key] {
        let response = ts
            .client
            .get(&url)
            .header("authorization", authorization)
            .send()
            .await
            .unwrap();
        let body = assert_error(response, 401, "Unauthorized").await;
        assert!(body["message"].as_str().unwrap().contains("malformed"), "{body}");
    }
    let unknown = ts.client.get(&url).bearer_auth("mf_not_a_key").send().await.unwrap();
    let body = assert_error(unknown, 401, "Unauthorized").await;
    assert!(body["message"].as_str().unwrap().contains("unknown"), "{body}");
    // The scheme is case-insensitive.
    let response = ts
        .client
        .get(&url)
        .header("authorization", format!("bearer {}", ts.server.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn another_account_in_x_service_account_is_403() {
    let ts = TestServer::start().await;
    let response = ts
        .request(Method::GET, "/v1/checks")
        .header("x-service-account", "00000000-0000-0000-0000-000000000000")
        .send()
        .await
        .unwrap();
    assert_error(response, 403, "Forbidden").await;
    let response = ts
        .request(Method::GET, "/v1/checks")
        .header("x-service-account", &ts.server.account_id)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn unknown_routes_are_404_and_wrong_methods_405_with_the_error_body() {
    let ts = TestServer::start().await;
    assert_error(ts.get("/v1/no-such-thing").await, 404, "Not Found").await;
    assert_error(ts.get("/v3/checks").await, 404, "Not Found").await;
    let response = ts.request(Method::PATCH, "/v1/checks").send().await.unwrap();
    assert_error(response, 405, "Method Not Allowed").await;
    let response = ts.request(Method::DELETE, "/v1/snippets").send().await.unwrap();
    assert_error(response, 405, "Method Not Allowed").await;
}

#[tokio::test]
async fn the_deprecated_result_listing_has_its_own_budget_of_5_per_10_s() {
    let ts = TestServer::with(Config {
        api_keys: vec!["key-a".to_owned(), "key-b".to_owned()],
        ..Config::default()
    })
    .await;
    // Whatever the check (known or not), each call draws from the listing's budget.
    let listing = "/v1/check-results/00000000-0000-0000-0000-000000000001";
    for expected_remaining in (0..5).rev() {
        let response = get_as(&ts, "key-a", listing).await;
        assert_ne!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(number(&response, "x-ratelimit-limit"), 5);
        assert_eq!(number(&response, "x-ratelimit-remaining"), expected_remaining);
        assert!((1..=10).contains(&number(&response, "x-ratelimit-reset")));
    }
    let refused = get_as(&ts, "key-a", "/v1/check-results/another-check").await;
    assert_eq!(number(&refused, "x-ratelimit-limit"), 5);
    assert_eq!(number(&refused, "x-ratelimit-remaining"), 0);
    assert!((1..=10).contains(&number(&refused, "retry-after")));
    assert_error(refused, 429, "Too Many Requests").await;
    // The default budget is untouched, and other keys have their own listing budget.
    let response = get_as(&ts, "key-a", "/v1/checks").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(number(&response, "x-ratelimit-limit"), 600);
    assert_eq!(number(&response, "x-ratelimit-remaining"), 599);
    let response = get_as(&ts, "key-b", listing).await;
    assert_ne!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(number(&response, "x-ratelimit-remaining"), 4);
    // The newer listing is not the deprecated one.
    let response = get_as(&ts, "key-a", "/v2/check-results/00000000-0000-0000-0000-000000000001").await;
    assert_eq!(number(&response, "x-ratelimit-limit"), 600);
}

#[tokio::test]
async fn an_address_guessing_keys_gets_429_with_retry_after_whatever_key_it_sends() {
    let ts = TestServer::with(Config {
        auth_failure_limit: Some(RateLimit {
            requests: 4,
            window: Duration::from_secs(60),
        }),
        ..limited(600, 60, &["key-a"])
    })
    .await;
    for guess in 0..4 {
        let response = get_as(&ts, &format!("guess-{guess}"), "/v1/checks").await;
        assert_error(response, 401, "Unauthorized").await;
    }
    // A private location key guessed is counted the same way; so is none at all.
    for path in ["/v1/checks", "/v1/snippets"] {
        let response = get_as(&ts, "guess-next", path).await;
        let retry = number(&response, "retry-after");
        assert!((55..=60).contains(&retry), "{retry}");
        let body = assert_error(response, 429, "Too Many Requests").await;
        assert!(
            body["message"].as_str().unwrap().contains("from this address"),
            "{body}"
        );
    }
    let response = ts.client.post(ts.url("/v1/agent/register")).send().await.unwrap();
    assert_error(response, 429, "Too Many Requests").await;
    // Even the right key: otherwise a 200 among 429s would confirm a guess.
    assert_error(get_as(&ts, "key-a", "/v1/checks").await, 429, "Too Many Requests").await;
    // Outside the API, nothing is refused.
    assert_eq!(get_as(&ts, "key-a", "/openapi.json").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn failed_authentications_below_the_limit_change_nothing_and_off_turns_it_off() {
    let ts = TestServer::with(Config {
        auth_failure_limit: None,
        ..limited(600, 60, &["key-a"])
    })
    .await;
    for _ in 0..30 {
        assert_error(get_as(&ts, "wrong", "/v1/checks").await, 401, "Unauthorized").await;
    }
    assert_eq!(get_as(&ts, "key-a", "/v1/checks").await.status(), StatusCode::OK);
    // The default: 20 a minute.
    let ts = TestServer::with(limited(600, 60, &["key-a"])).await;
    for failure in 1..=20 {
        assert_error(get_as(&ts, "wrong", "/v1/checks").await, 401, "Unauthorized").await;
        let status = get_as(&ts, "key-a", "/v1/checks").await.status();
        assert_eq!(status.as_u16(), if failure < 20 { 200 } else { 429 }, "after {failure}");
    }
    assert_error(get_as(&ts, "wrong", "/v1/checks").await, 429, "Too Many Requests").await;
}
