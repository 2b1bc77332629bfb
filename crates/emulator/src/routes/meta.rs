//! Fixed data (runtimes, locations) and a maintenance window's maintenances.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch};
use monform_model::resources::{Location, RuntimeId};
use serde_json::{Value, json};

use super::params::{Paging, paged};
use super::{Body, Route};
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::{JsonBody, Params};
use crate::clock;
use crate::domain::objects::load;
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::store::Objects;
use monform_model::Kind;

pub fn routes() -> Vec<Route> {
    vec![
        Route::new("GET", "/v1/runtimes", "List runtimes", get(list_runtimes)),
        Route::new("GET", "/v1/runtimes/{id}", "Get a runtime", get(get_runtime)),
        Route::new(
            "GET",
            "/v1/locations",
            "List data-center locations",
            get(list_locations),
        ),
        Route::new(
            "GET",
            "/v1/maintenance-windows/{id}/maintenances",
            "List a window's maintenances",
            get(list_maintenances),
        ),
        Route::new(
            "PATCH",
            "/v1/maintenance-windows/{id}/maintenances/{maintenanceId}",
            "Move a maintenance",
            patch(patch_maintenance),
        )
        .taking(Body::Json {
            schema: maintenance_schema,
            required: true,
        }),
    ]
}

/// The seven runtimes (spec 9.4): stage, Node.js version, end of life.
pub fn runtime(id: RuntimeId) -> Value {
    let (stage, node, end_of_life, playwright) = match id {
        RuntimeId::R2026_04 => ("CURRENT", "22.14.0", None, "1.52.0"),
        RuntimeId::R2025_04 => ("STABLE", "22.11.0", Some("04/30/2027"), "1.49.0"),
        RuntimeId::R2024_09 => ("STABLE", "20.17.0", Some("09/30/2026"), "1.47.0"),
        RuntimeId::R2024_02 => ("DEPRECATED", "18.19.0", Some("02/28/2026"), "1.41.0"),
        RuntimeId::R2023_09 => ("DEPRECATED", "18.17.0", Some("09/30/2025"), "1.38.0"),
        RuntimeId::R2023_02 => ("REMOVED", "16.19.0", Some("02/28/2025"), "1.30.0"),
        RuntimeId::R2022_10 => ("REMOVED", "16.17.0", Some("10/31/2024"), "1.27.0"),
    };
    let mut runtime = json!({
        "name": id.as_str(),
        "multiStepSupport": !matches!(id, RuntimeId::R2022_10 | RuntimeId::R2023_02),
        "nodeJsVersion": node,
        "stage": stage,
        "description": format!("Runtime {} with Node.js {node}", id.as_str()),
        // Clients read the runtime's Node.js from `dependencies.node` (as
        // in a package manifest's engines: "22.x"), not `nodeJsVersion`.
        "dependencies": {
            "node": format!("{}.x", node.split('.').next().unwrap_or(node)),
            "@playwright/test": playwright, "axios": "1.7.9", "chai": "4.4.1", "lodash": "4.17.21", "uuid": "9.0.1",
        },
    });
    // Optional, and a string where present (the reference): no end of
    // life is no field, not null.
    if let Some(date) = end_of_life {
        runtime["runtimeEndOfLife"] = json!(date);
    }
    runtime
}

async fn list_runtimes(_: Caller) -> Response {
    axum::Json(Value::Array(RuntimeId::ALL.iter().map(|r| runtime(*r)).collect())).into_response()
}

async fn get_runtime(_: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let runtime_id = RuntimeId::ALL
        .iter()
        .find(|r| r.as_str() == id)
        .ok_or_else(|| ApiError::not_found("runtime", &id))?;
    Ok(axum::Json(runtime(*runtime_id)).into_response())
}

async fn list_locations(_: Caller) -> Response {
    let locations: Vec<Value> = Location::ALL
        .iter()
        .map(|l| json!({ "region": l.as_str(), "name": l.region_name() }))
        .collect();
    axum::Json(Value::Array(locations)).into_response()
}

async fn list_maintenances(
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let db = app.store.lock();
    load(&db, &caller.account, Kind::MaintenanceWindow, &id)?;
    let rows = db.records(&caller.account, "maintenances", Some(&id), i64::MIN, i64::MAX)?;
    let (items, total) = paging.slice(rows.into_iter().map(|r| r.body).collect());
    Ok(paged(items, total, paging))
}

/// The body `patch_maintenance` takes, for `/openapi.json`.
fn maintenance_schema() -> Value {
    let date = json!({ "type": ["string", "null"], "description": "An ISO 8601 date or date-time." });
    json!({
        "type": "object",
        "properties": { "startsAt": date, "endsAt": date },
        "additionalProperties": false,
    })
}

async fn patch_maintenance(
    State(app): State<AppState>,
    caller: Caller,
    Path((id, maintenance_id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let mut violations = Vec::new();
    for field in ["startsAt", "endsAt"] {
        match body.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) if clock::parse(text).is_some() => {}
            Some(other) => violations.push(monform_model::Violation::new(
                monform_model::FieldPath::root().key(field),
                format!("{other} is not a date"),
            )),
        }
    }
    if let Some(unknown) = body
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "startsAt" && *k != "endsAt"))
    {
        violations.push(monform_model::Violation::new(
            monform_model::FieldPath::root().key(unknown),
            format!("unknown field `{unknown}`"),
        ));
    }
    if !violations.is_empty() {
        return Err(ApiError::validation(&violations));
    }
    app.store.transaction(|tx| {
        load(tx, &caller.account, Kind::MaintenanceWindow, &id)?;
        let mut maintenance = tx
            .get(&caller.account, "maintenances", &maintenance_id)?
            .filter(|m| id_text(&m["maintenanceWindowId"]) == id)
            .ok_or_else(|| ApiError::not_found("maintenance", &maintenance_id))?;
        let starts = body
            .get("startsAt")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| maintenance["startsAt"].as_str().map(str::to_owned));
        let ends = body
            .get("endsAt")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| maintenance["endsAt"].as_str().map(str::to_owned));
        if let (Some(s), Some(e)) = (
            starts.as_deref().and_then(clock::parse),
            ends.as_deref().and_then(clock::parse),
        ) && e <= s
        {
            return Err(ApiError::invalid("endsAt", "must be after startsAt"));
        }
        let now = clock::now_text();
        let update = json!({
            "id": ids::new(),
            "maintenanceWindowId": maintenance["maintenanceWindowId"], "maintenanceId": maintenance_id,
            "status": maintenance["status"], "description": "rescheduled", "notifySubscribers": false,
            "created_at": now,
            "previousStatus": maintenance["status"],
            "previousStartsAt": maintenance["startsAt"], "previousEndsAt": maintenance["endsAt"],
            "dateAdjustments": { "startsAt": starts, "endsAt": ends },
        });
        maintenance["startsAt"] = json!(starts);
        maintenance["endsAt"] = json!(ends);
        maintenance["updated_at"] = json!(now);
        if let Some(updates) = maintenance["updates"].as_array_mut() {
            updates.push(update);
        }
        tx.replace(&caller.account, "maintenances", &maintenance_id, &maintenance)?;
        Ok::<_, ApiError>(axum::Json(maintenance).into_response())
    })
}
