//! The HTTP request a WEBHOOK or SLACK channel gets for an alert (the
//! rules are in the parent module): templates filled in, and the signature
//! of a `webhookSecret`.

use std::collections::HashMap;

use monform_runner::http::pairs;
use monform_runner::substitute;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::ids::id_text;

/// Template variables: the payload's fields and their upper-case aliases.
fn variables(payload: &Value) -> HashMap<String, String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(id_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    };
    let mut out = HashMap::new();
    for (key, value) in payload.as_object().into_iter().flatten() {
        out.insert(key.clone(), text(value));
    }
    for (alias, key) in [
        ("ALERT_TYPE", "alertType"),
        ("ALERT_TITLE", "alertTitle"),
        ("CHECK_ALERT_ID", "checkAlertId"),
        ("CHECK_ID", "checkId"),
        ("CHECK_NAME", "checkName"),
        ("CHECK_TYPE", "checkType"),
        ("CHECK_RESULT_ID", "checkResultId"),
        ("RUN_LOCATION", "runLocation"),
        ("RESPONSE_TIME", "responseTime"),
        ("STATUS_CODE", "statusCode"),
        ("ERROR", "error"),
        ("STARTED_AT", "startedAt"),
        ("TAGS", "tags"),
    ] {
        out.insert(alias.to_owned(), text(&payload[key]));
    }
    out
}

/// The queued form of a WEBHOOK channel's request.
pub(super) fn webhook_request(config: &Value, payload: &Value) -> Value {
    let variables = variables(payload);
    let mut config = config.clone();
    for field in ["url", "headers", "queryParameters", "template"] {
        if let Some(value) = config.get_mut(field) {
            substitute(value, &variables);
        }
    }
    let method = config["method"].as_str().unwrap_or("POST").to_uppercase();
    let body = match config["template"].as_str().filter(|t| !t.trim().is_empty()) {
        Some(template) => template.to_owned(),
        None => payload.to_string(),
    };
    let mut headers: Vec<(String, String)> = pairs(&config["headers"]);
    let has_body = !matches!(method.as_str(), "GET" | "HEAD");
    if has_body && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
        headers.push(("Content-Type".into(), "application/json".into()));
    }
    if has_body && let Some(secret) = config["webhookSecret"].as_str().filter(|s| !s.is_empty()) {
        headers.push((
            "X-Monform-Signature".into(),
            format!("sha256={}", hex(&hmac_sha256(secret.as_bytes(), body.as_bytes()))),
        ));
    }
    json!({
        "method": method,
        "url": config["url"],
        "query": pairs(&config["queryParameters"]),
        "headers": headers,
        "body": if has_body { json!(body) } else { Value::Null },
    })
}

/// The queued form of a SLACK channel's request.
pub(super) fn slack_request(config: &Value, payload: &Value) -> Value {
    let mut text = format!(
        "[{}] {}",
        payload["alertType"].as_str().unwrap_or_default(),
        payload["alertTitle"].as_str().unwrap_or_default()
    );
    if let Some(error) = payload["error"].as_str().filter(|e| !e.is_empty()) {
        text.push_str(": ");
        text.push_str(error);
    }
    let mut body = json!({ "text": text });
    if let Some(channel) = config["channel"].as_str() {
        body["channel"] = json!(channel);
    }
    json!({
        "method": "POST",
        "url": config["url"],
        "query": [],
        "headers": [["Content-Type", "application/json"]],
        "body": body.to_string(),
    })
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::notify::payload;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn webhook_templates_are_filled_in() {
        let check = json!({ "id": "c1", "name": "Shop", "checkType": "API", "tags": ["prod"] });
        let alert = json!({ "id": "a1", "alertType": "ALERT_FAILURE", "runLocation": "eu-west-1",
            "responseTime": 12.5, "statusCode": "500", "error": "boom", "startedAt": "t", "created_at": "t" });
        let payload = payload(&check, &alert, &json!({ "id": "r1" }));
        let config = json!({ "url": "http://127.0.0.1/{{CHECK_ID}}", "method": "PUT",
            "queryParameters": [{ "key": "type", "value": "{{ alertType }}" }],
            "template": "{\"check\": \"{{CHECK_NAME}}\", \"code\": {{STATUS_CODE}}, \"x\": \"{{NOPE}}\", \"tags\": \"{{TAGS}}\"}" });
        let request = webhook_request(&config, &payload);
        assert_eq!(request["method"], "PUT");
        assert_eq!(request["url"], "http://127.0.0.1/c1");
        assert_eq!(request["query"], json!([["type", "ALERT_FAILURE"]]));
        assert_eq!(
            request["body"],
            "{\"check\": \"Shop\", \"code\": 500, \"x\": \"{{NOPE}}\", \"tags\": \"prod\"}"
        );
        // Without a template: the payload as JSON.
        let plain = webhook_request(&json!({ "url": "http://x/", "webhookSecret": "s" }), &payload);
        let body: Value = serde_json::from_str(plain["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["checkResultId"], "r1");
        assert!(
            plain["headers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h[0] == "X-Monform-Signature")
        );
        let get = webhook_request(&json!({ "url": "http://x/", "method": "GET" }), &payload);
        assert!(get["body"].is_null());
    }
}
