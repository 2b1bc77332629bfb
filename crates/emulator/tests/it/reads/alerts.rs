//! Alert notifications, check alerts and error groups.

use super::*;

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
