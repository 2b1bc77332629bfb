//! Create, read, list, update and delete of every kind over real HTTP, and
//! the behaviour particular to checks, groups, alert channels, maintenance
//! windows, status pages, dashboards and private locations.

use crate::common;
use common::*;

use reqwest::Method;
use serde_json::{Value, json};

/// `created_at` kept, `updated_at` moved forward.
#[track_caller]
fn assert_bumped(before: &Value, after: &Value) {
    assert_timestamps(after);
    assert_eq!(after["created_at"], before["created_at"], "created_at is kept");
    let (old, new) = (
        before["updated_at"].as_str().unwrap(),
        after["updated_at"].as_str().unwrap(),
    );
    assert!(new > old, "updated_at changes on update: {old} -> {new}");
}

fn ids(list: &Value) -> Vec<Value> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|o| {
            o.get("dashboardId")
                .or_else(|| o.get("id"))
                .or_else(|| o.get("key"))
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect()
}

// ---- checks ----

#[tokio::test]
async fn every_check_type_is_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let mut created_ids = Vec::new();
    for (segment, check_type, body) in check_bodies() {
        let created = t.create(&format!("/v1/checks/{segment}"), &body, 201).await;
        let id = created["id"].as_str().expect("id is a string").to_owned();
        assert_eq!(id.len(), 36, "a uuid: {id}");
        assert_eq!(created["checkType"], check_type);
        assert_eq!(created["name"], body["name"]);
        assert_timestamps(&created);
        assert_eq!(created["created_at"], created["updated_at"]);
        // Defaults of spec 2.1.
        assert_eq!(created["activated"], true, "{segment}");
        assert_eq!(created["muted"], false);
        assert_eq!(created["doubleCheck"], true);
        assert_eq!(created["shouldFail"], false);
        assert_eq!(created["useGlobalAlertSettings"], true);
        assert_eq!(created["runParallel"], false);
        assert_eq!(created["frequency"], 10);
        assert_eq!(created["degradedResponseTime"], 10000);
        assert_eq!(created["maxResponseTime"], 20000);
        assert_eq!(created["alertChannelSubscriptions"], json!([]));
        assert_eq!(
            created["alertChannels"],
            json!({ "email": [], "webhook": [], "slack": [], "sms": [] })
        );

        let path = format!("/v1/checks/{id}");
        assert_eq!(t.read(&path).await, created, "GET returns what the create returned");

        let typed = format!("/v1/checks/{segment}/{id}");
        let updated = t
            .update(&typed, &json!({ "description": "nightly", "tags": ["a"] }), 200)
            .await;
        assert_eq!(updated["description"], "nightly");
        assert_eq!(updated["tags"], json!(["a"]));
        assert_eq!(updated["name"], created["name"], "omitted fields are kept");
        assert_eq!(updated["checkType"], check_type);
        assert_eq!(updated["id"], created["id"]);
        assert_bumped(&created, &updated);
        let cleared = t.update(&typed, &json!({ "description": null }), 200).await;
        assert!(cleared["description"].is_null(), "explicit null clears: {cleared}");
        assert_eq!(cleared["tags"], json!(["a"]));
        assert_bumped(&updated, &cleared);
        assert_eq!(t.read(&path).await, cleared);
        created_ids.push((id, path));
    }
    let list = t.read("/v1/checks?limit=100").await;
    let listed = ids(&list);
    assert_eq!(listed.len(), 10);
    for (id, _) in &created_ids {
        assert!(listed.contains(&json!(id)), "{id} listed");
    }
    for (_, path) in &created_ids {
        t.delete_gone(path).await;
    }
    assert_eq!(t.read("/v1/checks").await, json!([]));
}

#[tokio::test]
async fn check_types_fill_their_own_defaults() {
    let t = TestServer::start().await;
    let by_type = |segment: &str| {
        check_bodies()
            .into_iter()
            .find(|(s, _, _)| *s == segment)
            .map(|(_, _, body)| body)
            .unwrap()
    };
    let icmp = t.create("/v1/checks/icmp", &by_type("icmp"), 201).await;
    assert_eq!(icmp["request"]["pingCount"], 10);
    assert_eq!(icmp["request"]["ipFamily"], "IPv4");
    assert_eq!(icmp["degradedPacketLossThreshold"], 10.0);
    assert_eq!(icmp["maxPacketLossThreshold"], 20.0);
    assert_eq!(icmp["heartbeat"], json!({}), "the quirk fields are stored as sent");
    assert_eq!(icmp["script"], "");
    let api = t.create("/v1/checks/api", &by_type("api"), 201).await;
    assert_eq!(api["request"]["method"], "GET");
    assert_eq!(api["request"]["followRedirects"], true);
    assert_eq!(api["request"]["bodyType"], "NONE");
    let heartbeat = t.create("/v1/checks/heartbeat", &by_type("heartbeat"), 201).await;
    let token = heartbeat["heartbeat"]["pingToken"]
        .as_str()
        .expect("a ping token")
        .to_owned();
    assert!(heartbeat["heartbeat"]["pingUrl"].as_str().unwrap().ends_with(&token));
    let dns = t.create("/v1/checks/dns", &by_type("dns"), 201).await;
    assert_eq!(dns["request"]["protocol"], "UDP");
    let playwright = t.create("/v1/checks/playwright", &by_type("playwright"), 201).await;
    assert_eq!(playwright["testCommand"], "npx playwright test");
    assert_eq!(playwright["browsers"], json!(["chromium"]));

    // The ping token is the service's: it survives updates with and without a heartbeat.
    let id = heartbeat["id"].as_str().unwrap();
    let renamed = t
        .update(&format!("/v1/checks/heartbeat/{id}"), &json!({ "name": "Cron" }), 200)
        .await;
    assert_eq!(renamed["heartbeat"]["pingToken"], token.as_str());
    let echoed = with(
        &renamed,
        json!({ "id": null, "created_at": null, "updated_at": null, "alertChannels": null, "script": "" }),
    );
    let generic = t.update(&format!("/v1/checks/{id}"), &echoed, 200).await;
    assert_eq!(generic["heartbeat"]["pingToken"], token.as_str());
    assert_eq!(generic["heartbeat"]["period"], 1);
}

#[tokio::test]
async fn check_responses_carry_alert_channels_and_subscriptions() {
    let t = TestServer::start().await;
    let email = t
        .create("/v1/alert-channels", &bodies::email_channel("ops@example.com"), 201)
        .await;
    let slack = t
        .create(
            "/v1/alert-channels",
            &json!({ "type": "SLACK", "config": { "url": "https://hooks.slack.com/x" } }),
            201,
        )
        .await;
    let webhook = t
        .create(
            "/v1/alert-channels",
            &json!({ "type": "WEBHOOK", "config": { "name": "hook", "url": "https://example.com/hook" } }),
            201,
        )
        .await;
    let sms = t
        .create(
            "/v1/alert-channels",
            &json!({ "type": "SMS", "config": { "number": "+31612345678", "name": "On call" } }),
            201,
        )
        .await;
    let channel_ids: Vec<Value> = [&email, &slack, &webhook, &sms]
        .iter()
        .map(|c| c["id"].clone())
        .collect();

    // autoAssignAlerts defaults to true: every existing channel.
    let check = t.create("/v1/checks/icmp", &bodies::icmp("Auto"), 201).await;
    let subscribed: Vec<Value> = check["alertChannelSubscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["activated"], true);
            s["alertChannelId"].clone()
        })
        .collect();
    assert_eq!(subscribed, channel_ids);
    let channels = &check["alertChannels"];
    assert_eq!(channels["email"], json!([{ "address": "ops@example.com" }]));
    assert_eq!(channels["slack"], json!([{ "url": "https://hooks.slack.com/x" }]));
    assert_eq!(
        channels["sms"],
        json!([{ "number": "+31612345678", "name": "On call" }])
    );
    let hook = &channels["webhook"][0];
    assert_eq!(hook["url"], "https://example.com/hook");
    assert_eq!(hook["name"], "hook");
    assert_eq!(hook["method"], "POST");
    assert_eq!(hook["headers"], json!([]));
    assert_eq!(hook["queryParameters"], json!([]));

    // autoAssignAlerts=false: only what the body says.
    let manual = t
        .create("/v1/checks/icmp?autoAssignAlerts=false", &bodies::icmp("Manual"), 201)
        .await;
    assert_eq!(manual["alertChannelSubscriptions"], json!([]));
    assert_eq!(
        manual["alertChannels"],
        json!({ "email": [], "webhook": [], "slack": [], "sms": [] })
    );
    let chosen = with(
        &bodies::icmp("Chosen"),
        json!({ "alertChannelSubscriptions": [
            { "alertChannelId": email["id"], "activated": true },
            { "alertChannelId": sms["id"], "activated": false },
        ] }),
    );
    let chosen = t.create("/v1/checks/icmp?autoAssignAlerts=false", &chosen, 201).await;
    assert_eq!(chosen["alertChannelSubscriptions"].as_array().unwrap().len(), 2);
    assert_eq!(chosen["alertChannels"]["email"].as_array().unwrap().len(), 1);
    assert_eq!(
        chosen["alertChannels"]["sms"],
        json!([]),
        "inactive subscriptions send nothing"
    );

    // A bad autoAssignAlerts value.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/checks/icmp?autoAssignAlerts=maybe",
            Some(&bodies::icmp("x")),
        )
        .await;
    assert_invalid(status, &body, &["autoAssignAlerts"]);

    // Updates with autoAssignAlerts=false keep the subscriptions as sent.
    let id = manual["id"].as_str().unwrap();
    let kept = t
        .update(
            &format!("/v1/checks/icmp/{id}?autoAssignAlerts=false"),
            &json!({ "muted": true }),
            200,
        )
        .await;
    assert_eq!(kept["alertChannelSubscriptions"], json!([]));
    let assigned = t
        .update(&format!("/v1/checks/icmp/{id}"), &json!({ "muted": false }), 200)
        .await;
    assert_eq!(
        assigned["alertChannelSubscriptions"].as_array().unwrap().len(),
        4,
        "default true subscribes"
    );

    // Deleting a channel removes it from the checks' subscriptions.
    t.delete_gone(&format!("/v1/alert-channels/{}", email["id"])).await;
    let after = t.read(&format!("/v1/checks/{}", check["id"].as_str().unwrap())).await;
    assert_eq!(after["alertChannelSubscriptions"].as_array().unwrap().len(), 3);
    assert_eq!(after["alertChannels"]["email"], json!([]));
}

#[tokio::test]
async fn generic_update_requires_heartbeat_and_script_typed_update_does_not() {
    let t = TestServer::start().await;
    let check = t.create("/v1/checks/api", &bodies::api("Shop"), 201).await;
    let id = check["id"].as_str().unwrap();
    let generic = format!("/v1/checks/{id}");

    let (status, body) = t.call(Method::PUT, &generic, Some(&json!({ "name": "Renamed" }))).await;
    assert_invalid(status, &body, &["heartbeat", "script"]);
    assert_eq!(attribute_keys(&body), ["heartbeat", "script"]);
    let (status, body) = t
        .call(Method::PUT, &generic, Some(&json!({ "name": "Renamed", "script": "" })))
        .await;
    assert_invalid(status, &body, &["heartbeat"]);
    assert_eq!(attribute_keys(&body), ["heartbeat"]);
    // Reported together with the body's own mistakes.
    let (status, body) = t.call(Method::PUT, &generic, Some(&json!({ "frequency": 7 }))).await;
    assert_invalid(status, &body, &["heartbeat", "script", "frequency"]);
    assert_eq!(t.read(&generic).await, check, "a refused update changes nothing");

    let updated = t
        .update(
            &generic,
            &json!({ "name": "Renamed", "heartbeat": { "any": 1 }, "script": "free" }),
            200,
        )
        .await;
    assert_eq!(updated["name"], "Renamed");
    assert_eq!(
        updated["checkType"], "API",
        "checkType is always in the update response"
    );
    assert_eq!(updated["id"], id);
    assert_eq!(updated["heartbeat"], json!({ "any": 1 }));
    assert_eq!(updated["script"], "free");
    assert_eq!(updated["request"], check["request"]);
    assert_bumped(&check, &updated);

    let typed = t
        .update(&format!("/v1/checks/api/{id}"), &json!({ "name": "Typed" }), 200)
        .await;
    assert_eq!(typed["name"], "Typed");
    assert_bumped(&updated, &typed);

    // The ICMP create requires them too; its typed update does not.
    let ping = t.create("/v1/checks/icmp", &bodies::icmp("Ping"), 201).await;
    let ping_id = ping["id"].as_str().unwrap();
    let updated = t
        .update(&format!("/v1/checks/icmp/{ping_id}"), &json!({ "frequency": 5 }), 200)
        .await;
    assert_eq!(updated["frequency"], 5);
    assert_eq!(updated["heartbeat"], json!({}));
}

#[tokio::test]
async fn a_checks_type_cannot_change() {
    let t = TestServer::start().await;
    let check = t.create("/v1/checks/api", &bodies::api("Shop"), 201).await;
    let id = check["id"].as_str().unwrap();
    let quirks = json!({ "heartbeat": {}, "script": "" });
    let (status, body) = t
        .call(
            Method::PUT,
            &format!("/v1/checks/{id}"),
            Some(&with(&quirks, json!({ "checkType": "TCP" }))),
        )
        .await;
    assert_invalid(status, &body, &["checkType"]);
    let (status, body) = t
        .call(
            Method::PUT,
            &format!("/v1/checks/tcp/{id}"),
            Some(&json!({ "name": "x" })),
        )
        .await;
    assert_invalid(status, &body, &["checkType"]);
    let (status, body) = t
        .call(
            Method::PUT,
            &format!("/v1/checks/api/{id}"),
            Some(&json!({ "checkType": "URL" })),
        )
        .await;
    assert_invalid(status, &body, &["checkType"]);
    // The same type is fine.
    t.update(
        &format!("/v1/checks/{id}"),
        &with(&quirks, json!({ "checkType": "API" })),
        200,
    )
    .await;
    // A create whose checkType disagrees with its path.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/checks/api",
            Some(&with(&bodies::api("x"), json!({ "checkType": "TCP" }))),
        )
        .await;
    assert_invalid(status, &body, &["checkType"]);
    assert_eq!(t.read(&format!("/v1/checks/{id}")).await["checkType"], "API");
}

#[tokio::test]
async fn checks_are_listed_with_tag_type_and_search_filters() {
    let t = TestServer::start().await;
    let make = |name: &str, tags: Value| with(&bodies::api(name), json!({ "tags": tags }));
    t.create("/v1/checks/api", &make("Shop home", json!(["prod", "shop"])), 201)
        .await;
    t.create("/v1/checks/api", &make("Shop cart", json!(["staging", "shop"])), 201)
        .await;
    t.create("/v1/checks/api", &make("Blog", json!(["prod"])), 201).await;
    t.create(
        "/v1/checks/icmp",
        &with(&bodies::icmp("Shop ping"), json!({ "tags": ["prod"] })),
        201,
    )
    .await;

    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&t.read("/v1/checks?tag=prod").await),
        ["Shop home", "Blog", "Shop ping"]
    );
    // Repeated tags: checks with at least one of them (the reference).
    assert_eq!(
        names(&t.read("/v1/checks?tag=prod&tag=shop").await),
        ["Shop home", "Shop cart", "Blog", "Shop ping"]
    );
    assert_eq!(
        names(&t.read("/v1/checks?tag=prod,shop&checkType=ICMP").await),
        ["Shop ping"]
    );
    assert_eq!(names(&t.read("/v1/checks?checkType=ICMP").await), ["Shop ping"]);
    assert_eq!(
        names(&t.read("/v1/checks?search=SHOP").await),
        ["Shop home", "Shop cart", "Shop ping"]
    );
    assert_eq!(
        names(&t.read("/v1/checks?search=shop&checkType=API&tag=prod").await),
        ["Shop home"]
    );
    assert_eq!(t.read("/v1/checks?tag=none").await, json!([]));
    assert_eq!(t.read("/v1/checks?search=zzz").await, json!([]));

    // Paging applies to the filtered list.
    let response = t.get("/v1/checks?search=shop&limit=2&page=2").await;
    assert_eq!(response.headers()["content-range"], "2-2/3");
    let (_, body) = parts(response).await;
    assert_eq!(names(&body), ["Shop ping"]);

    let (status, body) = t.call(Method::GET, "/v1/checks?checkType=PING", None).await;
    assert_invalid(status, &body, &["checkType"]);
}

// ---- groups ----

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

// ---- snippets ----

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

// ---- status pages and services ----

#[tokio::test]
async fn status_page_services_answer_200_on_create_and_list_with_cursors() {
    let t = TestServer::start().await;
    let service = t
        .create("/v1/status-pages/services", &json!({ "name": "Checkout" }), 200)
        .await;
    let id = service["id"].as_str().expect("a string id");
    assert_eq!(service["name"], "Checkout");
    assert_eq!(service["accountId"], t.server.account_id.as_str());
    assert_timestamps(&service);
    let path = format!("/v1/status-pages/services/{id}");
    assert_eq!(t.read(&path).await, service);
    let updated = t.update(&path, &json!({ "name": "Payments" }), 200).await;
    assert_eq!(updated["name"], "Payments");
    assert_eq!(updated["accountId"], service["accountId"]);
    assert_bumped(&service, &updated);
    let (status, body) = t
        .call(Method::POST, "/v1/status-pages/services", Some(&json!({})))
        .await;
    assert_invalid(status, &body, &["name"]);

    for name in ["Search", "Login"] {
        t.create("/v1/status-pages/services", &json!({ "name": name }), 200)
            .await;
    }
    let first = t.read("/v1/status-pages/services?limit=2").await;
    assert_eq!(first["length"], 2);
    assert_eq!(first["entries"].as_array().unwrap().len(), 2);
    assert_eq!(first["entries"][0]["name"], "Payments");
    let next = first["nextId"].as_str().expect("a cursor to the third");
    let second = t
        .read(&format!("/v1/status-pages/services?limit=2&nextId={next}"))
        .await;
    assert_eq!(second["length"], 1);
    assert_eq!(second["entries"][0]["name"], "Login");
    assert!(second["nextId"].is_null());
    let all = t.read("/v1/status-pages/services").await;
    assert_eq!(all["length"], 3);
    assert!(all["nextId"].is_null());

    t.delete_gone(&path).await;
}

#[tokio::test]
async fn status_pages_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let service = t
        .create("/v1/status-pages/services", &json!({ "name": "Checkout" }), 200)
        .await;
    let body = json!({ "name": "Shop status", "url": "shop-status", "cards": [{ "name": "Core", "services": [{ "id": service["id"] }] }] });
    let page = t.create("/v1/status-pages", &body, 201).await;
    let id = page["id"].as_str().expect("a string id");
    assert_timestamps(&page);
    assert_eq!(page["defaultTheme"], "AUTO");
    assert_eq!(page["isPrivate"], false);
    assert_eq!(page["cards"][0]["services"][0]["id"], service["id"]);
    let path = format!("/v1/status-pages/{id}");
    assert_eq!(t.read(&path).await, page);

    // The url is unique.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/status-pages",
            Some(&json!({ "name": "Other", "url": "shop-status" })),
        )
        .await;
    assert_error(status, &body, 409);
    // Card services must exist.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/status-pages",
            Some(&json!({ "name": "x", "url": "x", "cards": [{ "name": "c", "services": [{ "id": "nope" }] }] })),
        )
        .await;
    assert_invalid(status, &body, &["cards[0].services[0]"]);

    let updated = t
        .update(
            &path,
            &json!({ "description": "All systems", "defaultTheme": "DARK" }),
            200,
        )
        .await;
    assert_eq!(updated["description"], "All systems");
    assert_eq!(updated["defaultTheme"], "DARK");
    assert_eq!(updated["url"], "shop-status");
    assert_bumped(&page, &updated);
    let cleared = t.update(&path, &json!({ "description": null }), 200).await;
    assert!(cleared["description"].is_null());
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "description": "x".repeat(501) })))
        .await;
    assert_invalid(status, &body, &["description"]);

    for url in ["second", "third"] {
        t.create("/v1/status-pages", &json!({ "name": url, "url": url }), 201)
            .await;
    }
    let first = t.read("/v1/status-pages?limit=2").await;
    assert_eq!(first["length"], 2);
    assert_eq!(first["entries"][0]["id"], id);
    let next = first["nextId"].as_str().unwrap();
    let rest = t.read(&format!("/v1/status-pages?limit=2&nextId={next}")).await;
    assert_eq!(rest["length"], 1);
    assert_eq!(rest["entries"][0]["url"], "third");
    assert!(rest["nextId"].is_null());
    for query in ["limit=0", "limit=101", "nextId=nope"] {
        let (status, body) = t.call(Method::GET, &format!("/v1/status-pages?{query}"), None).await;
        assert_error(status, &body, 400);
    }

    t.delete_gone(&path).await;
    // Its url is free again.
    t.create(
        "/v1/status-pages",
        &json!({ "name": "again", "url": "shop-status" }),
        201,
    )
    .await;
}

// ---- dashboards ----

#[tokio::test]
async fn dashboards_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let dashboard = t
        .create(
            "/v1/dashboards",
            &json!({ "header": "Shop", "customUrl": "shop-board", "customDomain": "status.example.com" }),
            201,
        )
        .await;
    let id = dashboard["dashboardId"].as_str().expect("a string id");
    assert_timestamps(&dashboard);
    assert_eq!(dashboard["width"], "FULL");
    assert_eq!(dashboard["refreshRate"], 60);
    assert_eq!(dashboard["checksPerPage"], 15);
    assert_eq!(dashboard["tags"], json!([]));
    // The reference's numeric id beside the string one that names it.
    assert_eq!(dashboard["id"], 1);
    let path = format!("/v1/dashboards/{id}");
    assert_eq!(t.read(&path).await, dashboard);
    assert_eq!(ids(&t.read("/v1/dashboards").await), [json!(id)]);

    // The custom URL is taken.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/dashboards",
            Some(&json!({ "header": "Copy", "customUrl": "shop-board" })),
        )
        .await;
    assert_error(status, &body, 409);

    let updated = t
        .update(&path, &json!({ "header": "Shop (prod)", "tags": ["prod"] }), 200)
        .await;
    assert_eq!(updated["header"], "Shop (prod)");
    assert_eq!(updated["tags"], json!(["prod"]));
    assert_eq!(updated["dashboardId"], id);
    assert_eq!(updated["customUrl"], "shop-board");
    assert_bumped(&dashboard, &updated);
    // Keeping its own URL is not a clash.
    t.update(&path, &json!({ "customUrl": "shop-board" }), 200).await;
    let cleared = t.update(&path, &json!({ "customDomain": null }), 200).await;
    assert!(cleared["customDomain"].is_null());
    // Taking another dashboard's URL is.
    let other = t
        .create(
            "/v1/dashboards",
            &json!({ "header": "Blog", "customUrl": "blog-board" }),
            201,
        )
        .await;
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "customUrl": "blog-board" })))
        .await;
    assert_error(status, &body, 409);
    let (status, body) = t.call(Method::PUT, &path, Some(&json!({ "checksPerPage": 21 }))).await;
    assert_invalid(status, &body, &["checksPerPage"]);

    t.delete_gone(&path).await;
    t.delete_gone(&format!("/v1/dashboards/{}", other["dashboardId"].as_str().unwrap()))
        .await;
}

// ---- private locations ----

#[tokio::test]
async fn private_locations_show_their_raw_key_once_and_refuse_deletes_in_use() {
    let t = TestServer::start().await;
    let location = t
        .create(
            "/v1/private-locations",
            &json!({ "name": "Office", "slugName": "office-ams", "proxyUrl": "http://proxy:3128" }),
            201,
        )
        .await;
    let id = location["id"].as_str().expect("a string id");
    assert_timestamps(&location);
    assert_eq!(location["icon"], "location");
    let key = &location["keys"][0];
    let raw = key["rawKey"].as_str().expect("the raw key, on create only");
    let masked = key["maskedKey"].as_str().unwrap();
    assert!(
        masked.ends_with(&raw[raw.len() - 4..]) && masked.starts_with('*'),
        "{masked}"
    );
    assert!(!masked.contains(&raw[..raw.len() - 4]));

    let path = format!("/v1/private-locations/{id}");
    let read = t.read(&path).await;
    assert!(read["keys"][0].get("rawKey").is_none(), "{read}");
    assert_eq!(read["keys"][0]["maskedKey"], masked);
    let listed = t.read("/v1/private-locations").await;
    assert!(listed[0]["keys"][0].get("rawKey").is_none());
    assert_eq!(ids(&listed), [json!(id)]);

    let updated = t
        .update(&path, &json!({ "name": "Amsterdam office", "icon": "home" }), 200)
        .await;
    assert_eq!(updated["name"], "Amsterdam office");
    assert_eq!(updated["slugName"], "office-ams");
    assert_eq!(updated["keys"], read["keys"], "keys are the service's");
    assert_bumped(&location, &updated);
    let cleared = t.update(&path, &json!({ "proxyUrl": null }), 200).await;
    assert!(cleared["proxyUrl"].is_null());
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "slugName": "office-rtm" })))
        .await;
    assert_invalid(status, &body, &["slugName"]);

    let (status, body) = t
        .call(
            Method::POST,
            "/v1/private-locations",
            Some(&json!({ "name": "Twin", "slugName": "office-ams" })),
        )
        .await;
    assert_error(status, &body, 409);
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/private-locations",
            Some(&json!({ "name": "x", "slugName": "eu-west-1" })),
        )
        .await;
    assert_invalid(status, &body, &["slugName"]);

    // Used by a check, then by a group: 409 each time.
    let check = t
        .create(
            "/v1/checks/api",
            &with(&bodies::api("Intranet"), json!({ "privateLocations": ["office-ams"] })),
            201,
        )
        .await;
    let (status, body) = t.call(Method::DELETE, &path, None).await;
    assert_error(status, &body, 409);
    t.delete_gone(&format!("/v1/checks/{}", check["id"].as_str().unwrap()))
        .await;
    let group = t
        .create(
            "/v2/check-groups",
            &json!({ "name": "Inside", "privateLocations": ["office-ams"] }),
            201,
        )
        .await;
    let (status, body) = t.call(Method::DELETE, &path, None).await;
    assert_error(status, &body, 409);
    t.delete_gone(&format!("/v1/check-groups/{}", group["id"])).await;
    t.delete_gone(&path).await;
}

// ---- runtimes and locations ----

#[tokio::test]
async fn runtimes_and_locations_are_fixed_lists() {
    let t = TestServer::start().await;
    let runtimes = t.read("/v1/runtimes").await;
    let names: Vec<&str> = runtimes
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "2026.04", "2025.04", "2024.09", "2024.02", "2023.09", "2023.02", "2022.10"
        ]
    );
    let one = t.read("/v1/runtimes/2024.09").await;
    assert_eq!(one["name"], "2024.09");
    for field in ["multiStepSupport", "nodeJsVersion", "dependencies", "stage"] {
        assert!(!one[field].is_null(), "{field} in {one}");
    }
    let (status, body) = t.call(Method::GET, "/v1/runtimes/2020.01", None).await;
    assert_error(status, &body, 404);
    let locations = t.read("/v1/locations").await;
    assert_eq!(locations.as_array().unwrap().len(), 22);
    assert!(
        locations
            .as_array()
            .unwrap()
            .contains(&json!({ "region": "eu-west-1", "name": "Ireland" }))
    );
}
