//! The routes of private-location agents (`/v1/agent/...`, authenticated
//! by a private location's key, not an account API key), the keys of a
//! private location, and the account's list of agent error events. How
//! runs are queued, leased and reported is `domain::agents`.
//!
//! Each body is described once ([`Field`] lists): the handler checks it
//! against the list (every violation at once) and `/openapi.json` shows
//! the schema made from the same list.

use std::time::Duration;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use monform_model::{FieldPath, Violation};
use serde_json::{Map, Value, json};

use super::{Body, Route};
use crate::app::AppState;
use crate::auth::{Caller, bearer};
use crate::body::{JsonBody, Params};
use crate::clock::now_ms;
use crate::domain::agents::{self, AgentCaller, ErrorEvent, MAX_LEASE, QUEUED, Registration};
use crate::domain::sessions::runs::{outcome_stored, store_outcome};
use crate::error::{ApiError, ApiResult};

/// The longest a lease waits for runs (long poll).
pub const MAX_LEASE_WAIT_SECONDS: i64 = 30;

pub fn routes() -> Vec<Route> {
    let json = |schema: fn() -> Value| Body::Json { schema, required: true };
    vec![
        Route::new(
            "GET",
            "/v1/private-locations/{id}/keys",
            "List a private location's keys (masked)",
            get(list_keys),
        ),
        Route::new(
            "POST",
            "/v1/private-locations/{id}/keys",
            "Create a private location key (`rawKey` is shown in this response only)",
            post(create_key),
        ),
        Route::new(
            "DELETE",
            "/v1/private-locations/{id}/keys/{keyId}",
            "Revoke a private location key",
            delete(revoke_key),
        ),
        Route::new(
            "GET",
            "/v1/agent-events",
            "List error events reported by private location agents, newest first",
            get(list_events),
        )
        .with_query("limit", json!({ "type": "integer", "minimum": 1, "maximum": 100 })),
        Route::new(
            "POST",
            "/v1/agent/register",
            "Agent: register, or renew a registration (private location key)",
            post(register),
        )
        .taking(json(|| schema(REGISTER)))
        .succeeding(StatusCode::OK)
        .answering(&[StatusCode::CONFLICT]),
        Route::new(
            "POST",
            "/v1/agent/leases",
            "Agent: take queued runs of its location, waiting up to waitSeconds for one (private location key)",
            post(lease),
        )
        .taking(json(|| schema(LEASE)))
        .succeeding(StatusCode::OK)
        .answering(&[StatusCode::CONFLICT]),
        Route::new(
            "POST",
            "/v1/agent/runs/{runId}/outcome",
            "Agent: report the outcome of a leased run (private location key)",
            post(report),
        )
        .taking(json(|| schema(REPORT)))
        .succeeding(StatusCode::NO_CONTENT)
        .answering(&[StatusCode::CONFLICT]),
        Route::new(
            "POST",
            "/v1/agent/events",
            "Agent: report an error-level event (private location key)",
            post(report_event),
        )
        .taking(json(|| schema(EVENT))),
    ]
}

/// A private location key's caller.
impl FromRequestParts<AppState> for AgentCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<AgentCaller, ApiError> {
        let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, m);
        let key = bearer(parts).ok_or_else(|| {
            unauthorized("missing or malformed Authorization header; send `Bearer <private location key>`")
        })?;
        agents::authenticate(&app.store.lock(), key)?
            .ok_or_else(|| unauthorized("unknown or revoked private location key"))
    }
}

async fn list_keys(State(app): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let keys = agents::keys(&app.store.lock(), &caller.account, &id)?;
    Ok(axum::Json(keys).into_response())
}

async fn create_key(State(app): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let key = app
        .store
        .transaction(|tx| agents::create_key(tx, &caller.account, &id))?;
    Ok((StatusCode::CREATED, axum::Json(key)).into_response())
}

async fn revoke_key(
    State(app): State<AppState>,
    caller: Caller,
    Path((id, key_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    app.store
        .transaction(|tx| agents::revoke_key(tx, &caller.account, &id, &key_id))?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn list_events(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let limit = params.int("limit", 100, 1, 100)? as usize;
    let events = agents::events(&app.store.lock(), &caller.account, limit)?;
    Ok(axum::Json(events).into_response())
}

/// A field of an agent request body.
struct Field {
    name: &'static str,
    kind: Kind,
    required: bool,
}

enum Kind {
    /// A string of 1 to this many characters.
    Text(u64),
    /// An integer in this range.
    Integer(i64, i64),
    Object,
    Array,
}

const fn field(name: &'static str, kind: Kind, required: bool) -> Field {
    Field { name, kind, required }
}

const REGISTER: &[Field] = &[
    field("agentId", Kind::Text(64), true),
    field("version", Kind::Text(64), true),
    field("platform", Kind::Text(200), false),
    field("runtimeVersion", Kind::Text(200), false),
];
const LEASE: &[Field] = &[
    field("agentId", Kind::Text(64), true),
    field("max", Kind::Integer(1, MAX_LEASE), false),
    field("waitSeconds", Kind::Integer(0, MAX_LEASE_WAIT_SECONDS), false),
];
const REPORT: &[Field] = &[
    field("agentId", Kind::Text(64), true),
    field("outcome", Kind::Object, true),
    field("attempts", Kind::Array, false),
    field("location", Kind::Text(200), false),
    field("finishedAtMs", Kind::Integer(0, i64::MAX), false),
];
const EVENT: &[Field] = &[
    field("agentId", Kind::Text(64), true),
    field("message", Kind::Text(10_000), true),
    field("backtrace", Kind::Text(100_000), false),
    field("agentVersion", Kind::Text(64), true),
    field("platform", Kind::Text(200), false),
    field("runtimeVersion", Kind::Text(200), false),
];

fn schema(fields: &[Field]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| {
            let schema = match f.kind {
                Kind::Text(max) => json!({ "type": "string", "minLength": 1, "maxLength": max }),
                Kind::Integer(min, max) => json!({ "type": "integer", "minimum": min, "maximum": max }),
                Kind::Object => json!({ "type": "object" }),
                Kind::Array => json!({ "type": "array" }),
            };
            (f.name.to_owned(), schema)
        })
        .collect();
    let required: Vec<&str> = fields.iter().filter(|f| f.required).map(|f| f.name).collect();
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// `body` checked against `fields`: every violation at once.
fn check(body: &Value, fields: &[Field]) -> ApiResult<()> {
    let mut violations = Vec::new();
    let root = FieldPath::root();
    let object = body.as_object().cloned().unwrap_or_default();
    for key in object.keys().filter(|k| !fields.iter().any(|f| f.name == k.as_str())) {
        violations.push(Violation::new(root.key(key), format!("unknown field `{key}`")));
    }
    for f in fields {
        let Some(value) = object.get(f.name) else {
            if f.required {
                violations.push(Violation::new(root.key(f.name), "is required"));
            }
            continue;
        };
        let problem = match f.kind {
            Kind::Text(max) => match value.as_str() {
                Some(t) if !t.is_empty() && t.chars().count() as u64 <= max => None,
                _ => Some(format!("must be a string of 1 to {max} characters")),
            },
            Kind::Integer(min, max) => match value.as_i64() {
                Some(n) if (min..=max).contains(&n) => None,
                _ => Some(format!("must be an integer from {min} to {max}")),
            },
            Kind::Object => (!value.is_object()).then(|| "must be an object".to_owned()),
            Kind::Array => (!value.is_array()).then(|| "must be an array".to_owned()),
        };
        if let Some(problem) = problem {
            violations.push(Violation::new(root.key(f.name), problem));
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(&violations))
    }
}

/// `Config::agent_heartbeat` in whole seconds (at least 1: agents count in seconds).
fn heartbeat_seconds(app: &AppState) -> i64 {
    app.config.agent_heartbeat.as_secs().max(1) as i64
}

fn text(body: &Value, name: &str) -> String {
    body[name].as_str().unwrap_or_default().to_owned()
}

async fn register(State(app): State<AppState>, caller: AgentCaller, JsonBody(body): JsonBody) -> ApiResult<Response> {
    check(&body, REGISTER)?;
    let registration = Registration {
        agent_id: text(&body, "agentId"),
        version: text(&body, "version"),
        platform: text(&body, "platform"),
        runtime_version: text(&body, "runtimeVersion"),
    };
    let registered = app
        .store
        .transaction(|tx| agents::register(tx, &caller, &registration, now_ms(), heartbeat_seconds(&app)))?;
    Ok(axum::Json(registered).into_response())
}

async fn lease(State(app): State<AppState>, caller: AgentCaller, JsonBody(body): JsonBody) -> ApiResult<Response> {
    check(&body, LEASE)?;
    let agent_id = text(&body, "agentId");
    let max = body["max"].as_i64().unwrap_or(1);
    let wait = Duration::from_secs(body["waitSeconds"].as_i64().unwrap_or(0) as u64);
    let until = tokio::time::Instant::now() + wait;
    let mut stopped = app.stopped.subscribe();
    let heartbeat_ms = heartbeat_seconds(&app) * 1000;
    loop {
        // Registered before looking, so a run queued meanwhile still wakes us.
        let queued = QUEUED.notified();
        let runs = app
            .store
            .transaction(|tx| agents::lease(tx, &caller, &agent_id, max, now_ms(), heartbeat_ms))?;
        if !runs.is_empty() || tokio::time::Instant::now() >= until {
            return Ok(axum::Json(json!({ "runs": runs })).into_response());
        }
        // Nothing wakes us when another agent's leases run out: look again
        // every second.
        let recheck = (tokio::time::Instant::now() + Duration::from_secs(1)).min(until);
        tokio::select! {
            _ = queued => {}
            _ = tokio::time::sleep_until(recheck) => {}
            _ = stopped.wait_for(|s| *s) => return Ok(axum::Json(json!({ "runs": [] })).into_response()),
        }
    }
}

async fn report(
    State(app): State<AppState>,
    caller: AgentCaller,
    Path(run_id): Path<String>,
    JsonBody(mut body): JsonBody,
) -> ApiResult<Response> {
    check(&body, REPORT)?;
    let agent_id = text(&body, "agentId");
    if let Some(object) = body.as_object_mut() {
        object.remove("agentId");
    }
    app.store.transaction(|tx| {
        let (session_id, record, finished) = agents::report(tx, &caller, &agent_id, &run_id, body, now_ms())?;
        store_outcome(tx, &caller.account, &session_id, &run_id, finished, &record)?;
        Ok::<_, ApiError>(())
    })?;
    outcome_stored();
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn report_event(
    State(app): State<AppState>,
    caller: AgentCaller,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    check(&body, EVENT)?;
    let event = ErrorEvent {
        agent_id: text(&body, "agentId"),
        message: text(&body, "message"),
        backtrace: text(&body, "backtrace"),
        agent_version: text(&body, "agentVersion"),
        platform: text(&body, "platform"),
        runtime_version: text(&body, "runtimeVersion"),
    };
    let stored = app
        .store
        .transaction(|tx| agents::record_event(tx, &caller, &event, now_ms()))?;
    Ok((StatusCode::CREATED, axum::Json(stored)).into_response())
}
