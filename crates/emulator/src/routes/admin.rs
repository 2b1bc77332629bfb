//! Test-only controls under `/-/` (beside `/-/metrics`; not in
//! `/openapi.json`, not part of the service, exempt from the rate limit
//! and from injected faults), each needing an API key of the emulator:
//!
//! - `GET /-/clock`: `{now, offsetMs}`, the (possibly simulated) clock.
//! - `POST /-/clock` `{"advance": "30d"}` or `{"to": "<date-time>"}`:
//!   moves the clock forward, playing every check's runs over the skipped
//!   time (`domain::simulate`); answers `{from, now, runs}`.
//! - `GET /-/outages`: the simulated outages the caller's account sees.
//! - `POST /-/outages` `{"check", "start", "duration", "responseTime"?}`
//!   (201): a simulated outage of the caller's account (`domain::outages`),
//!   `start` a date-time or `+DURATION` after now.
//! - `GET /-/mailbox`: the mail the emulator delivered for the caller's
//!   account (alerts to EMAIL channels, messages posted here), oldest first.
//! - `POST /-/mailbox` `{"to", "subject", "text", "alertChannelId"?}`
//!   (201): delivers a message for an EMAIL channel, as the service's mail
//!   delivery would (`domain::notify::mailbox`): the reconciler's SLO
//!   burn-rate alerts to EMAIL channels go this way.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::auth::Caller;
use crate::body::JsonBody;
use crate::clock::{self, iso, now_ms};
use crate::domain::notify::mailbox::{self, Mail};
use crate::domain::outages::{self, Outage};
use crate::domain::simulate;
use crate::error::{ApiError, ApiResult};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/-/clock", get(read_clock).post(move_clock))
        .route("/-/outages", get(list_outages).post(add_outage))
        .route("/-/mailbox", get(list_mail).post(send_mail))
}

async fn list_mail(State(app): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let list = app.store.transaction(|tx| mailbox::messages(tx, &caller.account))?;
    Ok(axum::Json(Value::Array(list)).into_response())
}

async fn send_mail(State(app): State<AppState>, caller: Caller, JsonBody(body): JsonBody) -> ApiResult<Response> {
    let to = text(&body, "to")?.ok_or_else(|| ApiError::invalid("to", "required: the recipient's address"))?;
    let subject = text(&body, "subject")?.ok_or_else(|| ApiError::invalid("subject", "required"))?;
    let message = text(&body, "text")?.unwrap_or_default();
    let channel = match &body["alertChannelId"] {
        id @ (Value::Null | Value::Number(_) | Value::String(_)) => id.clone(),
        _ => return Err(ApiError::invalid("alertChannelId", "must be the channel's id")),
    };
    let mail = Mail {
        to,
        subject,
        text: message,
        source: "api",
        channel_id: channel,
    };
    if let Some((field, problem)) = mailbox::problem(&mail) {
        return Err(ApiError::invalid(field, problem));
    }
    let delivered = app
        .store
        .transaction(|tx| mailbox::deliver(tx, &caller.account, &mail, now_ms()))?;
    Ok((StatusCode::CREATED, axum::Json(delivered)).into_response())
}

async fn read_clock(_caller: Caller) -> Response {
    axum::Json(json!({ "now": iso(now_ms()), "offsetMs": clock::offset_ms() })).into_response()
}

fn text<'a>(body: &'a Value, field: &str) -> ApiResult<Option<&'a str>> {
    match &body[field] {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text)),
        _ => Err(ApiError::invalid(field, "must be a string")),
    }
}

async fn move_clock(State(app): State<AppState>, _caller: Caller, JsonBody(body): JsonBody) -> ApiResult<Response> {
    let to = match (text(&body, "advance")?, text(&body, "to")?) {
        (Some(advance), None) => {
            let ms = clock::parse_duration_ms(advance).filter(|ms| *ms > 0).ok_or_else(|| {
                ApiError::invalid(
                    "advance",
                    format!("`{advance}` is not a duration such as 90s, 45m, 6h or 30d"),
                )
            })?;
            now_ms().saturating_add(ms)
        }
        (None, Some(to)) => clock::parse(to)
            .ok_or_else(|| ApiError::invalid("to", format!("`{to}` is not an ISO 8601 date-time")))?
            .timestamp_millis(),
        _ => {
            return Err(ApiError::invalid(
                "body",
                "give one of `advance` (a duration) or `to` (a date-time)",
            ));
        }
    };
    // Playing weeks of runs is blocking work on the store.
    let jump = tokio::task::spawn_blocking(move || simulate::fast_forward(&app, to))
        .await
        .map_err(ApiError::internal)??;
    Ok(axum::Json(json!({ "from": iso(jump.from_ms), "now": iso(jump.to_ms), "runs": jump.runs })).into_response())
}

async fn list_outages(State(app): State<AppState>, caller: Caller) -> ApiResult<Response> {
    let list = app.store.transaction(|tx| outages::outages(tx, &caller.account))?;
    Ok(axum::Json(Value::Array(list.iter().map(Outage::to_json).collect())).into_response())
}

async fn add_outage(State(app): State<AppState>, caller: Caller, JsonBody(body): JsonBody) -> ApiResult<Response> {
    let check = text(&body, "check")?.ok_or_else(|| ApiError::invalid("check", "required: the check's id or name"))?;
    let start = text(&body, "start")?.unwrap_or("+0s");
    let duration = text(&body, "duration")?.ok_or_else(|| ApiError::invalid("duration", "required, such as 45m"))?;
    let response = match &body["responseTime"] {
        Value::Null => String::new(),
        Value::Number(n) if n.as_u64().is_some_and(|ms| ms <= u64::from(u32::MAX)) => format!(":{n}"),
        _ => {
            return Err(ApiError::invalid(
                "responseTime",
                "must be a whole number of milliseconds",
            ));
        }
    };
    let outage = Outage::parse(&format!("{check}:{start}:{duration}{response}"), now_ms())
        .map_err(|problem| ApiError::invalid("body", problem))?;
    app.store
        .transaction(|tx| outages::add_outage(tx, Some(&caller.account), &outage))?;
    Ok((StatusCode::CREATED, axum::Json(outage.to_json())).into_response())
}
