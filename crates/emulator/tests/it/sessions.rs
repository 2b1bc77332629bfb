//! Check sessions and test sessions: trigger, read, await (408 then 200),
//! cancel, validation and restart safety.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use monform_emulator::Config;
use reqwest::Method;
use serde_json::{Value, json};

mod test_sessions;

fn quick(duration_ms: u64) -> Config {
    Config {
        rate_limit: None,
        session_duration: Duration::from_millis(duration_ms),
        execute_checks: false,
        ..Config::default()
    }
}

/// Creates an API check with extra fields and returns its id.
async fn api_check(ts: &TestServer, name: &str, extra: Value) -> String {
    let mut body = bodies::api(name);
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    let created = ts.create("/v1/checks/api?autoAssignAlerts=false", &body, 201).await;
    created["id"].as_str().unwrap().to_owned()
}

async fn trigger(ts: &TestServer, body: Value) -> (u16, Value) {
    parts(ts.post("/v2/check-sessions/trigger", &body).await).await
}

/// Triggers one check and returns its session id.
async fn trigger_one(ts: &TestServer, check_id: &str) -> String {
    let (status, body) = trigger(ts, json!({ "target": { "checkId": [check_id] } })).await;
    assert_eq!(status, 201, "{body}");
    body["sessions"][0]["checkSessionId"].as_str().unwrap().to_owned()
}

fn assert_error(body: &Value, status: u16) {
    assert_eq!(body["statusCode"], status, "{body}");
    assert!(body["error"].is_string(), "{body}");
    assert!(body["message"].is_string(), "{body}");
    assert!(body["attributes"].is_object(), "{body}");
}

/// Asserts a 400 whose `attributes` name `field`.
async fn assert_invalid(response: reqwest::Response, field: &str) {
    let (status, body) = parts(response).await;
    assert_eq!(status, 400, "{body}");
    assert_error(&body, 400);
    assert!(
        body["attributes"].get(field).is_some(),
        "expected attribute `{field}`: {body}"
    );
}

fn is_uuid(value: &Value) -> bool {
    value.as_str().is_some_and(uuid_like)
}

fn uuid_like(text: &str) -> bool {
    text.len() == 36 && text.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn trigger_by_check_id_answers_201_with_one_session() {
    let ts = TestServer::start().await;
    let id = api_check(
        &ts,
        "parallel",
        json!({ "locations": ["eu-west-1", "us-east-1"], "runParallel": true }),
    )
    .await;
    let (status, body) = trigger(&ts, json!({ "target": { "checkId": [id] } })).await;
    assert_eq!(status, 201, "{body}");
    let sessions = body["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    let session = &sessions[0];
    assert!(is_uuid(&session["checkSessionId"]), "{session}");
    let link = session["checkSessionLink"].as_str().unwrap();
    assert!(
        link.starts_with("http://")
            && link.ends_with(&format!(
                "/v2/check-sessions/{}",
                session["checkSessionId"].as_str().unwrap()
            ))
    );
    assert_eq!(session["checkId"], id.as_str());
    assert_eq!(session["checkType"], "API");
    assert_eq!(session["name"], "parallel");
    assert_eq!(session["status"], "STARTED");
    assert!(session["startedAt"].is_string());
    assert!(session["stoppedAt"].is_null());
    assert!(session["timeElapsed"].is_number());
    assert_eq!(session["runLocations"], json!(["eu-west-1", "us-east-1"]));
    assert_eq!(session["runSource"], "TRIGGER_API");
    assert!(session.get("_internal").is_none() && session.get("results").is_none());
}

#[tokio::test]
async fn a_check_without_run_parallel_runs_in_one_location_round_robin() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "rr", json!({ "locations": ["eu-west-1", "us-east-1"] })).await;
    let mut seen = Vec::new();
    for _ in 0..2 {
        let (_, body) = trigger(&ts, json!({ "target": { "checkId": [id] } })).await;
        let locations = body["sessions"][0]["runLocations"].as_array().unwrap().clone();
        assert_eq!(locations.len(), 1);
        seen.push(locations[0].clone());
    }
    assert_eq!(seen, vec![json!("eu-west-1"), json!("us-east-1")]);
    let plain = api_check(&ts, "nowhere", json!({})).await;
    let (_, body) = trigger(&ts, json!({ "target": { "checkId": [plain] } })).await;
    assert_eq!(body["sessions"][0]["runLocations"], json!(["us-east-1"]));
}

#[tokio::test]
async fn match_tags_is_an_or_of_and_groups() {
    let ts = TestServer::start().await;
    let both = api_check(&ts, "both", json!({ "tags": ["a", "b"] })).await;
    let _only_a = api_check(&ts, "only-a", json!({ "tags": ["a"] })).await;
    let c = api_check(&ts, "c", json!({ "tags": ["c"] })).await;
    let _off = api_check(&ts, "off", json!({ "tags": ["c"], "activated": false })).await;
    let (status, body) = trigger(&ts, json!({ "target": { "matchTags": [["a", "b"], ["c"]] } })).await;
    assert_eq!(status, 201, "{body}");
    let mut ids: Vec<&str> = body["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["checkId"].as_str().unwrap())
        .collect();
    ids.sort();
    let mut expected = vec![both.as_str(), c.as_str()];
    expected.sort();
    assert_eq!(ids, expected, "deactivated checks never match");

    // checkId and matchTags are both filters.
    let (status, body) = trigger(&ts, json!({ "target": { "checkId": [both], "matchTags": [["c"]] } })).await;
    assert_eq!(status, 404, "{body}");

    // No target: every eligible check.
    let (status, body) = trigger(&ts, json!({})).await;
    assert_eq!(status, 201);
    assert_eq!(body["sessions"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn trigger_without_a_match_is_404_with_the_reasons() {
    let ts = TestServer::start().await;
    let off = api_check(&ts, "off", json!({ "activated": false })).await;
    let missing = "00000000-0000-4000-8000-000000000000";
    let (status, body) = trigger(&ts, json!({ "target": { "checkId": [off, missing] } })).await;
    assert_eq!(status, 404, "{body}");
    assert_error(&body, 404);
    let message = body["message"].as_str().unwrap();
    assert!(message.starts_with("no checks match the target"), "{message}");
    assert!(
        message.contains("is deactivated") && message.contains(&format!("{missing} not found")),
        "{message}"
    );

    let (status, body) = trigger(&ts, json!({ "target": { "matchTags": [["nothing"]] } })).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn trigger_validates_the_body() {
    let ts = TestServer::start().await;
    for (body, field) in [
        (json!({ "target": { "checkId": "x" } }), "target.checkId"),
        (json!({ "target": { "checkId": ["not-a-uuid"] } }), "target.checkId[0]"),
        (json!({ "target": { "matchTags": ["a"] } }), "target.matchTags[0]"),
        (json!({ "target": { "matchTags": [["a", 1]] } }), "target.matchTags[0]"),
        (json!({ "target": { "matchTags": "a" } }), "target.matchTags"),
        (
            json!({ "target": { "allowDeactivated": true } }),
            "target.allowDeactivated",
        ),
        (json!({ "target": [] }), "target"),
        (json!({ "refreshCache": "yes" }), "refreshCache"),
        (json!({ "targets": {} }), "targets"),
    ] {
        assert_invalid(ts.post("/v2/check-sessions/trigger", &body).await, field).await;
    }
    let response = ts
        .request(Method::POST, "/v2/check-sessions/trigger")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 415);
}

#[tokio::test]
async fn a_session_is_progress_then_passed_with_one_final_result_per_location() {
    let ts = TestServer::with(quick(1500)).await;
    let id = api_check(
        &ts,
        "slow",
        json!({ "locations": ["eu-west-1", "ap-south-1"], "runParallel": true }),
    )
    .await;
    let session_id = trigger_one(&ts, &id).await;
    let path = format!("/v2/check-sessions/{session_id}");
    let (status, body) = parts(ts.get(&path).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "PROGRESS");
    assert_eq!(body["results"], json!([]));
    assert!(body["stoppedAt"].is_null());

    // 408 while running (after about a second), then 200 once final.
    let started = Instant::now();
    let (status, body) = parts(ts.get(&format!("{path}/completion?maxWaitSeconds=1")).await).await;
    assert_eq!(status, 408, "{body}");
    assert_error(&body, 408);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    let (status, body) = parts(ts.get(&format!("{path}/completion?maxWaitSeconds=1")).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "PASSED");
    assert!(body["stoppedAt"].is_string());
    assert_eq!(body["timeElapsed"], 1500);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for result in results {
        assert!(is_uuid(&result["checkResultId"]));
        assert!(result["checkResultLink"].as_str().unwrap().contains(&session_id));
        assert_eq!(result["checkId"], id.as_str());
        assert_eq!(result["checkType"], "API");
        assert_eq!(result["name"], "slow");
        assert_eq!(result["resultType"], "FINAL");
        for flag in ["hasErrors", "hasFailures", "isDegraded", "aborted", "isCancelled"] {
            assert_eq!(result[flag], false, "{flag}: {result}");
        }
        assert!(result["responseTime"].is_number());
        assert!(result["startedAt"].is_string() && result["stoppedAt"].is_string());
    }
    let locations: Vec<&Value> = results.iter().map(|r| &r["runLocation"]).collect();
    assert_eq!(locations, vec![&json!("eu-west-1"), &json!("ap-south-1")]);

    // GET agrees with the completion body.
    let (_, again) = parts(ts.get(&path).await).await;
    assert_eq!(again, body);

    // The finished runs are check results.
    let (status, listed) = parts(ts.get(&format!("/v1/check-results/{id}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(listed.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn completion_validates_max_wait_seconds_and_ids() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "x", json!({})).await;
    let session = trigger_one(&ts, &id).await;
    for bad in ["0", "31", "abc", "1.5"] {
        let path = format!("/v2/check-sessions/{session}/completion?maxWaitSeconds={bad}");
        assert_invalid(ts.get(&path).await, "maxWaitSeconds").await;
    }
    // Default wait (30 s) returns as soon as the session ends.
    let started = Instant::now();
    let (status, body) = parts(ts.get(&format!("/v2/check-sessions/{session}/completion")).await).await;
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed() < Duration::from_secs(5));

    let missing = "00000000-0000-4000-8000-000000000000";
    for path in [
        format!("/v2/check-sessions/{missing}"),
        format!("/v2/check-sessions/{missing}/completion?maxWaitSeconds=1"),
    ] {
        let (status, body) = parts(ts.get(&path).await).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_error(&body, 404);
    }
    let (status, _) = parts(
        ts.post(&format!("/v1/check-sessions/{missing}/cancel"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn cancel_makes_the_session_cancelled_with_every_result_cancelled() {
    let ts = TestServer::with(quick(60_000)).await;
    let id = api_check(
        &ts,
        "long",
        json!({ "locations": ["eu-west-1", "us-west-2"], "runParallel": true }),
    )
    .await;
    let session = trigger_one(&ts, &id).await;

    // A waiter is woken by the cancel instead of waiting out its time.
    let waiter = {
        let client = ts.client.clone();
        let url = ts.url(&format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=10"));
        let key = ts.server.api_key.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let response = client.get(url).bearer_auth(key).send().await.unwrap();
            (
                response.status().as_u16(),
                response.json::<Value>().await.unwrap(),
                started.elapsed(),
            )
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;

    let response = ts
        .request(Method::POST, &format!("/v1/check-sessions/{session}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 204);
    assert!(response.bytes().await.unwrap().is_empty());

    let (status, body) = parts(ts.get(&format!("/v2/check-sessions/{session}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "CANCELLED");
    assert!(body["stoppedAt"].is_string());
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|r| r["isCancelled"] == true && r["resultType"] == "FINAL")
    );

    let (status, woken, waited) = waiter.await.unwrap();
    assert_eq!(status, 200, "{woken}");
    assert_eq!(woken["status"], "CANCELLED");
    assert!(waited < Duration::from_secs(3), "{waited:?}");

    // Cancelling a final session changes nothing.
    let (status, _) = parts(
        ts.post(&format!("/v1/check-sessions/{session}/cancel"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 204);
    let (_, again) = parts(ts.get(&format!("/v2/check-sessions/{session}")).await).await;
    assert_eq!(again, body);

    // Cancelled runs are recorded as cancelled check results.
    let (_, listed) = parts(ts.get(&format!("/v1/check-results/{id}")).await).await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|r| r["isCancelled"] == true));
}

#[tokio::test]
async fn cancelling_a_passed_session_is_an_idempotent_204() {
    let ts = TestServer::start().await;
    let id = api_check(&ts, "quick", json!({})).await;
    let session = trigger_one(&ts, &id).await;
    let (status, done) = parts(ts.get(&format!("/v2/check-sessions/{session}/completion")).await).await;
    assert_eq!(status, 200);
    assert_eq!(done["status"], "PASSED");
    let (status, _) = parts(
        ts.post(&format!("/v1/check-sessions/{session}/cancel"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 204);
    let (_, after) = parts(ts.get(&format!("/v2/check-sessions/{session}")).await).await;
    assert_eq!(after["status"], "PASSED");
}

#[tokio::test]
async fn cancel_validates_its_body() {
    let ts = TestServer::with(quick(60_000)).await;
    let id = api_check(&ts, "x", json!({})).await;
    let session = trigger_one(&ts, &id).await;
    let path = format!("/v1/check-sessions/{session}/cancel");
    assert_invalid(
        ts.post(&path, &json!({ "sequenceId": ["nope"] })).await,
        "sequenceId[0]",
    )
    .await;
    assert_invalid(ts.post(&path, &json!({ "sequenceId": "x" })).await, "sequenceId").await;
    assert_invalid(ts.post(&path, &json!({ "other": 1 })).await, "other").await;
    let stranger = json!({ "sequenceId": ["00000000-0000-4000-8000-000000000000"] });
    assert_invalid(ts.post(&path, &stranger).await, "sequenceId").await;
    let response = ts.request(Method::POST, &path).body("{").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 415);
    // Still running after the rejected calls.
    let (_, body) = parts(ts.get(&format!("/v2/check-sessions/{session}")).await).await;
    assert_eq!(body["status"], "PROGRESS");
}

#[tokio::test]
async fn sessions_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        db: Some(dir.path().join("emulator.sqlite")),
        ..quick(400)
    };
    let first = TestServer::with(config.clone()).await;
    let id = api_check(&first, "durable", json!({})).await;
    let session = trigger_one(&first, &id).await;
    first.server.shutdown().await.unwrap();

    tokio::time::sleep(Duration::from_millis(500)).await;
    let second = TestServer::with(config).await;
    let (status, body) = parts(
        second
            .get(&format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=1"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "PASSED");
    let (_, listed) = parts(second.get(&format!("/v1/check-results/{id}")).await).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn waiting_does_not_hold_up_shutdown() {
    let ts = TestServer::with(quick(60_000)).await;
    let id = api_check(&ts, "forever", json!({})).await;
    let session = trigger_one(&ts, &id).await;
    let url = ts.url(&format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=30"));
    let waiter = tokio::spawn(ts.client.get(url).bearer_auth(ts.server.api_key.clone()).send());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    ts.server.shutdown().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let response = waiter.await.unwrap().unwrap();
    assert_eq!(response.status().as_u16(), 408);
}

#[tokio::test]
async fn sessions_need_a_key() {
    let ts = TestServer::start().await;
    let response = ts
        .client
        .post(ts.url("/v2/check-sessions/trigger"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let response = ts.client.get(ts.url("/v1/test-sessions/x")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
}
