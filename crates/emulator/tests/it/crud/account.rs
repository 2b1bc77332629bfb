//! Snippets, variables (keyed by their key), alert channels and their
//! subscriptions, maintenance windows.

use super::*;

#[tokio::test]
async fn snippets_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let snippet = t.create("/v1/snippets", &bodies::snippet("setup"), 201).await;
    let id = snippet["id"].as_i64().expect("a snippet id is an integer");
    assert_timestamps(&snippet);
    assert_eq!(snippet["script"], "console.log(1)");
    let path = format!("/v1/snippets/{id}");
    assert_eq!(t.read(&path).await, snippet);
    assert_eq!(ids(&t.read("/v1/snippets").await), [json!(id)]);

    let updated = t.update(&path, &json!({ "script": "console.log(2)" }), 200).await;
    assert_eq!(updated["script"], "console.log(2)");
    assert_eq!(updated["name"], "setup");
    assert_bumped(&snippet, &updated);
    let (status, body) = t.call(Method::PUT, &path, Some(&json!({ "script": "" }))).await;
    assert_invalid(status, &body, &["script"]);
    let (status, body) = t
        .call(Method::POST, "/v1/snippets", Some(&json!({ "name": "x" })))
        .await;
    assert_invalid(status, &body, &["script"]);

    // In use by a check: refused.
    let check = t
        .create(
            "/v1/checks/api",
            &with(&bodies::api("x"), json!({ "tearDownSnippetId": id })),
            201,
        )
        .await;
    let (status, body) = t.call(Method::DELETE, &path, None).await;
    assert_error(status, &body, 409);
    t.delete_gone(&format!("/v1/checks/{}", check["id"].as_str().unwrap()))
        .await;
    t.delete_gone(&path).await;
}

// ---- variables ----

#[tokio::test]
async fn variables_are_keyed_by_their_key() {
    let t = TestServer::start().await;
    let variable = t
        .create(
            "/v1/variables",
            &json!({ "key": "BASE_URL", "value": "https://example.com" }),
            201,
        )
        .await;
    assert_eq!(variable["key"], "BASE_URL");
    assert_eq!(variable["value"], "https://example.com");
    assert_eq!(variable["locked"], false);
    assert_eq!(variable["secret"], false);
    assert_timestamps(&variable);
    let path = "/v1/variables/BASE_URL";
    assert_eq!(t.read(path).await, variable);

    // Duplicate key: 409.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/variables",
            Some(&json!({ "key": "BASE_URL", "value": "other" })),
        )
        .await;
    assert_error(status, &body, 409);
    for bad in [
        json!({ "value": "v" }),
        json!({ "key": "", "value": "v" }),
        json!({ "key": "K" }),
    ] {
        let (status, body) = t.call(Method::POST, "/v1/variables", Some(&bad)).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_error(status, &body, 400);
    }

    let updated = t
        .update(path, &json!({ "value": "https://example.org", "locked": true }), 200)
        .await;
    assert_eq!(updated["value"], "https://example.org");
    assert_eq!(updated["locked"], true);
    assert_eq!(updated["key"], "BASE_URL");
    assert_bumped(&variable, &updated);
    let unlocked = t
        .update(path, &json!({ "key": "BASE_URL", "locked": false }), 200)
        .await;
    assert_eq!(unlocked["locked"], false);
    assert_eq!(unlocked["value"], "https://example.org");
    let (status, body) = t.call(Method::PUT, path, Some(&json!({ "key": "OTHER" }))).await;
    assert_invalid(status, &body, &["key"]);

    // Secret values are never returned.
    let secret = t
        .create(
            "/v1/variables",
            &json!({ "key": "TOKEN", "value": "s3cr3t", "secret": true }),
            201,
        )
        .await;
    assert!(secret["value"].is_null(), "{secret}");
    assert!(t.read("/v1/variables/TOKEN").await["value"].is_null());
    let listed = t.read("/v1/variables").await;
    assert_eq!(ids(&listed), [json!("BASE_URL"), json!("TOKEN")]);
    assert!(listed[1]["value"].is_null());
    assert_eq!(listed[0]["value"], "https://example.org");
    let rotated = t.update("/v1/variables/TOKEN", &json!({ "value": "n3w" }), 200).await;
    assert!(rotated["value"].is_null());
    assert_eq!(rotated["secret"], true);
    // Once secret, always secret: `secret: false` changes nothing (the reference).
    let kept = t
        .update("/v1/variables/TOKEN", &json!({ "value": "n3w", "secret": false }), 200)
        .await;
    assert_eq!(kept["secret"], true);
    assert!(kept["value"].is_null());

    t.delete_gone(path).await;
    t.delete_gone("/v1/variables/TOKEN").await;
    // The key is free again.
    t.create("/v1/variables", &json!({ "key": "BASE_URL", "value": "again" }), 201)
        .await;
}

// ---- alert channels ----

#[tokio::test]
async fn alert_channels_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let channel = t
        .create("/v1/alert-channels", &bodies::email_channel("ops@example.com"), 201)
        .await;
    let id = channel["id"].as_i64().expect("an integer id");
    assert_timestamps(&channel);
    assert_eq!(channel["type"], "EMAIL");
    assert_eq!(channel["sendRecovery"], true);
    assert_eq!(channel["sendFailure"], true);
    assert_eq!(channel["sendDegraded"], true);
    assert_eq!(channel["sslExpiry"], false);
    assert_eq!(channel["sslExpiryThreshold"], 30);
    let path = format!("/v1/alert-channels/{id}");
    assert_eq!(t.read(&path).await, channel);
    assert_eq!(ids(&t.read("/v1/alert-channels").await), [json!(id)]);

    let updated = t.update(&path, &json!({ "sendRecovery": false }), 200).await;
    assert_eq!(updated["sendRecovery"], false);
    assert_eq!(updated["config"], channel["config"]);
    assert_bumped(&channel, &updated);
    let moved = t
        .update(&path, &json!({ "config": { "address": "oncall@example.com" } }), 200)
        .await;
    assert_eq!(moved["config"]["address"], "oncall@example.com");
    assert_eq!(moved["sendRecovery"], false);
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "config": { "address": "x" } })))
        .await;
    assert_invalid(status, &body, &["config.address"]);
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/alert-channels",
            Some(&json!({ "type": "PIGEON", "config": {} })),
        )
        .await;
    assert_invalid(status, &body, &["type"]);

    t.delete_gone(&path).await;
}

#[tokio::test]
async fn alert_channel_subscriptions_are_set_per_check_or_group() {
    let t = TestServer::start().await;
    let channel = t
        .create("/v1/alert-channels", &bodies::email_channel("ops@example.com"), 201)
        .await;
    let cid = channel["id"].as_i64().unwrap();
    let check = t
        .create("/v1/checks/icmp?autoAssignAlerts=false", &bodies::icmp("Ping"), 201)
        .await;
    let check_id = check["id"].as_str().unwrap();
    let group = t
        .create("/v2/check-groups?autoAssignAlerts=false", &bodies::group("G"), 201)
        .await;
    let path = format!("/v1/alert-channels/{cid}/subscriptions");

    let response = t
        .update(&path, &json!({ "checkId": check_id, "activated": true }), 200)
        .await;
    assert_eq!(
        response,
        json!({ "id": cid, "activated": true, "checkId": check_id, "groupId": null })
    );
    let seen = t.read(&format!("/v1/checks/{check_id}")).await;
    assert_eq!(
        seen["alertChannelSubscriptions"],
        json!([{ "alertChannelId": cid, "activated": true }])
    );
    assert_eq!(
        seen["alertChannels"]["email"],
        json!([{ "address": "ops@example.com" }])
    );
    assert_bumped(&check, &seen);

    let response = t
        .update(&path, &json!({ "checkId": check_id, "activated": false }), 200)
        .await;
    assert_eq!(response["activated"], false);
    let seen = t.read(&format!("/v1/checks/{check_id}")).await;
    assert_eq!(
        seen["alertChannelSubscriptions"],
        json!([{ "alertChannelId": cid, "activated": false }])
    );
    assert_eq!(seen["alertChannels"]["email"], json!([]));

    let response = t
        .update(&path, &json!({ "groupId": group["id"], "activated": true }), 200)
        .await;
    assert_eq!(response["groupId"], group["id"]);
    assert!(response["checkId"].is_null());
    let seen = t.read(&format!("/v1/check-groups/{}", group["id"])).await;
    assert_eq!(
        seen["alertChannelSubscriptions"],
        json!([{ "alertChannelId": cid, "activated": true }])
    );

    for bad in [
        json!({ "checkId": check_id, "groupId": group["id"], "activated": true }),
        json!({ "activated": true }),
        json!({ "checkId": check_id }),
        json!({ "checkId": check_id, "activated": "yes" }),
    ] {
        let (status, body) = t.call(Method::PUT, &path, Some(&bad)).await;
        assert_error(status, &body, 400);
    }
    let (status, body) = t
        .call(
            Method::PUT,
            "/v1/alert-channels/999/subscriptions",
            Some(&json!({ "checkId": check_id, "activated": true })),
        )
        .await;
    assert_error(status, &body, 404);
    let (status, body) = t
        .call(
            Method::PUT,
            &path,
            Some(&json!({ "checkId": "no-such-check", "activated": true })),
        )
        .await;
    assert_error(status, &body, 404);
}

// ---- maintenance windows ----

#[tokio::test]
async fn maintenance_windows_and_their_maintenances() {
    let t = TestServer::start().await;
    let body = json!({ "name": "Upgrade", "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T04:00:00Z", "tags": ["db"] });
    let window = t.create("/v1/maintenance-windows", &body, 201).await;
    let id = window["id"].as_i64().expect("an integer id");
    assert_timestamps(&window);
    assert_eq!(window["pauseAllChecks"], false);
    assert_eq!(window["silenceAllAlerts"], false);
    let path = format!("/v1/maintenance-windows/{id}");
    assert_eq!(t.read(&path).await, window);
    assert_eq!(ids(&t.read("/v1/maintenance-windows").await), [json!(id)]);

    let maintenances = t.read(&format!("{path}/maintenances")).await;
    let maintenance = &maintenances[0];
    assert_eq!(maintenances.as_array().unwrap().len(), 1);
    assert_eq!(maintenance["maintenanceWindowId"], id);
    assert_eq!(maintenance["startsAt"], "2026-12-01T02:00:00Z");
    assert_eq!(maintenance["endsAt"], "2026-12-01T04:00:00Z");
    for field in ["id", "status", "created_at", "updated_at"] {
        assert!(maintenance[field].is_string(), "{field} in {maintenance}");
    }
    let mid = maintenance["id"].as_str().unwrap();
    let one = format!("{path}/maintenances/{mid}");

    let moved = t.patch(&one, &json!({ "endsAt": "2026-12-01T05:00:00Z" })).await;
    let (status, moved) = parts(moved).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["endsAt"], "2026-12-01T05:00:00Z");
    assert_eq!(moved["startsAt"], "2026-12-01T02:00:00Z", "omitted: kept");
    let update = &moved["updates"][0];
    assert_eq!(update["maintenanceId"], mid);
    assert_eq!(update["previousEndsAt"], "2026-12-01T04:00:00Z");
    assert_eq!(update["dateAdjustments"]["endsAt"], "2026-12-01T05:00:00Z");
    assert_eq!(t.read(&format!("{path}/maintenances")).await[0], moved);

    let (status, body) = parts(t.patch(&one, &json!({ "endsAt": "2026-12-01T01:00:00Z" })).await).await;
    assert_invalid(status, &body, &["endsAt"]);
    let (status, body) = parts(t.patch(&one, &json!({ "startsAt": "soon", "until": 1 })).await).await;
    assert_invalid(status, &body, &["startsAt", "until"]);
    let (status, body) = parts(t.patch(&format!("{path}/maintenances/nope"), &json!({})).await).await;
    assert_error(status, &body, 404);
    let (status, body) = parts(
        t.patch(&format!("/v1/maintenance-windows/999/maintenances/{mid}"), &json!({}))
            .await,
    )
    .await;
    assert_error(status, &body, 404);

    let updated = t
        .update(
            &path,
            &json!({ "timezone": "Europe/Amsterdam", "pauseAllChecks": true }),
            200,
        )
        .await;
    assert_eq!(updated["timezone"], "Europe/Amsterdam");
    assert_eq!(updated["pauseAllChecks"], true);
    assert_eq!(updated["name"], "Upgrade");
    assert_bumped(&window, &updated);
    let cleared = t.update(&path, &json!({ "timezone": null, "tags": null }), 200).await;
    assert!(cleared["timezone"].is_null() && cleared["tags"].is_null(), "{cleared}");
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "endsAt": "2026-11-30T00:00:00Z" })))
        .await;
    assert_invalid(status, &body, &["endsAt"]);

    t.delete_gone(&path).await;
    let (status, body) = t.call(Method::GET, &format!("{path}/maintenances"), None).await;
    assert_error(status, &body, 404);
}
