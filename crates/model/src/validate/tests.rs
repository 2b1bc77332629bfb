//! One passing and one failing case per validation rule: the shape (spec 2,
//! limits of spec 8) and the cross-field rules (`rules`), through
//! `validate_resource`.

use serde_json::{Value, json};

use super::{Violation, validate_resource};
use crate::resources::Check;
use crate::{Kind, Resource};

/// Every violation of `body` as (path, message); empty when it is valid.
fn violations(kind: Kind, body: Value) -> Vec<(String, String)> {
    all(kind, body)
        .into_iter()
        .map(|v| (v.path.to_string(), v.message))
        .collect()
}

fn all(kind: Kind, body: Value) -> Vec<Violation> {
    validate_resource(kind, &body).err().unwrap_or_default()
}

#[track_caller]
fn ok(kind: Kind, body: Value) {
    let found = violations(kind, body);
    assert!(found.is_empty(), "expected no violations, got {found:?}");
}

/// Asserts exactly one violation, at `path`, whose message contains `message`.
#[track_caller]
fn fails(kind: Kind, body: Value, path: &str, message: &str) -> Violation {
    let mut found = all(kind, body);
    assert_eq!(found.len(), 1, "expected one violation, got {found:?}");
    let violation = found.remove(0);
    assert_eq!(violation.path.to_string(), path, "{violation:?}");
    assert!(
        violation.message.contains(message),
        "{:?} does not contain {message:?}",
        violation.message
    );
    violation
}

/// `base` with the fields of `extra` set, merging nested objects.
fn with(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(into), Value::Object(from)) = (&mut base, extra) {
        for (key, value) in from {
            let merged = match into.remove(&key) {
                Some(old @ Value::Object(_)) if value.is_object() => with(old, value),
                _ => value,
            };
            into.insert(key, merged);
        }
    }
    base
}

fn icmp(extra: Value) -> Value {
    with(
        json!({ "checkType": "ICMP", "name": "ping", "request": { "hostname": "example.com" } }),
        extra,
    )
}

fn api(extra: Value) -> Value {
    with(
        json!({ "checkType": "API", "name": "api", "request": { "url": "https://example.com" } }),
        extra,
    )
}

fn tcp(extra: Value) -> Value {
    with(
        json!({ "checkType": "TCP", "name": "tcp", "request": { "hostname": "example.com", "port": 443 } }),
        extra,
    )
}

fn url(extra: Value) -> Value {
    with(
        json!({ "checkType": "URL", "name": "url", "request": { "url": "https://example.com" } }),
        extra,
    )
}

fn browser(extra: Value) -> Value {
    with(
        json!({ "checkType": "BROWSER", "name": "browser", "script": "await page.goto('/')" }),
        extra,
    )
}

fn group(extra: Value) -> Value {
    with(json!({ "name": "group" }), extra)
}

fn status_page(extra: Value) -> Value {
    with(json!({ "name": "Status", "url": "status" }), extra)
}

fn private_location(slug: &str) -> Value {
    json!({ "name": "Office", "slugName": slug })
}

fn window(extra: Value) -> Value {
    with(
        json!({ "name": "upgrade", "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T04:00:00Z" }),
        extra,
    )
}

fn env_vars(count: usize) -> Value {
    (0..count)
        .map(|i| json!({ "key": format!("VAR_{i}"), "value": "x" }))
        .collect()
}

fn palette(color: &str) -> Value {
    let keys = [
        "bodyBackgroundColor",
        "headerBackgroundColor",
        "headerFontColor",
        "titleFontColor",
        "bodyFontColor",
        "bodyFontColorMuted",
        "navigationFontColor",
        "linkFontColor",
        "cardBackgroundColor",
        "borderColor",
        "primaryButtonBackgroundColor",
        "primaryButtonFontColor",
    ];
    keys.iter()
        .map(|k| (k.to_string(), json!(color)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

// Spec 2.4: frequency and frequencyOffset.

#[test]
fn sub_minute_frequency_only_for_api_and_tcp() {
    ok(Kind::Check, api(json!({ "frequency": 0, "frequencyOffset": 10 })));
    ok(Kind::Check, tcp(json!({ "frequency": 0, "frequencyOffset": 30 })));
    for (body, check_type) in [
        (icmp(json!({})), "ICMP"),
        (url(json!({})), "URL"),
        (browser(json!({})), "BROWSER"),
    ] {
        let body = with(body, json!({ "frequency": 0, "frequencyOffset": 10 }));
        let v = fails(
            Kind::Check,
            body,
            "frequency",
            &format!("only for API and TCP checks, not {check_type}"),
        );
        assert_eq!(
            v.help.as_deref(),
            Some("use one of 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440")
        );
    }
}

#[test]
fn sub_minute_frequency_needs_offset_10_20_or_30() {
    for offset in [10, 20, 30] {
        ok(Kind::Check, api(json!({ "frequency": 0, "frequencyOffset": offset })));
    }
    fails(
        Kind::Check,
        api(json!({ "frequency": 0 })),
        "frequency",
        "frequency 0 needs frequencyOffset 10, 20 or 30",
    );
    fails(
        Kind::Check,
        tcp(json!({ "frequency": 0, "frequencyOffset": 15 })),
        "frequencyOffset",
        "frequencyOffset 15 is not allowed for frequency 0; use 10, 20 or 30",
    );
}

#[test]
fn offset_up_to_ten_times_frequency_for_1_to_60() {
    ok(Kind::Check, icmp(json!({ "frequency": 60, "frequencyOffset": 600 })));
    ok(Kind::Check, icmp(json!({ "frequency": 1, "frequencyOffset": 10 })));
    ok(Kind::Check, icmp(json!({ "frequency": 60, "frequencyOffset": 1 })));
    let out_of_range = "frequencyOffset 700 is out of range 1..600 for frequency 60";
    fails(
        Kind::Check,
        icmp(json!({ "frequency": 60, "frequencyOffset": 700 })),
        "frequencyOffset",
        out_of_range,
    );
    let out_of_range = "frequencyOffset 11 is out of range 1..10 for frequency 1";
    fails(
        Kind::Check,
        icmp(json!({ "frequency": 1, "frequencyOffset": 11 })),
        "frequencyOffset",
        out_of_range,
    );
    // The default frequency (10) applies when it is omitted.
    fails(
        Kind::Check,
        icmp(json!({ "frequencyOffset": 101 })),
        "frequencyOffset",
        "out of range 1..100 for frequency 10",
    );
}

#[test]
fn offset_up_to_hours_for_frequency_above_60() {
    ok(Kind::Check, icmp(json!({ "frequency": 120, "frequencyOffset": 2 })));
    ok(Kind::Check, icmp(json!({ "frequency": 1440, "frequencyOffset": 24 })));
    let out_of_range = "frequencyOffset 3 is out of range 1..2 for frequency 120";
    fails(
        Kind::Check,
        icmp(json!({ "frequency": 120, "frequencyOffset": 3 })),
        "frequencyOffset",
        out_of_range,
    );
    let out_of_range = "frequencyOffset 25 is out of range 1..24 for frequency 1440";
    fails(
        Kind::Check,
        icmp(json!({ "frequency": 1440, "frequencyOffset": 25 })),
        "frequencyOffset",
        out_of_range,
    );
}

#[test]
fn offset_at_least_1() {
    fails(
        Kind::Check,
        icmp(json!({ "frequencyOffset": 0 })),
        "frequencyOffset",
        "0 is below the minimum 1",
    );
}

#[test]
fn frequency_from_the_allowed_list() {
    ok(Kind::Check, icmp(json!({ "frequency": 720 })));
    let v = fails(
        Kind::Check,
        icmp(json!({ "frequency": 7 })),
        "frequency",
        "7 is not allowed; expected one of 0, 1, 2, 5",
    );
    assert!(v.message.ends_with("720, 1440"), "{}", v.message);
    fails(
        Kind::Check,
        icmp(json!({ "frequency": 90 })),
        "frequency",
        "90 is not allowed",
    );
}

// ICMP thresholds (spec 2.1, 8).

#[test]
fn response_times_within_0_to_300000() {
    ok(
        Kind::Check,
        icmp(json!({ "degradedResponseTime": 0, "maxResponseTime": 300_000 })),
    );
    let too_high = "300001 is out of range 0..300000";
    fails(
        Kind::Check,
        icmp(json!({ "maxResponseTime": 300_001 })),
        "maxResponseTime",
        too_high,
    );
    fails(
        Kind::Check,
        icmp(json!({ "degradedResponseTime": 300_001 })),
        "degradedResponseTime",
        too_high,
    );
    fails(
        Kind::Check,
        icmp(json!({ "degradedResponseTime": -1 })),
        "degradedResponseTime",
        "-1 is out of range 0..300000",
    );
}

#[test]
fn packet_loss_above_0_and_at_most_100() {
    ok(
        Kind::Check,
        icmp(json!({ "degradedPacketLossThreshold": 0.5, "maxPacketLossThreshold": 100 })),
    );
    let path = "degradedPacketLossThreshold";
    fails(
        Kind::Check,
        icmp(json!({ "degradedPacketLossThreshold": 0 })),
        path,
        "0 must be greater than 0",
    );
    let path = "maxPacketLossThreshold";
    fails(
        Kind::Check,
        icmp(json!({ "maxPacketLossThreshold": 100.5 })),
        path,
        "100.5 is above the maximum 100",
    );
    fails(
        Kind::Check,
        icmp(json!({ "maxPacketLossThreshold": -5 })),
        path,
        "-5 must be greater than 0",
    );
}

#[test]
fn max_packet_loss_at_least_degraded() {
    ok(
        Kind::Check,
        icmp(json!({ "degradedPacketLossThreshold": 30, "maxPacketLossThreshold": 30 })),
    );
    fails(
        Kind::Check,
        icmp(json!({ "degradedPacketLossThreshold": 30, "maxPacketLossThreshold": 25 })),
        "maxPacketLossThreshold",
        "maxPacketLossThreshold 25 must be at least degradedPacketLossThreshold 30",
    );
    // Against the default maximum (20).
    fails(
        Kind::Check,
        icmp(json!({ "degradedPacketLossThreshold": 21 })),
        "maxPacketLossThreshold",
        "maxPacketLossThreshold 20",
    );
}

#[test]
fn ping_count_within_1_to_50() {
    ok(Kind::Check, icmp(json!({ "request": { "pingCount": 1 } })));
    ok(Kind::Check, icmp(json!({ "request": { "pingCount": 50 } })));
    fails(
        Kind::Check,
        icmp(json!({ "request": { "pingCount": 0 } })),
        "request.pingCount",
        "0 is out of range 1..50",
    );
    fails(
        Kind::Check,
        icmp(json!({ "request": { "pingCount": 51 } })),
        "request.pingCount",
        "51 is out of range 1..50",
    );
}

// Lengths and counts (spec 8).

#[test]
fn description_at_most_500_characters() {
    let (fits, too_long) = ("é".repeat(500), "é".repeat(501));
    let message = "is 501 characters long; at most 500 are allowed";
    ok(Kind::Check, api(json!({ "description": fits })));
    fails(
        Kind::Check,
        api(json!({ "description": too_long })),
        "description",
        message,
    );
    ok(Kind::StatusPage, status_page(json!({ "description": fits })));
    fails(
        Kind::StatusPage,
        status_page(json!({ "description": too_long })),
        "description",
        message,
    );
}

#[test]
fn at_most_100_environment_variables() {
    let message = "has 101 entries; at most 100 are allowed";
    ok(Kind::Check, browser(json!({ "environmentVariables": env_vars(100) })));
    fails(
        Kind::Check,
        browser(json!({ "environmentVariables": env_vars(101) })),
        "environmentVariables",
        message,
    );
    ok(Kind::Group, group(json!({ "environmentVariables": env_vars(100) })));
    fails(
        Kind::Group,
        group(json!({ "environmentVariables": env_vars(101) })),
        "environmentVariables",
        message,
    );
}

// Groups (spec 2.7).

#[test]
fn group_concurrency_at_least_1() {
    ok(Kind::Group, group(json!({ "concurrency": 1 })));
    fails(
        Kind::Group,
        group(json!({ "concurrency": 0 })),
        "concurrency",
        "0 is below the minimum 1",
    );
}

#[test]
fn group_order_at_least_0() {
    ok(Kind::Check, api(json!({ "groupOrder": 0 })));
    fails(
        Kind::Check,
        api(json!({ "groupOrder": -1 })),
        "groupOrder",
        "-1 is below the minimum 0",
    );
}

// Enumerations (spec 2.1).

#[test]
fn locations_from_the_allowed_list() {
    ok(
        Kind::Check,
        api(json!({ "locations": ["eu-west-1", "us-east-1", "af-south-1"] })),
    );
    let v = fails(
        Kind::Check,
        api(json!({ "locations": ["eu-west-1", "eu-west-9"] })),
        "locations[1]",
        "`eu-west-9` is not allowed",
    );
    assert_eq!(
        v.message, "`eu-west-9` is not allowed",
        "22 locations go to the help, not the message"
    );
    assert!(
        v.help
            .as_deref()
            .is_some_and(|h| h.starts_with("did you mean `eu-west-")),
        "{v:?}"
    );
    let v = fails(
        Kind::Group,
        group(json!({ "locations": ["us-east1"] })),
        "locations[0]",
        "`us-east1` is not allowed",
    );
    assert_eq!(v.help.as_deref(), Some("did you mean `us-east-1`?"));
}

#[test]
fn runtime_from_the_allowed_list() {
    ok(Kind::Check, api(json!({ "runtimeId": "2025.04" })));
    ok(Kind::Group, group(json!({ "runtimeId": "2022.10" })));
    fails(
        Kind::Check,
        api(json!({ "runtimeId": "2025.05" })),
        "runtimeId",
        "`2025.05` is not allowed; expected one of `2026.04`, `2025.04`",
    );
    fails(
        Kind::Group,
        group(json!({ "runtimeId": 2024 })),
        "runtimeId",
        "expected a string, found a number (2024)",
    );
}

mod kinds;
mod shape;
