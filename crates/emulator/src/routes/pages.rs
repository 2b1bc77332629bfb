//! Status pages as the public sees them: server-rendered HTML at
//! `/status/{url}`, and at `/` for a request whose Host is a page's
//! `customDomain`. Not part of the API (no `/openapi.json` entry, no API
//! key needed) except for private pages, which answer 401 without a key of
//! their account. The template is `templates/status_page.html`
//! (minijinja, HTML auto-escaped).

use std::sync::OnceLock;

use axum::extract::{Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use minijinja::Environment;

use crate::app::AppState;
use crate::auth::bearer;
use crate::clock::now_ms;
use crate::domain::pages;
use crate::error::ApiError;

fn templates() -> &'static Environment<'static> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        let mut environment = Environment::new();
        // A template shipped in the binary: checked by the tests, so a
        // broken one never reaches a user.
        if let Err(error) =
            environment.add_template("status_page.html", include_str!("../../templates/status_page.html"))
        {
            tracing::error!("status page template: {error}");
        }
        environment
    })
}

/// `GET /status/{url}`.
pub async fn by_url(State(app): State<AppState>, Path(url): Path<String>, request: Parts) -> Response {
    render(&app, "url", &url, &request)
}

/// Everything no route matched: a page by its custom domain at `/`, else
/// the API's 404.
pub async fn fallback(State(app): State<AppState>, request: Parts) -> Response {
    let host = request
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(|h| h.rsplit_once(':').map_or(h, |(name, _)| name).to_ascii_lowercase());
    if request.uri.path() == "/"
        && let Some(host) = host
    {
        let found = pages::find(&app.store.lock(), "customDomain", &host);
        if matches!(found, Ok(Some(_))) {
            return render(&app, "customDomain", &host, &request);
        }
    }
    ApiError::new(StatusCode::NOT_FOUND, "no such route").into_response()
}

fn render(app: &AppState, field: &str, value: &str, request: &Parts) -> Response {
    // Found under the lock, which `account_of` takes again below.
    let found = pages::find(&app.store.lock(), field, value);
    let (account, page) = match found {
        Ok(Some(found)) => found,
        Ok(None) => return plain(StatusCode::NOT_FOUND, "No status page here."),
        Err(error) => return ApiError::internal(error).into_response(),
    };
    if page["isPrivate"] == true {
        let allowed = bearer(request)
            .and_then(|key| app.store.account_of(key).ok().flatten())
            .is_some_and(|a| a == account);
        if !allowed {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "This status page is private: send the account's API key (Authorization: Bearer ...).",
            );
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
            return response;
        }
    }
    let view = pages::view(&app.store.lock(), &account, &page, now_ms());
    let view = match view {
        Ok(view) => view,
        Err(error) => return ApiError::internal(error).into_response(),
    };
    match templates()
        .get_template("status_page.html")
        .and_then(|template| template.render(&view))
    {
        Ok(html) => Html(html).into_response(),
        Err(error) => ApiError::internal(error).into_response(),
    }
}

/// A short HTML answer for people (not the API's JSON error).
fn plain(status: StatusCode, message: &str) -> Response {
    let html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title></head><body><h1>{}</h1><p>{message}</p></body></html>",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error")
    );
    (status, Html(html)).into_response()
}
