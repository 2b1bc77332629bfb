//! Status pages and their services are listed with cursors (`limit`,
//! `nextId`; body `{entries, nextId, length}`), not pages. Incidents
//! (opened by checks with `triggerIncident`) are read the same way.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use monform_model::Kind;
use serde_json::{Value, json};

use super::hooks;
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::Params;
use crate::domain::incidents::{self, INCIDENTS};
use crate::error::{ApiError, ApiResult};
use crate::store::{Objects, Row};

pub async fn list(kind: Kind, State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let db = app.store.lock();
    let rows = db.all(&caller.account, kind.section())?;
    let context = hooks::Context::load(&db, &caller.account, kind, rows.iter().map(|r| &r.body))?;
    cursor(&rows, &params, |r| hooks::present(kind, r.body.clone(), &context))
}

/// `GET /v1/status-pages/incidents`: newest first, optionally of one service.
pub async fn list_incidents(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let db = app.store.lock();
    let mut rows = db.records(&caller.account, INCIDENTS, None, i64::MIN, i64::MAX)?;
    if let Some(service) = params.one("serviceId") {
        rows.retain(|r| incidents::concerns(&r.body, service));
    }
    cursor(&rows, &params, |r| r.body.clone())
}

/// `GET /v1/status-pages/incidents/{id}`.
pub async fn get_incident(State(app): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let db = app.store.lock();
    let incident = db
        .get(&caller.account, INCIDENTS, &id)?
        .ok_or_else(|| ApiError::not_found("incident", &id))?;
    Ok(axum::Json(incident).into_response())
}

/// One cursor page of `rows`.
fn cursor(rows: &[Row], params: &Params, present: impl Fn(&Row) -> Value) -> ApiResult<Response> {
    let limit = params.int("limit", 20, 1, 100)? as usize;
    let start = match params.one("nextId") {
        None | Some("") => 0,
        Some(next) => rows
            .iter()
            .position(|r| r.id == next)
            .ok_or_else(|| ApiError::invalid("nextId", format!("`{next}` is not a valid cursor")))?,
    };
    let page: Vec<Value> = rows.iter().skip(start).take(limit).map(present).collect();
    let next = rows
        .get(start + limit)
        .map(|r| Value::String(r.id.clone()))
        .unwrap_or(Value::Null);
    Ok(axum::Json(json!({ "entries": page, "nextId": next, "length": page.len() })).into_response())
}
