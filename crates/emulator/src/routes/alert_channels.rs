//! `PUT /v1/alert-channels/{id}/subscriptions`: subscribe a check or a group.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use monform_model::Kind;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::auth::Caller;
use crate::body::JsonBody;
use crate::clock;
use crate::domain::objects::load;
use crate::error::{ApiError, ApiResult};
use crate::ids::id_text;
use crate::store::Objects;

/// The body `subscribe` takes, for `/openapi.json`: `activated` and
/// exactly one of `checkId` and `groupId` (other fields are ignored).
pub fn subscription_schema() -> Value {
    let id = json!({ "type": ["string", "integer"] });
    json!({
        "type": "object",
        "required": ["activated"],
        "properties": {
            "activated": { "type": "boolean" },
            "checkId": { "type": ["string", "integer", "null"] },
            "groupId": { "type": ["string", "integer", "null"] },
        },
        "oneOf": [
            { "required": ["checkId"], "properties": { "checkId": id } },
            { "required": ["groupId"], "properties": { "groupId": id } },
        ],
    })
}

pub async fn subscribe(
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult<Response> {
    let activated = body
        .get("activated")
        .and_then(Value::as_bool)
        .ok_or_else(|| ApiError::invalid("activated", "must be true or false"))?;
    let (kind, target) = match (
        body.get("checkId").filter(|v| !v.is_null()),
        body.get("groupId").filter(|v| !v.is_null()),
    ) {
        (Some(check), None) => (Kind::Check, id_text(check)),
        (None, Some(group)) => (Kind::Group, id_text(group)),
        _ => return Err(ApiError::invalid("body", "give exactly one of checkId and groupId")),
    };
    app.store.transaction(|tx| {
        let channel = load(tx, &caller.account, Kind::AlertChannel, &id)?;
        let mut object = load(tx, &caller.account, kind, &target)?;
        let mut list = object["alertChannelSubscriptions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        list.retain(|s| id_text(&s["alertChannelId"]) != id);
        list.push(json!({ "alertChannelId": channel["id"], "activated": activated }));
        object["alertChannelSubscriptions"] = Value::Array(list);
        object["updated_at"] = Value::String(clock::now_text());
        tx.replace(&caller.account, kind.section(), &target, &object)?;
        let mut response = json!({ "id": channel["id"], "activated": activated, "checkId": null, "groupId": null });
        let field = if kind == Kind::Check { "checkId" } else { "groupId" };
        response[field] = object["id"].clone();
        Ok::<_, ApiError>(axum::Json(response).into_response())
    })
}
