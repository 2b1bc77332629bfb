//! What the clients people already use read from the service (issue 28):
//! status page cards and their services in full, alert channels with their
//! subscriptions, the check listing's `status` and `tag` filters as the
//! reference defines them, each runtime's Node.js in `dependencies.node`,
//! analytics `series` as objects, and updates that need not resend what
//! they do not change (a variable's `secret` above all).

use crate::common;

use common::targets::{api_check, emulator, http_target, run_session};
use common::*;
use serde_json::{Value, json};

fn ids(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| c["id"].as_str().expect("an id").to_owned())
        .collect();
    ids.sort();
    ids
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[track_caller]
fn assert_full_card(card: &Value, name: &str, services: &[(&str, &str)], account: &str) {
    assert_eq!(card["name"], name, "{card}");
    assert!(card["id"].as_str().is_some_and(|i| !i.is_empty()), "card id: {card}");
    assert_timestamps(card);
    let listed = card["services"].as_array().expect("services");
    assert_eq!(listed.len(), services.len(), "{card}");
    for (service, (id, name)) in listed.iter().zip(services) {
        assert_eq!(service["id"], *id, "{service}");
        assert_eq!(service["name"], *name, "{service}");
        assert_eq!(service["accountId"], account, "{service}");
        assert_timestamps(service);
    }
}

#[tokio::test]
async fn status_page_cards_show_their_services_in_full() {
    let ts = TestServer::start().await;
    let api = ts
        .create("/v1/status-pages/services", &json!({ "name": "API" }), 200)
        .await;
    let web = ts
        .create("/v1/status-pages/services", &json!({ "name": "Web" }), 200)
        .await;
    let (api_id, web_id) = (api["id"].as_str().unwrap(), web["id"].as_str().unwrap());
    let page = json!({
        "name": "Shop", "url": "shop",
        "cards": [
            { "name": "Backend", "services": [{ "id": api_id }] },
            { "name": "Everything", "services": [{ "id": web_id }, { "id": api_id }] },
        ],
    });
    let created = ts.create("/v1/status-pages", &page, 201).await;
    let account = ts.server.account_id.clone();
    let check = |page: &Value| {
        assert_full_card(&page["cards"][0], "Backend", &[(api_id, "API")], &account);
        assert_full_card(
            &page["cards"][1],
            "Everything",
            &[(web_id, "Web"), (api_id, "API")],
            &account,
        );
    };
    check(&created);
    let id = created["id"].as_str().unwrap();
    let read = ts.read(&format!("/v1/status-pages/{id}")).await;
    check(&read);
    let listed = ts.read("/v1/status-pages").await;
    check(&listed["entries"][0]);
    // A card keeps its id across reads and updates of the page.
    assert_eq!(read["cards"][0]["id"], created["cards"][0]["id"]);
    assert_ne!(read["cards"][0]["id"], read["cards"][1]["id"]);
    let updated = ts
        .update(&format!("/v1/status-pages/{id}"), &json!({ "name": "Shop 2" }), 200)
        .await;
    check(&updated);
    assert_eq!(updated["cards"][1]["id"], created["cards"][1]["id"]);
    // A renamed service shows its new name on the page.
    ts.update(
        &format!("/v1/status-pages/services/{api_id}"),
        &json!({ "name": "Public API" }),
        200,
    )
    .await;
    let read = ts.read(&format!("/v1/status-pages/{id}")).await;
    assert_eq!(read["cards"][0]["services"][0]["name"], "Public API");
}

#[tokio::test]
async fn alert_channels_list_their_subscriptions() {
    let ts = TestServer::start().await;
    let channel = ts
        .create("/v1/alert-channels", &bodies::email_channel("ops@example.com"), 201)
        .await;
    let other = ts
        .create("/v1/alert-channels", &bodies::email_channel("dev@example.com"), 201)
        .await;
    let (channel_id, other_id) = (channel["id"].clone(), other["id"].clone());
    assert_eq!(channel["subscriptions"], json!([]), "{channel}");
    assert_eq!(channel["autoSubscribe"], false, "{channel}");
    let subscribed = with(
        &bodies::api("Subscribed"),
        json!({ "alertChannelSubscriptions": [
            { "alertChannelId": channel_id, "activated": true },
            { "alertChannelId": other_id, "activated": false },
        ] }),
    );
    let check = ts
        .create("/v1/checks/api?autoAssignAlerts=false", &subscribed, 201)
        .await;
    ts.create("/v1/checks/api?autoAssignAlerts=false", &bodies::api("Alone"), 201)
        .await;
    let group = ts
        .create("/v2/check-groups?autoAssignAlerts=false", &bodies::group("G"), 201)
        .await;
    let (status, body) = ts
        .call(
            reqwest::Method::PUT,
            &format!("/v1/alert-channels/{channel_id}/subscriptions"),
            Some(&json!({ "groupId": group["id"], "activated": true })),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let read = ts.read(&format!("/v1/alert-channels/{channel_id}")).await;
    assert_eq!(
        read["subscriptions"],
        json!([
            { "checkId": check["id"], "groupId": null, "activated": true },
            { "checkId": null, "groupId": group["id"], "activated": true },
        ]),
        "{read}"
    );
    let listed = ts.read("/v1/alert-channels").await;
    assert_eq!(listed[0]["subscriptions"], read["subscriptions"]);
    assert_eq!(
        listed[1]["subscriptions"],
        json!([{ "checkId": check["id"], "groupId": null, "activated": false }])
    );
    // Deleting the check takes its subscription away.
    ts.delete_gone(&format!("/v1/checks/{}", check["id"].as_str().unwrap()))
        .await;
    let read = ts.read(&format!("/v1/alert-channels/{channel_id}")).await;
    assert_eq!(read["subscriptions"].as_array().map(Vec::len), Some(1), "{read}");
}

#[tokio::test]
async fn the_tag_filter_keeps_checks_with_any_of_the_tags() {
    let ts = TestServer::start().await;
    let mut made = std::collections::BTreeMap::new();
    for (name, tags) in [
        ("a", json!(["a"])),
        ("b", json!(["b"])),
        ("ab", json!(["a", "b"])),
        ("c", json!(["c"])),
    ] {
        let body = with(&bodies::api(name), json!({ "tags": tags }));
        let created = ts.create("/v1/checks/api?autoAssignAlerts=false", &body, 201).await;
        made.insert(name, created["id"].as_str().unwrap().to_owned());
    }
    let listed = ts.read("/v1/checks?tag=a&tag=b&limit=100").await;
    assert_eq!(
        ids(&listed),
        sorted(vec![made["a"].clone(), made["b"].clone(), made["ab"].clone()])
    );
    let listed = ts.read("/v1/checks?tag=c").await;
    assert_eq!(ids(&listed), vec![made["c"].clone()]);
}

#[tokio::test]
async fn the_status_filter_keeps_checks_by_their_current_status() {
    let ts = emulator().await;
    let target = http_target().await;
    let passing = api_check(&ts, target, "/ok", json!({})).await;
    let failing = api_check(&ts, target, "/fail", json!({ "retryStrategy": null })).await;
    let degraded = api_check(&ts, target, "/slow", json!({ "degradedResponseTime": 100 })).await;
    let never_run = api_check(&ts, target, "/ok", json!({})).await;
    for id in [&passing, &failing, &degraded] {
        run_session(&ts, id).await;
    }
    assert_eq!(ids(&ts.read("/v1/checks?status=failing").await), vec![failing.clone()]);
    assert_eq!(ids(&ts.read("/v1/checks?status=degraded").await), vec![degraded]);
    assert_eq!(ids(&ts.read("/v1/checks?status=passing").await), vec![passing.clone()]);
    // With another filter: both apply.
    let both = ts.read("/v1/checks?status=passing&search=fail").await;
    assert_eq!(both, json!([]));
    let (status, body) = parts(ts.get("/v1/checks?status=broken").await).await;
    assert_invalid(status, &body, &["status"]);
    // Unfiltered, every check is listed, the one never run too.
    assert!(ids(&ts.read("/v1/checks?limit=100").await).contains(&never_run));
}

#[tokio::test]
async fn runtimes_name_their_node_version_in_dependencies() {
    let ts = TestServer::start().await;
    let runtimes = ts.read("/v1/runtimes").await;
    for runtime in runtimes.as_array().unwrap() {
        let version = runtime["nodeJsVersion"].as_str().unwrap();
        let major = version.split('.').next().unwrap();
        assert_eq!(runtime["dependencies"]["node"], format!("{major}.x"), "{runtime}");
    }
    let one = ts.read("/v1/runtimes/2023.02").await;
    assert_eq!(one["dependencies"]["node"], "16.x");
}

#[tokio::test]
async fn analytics_series_are_objects_with_their_rows() {
    let ts = emulator().await;
    let target = http_target().await;
    let id = api_check(
        &ts,
        target,
        "/ok",
        json!({ "locations": ["eu-west-1", "us-east-1"], "runParallel": true }),
    )
    .await;
    run_session(&ts, &id).await;
    let body = ts
        .read(&format!(
            "/v1/analytics/api-checks/{id}?metrics=responseTime,availability"
        ))
        .await;
    let series = body["series"].as_array().expect("series");
    assert_eq!(series.len(), 1, "{body}");
    let rows = series[0]["data"].as_array().expect("data rows");
    assert_eq!(rows.len(), 1, "one bucket for the whole window: {body}");
    assert!(rows[0]["responseTime"].is_number(), "{body}");
    assert_eq!(rows[0]["availability"], 100.0, "{body}");
    assert!(rows[0]["timestamp"].is_string(), "{body}");

    let grouped = ts
        .read(&format!(
            "/v1/analytics/api-checks/{id}?metrics=availability&groupBy=runLocation"
        ))
        .await;
    let mut locations: Vec<&str> = grouped["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["data"][0]["runLocation"], s["runLocation"], "{s}");
            s["runLocation"].as_str().unwrap()
        })
        .collect();
    locations.sort();
    assert_eq!(locations, ["eu-west-1", "us-east-1"]);
}

#[tokio::test]
async fn a_secret_variable_stays_secret_when_an_update_leaves_secret_out() {
    let ts = TestServer::start().await;
    ts.create(
        "/v1/variables",
        &json!({ "key": "TOKEN", "value": "s3cret", "secret": true }),
        201,
    )
    .await;
    let updated = ts.update("/v1/variables/TOKEN", &json!({ "value": "n3w" }), 200).await;
    assert_eq!(updated["secret"], true, "{updated}");
    assert_eq!(updated["value"], Value::Null, "{updated}");
    // A client resending the whole body with the reference's defaults.
    let resent = json!({ "key": "TOKEN", "value": "n3w3r", "locked": false, "secret": false });
    let updated = ts.update("/v1/variables/TOKEN", &resent, 200).await;
    assert_eq!(updated["secret"], true, "{updated}");
    let updated = ts
        .update("/v1/variables/TOKEN", &json!({ "value": "x", "locked": true }), 200)
        .await;
    assert_eq!(
        (updated["secret"].clone(), updated["locked"].clone()),
        (json!(true), json!(true))
    );
    let read = ts.read("/v1/variables/TOKEN").await;
    assert_eq!(read["secret"], true);
}

/// Every update endpoint takes a body with one changed field: nothing
/// unchanged must be sent again (the quirks of spec 2.1 aside).
#[tokio::test]
async fn every_update_accepts_only_the_field_it_changes() {
    let ts = TestServer::start().await;
    let location = ts
        .create(
            "/v1/private-locations",
            &json!({ "name": "Office", "slugName": "office" }),
            201,
        )
        .await;
    let service = ts
        .create("/v1/status-pages/services", &json!({ "name": "S" }), 200)
        .await;
    let cases: Vec<(&str, &str, Value, Value)> = vec![
        // `name` is required on the group update (spec 4, a quirk kept).
        (
            "/v2/check-groups",
            "/v2/check-groups",
            bodies::group("G"),
            json!({ "name": "G", "muted": true }),
        ),
        (
            "/v1/snippets",
            "/v1/snippets",
            bodies::snippet("S"),
            json!({ "name": "S2" }),
        ),
        (
            "/v1/alert-channels",
            "/v1/alert-channels",
            json!({ "type": "WEBHOOK", "config": { "name": "h", "url": "https://example.com/h", "method": "POST" } }),
            json!({ "sendRecovery": false }),
        ),
        (
            "/v1/alert-channels",
            "/v1/alert-channels",
            bodies::email_channel("a@example.com"),
            json!({ "config": { "address": "b@example.com" } }),
        ),
        (
            "/v1/maintenance-windows",
            "/v1/maintenance-windows",
            json!({ "name": "M", "startsAt": "2030-01-01T00:00:00.000Z", "endsAt": "2030-01-01T01:00:00.000Z", "tags": ["a"] }),
            json!({ "name": "M2" }),
        ),
        (
            "/v1/dashboards",
            "/v1/dashboards",
            json!({ "header": "D" }),
            json!({ "header": "D2" }),
        ),
        (
            "/v1/status-pages",
            "/v1/status-pages",
            json!({ "name": "P", "url": "p", "cards": [{ "name": "c", "services": [{ "id": service["id"] }] }] }),
            json!({ "isPrivate": true }),
        ),
        (
            "/v1/status-pages/services",
            "/v1/status-pages/services",
            json!({ "name": "T" }),
            json!({ "name": "T2" }),
        ),
        (
            "/v1/private-locations",
            "/v1/private-locations",
            json!({ "name": "Lab", "slugName": "lab" }),
            json!({ "name": "Lab 2" }),
        ),
    ];
    for (create, update, body, change) in cases {
        let status = if create.ends_with("services") { 200 } else { 201 };
        let created = ts.create(create, &body, status).await;
        let id = match created.get("dashboardId").unwrap_or(&created["id"]) {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let updated = ts.update(&format!("{update}/{id}"), &change, 200).await;
        for (field, value) in change.as_object().unwrap() {
            assert_eq!(&updated[field], value, "{update}: {updated}");
        }
    }
    // A variable: `value` is the reference's one required field; the
    // `secret: false` clients send by default leaves a secret one secret.
    ts.create(
        "/v1/variables",
        &json!({ "key": "K", "value": "v", "secret": true }),
        201,
    )
    .await;
    let updated = ts
        .update("/v1/variables/K", &json!({ "value": "w", "secret": false }), 200)
        .await;
    assert_eq!(updated["secret"], true, "{updated}");
    // Checks: the typed update needs no quirk field; the generic one does (spec 2.1).
    let check = ts
        .create(
            "/v1/checks/api?autoAssignAlerts=false",
            &with(&bodies::api("A"), json!({ "privateLocations": [location["slugName"]] })),
            201,
        )
        .await;
    let id = check["id"].as_str().unwrap();
    let updated = ts
        .update(&format!("/v1/checks/api/{id}"), &json!({ "muted": true }), 200)
        .await;
    assert_eq!(updated["muted"], true);
}

#[tokio::test]
async fn status_page_cards_read_back_are_accepted_in_an_update() {
    let ts = TestServer::start().await;
    let api = ts
        .create("/v1/status-pages/services", &json!({ "name": "API" }), 200)
        .await;
    let api_id = api["id"].as_str().unwrap();
    let page =
        json!({ "name": "Shop", "url": "shop", "cards": [{ "name": "Backend", "services": [{ "id": api_id }] }] });
    let created = ts.create("/v1/status-pages", &page, 201).await;
    let id = created["id"].as_str().unwrap();
    // A client edits the cards it read and sends them back, with the
    // reference's `id` and `statusPageId` (`StatusPageV2CardUpdate`).
    let card = &created["cards"][0];
    let cards = json!([
        { "id": card["id"], "statusPageId": id, "name": "Back end", "services": [{ "id": api_id }] },
        { "name": "New", "services": [] },
    ]);
    let updated = ts
        .update(&format!("/v1/status-pages/{id}"), &json!({ "cards": cards }), 200)
        .await;
    let account = ts.server.account_id.clone();
    assert_full_card(&updated["cards"][0], "Back end", &[(api_id, "API")], &account);
    assert_eq!(updated["cards"][0]["id"], card["id"], "the card keeps its id");
    assert_full_card(&updated["cards"][1], "New", &[], &account);
    // On create too, and anything but a string is refused.
    let echoed = json!({ "name": "Echo", "url": "echo", "cards": [{ "id": "x", "statusPageId": "y", "name": "C" }] });
    ts.create("/v1/status-pages", &echoed, 201).await;
    let wrong = json!({ "name": "Wrong", "url": "wrong", "cards": [{ "statusPageId": 7, "name": "C" }] });
    let (status, body) = ts.call(reqwest::Method::POST, "/v1/status-pages", Some(&wrong)).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["attributes"].get("cards[0].statusPageId").is_some(), "{body}");
}

#[tokio::test]
async fn alert_channels_with_auto_subscribe_get_new_checks() {
    let ts = TestServer::start().await;
    let auto = ts
        .create(
            "/v1/alert-channels",
            &with(
                &bodies::email_channel("ops@example.com"),
                json!({ "autoSubscribe": true }),
            ),
            201,
        )
        .await;
    let plain = ts
        .create("/v1/alert-channels", &bodies::email_channel("dev@example.com"), 201)
        .await;
    assert_eq!(auto["autoSubscribe"], true, "{auto}");
    assert_eq!(plain["autoSubscribe"], false, "{plain}");
    let check = ts
        .create("/v1/checks/api?autoAssignAlerts=false", &bodies::api("New"), 201)
        .await;
    assert_eq!(
        check["alertChannelSubscriptions"],
        json!([{ "alertChannelId": auto["id"], "activated": true }]),
        "{check}"
    );
    // An update that leaves it out keeps it; one that sends it changes it.
    let path = format!("/v1/alert-channels/{}", auto["id"]);
    let kept = ts.update(&path, &json!({ "sendRecovery": false }), 200).await;
    assert_eq!(kept["autoSubscribe"], true, "{kept}");
    let off = ts.update(&path, &json!({ "autoSubscribe": false }), 200).await;
    assert_eq!(off["autoSubscribe"], false, "{off}");
    let later = ts
        .create("/v1/checks/api?autoAssignAlerts=false", &bodies::api("Later"), 201)
        .await;
    assert_eq!(later["alertChannelSubscriptions"], json!([]), "{later}");
    let (status, body) = ts
        .call(reqwest::Method::PUT, &path, Some(&json!({ "autoSubscribe": "yes" })))
        .await;
    assert_eq!(status, 400, "{body}");
}
