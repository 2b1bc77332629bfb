//! Checks: every type through its whole life, their defaults, alert channels and
//! subscriptions in responses, typed updates, and listing filters.

use super::*;

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
