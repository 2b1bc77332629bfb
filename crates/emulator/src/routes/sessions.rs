//! The session routes (api-contract.md, "Sessions, results and reports";
//! shapes from the reference's `CheckSessionsV2*` and `*TestSession*`
//! schemas): they check the request, call `domain::sessions` and shape
//! the API form of what it returns (links, `timeElapsed`). How sessions
//! run, settle and are cancelled, and the choices where the specification
//! is silent, are described in `domain::sessions`.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use monform_model::FieldPath;
use serde_json::{Map, Value, json};

use super::params::max_wait;
use super::session_bodies::{
    cancel_filter, cancel_schema, check_session_schema, check_test_session_body, expect_bool, expect_object,
    parse_target, test_session_schema,
};
use super::{Body, Route};
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::{JsonBody, Params, RawBody};
use crate::clock::now_ms;
use crate::domain::sessions::lifecycle::{await_final, cancel_check_session as cancel, load_settled};
use crate::domain::sessions::{CHECK_SESSIONS, TEST_SESSIONS, check, internal, is_final, test};
use crate::error::{ApiError, ApiResult};
use crate::ids::id_text;

/// The longest a completion call waits (spec 8).
pub const MAX_WAIT_SECONDS: i64 = 30;

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "POST",
            "/v2/check-sessions/trigger",
            "Trigger a check session for each matching check (404 if none match)",
            post(trigger_check_sessions),
        )
        .taking(Body::Json {
            schema: check_session_schema,
            required: true,
        })
        .answering(&[StatusCode::NOT_FOUND]),
        Route::new(
            "GET",
            "/v2/check-sessions/{checkSessionId}",
            "Get a check session and its results",
            get(get_check_session),
        ),
        Route::new(
            "GET",
            "/v2/check-sessions/{checkSessionId}/completion",
            "Await a check session (maxWaitSeconds 1..30, default 30; 408 while running)",
            get(await_check_session),
        )
        .answering(&[StatusCode::REQUEST_TIMEOUT])
        .with_query(
            "maxWaitSeconds",
            json!({ "type": "integer", "minimum": 1, "maximum": MAX_WAIT_SECONDS }),
        ),
        Route::new(
            "POST",
            "/v1/check-sessions/{checkSessionId}/cancel",
            "Cancel a check session (204; idempotent on final sessions)",
            post(cancel_check_session),
        )
        .taking(Body::Json {
            schema: cancel_schema,
            required: false,
        })
        .succeeding(StatusCode::NO_CONTENT),
        Route::new(
            "POST",
            "/v1/test-sessions/trigger",
            "Trigger a test session of the matching checks (404 if none match)",
            post(trigger_test_session),
        )
        .taking(Body::Json {
            schema: test_session_schema,
            required: true,
        })
        .answering(&[StatusCode::NOT_FOUND]),
        Route::new(
            "GET",
            "/v1/test-sessions/{testSessionId}",
            "Get a test session",
            get(get_test_session),
        ),
        Route::new(
            "GET",
            "/v1/test-sessions/{testSessionId}/completion",
            "Await a test session (maxWaitSeconds 1..30, default 30; 408 while running)",
            get(await_test_session),
        )
        .answering(&[StatusCode::REQUEST_TIMEOUT])
        .with_query(
            "maxWaitSeconds",
            json!({ "type": "number", "minimum": 1, "maximum": MAX_WAIT_SECONDS }),
        ),
    ]
}

// ---------------------------------------------------------------------------
// Running: the one place that decides how a run turns out.
// ---------------------------------------------------------------------------

/// The emulator's own address as the client reached it, for links.
pub fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

async fn trigger_check_sessions(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let mut violations = Vec::new();
    if let Some(object) = expect_object(&body, &FieldPath::root(), &["target", "refreshCache"], &mut violations) {
        expect_bool(object, &FieldPath::root(), "refreshCache", &mut violations);
    }
    let target = parse_target(body.get("target"), false, &mut violations);
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    let sessions = check::trigger(&app, &caller.account, &target)?;
    let base = base_url(&headers);
    let now = now_ms();
    let sessions: Vec<Value> = sessions
        .iter()
        .map(|s| {
            let mut body = present_check_session(s, &base, now, false);
            if let Some(object) = body.as_object_mut() {
                object.remove("results");
            }
            body
        })
        .collect();
    Ok((StatusCode::CREATED, axum::Json(json!({ "sessions": sessions }))).into_response())
}

/// The API form of a stored check session.
fn present_check_session(stored: &Value, base: &str, now: i64, reading: bool) -> Value {
    let mut body = stored.clone();
    let started = internal(stored, "startedAtMs");
    let done = is_final(CHECK_SESSIONS, stored);
    let elapsed = if done {
        internal(stored, "stoppedAtMs") - started
    } else {
        (now - started).max(0)
    };
    let link = format!("{base}/v2/check-sessions/{}", id_text(&stored["checkSessionId"]));
    if let Some(object) = body.as_object_mut() {
        object.remove("_internal");
        if reading && !done {
            object.insert("status".into(), json!("PROGRESS"));
        }
        let mut out = Map::new();
        for (key, value) in std::mem::take(object) {
            if key == "checkSessionId" {
                out.insert(key, value);
                out.insert("checkSessionLink".into(), json!(link));
            } else if key == "runLocations" {
                out.insert("timeElapsed".into(), json!(elapsed));
                out.insert(key, value);
            } else {
                out.insert(key, value);
            }
        }
        *object = out;
    }
    if let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) {
        for result in results {
            let result_link = format!("{link}#{}", id_text(&result["checkResultId"]));
            if let Some(object) = result.as_object_mut() {
                let mut out = Map::new();
                for (key, value) in std::mem::take(object) {
                    let is_id = key == "checkResultId";
                    out.insert(key, value);
                    if is_id {
                        out.insert("checkResultLink".into(), json!(result_link));
                    }
                }
                *object = out;
            }
        }
    }
    body
}

/// A session (awaited up to `wait` when given: 408 while it runs) in its
/// API form.
async fn answer(
    app: &AppState,
    caller: &Caller,
    kind: &str,
    id: &str,
    headers: &HeaderMap,
    wait: Option<Duration>,
) -> ApiResult<Response> {
    let session = match wait {
        Some(wait) => await_final(app, &caller.account, kind, id, wait).await?,
        None => load_settled(app, &caller.account, kind, id)?,
    };
    let base = base_url(headers);
    let body = if kind == CHECK_SESSIONS {
        present_check_session(&session, &base, now_ms(), true)
    } else {
        present_test_session(&session, &base, now_ms())
    };
    Ok(axum::Json(body).into_response())
}

async fn get_check_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    answer(&app, &caller, CHECK_SESSIONS, &id, &headers, None).await
}

async fn await_check_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let wait = max_wait(&params, MAX_WAIT_SECONDS, true)?;
    answer(&app, &caller, CHECK_SESSIONS, &id, &headers, Some(wait)).await
}

async fn cancel_check_session(
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawBody(bytes): RawBody,
) -> ApiResult<Response> {
    let only = cancel_filter(&headers, &bytes)?;
    cancel(&app, &caller.account, &id, only.as_deref())?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn trigger_test_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let account = caller.account.clone();
    let session = test::trigger(&app, &account, &body, |tx| check_test_session_body(tx, &account, &body))?;
    let body = present_test_session(&session, &base_url(&headers), now_ms());
    Ok((StatusCode::CREATED, axum::Json(body)).into_response())
}

/// The API form of a stored test session.
fn present_test_session(stored: &Value, base: &str, now: i64) -> Value {
    let started = internal(stored, "startedAtMs");
    let elapsed = if is_final(TEST_SESSIONS, stored) {
        internal(stored, "stoppedAtMs") - started
    } else {
        (now - started).max(0)
    };
    let link = format!("{base}/v1/test-sessions/{}", id_text(&stored["testSessionId"]));
    let mut out = Map::new();
    for (key, value) in stored.as_object().into_iter().flatten() {
        match key.as_str() {
            "_internal" => {}
            "testSessionId" => {
                out.insert(key.clone(), value.clone());
                out.insert("testSessionLink".into(), json!(link));
            }
            "stoppedAt" => {
                out.insert(key.clone(), value.clone());
                out.insert("timeElapsed".into(), json!(elapsed));
            }
            "results" => {
                let results = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let mut entry = Map::new();
                        for (k, v) in r.as_object().into_iter().flatten() {
                            entry.insert(k.clone(), v.clone());
                            if k == "testSessionResultId" {
                                entry.insert("testSessionResultLink".into(), json!(format!("{link}#{}", id_text(v))));
                            }
                        }
                        Value::Object(entry)
                    })
                    .collect();
                out.insert(key.clone(), Value::Array(results));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

async fn get_test_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    answer(&app, &caller, TEST_SESSIONS, &id, &headers, None).await
}

async fn await_test_session(
    State(app): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    // A number here (the check session's is an integer).
    let wait = max_wait(&params, MAX_WAIT_SECONDS, false)?;
    answer(&app, &caller, TEST_SESSIONS, &id, &headers, Some(wait)).await
}
