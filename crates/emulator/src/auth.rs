//! `Authorization: Bearer <key>` and `X-Service-Account` (api-contract.md).

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;

use crate::app::AppState;
use crate::error::ApiError;

pub const ACCOUNT_HEADER: &str = "x-service-account";

/// The authenticated caller: its key and account.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key: String,
    pub account: String,
}

/// The bearer token of a request, if well-formed.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Caller, ApiError> {
        let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, m);
        if parts.headers.get(axum::http::header::AUTHORIZATION).is_none() {
            return Err(unauthorized(
                "missing Authorization header; send `Authorization: Bearer <API key>`",
            ));
        }
        let key =
            bearer(parts).ok_or_else(|| unauthorized("malformed Authorization header; expected `Bearer <API key>`"))?;
        let account = app
            .store
            .account_of(key)?
            .ok_or_else(|| unauthorized("unknown API key"))?;
        if let Some(header) = parts.headers.get(ACCOUNT_HEADER) {
            let named = header.to_str().unwrap_or_default();
            if named != account {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!("this API key does not belong to account {named}"),
                ));
            }
        }
        Ok(Caller {
            key: key.to_owned(),
            account,
        })
    }
}
