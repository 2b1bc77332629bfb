//! Read-only records: check results (v1 and v2), alert notifications, check
//! alerts, error groups, analytics and the report.

use crate::common;

use common::targets::run_session;
use common::*;
use monform_emulator::store::Objects;
use serde_json::{Value, json};

mod alerts;
mod analytics;
mod results;

const HOUR: i64 = 3600;

fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

async fn check(ts: &TestServer, path: &str, body: Value) -> String {
    let created = ts.create(&format!("{path}?autoAssignAlerts=false"), &body, 201).await;
    created["id"].as_str().unwrap().to_owned()
}

async fn api_check(ts: &TestServer, name: &str, extra: Value) -> String {
    let mut body = bodies::api(name);
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    check(ts, "/v1/checks/api", body).await
}

async fn browser_check(ts: &TestServer, name: &str) -> String {
    check(
        ts,
        "/v1/checks/browser",
        json!({ "name": name, "script": "await page.goto('https://example.com')" }),
    )
    .await
}

/// Stores a record as a producer would (ts in UNIX seconds).
fn seed(ts: &TestServer, kind: &str, id: &str, parent: Option<&str>, at: i64, body: Value) {
    ts.server
        .app
        .store
        .lock()
        .insert(&ts.server.account_id, kind, id, parent, at * 1000, &body)
        .unwrap();
}

/// Passing results of `check_id` in eu-west-1 with the ids `ids`, a
/// second apart from `from` (seconds).
fn seed_passes(ts: &TestServer, check_id: &str, ids: impl Iterator<Item = String>, from: i64) {
    for (at, id) in (from..).zip(ids) {
        seed(
            ts,
            "checkResults",
            &id,
            Some(check_id),
            at,
            result_record(check_id, &id, "eu-west-1", false),
        );
    }
}

fn result_record(check_id: &str, id: &str, location: &str, failed: bool) -> Value {
    json!({
        "id": id, "name": "seeded", "checkId": check_id, "hasFailures": failed, "hasErrors": false,
        "isDegraded": false, "isCancelled": false, "overMaxResponseTime": false, "runLocation": location,
        "startedAt": "2026-01-01T00:00:00.000Z", "stoppedAt": "2026-01-01T00:00:01.000Z",
        "created_at": "2026-01-01T00:00:01.000Z", "responseTime": 100, "apiCheckResult": null,
        "checkRunId": 1, "attempts": 0, "resultType": "FINAL", "sequenceId": null, "traceId": null,
        "errorGroupIds": [], "checkType": "API",
    })
}

fn assert_error(body: &Value, status: u16) {
    assert_eq!(body["statusCode"], status, "{body}");
    assert!(body["message"].is_string() && body["attributes"].is_object(), "{body}");
}

async fn assert_invalid(ts: &TestServer, path: &str, field: &str) {
    let (status, body) = parts(ts.get(path).await).await;
    assert_eq!(status, 400, "{path}: {body}");
    assert_error(&body, 400);
    assert!(
        body["attributes"].get(field).is_some(),
        "{path}: expected `{field}` in {body}"
    );
}

fn content_range(response: &reqwest::Response) -> String {
    response.headers()["content-range"].to_str().unwrap().to_owned()
}

// ---------------------------------------------------------------------------
// Reporting.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn reporting_aggregates_every_matching_check() {
    let ts = TestServer::start().await;
    let ran = api_check(&ts, "ran", json!({ "tags": ["prod", "api"] })).await;
    let idle = api_check(&ts, "idle", json!({ "tags": ["prod"], "activated": false })).await;
    run_session(&ts, &ran).await;

    let (status, body) = parts(ts.get("/v1/reporting").await).await;
    assert_eq!(status, 200, "{body}");
    let report = body.as_array().unwrap();
    assert_eq!(report.len(), 2);
    let entry = |id: &str| report.iter().find(|e| e["checkId"] == id).unwrap().clone();
    let ran_entry = entry(&ran);
    assert_eq!(ran_entry["name"], "ran");
    assert_eq!(ran_entry["checkType"], "API");
    assert_eq!(ran_entry["deactivated"], false);
    assert_eq!(ran_entry["tags"], json!(["prod", "api"]));
    assert_eq!(ran_entry["aggregate"]["successRatio"], 1.0);
    for stat in ["avg", "p95", "p99"] {
        assert!(ran_entry["aggregate"][stat].as_f64().unwrap() > 0.0, "{stat}");
    }
    let idle_entry = entry(&idle);
    assert_eq!(idle_entry["deactivated"], true);
    assert_eq!(
        idle_entry["aggregate"],
        json!({ "successRatio": 0, "avg": 0, "p95": 0, "p99": 0 })
    );

    let names = |query: &str| {
        let ts = &ts;
        let query = query.to_owned();
        async move {
            let (status, body) = parts(ts.get(&format!("/v1/reporting{query}")).await).await;
            assert_eq!(status, 200, "{query}: {body}");
            body.as_array()
                .unwrap()
                .iter()
                .map(|e| e["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(names("?filterByTags=api").await, ["ran"]);
    assert_eq!(names("?filterByTags=prod").await, ["ran", "idle"]);
    assert_eq!(names("?filterByTags=prod,api").await, ["ran"]);
    assert_eq!(names("?filterByTags=prod&filterByTags=api").await, ["ran"]);
    assert_eq!(names("?deactivated=true").await, ["idle"]);
    assert_eq!(names("?deactivated=false").await, ["ran"]);
    assert_eq!(names("?quickRange=last7Days").await, ["ran", "idle"]);
    // A window without the run: zeros.
    let (_, earlier) = parts(ts.get("/v1/reporting?quickRange=lastMonth").await).await;
    assert!(earlier.as_array().unwrap().iter().all(|e| e["aggregate"]["avg"] == 0));

    assert_invalid(&ts, "/v1/reporting?quickRange=last24Hours", "quickRange").await;
    assert_invalid(&ts, "/v1/reporting?deactivated=maybe", "deactivated").await;
    assert_invalid(&ts, "/v1/reporting?from=2000&to=1000", "from").await;
    assert_invalid(&ts, "/v1/reporting?to=soon", "to").await;
}

#[tokio::test]
async fn reads_need_a_key_and_are_in_openapi() {
    let ts = TestServer::start().await;
    let response = ts.client.get(ts.url("/v1/reporting")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let (_, doc) = parts(ts.client.get(ts.url("/openapi.json")).send().await.unwrap()).await;
    for path in [
        "/v1/check-results/{checkId}",
        "/v2/check-results/{checkId}",
        "/v1/alert-notifications",
        "/v1/check-alerts",
        "/v1/error-groups/checks/{checkId}",
        "/v1/analytics/api-checks/{id}",
        "/v1/analytics/browser-checks/{id}",
        "/v1/reporting",
    ] {
        assert!(doc["paths"][path]["get"].is_object(), "{path}");
    }
}
