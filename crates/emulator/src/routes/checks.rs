//! Checks: typed creates (`POST /v1/checks/{type}`), the generic and typed
//! updates with the API's quirks, filtered listing, and a group's checks.

use std::collections::HashMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use monform_model::Kind;
use monform_model::quirks::{CheckOperation, FREE_FORM_FIELDS, required_free_form};
use monform_model::resources::CheckType;
use serde_json::Value;

use super::hooks;
use super::objects::{create_object, load, update_object};
use super::params::{Paging, paged};
use super::stored::{self, Listed};
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::{JsonBody, Params};
use crate::domain::alerts::ALERT_STATES;
use crate::error::{ApiError, ApiResult};
use crate::ids::id_text;
use crate::resource::FreeForm;
use crate::store::Objects;
use monform_model::group_rules::apply_group;

/// The quirk fields of an operation (spec 2.1; `monform_model::quirks`).
fn free_form(operation: CheckOperation) -> FreeForm<'static> {
    FreeForm {
        allowed: FREE_FORM_FIELDS,
        required: required_free_form(operation),
    }
}

/// A heartbeat's ping token and URL are the service's; clients may echo them back.
fn strip_ping_fields(body: &mut Value) {
    if let Some(heartbeat) = body.get_mut("heartbeat").and_then(Value::as_object_mut) {
        heartbeat.remove("pingToken");
        heartbeat.remove("pingUrl");
    }
}

pub async fn create(
    check_type: CheckType,
    State(app): State<AppState>,
    caller: Caller,
    params: Params,
    JsonBody(mut body): JsonBody,
) -> ApiResult<Response> {
    match body.get("checkType") {
        None => body["checkType"] = Value::String(check_type.as_str().to_owned()),
        Some(given) if given == check_type.as_str() => {}
        Some(given) => {
            return Err(ApiError::invalid(
                "checkType",
                format!("{given} does not match the endpoint's {}", check_type.as_str()),
            ));
        }
    }
    strip_ping_fields(&mut body);
    let auto_assign = params.bool("autoAssignAlerts")?.unwrap_or(true);
    let created = create_object(
        &app,
        &caller,
        Kind::Check,
        &body,
        free_form(CheckOperation::Create(check_type)),
        auto_assign,
    )?;
    Ok((StatusCode::CREATED, axum::Json(created)).into_response())
}

pub async fn update_generic(
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    params: Params,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    update(app, caller, id, None, params, body)
}

pub async fn update_typed(
    check_type: CheckType,
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    params: Params,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    update(app, caller, id, Some(check_type), params, body)
}

fn update(
    app: AppState,
    caller: Caller,
    id: String,
    check_type: Option<CheckType>,
    params: Params,
    mut body: Value,
) -> ApiResult<Response> {
    let stored_type = {
        let db = app.store.lock();
        load(&db, &caller.account, Kind::Check, &id)?["checkType"].clone()
    };
    let expected = check_type
        .map(|t| Value::String(t.as_str().to_owned()))
        .unwrap_or(stored_type.clone());
    if expected != stored_type || body.get("checkType").is_some_and(|t| *t != stored_type) {
        return Err(ApiError::invalid(
            "checkType",
            format!("a check's type cannot change (it is {stored_type})"),
        ));
    }
    strip_ping_fields(&mut body);
    let auto_assign = params.bool("autoAssignAlerts")?.unwrap_or(true);
    let operation = match check_type {
        Some(t) => CheckOperation::TypedUpdate(t),
        None => CheckOperation::GenericUpdate,
    };
    let updated = update_object(
        &app,
        &caller,
        Kind::Check,
        &id,
        &body,
        free_form(operation),
        auto_assign,
    )?;
    Ok(axum::Json(updated).into_response())
}

/// The values of the listing's `status` filter: a check's current status,
/// from the alert state its last settled run left (`domain::alerts`).
const STATUSES: &[(&str, &str)] = &[("passing", "PASSING"), ("failing", "FAILING"), ("degraded", "DEGRADED")];

/// `GET /v1/checks` with its filters: `tag` (repeated: checks with at least
/// one of them, as the reference says), `checkType`, `search` (in the
/// name) and `status` (`passing`, `failing`, `degraded`; a check never run
/// has no status and matches none).
pub async fn list(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let tags = params.many("tag");
    let check_type = params.one("checkType").map(str::to_owned);
    if let Some(t) = &check_type
        && !CheckType::ALL.iter().any(|c| c.as_str() == t)
    {
        return Err(ApiError::invalid("checkType", format!("`{t}` is not a check type")));
    }
    let status = match params.one("status") {
        None => None,
        Some(given) => Some(
            STATUSES
                .iter()
                .find(|(name, _)| *name == given)
                .map(|(_, state)| *state)
                .ok_or_else(|| {
                    ApiError::invalid("status", format!("`{given}` is not one of passing, failing, degraded"))
                })?,
        ),
    };
    let search = params.one("search").map(str::to_lowercase);
    let db = app.store.lock();
    let (rows, total): (Vec<Listed>, usize) =
        if tags.is_empty() && check_type.is_none() && search.is_none() && status.is_none() {
            let (texts, total) = db.page_text(&caller.account, Kind::Check.section(), paging.offset(), paging.limit)?;
            (
                texts.into_iter().map(|text| Listed::of(Kind::Check, text)).collect(),
                total,
            )
        } else {
            let states: HashMap<String, Value> = match status {
                Some(_) => db
                    .all(&caller.account, ALERT_STATES)?
                    .into_iter()
                    .map(|r| (r.id, r.body))
                    .collect(),
                None => HashMap::new(),
            };
            let matching: Vec<_> = db
                .all(&caller.account, Kind::Check.section())?
                .into_iter()
                .filter(|r| {
                    let tagged = tags.is_empty()
                        || tags
                            .iter()
                            .any(|t| r.body["tags"].as_array().is_some_and(|l| l.iter().any(|x| x == t)));
                    let of_type = check_type.as_ref().is_none_or(|t| r.body["checkType"] == *t);
                    let named = search
                        .as_ref()
                        .is_none_or(|s| r.body["name"].as_str().is_some_and(|n| n.to_lowercase().contains(s)));
                    let in_status = status.is_none_or(|s| states.get(&r.id).is_some_and(|state| state["status"] == s));
                    tagged && of_type && named && in_status
                })
                .collect();
            let (rows, total) = paging.slice(matching);
            (rows.into_iter().map(|r| Listed::Parsed(r.body)).collect(), total)
        };
    let context = hooks::Context::load(&db, &caller.account, Kind::Check, &rows)?;
    // Presenting and serializing need no database: let other requests in.
    drop(db);
    Ok(stored::respond(Kind::Check, rows, &context, total, paging))
}

/// `GET /v1/check-groups/{id}/checks`: the group's checks with its settings applied.
pub async fn of_group(
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let db = app.store.lock();
    let group = load(&db, &caller.account, Kind::Group, &id)?;
    let members: Vec<Value> = db
        .all(&caller.account, Kind::Check.section())?
        .into_iter()
        .filter(|r| id_text(&r.body["groupId"]) == id)
        .map(|r| r.body)
        .collect();
    let (members, total) = paging.slice(members);
    let context = hooks::Context::load(&db, &caller.account, Kind::Check, &members)?;
    let items = members
        .into_iter()
        .map(|check| apply_group(hooks::present(Kind::Check, check, &context), &group))
        .collect();
    Ok(paged(items, total, paging))
}
