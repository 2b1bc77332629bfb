//! Check results, v1 and v2: filters, paging, the six-hour window.

use super::*;

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
    seed_passes(&ts, &id, (0..12).map(|i| format!("r{i:02}")), now - 100);
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
    seed_passes(&ts, &id, (0..7).map(|i| format!("r{i}")), now - 100);
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
