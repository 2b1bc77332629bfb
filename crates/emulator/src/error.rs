//! The error body of every failed request (api-contract.md):
//! `{statusCode, error, message, attributes}`.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use monform_model::Violation;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// For 400: each offending field path and what is wrong with it.
    /// Boxed to keep `Result<_, ApiError>` small.
    pub attributes: Box<Map<String, Value>>,
    /// Extra headers (Retry-After and the rate-limit headers on 429).
    pub headers: Vec<(&'static str, String)>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            attributes: Box::default(),
            headers: Vec::new(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(what: &str, id: &str) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, format!("{what} {id} not found"))
    }

    /// A 404 with its own message (e.g. no check matches a trigger).
    pub fn missing(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// A 408: what the caller waits for is not done yet.
    pub fn still_running(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::REQUEST_TIMEOUT, message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    pub fn internal(message: impl std::fmt::Display) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("internal error: {message}"))
    }

    /// A 400 listing every violation under its field path.
    pub fn validation(violations: &[Violation]) -> ApiError {
        let mut attributes = Map::new();
        for v in violations {
            let key = if v.path.is_root() {
                "body".to_owned()
            } else {
                v.path.to_string()
            };
            let text = match &v.help {
                Some(help) => format!("{} ({help})", v.message),
                None => v.message.clone(),
            };
            match attributes.get_mut(&key) {
                Some(Value::String(existing)) => {
                    existing.push_str("; ");
                    existing.push_str(&text);
                }
                _ => {
                    attributes.insert(key, Value::String(text));
                }
            }
        }
        let count = violations.len();
        let message = if count == 1 {
            "1 field is invalid".to_owned()
        } else {
            format!("{count} fields are invalid")
        };
        ApiError {
            attributes: Box::new(attributes),
            ..ApiError::bad_request(message)
        }
    }

    /// A 400 for one query parameter or field.
    pub fn invalid(field: &str, problem: impl Into<String>) -> ApiError {
        let problem = problem.into();
        let mut attributes = Map::new();
        attributes.insert(field.to_owned(), Value::String(problem.clone()));
        ApiError {
            attributes: Box::new(attributes),
            ..ApiError::bad_request(format!("{field}: {problem}"))
        }
    }

    pub fn with_header(mut self, name: &'static str, value: impl ToString) -> ApiError {
        self.headers.push((name, value.to_string()));
        self
    }

    pub fn body(&self) -> Value {
        json!({
            "statusCode": self.status.as_u16(),
            "error": self.status.canonical_reason().unwrap_or("Error"),
            "message": self.message,
            "attributes": self.attributes,
        })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        for (name, value) in &self.headers {
            if let Ok(value) = HeaderValue::from_str(value) {
                response.headers_mut().insert(*name, value);
            }
        }
        response
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(error: rusqlite::Error) -> ApiError {
        ApiError::internal(error)
    }
}
