//! Request bodies and query strings, with the API's error body on every
//! rejection (415 not JSON, 413 too large, 408 too slow, 400 malformed).

use std::collections::HashMap;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde_json::Value;

use crate::error::ApiError;

/// Largest accepted body (api-contract.md).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// A JSON object body.
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody, ApiError> {
        let content_type = request
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let is_json = content_type.split(';').next().is_some_and(|m| {
            let m = m.trim();
            m.eq_ignore_ascii_case("application/json") || m.ends_with("+json")
        });
        if !is_json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send the body as JSON with `Content-Type: application/json`",
            ));
        }
        let bytes = RawBody::from_request(request, state).await?.0;
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::bad_request(format!("invalid JSON: {e}")))?;
        if !value.is_object() {
            return Err(ApiError::invalid("body", "must be a JSON object"));
        }
        Ok(JsonBody(value))
    }
}

/// The body's bytes, whatever they are, refused with the API's error body
/// (413 past `BODY_LIMIT`) rather than axum's plain text.
pub struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<RawBody, ApiError> {
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                let status = rejection.status();
                if timed_out(&rejection) {
                    ApiError::new(
                        StatusCode::REQUEST_TIMEOUT,
                        "the request body did not arrive in time; send it at once after the headers",
                    )
                } else if status == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(status, format!("request body is larger than {} bytes", BODY_LIMIT))
                } else {
                    ApiError::new(status, rejection.body_text())
                }
            })?;
        Ok(RawBody(bytes))
    }
}

/// Whether reading the body failed at its deadline (`listen::Limits::body_timeout`).
fn timed_out(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// The query string as key/value pairs; repeated keys keep every value.
#[derive(Debug, Default)]
pub struct Params(pub HashMap<String, Vec<String>>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Params, ApiError> {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for (key, value) in url_pairs(parts.uri.query().unwrap_or("")) {
            map.entry(key).or_default().push(value);
        }
        Ok(Params(map))
    }
}

impl Params {
    pub fn one(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.last()).map(String::as_str)
    }

    /// All values of a repeated or comma-separated parameter.
    pub fn many(&self, key: &str) -> Vec<String> {
        self.0
            .get(key)
            .into_iter()
            .flatten()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect()
    }

    pub fn int(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64, ApiError> {
        match self.one(key) {
            None => Ok(default),
            Some(text) => match text.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(n),
                Ok(n) => Err(ApiError::invalid(key, format!("{n} is out of range {min}..{max}"))),
                Err(_) => Err(ApiError::invalid(key, format!("`{text}` is not an integer"))),
            },
        }
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.one(key) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(ApiError::invalid(key, format!("`{other}` is not true or false"))),
        }
    }
}

fn url_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(k), decode(v))
    })
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_percent_and_plus() {
        assert_eq!(decode("a%20b+c%2Cd"), "a b c,d");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
    }
}
