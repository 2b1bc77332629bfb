//! The heartbeat ping endpoint: `GET|POST /ping/{token}`, served without a
//! key (the monitored job has none). Answers 200 `{"status": "OK"}`, or 404
//! for a token no heartbeat check carries.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use super::Route;
use crate::app::AppState;
use crate::domain::heartbeats as heartbeat;
use crate::error::{ApiError, ApiResult};

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "GET",
            "/ping/{token}",
            "Ping a heartbeat check (no key needed)",
            get(ping),
        ),
        Route::new(
            "POST",
            "/ping/{token}",
            "Ping a heartbeat check (no key needed)",
            post(ping),
        )
        .succeeding(StatusCode::OK),
    ]
}

async fn ping(State(app): State<AppState>, Path(token): Path<String>) -> ApiResult<Response> {
    match heartbeat::record_ping(&app, &token)? {
        Some(_) => Ok((StatusCode::OK, axum::Json(json!({ "status": "OK" }))).into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no heartbeat check has the ping token {token}"),
        )),
    }
}
