//! The bodies of session requests, checked field by field (every
//! violation in one 400): the trigger targets, the test-session body
//! (`TriggerTestSessionRequest`) and the cancel body.

use axum::http::{HeaderMap, StatusCode};
use monform_model::resources::Location;
use monform_model::{FieldPath, Kind, Violation};
use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::domain::sessions::Target;
use crate::error::{ApiError, ApiResult};
use crate::store::Objects;

pub(super) fn parse_target(value: Option<&Value>, test_session: bool, violations: &mut Vec<Violation>) -> Target {
    let mut target = Target::default();
    let path = FieldPath::root().key("target");
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return target;
    };
    let allowed: &[&str] = if test_session {
        &["checkId", "matchTags", "allowDeactivated"]
    } else {
        &["checkId", "matchTags"]
    };
    let Some(object) = expect_object(value, &path, allowed, violations) else {
        return target;
    };
    if let Some(ids) = object.get("checkId") {
        let ids_path = path.key("checkId");
        match ids.as_array() {
            Some(list) => {
                let mut out = Vec::new();
                for (i, id) in list.iter().enumerate() {
                    match id.as_str() {
                        Some(text) if uuid::Uuid::parse_str(text).is_ok() => out.push(text.to_owned()),
                        _ => violations.push(Violation::new(
                            ids_path.index(i),
                            format!("{id} is not a check id (a uuid)"),
                        )),
                    }
                }
                target.check_ids = Some(out);
            }
            None => violations.push(Violation::new(ids_path, "must be an array of check ids")),
        }
    }
    if let Some(groups) = object.get("matchTags") {
        let tags_path = path.key("matchTags");
        match groups.as_array() {
            Some(list) => {
                let mut out = Vec::new();
                for (i, group) in list.iter().enumerate() {
                    let tags: Option<Vec<String>> = group
                        .as_array()
                        .and_then(|g| g.iter().map(|t| t.as_str().map(str::to_owned)).collect());
                    match tags {
                        Some(tags) => out.push(tags),
                        None => violations.push(Violation::new(
                            tags_path.index(i),
                            "must be an array of tags (strings); matchTags is an OR of AND-groups",
                        )),
                    }
                }
                target.match_tags = Some(out);
            }
            None => violations.push(Violation::new(
                tags_path,
                "must be an array of arrays of tags, e.g. [[\"prod\", \"api\"], [\"smoke\"]]",
            )),
        }
    }
    if let Some(flag) = object.get("allowDeactivated") {
        match flag.as_bool() {
            Some(b) => target.allow_deactivated = b,
            None => violations.push(Violation::new(path.key("allowDeactivated"), "must be true or false")),
        }
    }
    target
}

/// The optional cancel body: `{sequenceId?: [uuid]}`; an empty body cancels all.
pub(super) fn cancel_filter(headers: &HeaderMap, bytes: &[u8]) -> ApiResult<Option<Vec<String>>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !(media.eq_ignore_ascii_case("application/json") || media.ends_with("+json")) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON with `Content-Type: application/json`",
        ));
    }
    let body: Value = serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
    let mut violations = Vec::new();
    let object = expect_object(&body, &FieldPath::root(), &["sequenceId"], &mut violations);
    let mut ids = None;
    if let Some(list) = object.and_then(|o| o.get("sequenceId")) {
        let path = FieldPath::root().key("sequenceId");
        match list.as_array() {
            Some(list) => {
                let mut out = Vec::new();
                for (i, id) in list.iter().enumerate() {
                    match id.as_str().filter(|t| uuid::Uuid::parse_str(t).is_ok()) {
                        Some(text) => out.push(text.to_owned()),
                        None => violations.push(Violation::new(path.index(i), format!("{id} is not a uuid"))),
                    }
                }
                ids = Some(out);
            }
            None => violations.push(Violation::new(path, "must be an array of sequence ids")),
        }
    }
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    Ok(ids)
}

const TEST_SESSION_FIELDS: &[&str] = &[
    "name",
    "runLocation",
    "target",
    "environmentVariables",
    "retryStrategy",
    "refreshCache",
    "metadata",
];

/// Checks a `TriggerTestSessionRequest` body (all violations at once).
pub(super) fn check_test_session_body(db: &Connection, account: &str, body: &Value) -> ApiResult<Target> {
    let root = FieldPath::root();
    let mut violations = Vec::new();
    let Some(object) = expect_object(body, &root, TEST_SESSION_FIELDS, &mut violations) else {
        return Err(ApiError::validation(&violations));
    };
    match object.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        Some(Value::String(_)) => violations.push(Violation::new(root.key("name"), "must not be empty")),
        Some(other) => violations.push(Violation::new(root.key("name"), format!("{other} is not a string"))),
        None => violations.push(Violation::new(root.key("name"), "missing required field `name`")),
    }
    match object.get("runLocation") {
        Some(Value::String(location)) => {
            let public = Location::ALL.iter().any(|l| l.as_str() == location);
            let private = !public
                && db
                    .all(account, Kind::PrivateLocation.section())?
                    .iter()
                    .any(|r| r.body["slugName"].as_str() == Some(location.as_str()));
            if !public && !private {
                violations.push(Violation::new(
                    root.key("runLocation"),
                    format!("`{location}` is neither a data-center location nor a private location's slug"),
                ));
            }
        }
        Some(other) => violations.push(Violation::new(
            root.key("runLocation"),
            format!("{other} is not a string"),
        )),
        None => violations.push(Violation::new(
            root.key("runLocation"),
            "missing required field `runLocation` (a data-center location or a private location's slug)",
        )),
    }
    expect_bool(object, &root, "refreshCache", &mut violations);
    if let Some(variables) = object.get("environmentVariables") {
        check_environment_variables(variables, &root.key("environmentVariables"), &mut violations);
    }
    if let Some(strategy) = object.get("retryStrategy") {
        check_retry_strategy(strategy, &root.key("retryStrategy"), &mut violations);
    }
    if let Some(metadata) = object.get("metadata") {
        check_metadata(metadata, &root.key("metadata"), &mut violations);
    }
    let target = parse_target(object.get("target"), true, &mut violations);
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    Ok(target)
}

fn check_environment_variables(value: &Value, path: &FieldPath, violations: &mut Vec<Violation>) {
    let Some(list) = value.as_array() else {
        violations.push(Violation::new(
            path.clone(),
            "must be an array of {key, value, locked, secret}",
        ));
        return;
    };
    for (i, item) in list.iter().enumerate() {
        let item_path = path.index(i);
        let Some(object) = expect_object(item, &item_path, &["key", "value", "locked", "secret"], violations) else {
            continue;
        };
        match object.get("key") {
            Some(Value::String(key)) if !key.is_empty() => {}
            Some(_) => violations.push(Violation::new(item_path.key("key"), "must be a non-empty string")),
            None => violations.push(Violation::new(item_path.key("key"), "missing required field `key`")),
        }
        match object.get("value") {
            Some(Value::String(_) | Value::Null) => {}
            Some(other) => violations.push(Violation::new(
                item_path.key("value"),
                format!("{other} is not a string"),
            )),
            None => violations.push(Violation::new(item_path.key("value"), "missing required field `value`")),
        }
        expect_bool(object, &item_path, "locked", violations);
        expect_bool(object, &item_path, "secret", violations);
    }
}

fn check_retry_strategy(value: &Value, path: &FieldPath, violations: &mut Vec<Violation>) {
    if value.is_null() {
        return;
    }
    let fields = [
        "type",
        "baseBackoffSeconds",
        "sameRegion",
        "onlyOn",
        "maxRetries",
        "maxDurationSeconds",
    ];
    let Some(object) = expect_object(value, path, &fields, violations) else {
        return;
    };
    let kind = object.get("type").and_then(Value::as_str);
    match kind {
        Some("FIXED" | "LINEAR" | "EXPONENTIAL" | "SINGLE_RETRY") => {}
        Some(other) => violations.push(Violation::new(
            path.key("type"),
            format!("`{other}` is not one of FIXED, LINEAR, EXPONENTIAL, SINGLE_RETRY"),
        )),
        None => violations.push(Violation::new(path.key("type"), "missing required field `type`")),
    }
    expect_number(object, path, "baseBackoffSeconds", 0.0, f64::MAX, violations);
    expect_bool(object, path, "sameRegion", violations);
    if let Some(only_on) = object.get("onlyOn")
        && !only_on
            .as_array()
            .is_some_and(|l| l.iter().all(|x| x == "NETWORK_ERROR"))
    {
        violations.push(Violation::new(path.key("onlyOn"), "must be an array of NETWORK_ERROR"));
    }
    for (field, min, max) in [("maxRetries", 1.0, 10.0), ("maxDurationSeconds", 0.0, 600.0)] {
        if kind == Some("SINGLE_RETRY") && object.contains_key(field) {
            violations.push(Violation::new(path.key(field), "not allowed with type SINGLE_RETRY"));
        } else {
            expect_number(object, path, field, min, max, violations);
        }
    }
}

fn check_metadata(value: &Value, path: &FieldPath, violations: &mut Vec<Violation>) {
    let fields = [
        "environment",
        "repoUrl",
        "commitId",
        "commitOwner",
        "commitMessage",
        "branchName",
        "github",
    ];
    let Some(object) = expect_object(value, path, &fields, violations) else {
        return;
    };
    for (field, nullable) in [
        ("environment", false),
        ("repoUrl", true),
        ("commitId", true),
        ("commitOwner", true),
        ("commitMessage", true),
        ("branchName", true),
    ] {
        expect_text(object, path, field, nullable, violations);
    }
    if let Some(github) = object.get("github") {
        let github_path = path.key("github");
        let fields = [
            "reporting",
            "repository",
            "sha",
            "runId",
            "runAttempt",
            "workflow",
            "job",
            "eventName",
            "ref",
            "headRef",
            "baseRef",
            "serverUrl",
        ];
        if let Some(github) = expect_object(github, &github_path, &fields, violations) {
            match github.get("reporting") {
                Some(Value::Bool(_)) => {}
                Some(_) => violations.push(Violation::new(github_path.key("reporting"), "must be true or false")),
                None => violations.push(Violation::new(
                    github_path.key("reporting"),
                    "missing required field `reporting`",
                )),
            }
            for field in &fields[1..] {
                expect_text(github, &github_path, field, true, violations);
            }
        }
    }
}

/// `value` as an object whose keys are all in `allowed`, else violations.
pub(super) fn expect_object<'a>(
    value: &'a Value,
    path: &FieldPath,
    allowed: &[&str],
    violations: &mut Vec<Violation>,
) -> Option<&'a Map<String, Value>> {
    let Some(object) = value.as_object() else {
        violations.push(Violation::new(path.clone(), "must be an object"));
        return None;
    };
    for key in object.keys().filter(|k| !allowed.contains(&k.as_str())) {
        violations.push(Violation::new(path.key(key), format!("unknown field `{key}`")));
    }
    Some(object)
}

pub(super) fn expect_bool(object: &Map<String, Value>, path: &FieldPath, field: &str, violations: &mut Vec<Violation>) {
    if let Some(value) = object.get(field)
        && !value.is_boolean()
    {
        violations.push(Violation::new(path.key(field), format!("{value} is not true or false")));
    }
}

fn expect_text(
    object: &Map<String, Value>,
    path: &FieldPath,
    field: &str,
    nullable: bool,
    violations: &mut Vec<Violation>,
) {
    match object.get(field) {
        None | Some(Value::String(_)) => {}
        Some(Value::Null) if nullable => {}
        Some(other) => violations.push(Violation::new(path.key(field), format!("{other} is not a string"))),
    }
}

fn expect_number(
    object: &Map<String, Value>,
    path: &FieldPath,
    field: &str,
    min: f64,
    max: f64,
    violations: &mut Vec<Violation>,
) {
    match object.get(field).map(|v| (v, v.as_f64())) {
        None => {}
        Some((_, Some(n))) if (min..=max).contains(&n) => {}
        Some((_, Some(n))) => violations.push(Violation::new(
            path.key(field),
            format!("{n} is out of range {min}..{max}"),
        )),
        Some((value, None)) => violations.push(Violation::new(path.key(field), format!("{value} is not a number"))),
    }
}

/// The bodies the session routes take, for `/openapi.json`; `parse_target`,
/// `cancel_filter` and `check_test_session_body` are what they describe.
/// Retry strategies and metadata are described as objects only: their
/// checkers say the rest.
fn target_schema(test_session: bool) -> Value {
    let mut properties = json!({
        "checkId": { "type": "array", "items": { "type": "string", "format": "uuid" } },
        "matchTags": {
            "type": "array",
            "items": { "type": "array", "items": { "type": "string" } },
            "description": "An OR of AND-groups of tags.",
        },
    });
    if test_session {
        properties["allowDeactivated"] = json!({ "type": "boolean" });
    }
    json!({ "type": ["object", "null"], "properties": properties, "additionalProperties": false })
}

pub(super) fn check_session_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "target": target_schema(false), "refreshCache": { "type": "boolean" } },
        "additionalProperties": false,
    })
}

pub(super) fn cancel_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "sequenceId": { "type": "array", "items": { "type": "string", "format": "uuid" } } },
        "additionalProperties": false,
    })
}

pub(super) fn test_session_schema() -> Value {
    json!({
        "type": "object",
        "required": ["name", "runLocation"],
        "properties": {
            "name": { "type": "string", "pattern": "\\S" },
            "runLocation": { "type": "string", "description": "A data-center location or a private location's slug." },
            "target": target_schema(true),
            "environmentVariables": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "value"],
                    "properties": {
                        "key": { "type": "string", "minLength": 1 },
                        "value": { "type": ["string", "null"] },
                        "locked": { "type": "boolean" },
                        "secret": { "type": "boolean" },
                    },
                    "additionalProperties": false,
                },
            },
            "retryStrategy": { "type": ["object", "null"] },
            "refreshCache": { "type": "boolean" },
            "metadata": { "type": "object" },
        },
        "additionalProperties": false,
    })
}
