//! Retry strategies and shape errors (unknown fields, wrong types...).

use serde_json::json;

use super::*;

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

#[test]
fn integral_floats_are_integers_other_floats_name_their_field() {
    // JSON Schema counts 6.0 as an integer; so does the typed form.
    ok(Kind::Check, api(json!({ "degradedResponseTime": 6000.0 })));
    let body = json!({ "customUrl": "ops-dash", "header": "Ops", "paginationRate": 60.0 });
    let Ok(crate::Resource::Dashboard(dashboard)) = validate_resource(Kind::Dashboard, &body) else {
        panic!("a dashboard with an integral float is valid");
    };
    assert_eq!(serde_json::to_value(&dashboard).unwrap()["paginationRate"], json!(60));
    fails(
        Kind::Check,
        api(json!({ "degradedResponseTime": 6000.5 })),
        "degradedResponseTime",
        "an integer",
    );
}
