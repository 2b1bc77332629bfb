//! Status pages and their services are listed with cursors (`limit`,
//! `nextId`; body `{entries, nextId, length}`), not pages.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use monform_model::Kind;
use serde_json::{Value, json};

use super::hooks;
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::Params;
use crate::error::{ApiError, ApiResult};
use crate::store::Objects;

pub async fn list(kind: Kind, State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let limit = params.int("limit", 20, 1, 100)? as usize;
    let db = app.store.lock();
    let rows = db.all(&caller.account, kind.section())?;
    let start = match params.one("nextId") {
        None | Some("") => 0,
        Some(next) => rows
            .iter()
            .position(|r| r.id == next)
            .ok_or_else(|| ApiError::invalid("nextId", format!("`{next}` is not a valid cursor")))?,
    };
    let context = hooks::Context::load(&db, &caller.account, kind, rows.iter().map(|r| &r.body))?;
    let page: Vec<Value> = rows
        .iter()
        .skip(start)
        .take(limit)
        .map(|r| hooks::present(kind, r.body.clone(), &context))
        .collect();
    let next = rows
        .get(start + limit)
        .map(|r| Value::String(r.id.clone()))
        .unwrap_or(Value::Null);
    Ok(axum::Json(json!({ "entries": page, "nextId": next, "length": page.len() })).into_response())
}
