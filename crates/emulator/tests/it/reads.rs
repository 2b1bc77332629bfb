//! Read-only records: check results (v1 and v2), alert notifications, check
//! alerts, error groups, analytics and the report.

use crate::common;

use common::targets::run_session;
use common::*;
use monform_emulator::store::Objects;
use serde_json::{Value, json};

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
// Check results.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn results_of_a_finished_session_are_listed_in_both_versions() {
    let ts = TestServer::start().await;
    let id = api_check(
        &ts,
        "listed",
        json!({ "locations": ["eu-west-1", "us-east-1"], "runParallel": true }),
    )
    .await;
    run_session(&ts, &id).await;

    let response = ts.get(&format!("/v1/check-results/{id}")).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(content_range(&response), "0-1/2");
    let (_, body) = parts(response).await;
    let results = body.as_array().unwrap();
    assert_eq!(results.len(), 2);
    for result in results {
        assert_eq!(result["checkId"], id.as_str());
        assert_eq!(result["name"], "listed");
        assert_eq!(result["resultType"], "FINAL");
        assert_eq!(result["hasFailures"], false);
        assert_eq!(result["isCancelled"], false);
        assert_eq!(result["errorGroupIds"], json!([]));
        assert!(result["id"].is_string() && result["sequenceId"].is_string());
        assert!(result["responseTime"].is_number() && result["checkRunId"].is_number());
        assert!(result["created_at"].is_string() && result["startedAt"].is_string());
        assert_eq!(result["apiCheckResult"]["response"]["status"], 200);
        assert!(result["browserCheckResult"].is_null());
        assert!(result.get("checkType").is_none() && result.get("checkSessionId").is_none());
    }

    let (status, body) = parts(ts.get(&format!("/v2/check-results/{id}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(body["length"], 2);
    assert_eq!(body["entries"].as_array().unwrap().len(), 2);
    assert!(body["nextId"].is_null());
    assert_eq!(body["entries"], Value::Array(results.clone()));
}

#[tokio::test]
async fn result_filters_and_their_validation() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "filtered", json!({})).await;
    let now = now_s();
    seed(
        &ts,
        "checkResults",
        "r1",
        Some(&id),
        now - 60,
        result_record(&id, "r1", "eu-west-1", false),
    );
    seed(
        &ts,
        "checkResults",
        "r2",
        Some(&id),
        now - 120,
        result_record(&id, "r2", "us-east-1", true),
    );
    let mut attempt = result_record(&id, "r3", "us-east-1", true);
    attempt["resultType"] = json!("ATTEMPT");
    seed(&ts, "checkResults", "r3", Some(&id), now - 180, attempt);

    let ids = |body: &Value| -> Vec<String> {
        body.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    for (query, expected) in [
        ("", vec!["r1", "r2"]),
        ("?location=eu-west-1", vec!["r1"]),
        ("?hasFailures=true", vec!["r2"]),
        ("?hasFailures=false", vec!["r1"]),
        ("?resultType=ATTEMPT", vec!["r3"]),
        ("?resultType=ALL", vec!["r1", "r2", "r3"]),
        ("?checkType=API", vec!["r1", "r2"]),
        ("?checkType=ICMP", vec![]),
    ] {
        for version in ["v1", "v2"] {
            let (status, body) = parts(ts.get(&format!("/{version}/check-results/{id}{query}")).await).await;
            assert_eq!(status, 200, "{query}: {body}");
            let list = if version == "v2" { body["entries"].clone() } else { body };
            assert_eq!(ids(&list), expected, "{version} {query}");
        }
    }
    for (query, field) in [
        ("location=mars-1", "location"),
        ("checkType=ROBOT", "checkType"),
        ("hasFailures=maybe", "hasFailures"),
        ("resultType=SOME", "resultType"),
        ("from=yesterday", "from"),
        ("to=-5", "to"),
        ("limit=0", "limit"),
    ] {
        assert_invalid(&ts, &format!("/v1/check-results/{id}?{query}"), field).await;
        assert_invalid(&ts, &format!("/v2/check-results/{id}?{query}"), field).await;
    }
}

#[tokio::test]
async fn result_listing_paging_edges() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "paged", json!({})).await;
    let now = now_s();
    for i in 0..12 {
        let rid = format!("r{i:02}");
        seed(
            &ts,
            "checkResults",
            &rid,
            Some(&id),
            now - 100 + i,
            result_record(&id, &rid, "eu-west-1", false),
        );
    }
    let base = format!("/v1/check-results/{id}");
    assert_invalid(&ts, &format!("{base}?limit=0"), "limit").await;
    assert_invalid(&ts, &format!("{base}?limit=101"), "limit").await;
    assert_invalid(&ts, &format!("{base}?page=0"), "page").await;
    assert_invalid(&ts, &format!("{base}?page=x"), "page").await;

    let response = ts.get(&format!("{base}?limit=100")).await;
    assert_eq!(content_range(&response), "0-11/12");
    let response = ts.get(&format!("{base}?limit=5&page=3")).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(content_range(&response), "10-11/12");
    let (_, last) = parts(response).await;
    // Newest first: the last page holds the two oldest.
    let ids: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r01", "r00"]);
    let response = ts.get(&format!("{base}?limit=5&page=4")).await;
    assert_eq!(content_range(&response), "*/12");
    assert_eq!(parts(response).await.1, json!([]));
    // Default limit is 10.
    let (_, first) = parts(ts.get(&base).await).await;
    assert_eq!(first.as_array().unwrap().len(), 10);
    assert_eq!(first[0]["id"], "r11");
}

#[tokio::test]
async fn the_six_hour_window_rule() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "windowed", json!({})).await;
    let now = now_s();
    seed(
        &ts,
        "checkResults",
        "old",
        Some(&id),
        now - 7 * HOUR,
        result_record(&id, "old", "eu-west-1", false),
    );
    seed(
        &ts,
        "checkResults",
        "new",
        Some(&id),
        now - 60,
        result_record(&id, "new", "eu-west-1", false),
    );
    let base = format!("/v1/check-results/{id}");
    let listed = |body: Value| -> Vec<String> {
        body.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };

    // Both bounds more than 6 h apart: 400 naming them.
    let (status, body) = parts(ts.get(&format!("{base}?from={}&to={}", now - 7 * HOUR, now)).await).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["attributes"].get("to").is_some() && body["attributes"].get("from").is_some(),
        "{body}"
    );
    // `to` before `from`.
    assert_invalid(&ts, &format!("{base}?from={now}&to={}", now - 10), "to").await;
    // Exactly 6 h is fine.
    let (status, _) = parts(ts.get(&format!("{base}?from={}&to={now}", now - 6 * HOUR)).await).await;
    assert_eq!(status, 200);

    // Neither bound: the last 6 hours.
    let (status, body) = parts(ts.get(&base).await).await;
    assert_eq!(status, 200);
    assert_eq!(listed(body), ["new"]);
    // Only `from`: `to` is 6 hours later.
    let (status, body) = parts(ts.get(&format!("{base}?from={}", now - 8 * HOUR)).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(listed(body), ["old"]);
    // Only `to`: `from` is 6 hours earlier.
    let (status, body) = parts(ts.get(&format!("{base}?to={}", now - 2 * HOUR)).await).await;
    assert_eq!(status, 200);
    assert_eq!(listed(body), ["old"]);
    // Decimal seconds and ISO dates are accepted.
    let (status, _) = parts(ts.get(&format!("{base}?from={}.5", now - HOUR)).await).await;
    assert_eq!(status, 200);
    let (status, _) = parts(ts.get(&format!("{base}?to=2026-01-01T06:00:00Z")).await).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn v2_result_listing_uses_a_cursor_and_projects_fields() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "cursor", json!({})).await;
    let now = now_s();
    for i in 0..7 {
        let rid = format!("r{i}");
        seed(
            &ts,
            "checkResults",
            &rid,
            Some(&id),
            now - 100 + i,
            result_record(&id, &rid, "eu-west-1", false),
        );
    }
    let base = format!("/v2/check-results/{id}");
    let (_, first) = parts(ts.get(&format!("{base}?limit=3")).await).await;
    assert_eq!(first["length"], 3);
    assert_eq!(first["entries"][0]["id"], "r6");
    assert_eq!(first["nextId"], "r3");
    let (_, second) = parts(ts.get(&format!("{base}?limit=3&nextId=r3")).await).await;
    assert_eq!(second["entries"][0]["id"], "r3");
    assert_eq!(second["nextId"], "r0");
    let (_, last) = parts(ts.get(&format!("{base}?limit=3&nextId=r0")).await).await;
    assert_eq!(last["length"], 1);
    assert!(last["nextId"].is_null());
    assert_invalid(&ts, &format!("{base}?nextId=nope"), "nextId").await;
    assert_invalid(&ts, &format!("{base}?limit=101"), "limit").await;

    let (_, projected) = parts(
        ts.get(&format!("{base}?limit=1&fields=id,responseTime,createdAt"))
            .await,
    )
    .await;
    assert_eq!(
        projected["entries"][0],
        json!({ "id": "r6", "responseTime": 100, "createdAt": "2026-01-01T00:00:01.000Z" })
    );
    assert_invalid(&ts, &format!("{base}?fields=id,secret"), "fields").await;
}

#[tokio::test]
async fn unknown_checks_are_404() {
    let ts = TestServer::start().await;
    let missing = "00000000-0000-4000-8000-000000000000";
    for path in [
        format!("/v1/check-results/{missing}"),
        format!("/v2/check-results/{missing}"),
        format!("/v1/error-groups/checks/{missing}"),
        format!("/v1/analytics/api-checks/{missing}?metrics=responseTime"),
        format!("/v1/analytics/browser-checks/{missing}?metrics=responseTime"),
    ] {
        let (status, body) = parts(ts.get(&path).await).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_error(&body, 404);
    }
}

// ---------------------------------------------------------------------------
// Alerts, notifications, error groups.
// ---------------------------------------------------------------------------

fn notification(id: &str, channel: i64, status: &str) -> Value {
    json!({
        "id": id, "type": "EMAIL", "status": status, "alertConfig": { "address": "a@example.com" },
        "notificationResult": null, "timestamp": "2026-01-01T00:00:00.000Z", "checkType": "API",
        "checkId": "c", "checkAlertId": "a", "alertChannelId": channel, "checkResultId": "r",
    })
}

#[tokio::test]
async fn alert_notifications_filter_and_validate() {
    let ts = TestServer::start().await;
    let now = now_s();
    seed(
        &ts,
        "alertNotifications",
        "n1",
        Some("c"),
        now - 60,
        notification("n1", 1, "SUCCESS"),
    );
    seed(
        &ts,
        "alertNotifications",
        "n2",
        Some("c"),
        now - 120,
        notification("n2", 2, "FAILURE"),
    );
    seed(
        &ts,
        "alertNotifications",
        "n3",
        Some("c"),
        now - 8 * HOUR,
        notification("n3", 1, "FAILURE"),
    );
    let ids = |body: &Value| -> Vec<String> {
        body.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let response = ts.get("/v1/alert-notifications").await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(content_range(&response), "0-1/2");
    let (_, body) = parts(response).await;
    assert_eq!(ids(&body), ["n1", "n2"]);
    assert_eq!(body[0], notification("n1", 1, "SUCCESS"));
    for (query, expected) in [
        ("alertChannelId=1", vec!["n1"]),
        ("hasFailures=true", vec!["n2"]),
        ("hasFailures=false", vec!["n1"]),
        ("alertChannelId=1&hasFailures=true", vec![]),
        (&*format!("from={}", now - 9 * HOUR), vec!["n3"]),
        (&*format!("from={}&to={now}", now - 20 * HOUR), vec!["n1", "n2", "n3"]),
    ] {
        let (status, body) = parts(ts.get(&format!("/v1/alert-notifications?{query}")).await).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(ids(&body), expected, "{query}");
    }
    for (query, field) in [
        ("alertChannelId=abc", "alertChannelId"),
        ("alertChannelId=0", "alertChannelId"),
        ("hasFailures=1", "hasFailures"),
        ("limit=101", "limit"),
        ("page=0", "page"),
        (&*format!("from={}&to={now}", now - 25 * HOUR), "to"),
    ] {
        assert_invalid(&ts, &format!("/v1/alert-notifications?{query}"), field).await;
    }
}

#[tokio::test]
async fn check_alerts_list_in_a_six_hour_window() {
    let ts = TestServer::start().await;
    let now = now_s();
    for i in 0..3 {
        let id = format!("a{i}");
        let alert = json!({
            "id": id, "name": "check", "checkId": "c", "alertType": "ALERT_FAILURE", "checkType": "API",
            "runLocation": "eu-west-1", "responseTime": 120, "error": "boom", "statusCode": "500",
            "created_at": "2026-01-01T00:00:00.000Z", "startedAt": "2026-01-01T00:00:00.000Z",
        });
        seed(&ts, "checkAlerts", &id, Some("c"), now - 10 * (i + 1), alert);
    }
    let response = ts.get("/v1/check-alerts?limit=2&page=2").await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(content_range(&response), "2-2/3");
    let (_, body) = parts(response).await;
    assert_eq!(body[0]["id"], "a2");
    assert_eq!(body[0]["alertType"], "ALERT_FAILURE");
    assert_invalid(&ts, &format!("/v1/check-alerts?from={}&to={now}", now - 7 * HOUR), "to").await;
    assert_invalid(&ts, "/v1/check-alerts?limit=0", "limit").await;
    let (status, body) = parts(ts.get(&format!("/v1/check-alerts?from={}", now - 3 * HOUR)).await).await;
    assert_eq!(status, 200);
    assert_eq!(body.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn error_groups_of_a_check() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "erring", json!({})).await;
    let (status, body) = parts(ts.get(&format!("/v1/error-groups/checks/{id}")).await).await;
    assert_eq!((status, body), (200, json!([])));
    let group = json!({
        "id": "g1", "checkId": id, "errorHash": "abc", "rawErrorMessage": "Error: 500 at /x",
        "cleanedErrorMessage": "Error: 500", "firstSeen": "2026-01-01", "lastSeen": "2026-01-02",
        "archivedUntilNextEvent": false,
    });
    seed(&ts, "errorGroups", "g1", Some(&id), now_s(), group.clone());
    seed(&ts, "errorGroups", "g2", Some("another"), now_s(), group.clone());
    let response = ts.get(&format!("/v1/error-groups/checks/{id}")).await;
    assert_eq!(content_range(&response), "0-0/1");
    assert_eq!(parts(response).await.1, json!([group]));
    assert_invalid(&ts, &format!("/v1/error-groups/checks/{id}?limit=0"), "limit").await;
    assert_invalid(&ts, &format!("/v1/error-groups/checks/{id}?page=-1"), "page").await;
}

// ---------------------------------------------------------------------------
// Analytics.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn api_check_analytics_from_stored_results() {
    let ts = TestServer::start().await;
    let id = api_check(
        &ts,
        "measured",
        json!({ "locations": ["eu-west-1", "us-east-1"], "runParallel": true, "tags": ["prod"] }),
    )
    .await;
    run_session(&ts, &id).await;
    run_session(&ts, &id).await;

    let path = format!("/v1/analytics/api-checks/{id}?metrics=responseTime_avg,availability,dns_p95,retries");
    let (status, body) = parts(ts.get(&path).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checkId"], id.as_str());
    assert_eq!(body["name"], "measured");
    assert_eq!(body["checkType"], "API");
    assert_eq!(body["activated"], true);
    assert_eq!(body["muted"], false);
    assert!(body["frequency"].is_number());
    assert!(body["from"].is_string() && body["to"].is_string());
    assert_eq!(body["tags"], json!(["prod"]));
    assert_eq!(body["pagination"], json!({ "page": 1, "limit": 10 }));
    for metric in ["responseTime_avg", "availability", "dns_p95", "retries"] {
        assert!(body["metadata"][metric]["label"].is_string(), "{metric}: {body}");
    }
    assert_eq!(body["metadata"]["dns_p95"]["aggregation"], "p95");
    // Series as the reference: entries of rows (not spec 2.18's strings).
    let series = body["series"].as_array().unwrap();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0]["data"].as_array().map(Vec::len), Some(1), "{body}");
    let row = &series[0]["data"][0];
    assert_eq!(row["availability"], 100.0);
    assert_eq!(row["retries"], 0.0);
    assert!(row["responseTime_avg"].as_f64().unwrap() > 0.0);
    assert!(row["dns_p95"].as_f64().unwrap() > 0.0);
    assert!(row["timestamp"].is_string());

    let (_, grouped) = parts(ts.get(&format!("{path}&groupBy=runLocation")).await).await;
    let mut locations: Vec<String> = grouped["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["data"][0]["runLocation"].as_str().unwrap().to_owned())
        .collect();
    locations.sort();
    assert_eq!(locations, ["eu-west-1", "us-east-1"]);
    let (_, paged) = parts(ts.get(&format!("{path}&groupBy=runLocation&limit=1&page=2")).await).await;
    assert_eq!(paged["series"].as_array().unwrap().len(), 1);
    assert_eq!(paged["pagination"], json!({ "page": 2, "limit": 1 }));
    let (status, by_code) = parts(
        ts.get(&format!("{path}&groupBy=statusCode&aggregationInterval=60"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{by_code}");
    let row = &by_code["series"][0]["data"][0];
    assert_eq!(row["statusCode"], 200);
    assert_eq!(by_code["series"][0]["statusCode"], 200);

    // Only failures: nothing failed.
    let (_, failures) = parts(ts.get(&format!("{path}&filterByStatus=failure")).await).await;
    assert_eq!(failures["series"], json!([]));
    let (_, all) = parts(ts.get(&format!("{path}&filterByStatus=success,failure")).await).await;
    assert_eq!(all["series"].as_array().unwrap().len(), 1);
    // A window before the runs.
    let (status, empty) = parts(ts.get(&format!("{path}&quickRange=lastMonth")).await).await;
    assert_eq!(status, 200);
    assert_eq!(empty["series"], json!([]));
    let (status, custom) = parts(
        ts.get(&format!("{path}&from={}&to={}", now_s() - 60, now_s() + 60))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(custom["series"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn analytics_validate_their_parameters() {
    let ts = TestServer::start().await;
    let api = api_check(&ts, "api", json!({})).await;
    let browser = browser_check(&ts, "browser").await;
    let api_path = format!("/v1/analytics/api-checks/{api}");
    let browser_path = format!("/v1/analytics/browser-checks/{browser}");
    for (query, field) in [
        ("", "metrics"),
        ("metrics=", "metrics"),
        ("metrics=speed", "metrics"),
        ("metrics=TTFB", "metrics"),
        ("metrics=availability_avg", "metrics"),
        ("metrics=responseTime_p42", "metrics"),
        ("metrics=responseTime&quickRange=last24Hrs", "quickRange"),
        ("metrics=responseTime&aggregationInterval=0", "aggregationInterval"),
        ("metrics=responseTime&aggregationInterval=43201", "aggregationInterval"),
        ("metrics=responseTime&filterByStatus=flaky", "filterByStatus"),
        ("metrics=responseTime&groupBy=pageIndex", "groupBy"),
        ("metrics=responseTime&limit=0", "limit"),
        ("metrics=responseTime&page=0", "page"),
        ("metrics=responseTime&from=x", "from"),
        ("metrics=responseTime&from=200&to=100", "from"),
    ] {
        assert_invalid(&ts, &format!("{api_path}?{query}"), field).await;
    }
    assert_invalid(&ts, &format!("{browser_path}?metrics=dns"), "metrics").await;
    assert_invalid(
        &ts,
        &format!("{browser_path}?metrics=TTFB&groupBy=statusCode"),
        "groupBy",
    )
    .await;
    // The check's type must fit the endpoint.
    assert_invalid(
        &ts,
        &format!("/v1/analytics/browser-checks/{api}?metrics=responseTime"),
        "id",
    )
    .await;
    assert_invalid(
        &ts,
        &format!("/v1/analytics/api-checks/{browser}?metrics=responseTime"),
        "id",
    )
    .await;
    // Every quick range is accepted.
    for range in [
        "last24Hours",
        "last7Days",
        "last30Days",
        "thisWeek",
        "thisMonth",
        "lastWeek",
        "lastMonth",
    ] {
        let (status, body) = parts(
            ts.get(&format!("{api_path}?metrics=responseTime&quickRange={range}"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{range}: {body}");
    }
}

#[tokio::test]
async fn browser_check_analytics_with_web_vitals() {
    let ts = TestServer::start().await;
    let id = browser_check(&ts, "page").await;
    run_session(&ts, &id).await;
    let path = format!(
        "/v1/analytics/browser-checks/{id}?metrics=TTFB_avg,LCP_max,CLS,consoleErrors_sum,availability&groupBy=pageIndex"
    );
    let (status, body) = parts(ts.get(&path).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checkType"], "BROWSER");
    assert_eq!(body["metadata"]["CLS"]["unit"], "score");
    assert_eq!(body["metadata"]["consoleErrors_sum"]["unit"], "count");
    let row = &body["series"][0]["data"][0];
    assert_eq!(row["pageIndex"], 0);
    assert!(row["TTFB_avg"].as_f64().unwrap() > 0.0);
    assert_eq!(row["consoleErrors_sum"], 0.0);
    assert_eq!(row["availability"], 100.0);
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
