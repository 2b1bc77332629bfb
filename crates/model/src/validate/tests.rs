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

// Status pages (spec 2.11).

#[test]
fn theme_colors_need_all_twelve_keys() {
    ok(
        Kind::StatusPage,
        status_page(json!({ "themeColors": { "light": palette("#FFFFFF"), "dark": palette("#000") } })),
    );
    let mut dark = palette("#000");
    dark.as_object_mut().map(|p| p.remove("borderColor"));
    let body = status_page(json!({ "themeColors": { "light": palette("#FFF"), "dark": dark } }));
    fails(
        Kind::StatusPage,
        body,
        "themeColors.dark",
        "missing required field `borderColor`",
    );
    let body = status_page(json!({ "themeColors": { "light": palette("#FFF") } }));
    fails(Kind::StatusPage, body, "themeColors", "missing required field `dark`");
}

#[test]
fn theme_colors_are_upper_case_hex() {
    for good in ["#ABC", "#A1B2C3", "#000000"] {
        ok(
            Kind::StatusPage,
            status_page(json!({ "themeColors": { "light": palette(good), "dark": palette(good) } })),
        );
    }
    for bad in ["#abc", "#ABCD", "ABCDEF", "#GGGGGG", "red"] {
        let light = with(palette("#FFF"), json!({ "linkFontColor": bad }));
        let body = status_page(json!({ "themeColors": { "light": light, "dark": palette("#000") } }));
        fails(
            Kind::StatusPage,
            body,
            "themeColors.light.linkFontColor",
            &format!("`{bad}` does not match the pattern"),
        );
    }
}

// Private locations (spec 2.12).

#[test]
fn slug_of_1_to_30_letters_digits_and_dashes() {
    ok(Kind::PrivateLocation, private_location("office-Amsterdam-2"));
    ok(Kind::PrivateLocation, private_location(&"a".repeat(30)));
    for bad in ["", "office amsterdam", "office_ams", "kantoor-zürich", &"a".repeat(31)] {
        fails(
            Kind::PrivateLocation,
            private_location(bad),
            "slugName",
            "does not match the pattern ^[a-zA-Z0-9-]{1,30}$",
        );
    }
}

#[test]
fn slug_must_not_look_like_a_data_center() {
    for fine in ["eu-office-1", "europe-west-1", "west-1", "us-east"] {
        ok(Kind::PrivateLocation, private_location(fine));
    }
    for bad in [
        "eu-west-1",
        "us-gov-east-1",
        "ap-southeast-12",
        "me-central-1",
        "us-east-1-office",
    ] {
        let v = fails(
            Kind::PrivateLocation,
            private_location(bad),
            "slugName",
            &format!("`{bad}` looks like a data-center location"),
        );
        assert!(
            v.help.as_deref().is_some_and(|h| h.contains("office-amsterdam")),
            "{v:?}"
        );
    }
}

// Maintenance windows.

#[test]
fn window_times_are_date_times() {
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01", "endsAt": "2026-12-02" })),
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "endsAt": "2026-12-01T04:00:00.250+01:00", "repeatEndsAt": "2027-01-01" })),
    );
    let message = "`tomorrow` is not an ISO 8601 date-time";
    let v = fails(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "tomorrow" })),
        "startsAt",
        message,
    );
    assert_eq!(v.help.as_deref(), Some("write it like 2026-12-01T02:00:00Z"));
    let message = "`2026-12-01 04:00` is not an ISO 8601 date-time";
    fails(
        Kind::MaintenanceWindow,
        window(json!({ "endsAt": "2026-12-01 04:00" })),
        "endsAt",
        message,
    );
    let message = "`2027-13-01` is not an ISO 8601 date-time";
    fails(
        Kind::MaintenanceWindow,
        window(json!({ "repeatEndsAt": "2027-13-01" })),
        "repeatEndsAt",
        message,
    );
}

#[test]
fn window_ends_after_it_starts() {
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T02:00:01Z" })),
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01", "endsAt": "2026-12-01T00:00:01Z" })),
    );
    let message = "endsAt must be after startsAt";
    let same = window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T02:00:00Z" }));
    fails(Kind::MaintenanceWindow, same, "endsAt", message);
    let before = window(json!({ "startsAt": "2026-12-02", "endsAt": "2026-12-01T23:00:00Z" }));
    fails(Kind::MaintenanceWindow, before, "endsAt", message);
}

#[test]
fn window_order_compares_instants_not_text() {
    // 01:30Z is after 02:00+02:00 (00:00Z), though it sorts before it as text.
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01T02:00:00+02:00", "endsAt": "2026-12-01T01:30:00Z" })),
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T02:00:00.5Z" })),
    );
    let earlier = window(json!({ "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T03:00:00+02:00" }));
    fails(
        Kind::MaintenanceWindow,
        earlier,
        "endsAt",
        "endsAt must be after startsAt",
    );
    // Across a year and a month boundary.
    let earlier = window(json!({ "startsAt": "2026-12-31T23:30:00-01:00", "endsAt": "2027-01-01T00:15:00Z" }));
    fails(
        Kind::MaintenanceWindow,
        earlier,
        "endsAt",
        "endsAt must be after startsAt",
    );
    let earlier = window(json!({ "startsAt": "2028-02-29T23:00:00Z", "endsAt": "2028-03-01T00:30:00+02:00" }));
    fails(
        Kind::MaintenanceWindow,
        earlier,
        "endsAt",
        "endsAt must be after startsAt",
    );
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "startsAt": "2028-02-29T23:00:00Z", "endsAt": "2028-03-01T01:30:00+02:00" })),
    );
}

#[test]
fn repeat_interval_needs_repeat_unit() {
    ok(
        Kind::MaintenanceWindow,
        window(json!({ "repeatInterval": 1, "repeatUnit": "WEEK" })),
    );
    ok(Kind::MaintenanceWindow, window(json!({ "repeatUnit": "DAY" })));
    let message = "repeatInterval needs a repeatUnit (DAY, WEEK or MONTH)";
    fails(
        Kind::MaintenanceWindow,
        window(json!({ "repeatInterval": 2 })),
        "repeatUnit",
        message,
    );
}

// Spec 2.3: retry strategies.

#[test]
fn single_retry_rejects_max_retries_and_duration() {
    ok(
        Kind::Check,
        api(json!({ "retryStrategy": { "type": "SINGLE_RETRY", "baseBackoffSeconds": 30 } })),
    );
    ok(
        Kind::Check,
        api(json!({ "retryStrategy": { "type": "LINEAR", "maxRetries": 3, "maxDurationSeconds": 600 } })),
    );
    ok(Kind::Group, group(json!({ "retryStrategy": "FALLBACK" })));
    let single = |extra: Value| {
        with(
            json!({ "retryStrategy": { "type": "SINGLE_RETRY" } }),
            json!({ "retryStrategy": extra }),
        )
    };
    let message = "maxRetries is not supported with type SINGLE_RETRY";
    fails(
        Kind::Check,
        api(single(json!({ "maxRetries": 2 }))),
        "retryStrategy.maxRetries",
        message,
    );
    let message = "maxDurationSeconds is not supported with type SINGLE_RETRY";
    fails(
        Kind::Group,
        group(single(json!({ "maxDurationSeconds": 60 }))),
        "retryStrategy.maxDurationSeconds",
        message,
    );
    let both = violations(
        Kind::Check,
        api(single(json!({ "maxRetries": 2, "maxDurationSeconds": 60 }))),
    );
    assert_eq!(both.len(), 2, "{both:?}");
}

// Shape errors.

#[test]
fn unknown_field_suggests_the_closest() {
    ok(Kind::Check, icmp(json!({ "frequency": 5 })));
    let v = fails(
        Kind::Check,
        icmp(json!({ "frequncy": 5 })),
        "frequncy",
        "unknown field `frequncy`",
    );
    assert_eq!(v.help.as_deref(), Some("did you mean `frequency`?"));
    assert!(v.at_key);
    let v = fails(
        Kind::Check,
        icmp(json!({ "request": { "hostnme": "x" } })),
        "request.hostnme",
        "unknown field `hostnme`",
    );
    assert_eq!(v.help.as_deref(), Some("did you mean `hostname`?"));
}

#[test]
fn wrong_type_names_expected_and_found() {
    let message = "expected an integer, found a string (\"10\")";
    fails(Kind::Check, icmp(json!({ "frequency": "10" })), "frequency", message);
    fails(
        Kind::Check,
        icmp(json!({ "activated": "yes" })),
        "activated",
        "expected a boolean, found a string (\"yes\")",
    );
    fails(
        Kind::Check,
        icmp(json!({ "locations": "eu-west-1" })),
        "locations",
        "expected a list, found a string",
    );
    // An optional object: the `null` it also accepts is not named.
    fails(
        Kind::Check,
        icmp(json!({ "alertSettings": "none" })),
        "alertSettings",
        "expected a map, found a string (\"none\")",
    );
}

#[test]
fn missing_required_field() {
    let no_request = json!({ "checkType": "ICMP", "name": "ping" });
    fails(Kind::Check, no_request, "", "missing required field `request`");
    let no_hostname = json!({ "checkType": "ICMP", "name": "ping", "request": { "pingCount": 3 } });
    let v = fails(Kind::Check, no_hostname, "request", "missing required field `hostname`");
    assert_eq!(v.missing_field(), Some("hostname"));
    fails(
        Kind::PrivateLocation,
        json!({ "name": "Office" }),
        "",
        "missing required field `slugName`",
    );
}

#[test]
fn check_type_is_required_and_known() {
    let v = fails(
        Kind::Check,
        json!({ "name": "ping" }),
        "",
        "missing required field `checkType`",
    );
    assert!(
        v.help
            .as_deref()
            .is_some_and(|h| h.contains("ICMP") && h.contains("MULTI_STEP")),
        "{v:?}"
    );
    let v = fails(
        Kind::Check,
        icmp(json!({ "checkType": "ICPM" })),
        "checkType",
        "`ICPM` is not a valid checkType",
    );
    assert_eq!(v.help.as_deref(), Some("did you mean `ICMP`?"));
}

#[test]
fn scripts_must_be_inline_here() {
    ok(Kind::Check, browser(json!({})));
    fails(
        Kind::Check,
        browser(json!({ "script": { "file": "home.spec.js" } })),
        "script",
        "a script must be a string here",
    );
}

#[test]
fn every_violation_is_reported() {
    let body = icmp(json!({ "frequncy": 5, "request": { "pingCount": 0 }, "locations": ["mars-1"] }));
    let mut found: Vec<String> = violations(Kind::Check, body)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    found.sort();
    assert_eq!(found, ["frequncy", "locations[0]", "request.pingCount"]);
}

// Defaults.

#[test]
fn minimal_icmp_check_gets_defaults() {
    let resource = validate_resource(Kind::Check, &icmp(json!({}))).expect("valid");
    let Resource::Check(Check::Icmp(check)) = resource else {
        panic!("not an ICMP check: {resource:?}")
    };
    assert_eq!(check.common.frequency, 10);
    assert!(check.common.activated);
    assert_eq!(check.common.degraded_response_time, 10_000);
    assert_eq!(check.common.max_response_time, 20_000);
    assert_eq!(check.spec.degraded_packet_loss_threshold, 10.0);
    assert_eq!(check.spec.max_packet_loss_threshold, 20.0);
    assert_eq!(check.spec.request.ping_count, 10);
    assert_eq!(check.common.frequency_offset, None);
}

#[test]
fn script_lengths_are_checked_on_the_text() {
    let snippet = json!({ "name": "setup", "script": "" });
    fails(Kind::Snippet, snippet, "script", "must not be empty");
    ok(Kind::Snippet, json!({ "name": "setup", "script": "x" }));
    let agentic = |prompt: String| json!({ "checkType": "AGENTIC", "name": "agent", "prompt": prompt });
    fails(Kind::Check, agentic(String::new()), "prompt", "must not be empty");
    fails(
        Kind::Check,
        agentic("p".repeat(10_001)),
        "prompt",
        "is 10001 characters long; at most 10000 are allowed",
    );
    ok(Kind::Check, agentic("p".repeat(10_000)));
}
