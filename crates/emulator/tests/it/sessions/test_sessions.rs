//! Test sessions: run then pass, deactivated checks, validation, private
//! locations as run locations, reads.

use super::*;

async fn trigger_test(ts: &TestServer, body: Value) -> (u16, Value) {
    parts(ts.post("/v1/test-sessions/trigger", &body).await).await
}

#[tokio::test]
async fn a_test_session_runs_then_passes() {
    let ts = TestServer::with(quick(1500)).await;
    let id = api_check(&ts, "under test", json!({ "tags": ["smoke"] })).await;
    let _other = api_check(&ts, "other", json!({ "tags": ["slow"] })).await;
    let metadata = json!({ "environment": "staging", "branchName": "main", "commitId": null });
    let (status, body) = trigger_test(
        &ts,
        json!({
            "name": "ci run",
            "runLocation": "eu-central-1",
            "target": { "matchTags": [["smoke"]] },
            "environmentVariables": [{ "key": "TOKEN", "value": "x", "secret": true }],
            "retryStrategy": { "type": "FIXED", "maxRetries": 2 },
            "metadata": metadata,
        }),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert!(is_uuid(&body["testSessionId"]));
    let test_id = body["testSessionId"].as_str().unwrap().to_owned();
    assert!(
        body["testSessionLink"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/test-sessions/{test_id}"))
    );
    assert_eq!(body["name"], "ci run");
    assert_eq!(body["status"], "RUNNING");
    assert_eq!(body["errorGroupIds"], json!([]));
    assert!(body["startedAt"].is_string() && body["stoppedAt"].is_null());
    assert!(body["timeElapsed"].is_number());
    assert_eq!(body["metadata"], metadata);
    assert!(body.get("_internal").is_none());
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["checkId"], id.as_str());
    assert_eq!(results[0]["status"], "RUNNING");
    assert_eq!(results[0]["runLocation"], "eu-central-1");
    assert!(results[0]["testSessionResultLink"].is_string());

    let path = format!("/v1/test-sessions/{test_id}");
    let (status, read) = parts(ts.get(&path).await).await;
    assert_eq!(status, 200);
    assert_eq!(read["status"], "RUNNING");

    let (status, body) = parts(ts.get(&format!("{path}/completion?maxWaitSeconds=1")).await).await;
    assert_eq!(status, 408, "{body}");
    assert_error(&body, 408);
    let (status, body) = parts(ts.get(&format!("{path}/completion?maxWaitSeconds=1")).await).await;
    assert_eq!(status, 200, "{body}");
    // Spec 2.9.
    for field in [
        "testSessionId",
        "name",
        "status",
        "errorGroupIds",
        "startedAt",
        "stoppedAt",
        "timeElapsed",
    ] {
        assert!(!body[field].is_null(), "{field}: {body}");
    }
    assert_eq!(body["status"], "PASSED");
    assert_eq!(body["timeElapsed"], 1500);
    let result = &body["results"][0];
    assert_eq!(result["status"], "PASSED");
    assert_eq!(result["resultType"], "FINAL");
    for flag in ["hasErrors", "hasFailures", "isDegraded", "aborted"] {
        assert_eq!(result[flag], false);
    }
    assert!(is_uuid(&result["testSessionResultId"]));
    assert_eq!(result["errorGroupIds"], json!([]));
    assert_eq!(result["name"], "under test");
    assert!(result["responseTime"].is_number() && result["stoppedAt"].is_string());

    // Test sessions record no check results.
    let (_, listed) = parts(ts.get(&format!("/v1/check-results/{id}")).await).await;
    assert_eq!(listed, json!([]));
}

#[tokio::test]
async fn test_sessions_honour_allow_deactivated() {
    let ts = TestServer::start().await;
    let off = api_check(&ts, "off", json!({ "activated": false })).await;
    let body = json!({ "name": "n", "runLocation": "eu-west-1", "target": { "checkId": [off] } });
    let (status, error) = trigger_test(&ts, body.clone()).await;
    assert_eq!(status, 404, "{error}");
    assert!(error["message"].as_str().unwrap().contains("deactivated"));
    let mut allowed = body;
    allowed["target"]["allowDeactivated"] = json!(true);
    let (status, created) = trigger_test(&ts, allowed).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["results"][0]["checkId"], off.as_str());
}

#[tokio::test]
async fn test_session_trigger_validates_every_field() {
    let ts = TestServer::start().await;
    api_check(&ts, "x", json!({})).await;
    let (status, body) = trigger_test(&ts, json!({})).await;
    assert_eq!(status, 400);
    assert!(
        body["attributes"].get("name").is_some() && body["attributes"].get("runLocation").is_some(),
        "{body}"
    );
    let valid = json!({ "name": "n", "runLocation": "eu-west-1" });
    for (patch, field) in [
        (json!({ "name": 3 }), "name"),
        (json!({ "name": " " }), "name"),
        (json!({ "runLocation": "mars-1" }), "runLocation"),
        (
            json!({ "target": { "allowDeactivated": "yes" } }),
            "target.allowDeactivated",
        ),
        (json!({ "target": { "checkId": [1] } }), "target.checkId[0]"),
        (
            json!({ "environmentVariables": [{ "value": "v" }] }),
            "environmentVariables[0].key",
        ),
        (json!({ "environmentVariables": {} }), "environmentVariables"),
        (
            json!({ "retryStrategy": { "type": "SOMETIMES" } }),
            "retryStrategy.type",
        ),
        (
            json!({ "retryStrategy": { "type": "FIXED", "maxRetries": 11 } }),
            "retryStrategy.maxRetries",
        ),
        (
            json!({ "retryStrategy": { "type": "SINGLE_RETRY", "maxRetries": 1 } }),
            "retryStrategy.maxRetries",
        ),
        (json!({ "metadata": { "branchName": 1 } }), "metadata.branchName"),
        (json!({ "metadata": { "github": {} } }), "metadata.github.reporting"),
        (json!({ "refreshCache": 1 }), "refreshCache"),
        (json!({ "color": "red" }), "color"),
    ] {
        let mut body = valid.clone();
        for (key, value) in patch.as_object().unwrap() {
            body[key] = value.clone();
        }
        assert_invalid(ts.post("/v1/test-sessions/trigger", &body).await, field).await;
    }
    // The valid body works (null retryStrategy is allowed).
    let mut body = valid.clone();
    body["retryStrategy"] = Value::Null;
    let (status, created) = trigger_test(&ts, body).await;
    assert_eq!(status, 201, "{created}");
}

#[tokio::test]
async fn a_private_location_slug_is_a_run_location() {
    let ts = TestServer::start().await;
    api_check(&ts, "x", json!({})).await;
    ts.create(
        "/v1/private-locations",
        &json!({ "name": "Office", "slugName": "office-1" }),
        201,
    )
    .await;
    let (status, body) = trigger_test(&ts, json!({ "name": "n", "runLocation": "office-1" })).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["results"][0]["runLocation"], "office-1");
    let (status, _) = trigger_test(&ts, json!({ "name": "n", "runLocation": "office-2" })).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn test_session_reads_validate_and_404() {
    let ts = TestServer::start().await;
    api_check(&ts, "x", json!({})).await;
    let (_, created) = trigger_test(&ts, json!({ "name": "n", "runLocation": "eu-west-1" })).await;
    let id = created["testSessionId"].as_str().unwrap();
    for bad in ["0", "0.5", "30.5", "x"] {
        let path = format!("/v1/test-sessions/{id}/completion?maxWaitSeconds={bad}");
        assert_invalid(ts.get(&path).await, "maxWaitSeconds").await;
    }
    // A number is accepted (not only integers).
    let (status, body) = parts(
        ts.get(&format!("/v1/test-sessions/{id}/completion?maxWaitSeconds=2.5"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let missing = "00000000-0000-4000-8000-000000000000";
    for path in [
        format!("/v1/test-sessions/{missing}"),
        format!("/v1/test-sessions/{missing}/completion?maxWaitSeconds=1"),
    ] {
        let (status, body) = parts(ts.get(&path).await).await;
        assert_eq!(status, 404, "{body}");
        assert_error(&body, 404);
    }
}

#[tokio::test]
async fn openapi_lists_the_session_routes() {
    let ts = TestServer::start().await;
    let (status, doc) = parts(ts.client.get(ts.url("/openapi.json")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    for (path, method) in [
        ("/v2/check-sessions/trigger", "post"),
        ("/v2/check-sessions/{checkSessionId}", "get"),
        ("/v2/check-sessions/{checkSessionId}/completion", "get"),
        ("/v1/check-sessions/{checkSessionId}/cancel", "post"),
        ("/v1/test-sessions/trigger", "post"),
        ("/v1/test-sessions/{testSessionId}", "get"),
        ("/v1/test-sessions/{testSessionId}/completion", "get"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path}");
    }
}
