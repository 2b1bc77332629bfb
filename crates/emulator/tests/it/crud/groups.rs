//! Check groups, and their checks listed with the group's settings applied.

use super::*;

#[tokio::test]
async fn groups_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let group = t.create("/v2/check-groups", &bodies::group("Production"), 201).await;
    let id = group["id"].as_i64().expect("a group id is an integer");
    assert_timestamps(&group);
    assert_eq!(group["name"], "Production");
    assert_eq!(group["activated"], true);
    assert_eq!(group["muted"], false);
    assert_eq!(group["concurrency"], 3);
    assert_eq!(group["runParallel"], false);
    assert_eq!(group["doubleCheck"], false);
    assert!(group["apiCheckDefaults"].is_object(), "required in responses: {group}");
    assert_eq!(group["alertChannelSubscriptions"], json!([]));
    let second = t.create("/v2/check-groups", &bodies::group("Staging"), 201).await;
    assert_eq!(second["id"], id + 1);

    let path = format!("/v1/check-groups/{id}");
    assert_eq!(t.read(&path).await, group);
    assert_eq!(ids(&t.read("/v1/check-groups").await), [json!(id), json!(id + 1)]);

    let update = format!("/v2/check-groups/{id}");
    let updated = t
        .update(
            &update,
            &json!({ "name": "Production", "concurrency": 5, "tags": ["prod"], "runtimeId": "2025.04", "retryStrategy": "FALLBACK" }),
            200,
        )
        .await;
    assert_eq!(updated["concurrency"], 5);
    assert_eq!(updated["tags"], json!(["prod"]));
    assert_eq!(updated["runtimeId"], "2025.04");
    assert_eq!(updated["retryStrategy"], "FALLBACK");
    assert_eq!(updated["activated"], true);
    assert!(updated["apiCheckDefaults"].is_object());
    assert_bumped(&group, &updated);

    let renamed = t
        .update(
            &update,
            &json!({ "name": "Prod", "runtimeId": null, "tags": null }),
            200,
        )
        .await;
    assert_eq!(renamed["name"], "Prod");
    assert!(
        renamed["runtimeId"].is_null() && renamed["tags"].is_null(),
        "nulls clear: {renamed}"
    );
    assert_eq!(renamed["concurrency"], 5, "omitted fields are kept");
    assert_eq!(renamed["retryStrategy"], "FALLBACK");
    assert_eq!(t.read(&path).await, renamed);

    // The group update requires name (spec 4).
    let (status, body) = t.call(Method::PUT, &update, Some(&json!({ "concurrency": 4 }))).await;
    assert_invalid(status, &body, &["name"]);
    assert_eq!(t.read(&path).await["concurrency"], 5);

    // Only the routes of the contract's table.
    let (status, body) = t.call(Method::PUT, &path, Some(&json!({ "name": "x" }))).await;
    assert_error(status, &body, 405);
    let (status, body) = t
        .call(Method::POST, "/v1/check-groups", Some(&json!({ "name": "x" })))
        .await;
    assert_error(status, &body, 405);

    t.delete_gone(&path).await;
    let (status, body) = t.call(Method::PUT, &update, Some(&json!({ "name": "x" }))).await;
    assert_error(status, &body, 404);
}

#[tokio::test]
async fn a_groups_checks_are_listed_with_its_settings_applied() {
    let t = TestServer::start().await;
    let snippet = t.create("/v1/snippets", &bodies::snippet("setup"), 201).await;
    let group = t
        .create(
            "/v2/check-groups",
            &json!({
                "name": "Shop", "activated": false, "muted": true, "tags": ["group"],
                "locations": ["eu-west-1", "eu-central-1"], "runtimeId": "2025.04",
                "retryStrategy": { "type": "FIXED", "baseBackoffSeconds": 30, "maxRetries": 2 },
                "environmentVariables": [{ "key": "STAGE", "value": "prod" }],
                "setupSnippetId": snippet["id"],
                "apiCheckDefaults": { "headers": [{ "key": "X-Env", "value": "prod" }], "assertions": [{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": "200" }] },
            }),
            201,
        )
        .await;
    let gid = group["id"].as_i64().unwrap();
    let member = with(
        &bodies::api("Member"),
        json!({ "groupId": gid, "tags": ["own"], "locations": ["us-east-1"], "groupOrder": 1 }),
    );
    let api = t.create("/v1/checks/api", &member, 201).await;
    let ping = t
        .create(
            "/v1/checks/icmp",
            &with(&bodies::icmp("Member ping"), json!({ "groupId": gid })),
            201,
        )
        .await;
    t.create("/v1/checks/api", &bodies::api("Outside"), 201).await;

    for version in ["v1", "v2"] {
        let list = t.read(&format!("/{version}/check-groups/{gid}/checks")).await;
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 2, "only the group's checks: {list:?}");
        let api_view = list.iter().find(|c| c["id"] == api["id"]).expect("the API check");
        let ping_view = list.iter().find(|c| c["id"] == ping["id"]).expect("the ICMP check");
        for view in [api_view, ping_view] {
            assert_eq!(view["locations"], json!(["eu-west-1", "eu-central-1"]));
            assert_eq!(view["runtimeId"], "2025.04");
            assert_eq!(view["retryStrategy"]["type"], "FIXED");
            assert_eq!(view["activated"], false);
            assert_eq!(view["muted"], true);
            assert!(view["tags"].as_array().unwrap().contains(&json!("group")));
            assert_eq!(view["environmentVariables"][0]["key"], "STAGE");
            assert!(view["checkType"].is_string() && view["id"].is_string());
        }
        assert_eq!(api_view["tags"], json!(["own", "group"]));
        assert_eq!(api_view["request"]["headers"][0]["key"], "X-Env");
        assert_eq!(api_view["request"]["assertions"][0]["source"], "STATUS_CODE");
        assert_eq!(api_view["setupSnippetId"], snippet["id"]);
        assert!(
            ping_view["request"].get("headers").is_none(),
            "API defaults only for API checks"
        );
        assert!(ping_view.get("setupSnippetId").is_none());
    }
    // The check itself keeps its own settings.
    let own = t.read(&format!("/v1/checks/{}", api["id"].as_str().unwrap())).await;
    assert_eq!(own["locations"], json!(["us-east-1"]));
    assert_eq!(own["activated"], true);

    // Paging of the group's checks.
    let response = t.get(&format!("/v1/check-groups/{gid}/checks?limit=1&page=2")).await;
    assert_eq!(response.headers()["content-range"], "1-1/2");
    let (status, body) = t.call(Method::GET, "/v1/check-groups/999/checks", None).await;
    assert_error(status, &body, 404);

    // A group with checks cannot be deleted.
    let path = format!("/v1/check-groups/{gid}");
    let (status, body) = t.call(Method::DELETE, &path, None).await;
    assert_error(status, &body, 409);
    t.delete_gone(&format!("/v1/checks/{}", ping["id"].as_str().unwrap()))
        .await;
    let (status, _) = t.call(Method::DELETE, &path, None).await;
    assert_eq!(status, 409, "still one check");
    // Moving the last check out of the group (null clears groupId) empties it.
    let moved = t
        .update(
            &format!("/v1/checks/api/{}", api["id"].as_str().unwrap()),
            &json!({ "groupId": null }),
            200,
        )
        .await;
    assert!(moved["groupId"].is_null());
    assert_eq!(t.read(&format!("/v1/check-groups/{gid}/checks")).await, json!([]));
    t.delete_gone(&path).await;
}
