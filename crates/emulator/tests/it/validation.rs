//! Every validation rule of the ICMP create (spec 2.1, 2.4 and 8) and of the
//! group update (spec 2.7), and references to objects that do not exist:
//! each a 400 whose `attributes` name the offending field.

use crate::common;
use common::*;

use reqwest::Method;
use serde_json::{Value, json};

/// A valid ICMP create body with `extra` merged in (`null` removes a field).
fn icmp(extra: Value) -> Value {
    with(&bodies::icmp("Ping"), extra)
}

async fn create_icmp(t: &TestServer, body: &Value) -> (u16, Value) {
    t.call(Method::POST, "/v1/checks/icmp?autoAssignAlerts=false", Some(body))
        .await
}

/// Each body must be refused naming exactly `field`.
async fn refused(t: &TestServer, cases: &[(&str, Value)]) {
    for (field, body) in cases {
        let (status, response) = create_icmp(t, body).await;
        assert_invalid(status, &response, &[field]);
        assert_eq!(
            attribute_keys(&response),
            [*field],
            "only `{field}` is wrong in {body}: {response}"
        );
        assert_eq!(response["message"], "1 field is invalid");
    }
}

async fn accepted(t: &TestServer, bodies: &[Value]) {
    for body in bodies {
        let (status, response) = create_icmp(t, body).await;
        assert_eq!(status, 201, "{body}: {response}");
    }
}

#[tokio::test]
async fn icmp_create_requires_name_request_heartbeat_and_script() {
    let t = TestServer::start().await;
    refused(
        &t,
        &[
            ("name", icmp(json!({ "name": null }))),
            ("request", icmp(json!({ "request": null }))),
            ("heartbeat", icmp(json!({ "heartbeat": null }))),
            ("script", icmp(json!({ "script": null }))),
            ("name", icmp(json!({ "name": "" }))),
            ("name", icmp(json!({ "name": 5 }))),
            ("request.hostname", icmp(json!({ "request": {} }))),
            ("request.hostname", icmp(json!({ "request": { "hostname": "" } }))),
            ("request", icmp(json!({ "request": "example.com" }))),
        ],
    )
    .await;
    // heartbeat and script are free-form: anything is stored as sent.
    let body = icmp(json!({ "heartbeat": { "period": "whatever" }, "script": "anything" }));
    let (status, created) = create_icmp(&t, &body).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["heartbeat"], json!({ "period": "whatever" }));
    assert_eq!(created["script"], "anything");
    // An empty body names all four.
    let (status, response) = create_icmp(&t, &json!({})).await;
    assert_invalid(status, &response, &["name", "request", "heartbeat", "script"]);
    assert_eq!(attribute_keys(&response), ["heartbeat", "name", "request", "script"]);
}

#[tokio::test]
async fn icmp_response_times_are_0_to_300000() {
    let t = TestServer::start().await;
    let mut cases = Vec::new();
    for field in ["degradedResponseTime", "maxResponseTime"] {
        cases.push((field, icmp(json!({ field: -1 }))));
        cases.push((field, icmp(json!({ field: 300001 }))));
        cases.push((field, icmp(json!({ field: "fast" }))));
    }
    refused(&t, &cases).await;
    accepted(
        &t,
        &[
            icmp(json!({ "degradedResponseTime": 0, "maxResponseTime": 0 })),
            icmp(json!({ "degradedResponseTime": 300000, "maxResponseTime": 300000 })),
        ],
    )
    .await;
}

#[tokio::test]
async fn icmp_packet_loss_thresholds_are_above_0_at_most_100_and_ordered() {
    let t = TestServer::start().await;
    let cases = [
        (
            "degradedPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": 0 })),
        ),
        (
            "degradedPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": -5 })),
        ),
        (
            "degradedPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": 100.5, "maxPacketLossThreshold": 100 })),
        ),
        (
            "degradedPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": "10%" })),
        ),
        (
            "maxPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": 0.5, "maxPacketLossThreshold": 0 })),
        ),
        (
            "maxPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": 0.5, "maxPacketLossThreshold": -5 })),
        ),
        ("maxPacketLossThreshold", icmp(json!({ "maxPacketLossThreshold": 101 }))),
        // The maximum is at least the degraded threshold.
        (
            "maxPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": 50, "maxPacketLossThreshold": 40 })),
        ),
        (
            "maxPacketLossThreshold",
            icmp(json!({ "degradedPacketLossThreshold": 30 })),
        ),
    ];
    refused(&t, &cases).await;
    accepted(
        &t,
        &[
            icmp(json!({ "degradedPacketLossThreshold": 0.1, "maxPacketLossThreshold": 0.1 })),
            icmp(json!({ "degradedPacketLossThreshold": 100, "maxPacketLossThreshold": 100 })),
            icmp(json!({ "degradedPacketLossThreshold": 50, "maxPacketLossThreshold": 50 })),
            icmp(json!({ "maxPacketLossThreshold": 10 })),
        ],
    )
    .await;
}

#[tokio::test]
async fn icmp_frequency_takes_the_listed_values() {
    let t = TestServer::start().await;
    let mut cases: Vec<(&str, Value)> = [3, 7, 11, 45, 90, 1441, -1]
        .into_iter()
        .map(|f| ("frequency", icmp(json!({ "frequency": f }))))
        .collect();
    cases.push(("frequency", icmp(json!({ "frequency": "10" }))));
    // Sub-minute is for API and TCP checks only.
    cases.push(("frequency", icmp(json!({ "frequency": 0 }))));
    cases.push(("frequency", icmp(json!({ "frequency": 0, "frequencyOffset": 10 }))));
    refused(&t, &cases).await;
    let allowed: Vec<Value> = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440]
        .into_iter()
        .map(|f| icmp(json!({ "frequency": f })))
        .collect();
    accepted(&t, &allowed).await;
}

#[tokio::test]
async fn frequency_offset_follows_the_rules_of_2_4() {
    let t = TestServer::start().await;
    // frequency 1 to 60: 1..floor(frequency * 10); above 60: 1..ceil(frequency / 60).
    let bounds = [
        (1, 10),
        (2, 20),
        (5, 50),
        (10, 100),
        (60, 600),
        (120, 2),
        (180, 3),
        (360, 6),
        (720, 12),
        (1440, 24),
    ];
    let mut cases = Vec::new();
    let mut fine = Vec::new();
    for (frequency, max) in bounds {
        cases.push((
            "frequencyOffset",
            icmp(json!({ "frequency": frequency, "frequencyOffset": max + 1 })),
        ));
        fine.push(icmp(json!({ "frequency": frequency, "frequencyOffset": max })));
        fine.push(icmp(json!({ "frequency": frequency, "frequencyOffset": 1 })));
    }
    cases.push((
        "frequencyOffset",
        icmp(json!({ "frequency": 10, "frequencyOffset": 0 })),
    ));
    cases.push(("frequencyOffset", icmp(json!({ "frequencyOffset": -3 }))));
    refused(&t, &cases).await;
    accepted(&t, &fine).await;

    // frequency 0: offset 10, 20 or 30 (seconds), and only for API and TCP checks.
    let tcp = json!({ "name": "Port", "request": { "hostname": "example.com", "port": 22 } });
    for (segment, base) in [("api", bodies::api("Fast")), ("tcp", tcp)] {
        let path = format!("/v1/checks/{segment}");
        for offset in [10, 20, 30] {
            t.create(
                &path,
                &with(&base, json!({ "frequency": 0, "frequencyOffset": offset })),
                201,
            )
            .await;
        }
        for offset in [5, 15, 60] {
            let (status, body) = t
                .call(
                    Method::POST,
                    &path,
                    Some(&with(&base, json!({ "frequency": 0, "frequencyOffset": offset }))),
                )
                .await;
            assert_invalid(status, &body, &["frequencyOffset"]);
        }
        let (status, body) = t
            .call(Method::POST, &path, Some(&with(&base, json!({ "frequency": 0 }))))
            .await;
        assert_invalid(status, &body, &["frequency"]);
    }
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/checks/url",
            Some(&json!({ "name": "u", "request": { "url": "https://e.com" }, "frequency": 0, "frequencyOffset": 10 })),
        )
        .await;
    assert_invalid(status, &body, &["frequency"]);
}

#[tokio::test]
async fn icmp_description_locations_runtime_and_ping_count() {
    let t = TestServer::start().await;
    refused(
        &t,
        &[
            ("description", icmp(json!({ "description": "x".repeat(501) }))),
            ("description", icmp(json!({ "description": 1 }))),
            ("locations[0]", icmp(json!({ "locations": ["mars-1"] }))),
            ("locations[1]", icmp(json!({ "locations": ["eu-west-1", "EU-WEST-1"] }))),
            ("locations", icmp(json!({ "locations": "eu-west-1" }))),
            ("runtimeId", icmp(json!({ "runtimeId": "2021.01" }))),
            ("runtimeId", icmp(json!({ "runtimeId": 2024.09 }))),
            ("request.pingCount", icmp(json!({ "request": { "hostname": "h", "pingCount": 0 } }))),
            ("request.pingCount", icmp(json!({ "request": { "hostname": "h", "pingCount": 51 } }))),
            ("request.pingCount", icmp(json!({ "request": { "hostname": "h", "pingCount": "3" } }))),
            ("request.ipFamily", icmp(json!({ "request": { "hostname": "h", "ipFamily": "IPv5" } }))),
            ("request.assertions[0].source", icmp(json!({ "request": { "hostname": "h", "assertions": [{ "source": "BODY", "comparison": "EQUALS" }] } }))),
            ("groupOrder", icmp(json!({ "groupOrder": -1 }))),
            ("frequncy", icmp(json!({ "frequncy": 10 }))),
            ("activated", icmp(json!({ "activated": "yes" }))),
        ],
    )
    .await;
    let every_location = [
        "us-east-1",
        "us-east-2",
        "us-west-1",
        "us-west-2",
        "ca-central-1",
        "sa-east-1",
        "eu-west-1",
        "eu-central-1",
        "eu-west-2",
        "eu-west-3",
        "eu-north-1",
        "eu-south-1",
        "me-south-1",
        "ap-southeast-1",
        "ap-northeast-1",
        "ap-east-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "af-south-1",
    ];
    let mut fine = vec![
        icmp(json!({ "description": "x".repeat(500) })),
        icmp(json!({ "locations": every_location })),
        icmp(json!({ "request": { "hostname": "h", "pingCount": 1 } })),
        icmp(json!({ "request": { "hostname": "h", "pingCount": 50, "ipFamily": "IPv6" } })),
    ];
    for runtime in [
        "2026.04", "2025.04", "2024.09", "2024.02", "2023.09", "2023.02", "2022.10",
    ] {
        fine.push(icmp(json!({ "runtimeId": runtime })));
    }
    accepted(&t, &fine).await;
    // Nullable fields take null.
    let (status, created) = create_icmp(&t, &icmp(json!({}))).await;
    assert_eq!(status, 201);
    let mut with_nulls = bodies::icmp("Nulls");
    for field in ["description", "runtimeId", "locations", "groupId", "frequencyOffset"] {
        with_nulls[field] = Value::Null;
    }
    let (status, response) = create_icmp(&t, &with_nulls).await;
    assert_eq!(status, 201, "{response}");
    assert_eq!(response["frequency"], created["frequency"]);
}

#[tokio::test]
async fn one_body_with_several_mistakes_reports_all_of_them() {
    let t = TestServer::start().await;
    let body = json!({
        "request": { "hostname": "example.com", "pingCount": 0 },
        "frequency": 7,
        "frequencyOffset": 0,
        "description": "x".repeat(501),
        "degradedResponseTime": 300001,
        "maxResponseTime": -1,
        "degradedPacketLossThreshold": 0,
        "maxPacketLossThreshold": 101,
        "locations": ["eu-west-1", "nowhere"],
        "runtimeId": "1999.01",
        "groupOrder": -1,
    });
    let (status, response) = create_icmp(&t, &body).await;
    let expected = [
        "degradedPacketLossThreshold",
        "degradedResponseTime",
        "description",
        "frequency",
        "frequencyOffset",
        "groupOrder",
        "heartbeat",
        "locations[1]",
        "maxPacketLossThreshold",
        "maxResponseTime",
        "name",
        "request.pingCount",
        "runtimeId",
        "script",
    ];
    assert_invalid(status, &response, &expected);
    assert_eq!(attribute_keys(&response), expected);
    assert_eq!(response["message"], format!("{} fields are invalid", expected.len()));
    assert_eq!(t.read("/v1/checks").await, json!([]), "nothing was created");

    // The cross-field rules of a body whose shape is right, together.
    let body = icmp(
        json!({ "frequency": 5, "frequencyOffset": 51, "degradedPacketLossThreshold": 60, "maxPacketLossThreshold": 50 }),
    );
    let (status, response) = create_icmp(&t, &body).await;
    assert_invalid(status, &response, &["frequencyOffset", "maxPacketLossThreshold"]);
    assert_eq!(attribute_keys(&response), ["frequencyOffset", "maxPacketLossThreshold"]);
}

// ---- the group update ----

async fn group(t: &TestServer) -> String {
    let group = t.create("/v2/check-groups", &bodies::group("Production"), 201).await;
    format!("/v2/check-groups/{}", group["id"])
}

fn env_vars(count: usize) -> Value {
    (0..count)
        .map(|i| json!({ "key": format!("K{i}"), "value": "v" }))
        .collect()
}

#[tokio::test]
async fn group_update_checks_each_rule() {
    let t = TestServer::start().await;
    let path = group(&t).await;
    let named = |extra: Value| with(&json!({ "name": "Production" }), extra);
    let cases = [
        ("name", json!({ "concurrency": 4 })),
        ("name", json!({ "name": null })),
        ("name", json!({ "name": "" })),
        ("name", json!({ "name": ["x"] })),
        ("concurrency", named(json!({ "concurrency": 0 }))),
        ("concurrency", named(json!({ "concurrency": -2 }))),
        ("concurrency", named(json!({ "concurrency": 1.5 }))),
        ("locations[0]", named(json!({ "locations": ["moon-1"] }))),
        ("runtimeId", named(json!({ "runtimeId": "2020.01" }))),
        (
            "environmentVariables",
            named(json!({ "environmentVariables": env_vars(101) })),
        ),
        (
            "environmentVariables[0].value",
            named(json!({ "environmentVariables": [{ "key": "K" }] })),
        ),
        ("retryStrategy", named(json!({ "retryStrategy": "SOMETIMES" }))),
        ("retryStrategy", named(json!({ "retryStrategy": 3 }))),
        (
            "retryStrategy.type",
            named(json!({ "retryStrategy": { "type": "NEVER" } })),
        ),
        (
            "retryStrategy.maxRetries",
            named(json!({ "retryStrategy": { "type": "FIXED", "maxRetries": 11 } })),
        ),
        (
            "retryStrategy.maxRetries",
            named(json!({ "retryStrategy": { "type": "SINGLE_RETRY", "maxRetries": 2 } })),
        ),
        (
            "apiCheckDefaults.headers",
            named(json!({ "apiCheckDefaults": { "headers": "X: 1" } })),
        ),
        ("concurency", named(json!({ "concurency": 2 }))),
    ];
    for (field, body) in &cases {
        let (status, response) = t.call(Method::PUT, &path, Some(body)).await;
        assert_invalid(status, &response, &[field]);
        assert_eq!(
            attribute_keys(&response),
            [*field],
            "only `{field}` is wrong in {body}: {response}"
        );
    }
    let stored = t.read(&path.replace("/v2/", "/v1/")).await;
    assert_eq!(stored["concurrency"], 3, "no refused update changed anything");

    for body in [
        named(json!({ "concurrency": 1 })),
        named(json!({ "concurrency": 100 })),
        named(json!({ "locations": ["eu-west-1", "us-east-1"] })),
        named(json!({ "runtimeId": "2022.10" })),
        json!({ "name": "Production", "runtimeId": null }),
        named(json!({ "environmentVariables": env_vars(100) })),
        named(json!({ "environmentVariables": [] })),
        named(json!({ "retryStrategy": "FALLBACK" })),
        named(
            json!({ "retryStrategy": { "type": "EXPONENTIAL", "baseBackoffSeconds": 10, "maxRetries": 3, "maxDurationSeconds": 600, "sameRegion": false } }),
        ),
        named(json!({ "retryStrategy": { "type": "SINGLE_RETRY" } })),
    ] {
        let updated = t.update(&path, &body, 200).await;
        for key in ["concurrency", "locations", "runtimeId"] {
            if let Some(value) = body.get(key) {
                assert_eq!(&updated[key], value, "{key} stored");
            }
        }
    }
    let strategy = t.read(&path.replace("/v2/", "/v1/")).await["retryStrategy"].clone();
    assert_eq!(strategy["type"], "SINGLE_RETRY");
    assert_eq!(strategy["baseBackoffSeconds"], 60, "defaults filled");
}

#[tokio::test]
async fn group_update_with_several_mistakes_reports_all_of_them() {
    let t = TestServer::start().await;
    let path = group(&t).await;
    let body = json!({
        "concurrency": 0,
        "locations": ["nowhere"],
        "runtimeId": "x",
        "environmentVariables": env_vars(101),
        "retryStrategy": 5,
    });
    let (status, response) = t.call(Method::PUT, &path, Some(&body)).await;
    let expected = [
        "concurrency",
        "environmentVariables",
        "locations[0]",
        "name",
        "retryStrategy",
        "runtimeId",
    ];
    assert_invalid(status, &response, &expected);
    assert_eq!(attribute_keys(&response), expected);
    assert_eq!(response["message"], "6 fields are invalid");

    // The group create validates the same way (name is required there too).
    let (status, response) = t.call(Method::POST, "/v2/check-groups", Some(&body)).await;
    assert_invalid(status, &response, &expected);
}

// ---- references ----

#[tokio::test]
async fn references_to_missing_objects_name_the_field() {
    let t = TestServer::start().await;
    let channel = t
        .create("/v1/alert-channels", &bodies::email_channel("ops@example.com"), 201)
        .await;
    let cases = [
        ("groupId", with(&bodies::api("x"), json!({ "groupId": 999 }))),
        (
            "setupSnippetId",
            with(&bodies::api("x"), json!({ "setupSnippetId": 998 })),
        ),
        (
            "tearDownSnippetId",
            with(&bodies::api("x"), json!({ "tearDownSnippetId": 997 })),
        ),
        (
            "alertChannelSubscriptions[1]",
            with(
                &bodies::api("x"),
                json!({ "alertChannelSubscriptions": [{ "alertChannelId": channel["id"], "activated": true }, { "alertChannelId": 996, "activated": true }] }),
            ),
        ),
        (
            "privateLocations[0]",
            with(&bodies::api("x"), json!({ "privateLocations": ["nowhere"] })),
        ),
        (
            "triggerIncident.serviceId",
            with(
                &bodies::api("x"),
                json!({ "triggerIncident": { "serviceId": "nope", "severity": "MAJOR", "name": "Down", "description": "d" } }),
            ),
        ),
    ];
    for (field, body) in &cases {
        let (status, response) = t
            .call(Method::POST, "/v1/checks/api?autoAssignAlerts=false", Some(body))
            .await;
        assert_invalid(status, &response, &[field]);
        assert_eq!(attribute_keys(&response), [*field], "{response}");
    }
    // All at once.
    let body = with(
        &bodies::api("x"),
        json!({ "groupId": 999, "setupSnippetId": 998, "privateLocations": ["nowhere"] }),
    );
    let (status, response) = t.call(Method::POST, "/v1/checks/api", Some(&body)).await;
    assert_eq!(
        attribute_keys(&response),
        ["groupId", "privateLocations[0]", "setupSnippetId"]
    );
    assert_error(status, &response, 400);

    // References of the ICMP create, of updates and of groups.
    let (status, response) = t
        .call(Method::POST, "/v1/checks/icmp", Some(&icmp(json!({ "groupId": 5 }))))
        .await;
    assert_invalid(status, &response, &["groupId"]);
    let check = t.create("/v1/checks/api", &bodies::api("Real"), 201).await;
    let (status, response) = t
        .call(
            Method::PUT,
            &format!("/v1/checks/api/{}", check["id"].as_str().unwrap()),
            Some(&json!({ "groupId": 9 })),
        )
        .await;
    assert_invalid(status, &response, &["groupId"]);
    let path = group(&t).await;
    let (status, response) = t
        .call(Method::PUT, &path, Some(&json!({ "name": "G", "setupSnippetId": 4, "alertChannelSubscriptions": [{ "alertChannelId": 77, "activated": true }] })))
        .await;
    assert_invalid(status, &response, &["setupSnippetId", "alertChannelSubscriptions[0]"]);
    let (status, response) = t
        .call(
            Method::POST,
            "/v1/maintenance-windows",
            Some(&json!({
                "name": "w", "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T03:00:00Z",
                "statusPageVisibility": { "enabled": true, "statusPageIds": ["nope"] },
            })),
        )
        .await;
    assert_invalid(status, &response, &["statusPageVisibility.statusPageIds[0]"]);

    // Existing references are accepted and stored as sent.
    let snippet = t.create("/v1/snippets", &bodies::snippet("s"), 201).await;
    let group = t.read(&path.replace("/v2/", "/v1/")).await;
    let body = with(
        &bodies::api("Ok"),
        json!({ "groupId": group["id"], "setupSnippetId": snippet["id"] }),
    );
    let created = t.create("/v1/checks/api", &body, 201).await;
    assert_eq!(created["groupId"], group["id"]);
    assert_eq!(created["setupSnippetId"], snippet["id"]);
}
