//! Create, read, update, delete and list for every managed kind, with the
//! kind-specific behaviour in `hooks`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use monform_model::Kind;
use monform_model::quirks::required_on_update;
use monform_model::wire::IdType;
use serde_json::Value;

use super::hooks;
use super::params::Paging;
use super::stored::{self, Listed};
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::{JsonBody, Params};
use crate::clock;
pub use crate::domain::objects::{load, noun};
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::resource::{FreeForm, canonical, merge};
use crate::store::Objects;

pub async fn list(kind: Kind, app: AppState, caller: Caller, params: Params) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let db = app.store.lock();
    let (texts, total) = db.page_text(&caller.account, kind.section(), paging.offset(), paging.limit)?;
    let rows: Vec<Listed> = texts.into_iter().map(|text| Listed::of(kind, text)).collect();
    let context = hooks::Context::load(&db, &caller.account, kind, &rows)?;
    // Presenting and serializing need no database: let other requests in.
    drop(db);
    Ok(stored::respond(kind, rows, &context, total, paging))
}

pub async fn get(kind: Kind, app: AppState, caller: Caller, id: String) -> ApiResult<Response> {
    let db = app.store.lock();
    let stored = load(&db, &caller.account, kind, &id)?;
    let context = hooks::Context::load(&db, &caller.account, kind, [&stored])?;
    Ok(axum::Json(hooks::present(kind, stored, &context)).into_response())
}

/// Creates an object from a request body already checked for its quirks.
pub fn create_object(
    app: &AppState,
    caller: &Caller,
    kind: Kind,
    body: &Value,
    free_form: FreeForm<'_>,
    auto_assign: bool,
) -> ApiResult<Value> {
    let (key, mut body) = hooks::split_key(kind, body)?;
    let wire_only = hooks::take_wire_only(kind, &mut body)?;
    let mut stored = with_missing(
        canonical(kind, &body, free_form),
        hooks::missing_key(kind, key.as_deref()),
    )?;
    hooks::keep_wire_only(&mut stored, wire_only);
    if app.config.normalise_urls && kind == Kind::Check {
        crate::domain::checks::normalise_url(&mut stored);
    }
    app.store.transaction(|tx| {
        hooks::check_references(tx, &caller.account, kind, &stored)?;
        hooks::check_unique(tx, &caller.account, kind, &stored, key.as_deref(), None)?;
        let id = match (kind.id_type(), key) {
            (IdType::Key, Some(key)) => Value::String(key),
            (IdType::Integer, _) => Value::from(tx.next_number(&caller.account, kind.section())?),
            (IdType::Text, _) => Value::String(uuid::Uuid::new_v4().simple().to_string()[..12].to_owned()),
            _ => Value::String(ids::new()),
        };
        let now = clock::now_text();
        if let Some(object) = stored.as_object_mut() {
            object.insert(kind.id_field().to_owned(), id.clone());
            object.insert("created_at".into(), Value::String(now.clone()));
            object.insert("updated_at".into(), Value::String(now));
        }
        let created = hooks::on_create(tx, &caller.account, kind, &mut stored, auto_assign)?;
        tx.insert(&caller.account, kind.section(), &id_text(&id), None, 0, &stored)?;
        let context = hooks::Context::load(tx, &caller.account, kind, [&stored])?;
        Ok::<_, ApiError>(hooks::present_created(kind, stored, created, &context))
    })
}

/// A validation result with required fields the body lacks added to it:
/// one 400 naming every offending field.
fn with_missing(checked: ApiResult<Value>, missing: &[&str]) -> ApiResult<Value> {
    match checked {
        Ok(value) if missing.is_empty() => Ok(value),
        result => {
            let mut error = result.err().unwrap_or_else(|| ApiError::validation(&[]));
            if error.status != StatusCode::BAD_REQUEST {
                return Err(error);
            }
            for field in missing {
                error.attributes.insert(
                    (*field).to_owned(),
                    Value::String(format!("missing required field `{field}`")),
                );
            }
            error.message = match error.attributes.len() {
                1 => "1 field is invalid".to_owned(),
                n => format!("{n} fields are invalid"),
            };
            Err(error)
        }
    }
}

pub async fn create(kind: Kind, app: AppState, caller: Caller, params: Params, body: Value) -> ApiResult<Response> {
    let auto_assign = params.bool("autoAssignAlerts")?.unwrap_or(true);
    let created = create_object(&app, &caller, kind, &body, FreeForm::default(), auto_assign)?;
    Ok((hooks::create_status(kind), axum::Json(created)).into_response())
}

/// Applies an update body to the stored object.
pub fn update_object(
    app: &AppState,
    caller: &Caller,
    kind: Kind,
    id: &str,
    body: &Value,
    free_form: FreeForm<'_>,
    auto_assign: bool,
) -> ApiResult<Value> {
    app.store.transaction(|tx| {
        let stored = load(tx, &caller.account, kind, id)?;
        let (_, mut body) = hooks::split_key(kind, &hooks::update_body(kind, &stored, body)?)?;
        let wire_only = hooks::take_wire_only(kind, &mut body)?;
        let merged = merge(&hooks::editable(kind, &stored), &body);
        // Required quirk fields must be in the request itself, not just stored.
        let missing: Vec<&str> = free_form
            .required
            .iter()
            .copied()
            .filter(|f| body.get(*f).is_none())
            .collect();
        let checked = canonical(
            kind,
            &merged,
            FreeForm {
                required: &[],
                ..free_form
            },
        );
        let mut updated = with_missing(checked, &missing)?;
        if app.config.normalise_urls && kind == Kind::Check {
            crate::domain::checks::normalise_url(&mut updated);
        }
        hooks::check_references(tx, &caller.account, kind, &updated)?;
        hooks::check_unique(tx, &caller.account, kind, &updated, None, Some(id))?;
        if let (Some(object), Some(old)) = (updated.as_object_mut(), stored.as_object()) {
            for field in ["created_at"]
                .iter()
                .chain(&[kind.id_field()])
                .chain(hooks::server_fields(kind))
            {
                if let Some(value) = old.get(*field) {
                    object.insert((*field).to_owned(), value.clone());
                }
            }
            object.insert("updated_at".into(), Value::String(clock::now_text()));
        }
        hooks::keep_wire_only(&mut updated, wire_only);
        hooks::on_update(tx, &caller.account, kind, &stored, &mut updated, auto_assign)?;
        tx.replace(&caller.account, kind.section(), id, &updated)?;
        let context = hooks::Context::load(tx, &caller.account, kind, [&updated])?;
        Ok::<_, ApiError>(hooks::present(kind, updated, &context))
    })
}

pub async fn update(
    kind: Kind,
    app: AppState,
    caller: Caller,
    id: String,
    params: Params,
    body: Value,
) -> ApiResult<Response> {
    let auto_assign = params.bool("autoAssignAlerts")?.unwrap_or(true);
    let free_form = FreeForm {
        allowed: &[],
        required: required_on_update(kind),
    };
    let updated = update_object(&app, &caller, kind, &id, &body, free_form, auto_assign)?;
    Ok(axum::Json(updated).into_response())
}

pub async fn delete(kind: Kind, app: AppState, caller: Caller, id: String) -> ApiResult<Response> {
    app.store.transaction(|tx| {
        let stored = load(tx, &caller.account, kind, &id)?;
        hooks::before_delete(tx, &caller.account, kind, &id, &stored)?;
        tx.delete(&caller.account, kind.section(), &id)?;
        Ok::<_, ApiError>(())
    })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Axum handlers for one kind, as closures over the kind.
pub mod handlers {
    use super::*;

    pub async fn list_h(
        kind: Kind,
        State(app): State<AppState>,
        caller: Caller,
        params: Params,
    ) -> ApiResult<Response> {
        list(kind, app, caller, params).await
    }
    pub async fn get_h(
        kind: Kind,
        State(app): State<AppState>,
        caller: Caller,
        Path(id): Path<String>,
    ) -> ApiResult<Response> {
        get(kind, app, caller, id).await
    }
    pub async fn create_h(
        kind: Kind,
        State(app): State<AppState>,
        caller: Caller,
        params: Params,
        JsonBody(body): JsonBody,
    ) -> ApiResult<Response> {
        create(kind, app, caller, params, body).await
    }
    pub async fn update_h(
        kind: Kind,
        State(app): State<AppState>,
        caller: Caller,
        Path(id): Path<String>,
        params: Params,
        JsonBody(body): JsonBody,
    ) -> ApiResult<Response> {
        update(kind, app, caller, id, params, body).await
    }
    pub async fn delete_h(
        kind: Kind,
        State(app): State<AppState>,
        caller: Caller,
        Path(id): Path<String>,
    ) -> ApiResult<Response> {
        delete(kind, app, caller, id).await
    }
}
