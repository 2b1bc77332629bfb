//! Page-based lists: `limit` 1..100 (default 10), `page` >= 1 (default 1),
//! a bare JSON array and `Content-Range: first-last/total`.

use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::body::Params;
use crate::error::ApiResult;

pub const MAX_LIMIT: i64 = 100;

#[derive(Debug, Clone, Copy)]
pub struct Paging {
    pub limit: usize,
    pub page: usize,
}

impl Paging {
    pub fn from_params(params: &Params) -> ApiResult<Paging> {
        let limit = params.int("limit", 10, 1, MAX_LIMIT)?;
        let page = params.int("page", 1, 1, i64::from(u32::MAX))?;
        Ok(Paging {
            limit: limit as usize,
            page: page as usize,
        })
    }

    pub fn offset(&self) -> usize {
        (self.page - 1).saturating_mul(self.limit)
    }

    /// Takes this page out of a full list.
    pub fn slice<T>(&self, items: Vec<T>) -> (Vec<T>, usize) {
        let total = items.len();
        (items.into_iter().skip(self.offset()).take(self.limit).collect(), total)
    }
}

/// The response for one page of a list of `total` items.
pub fn paged(items: Vec<Value>, total: usize, paging: Paging) -> Response {
    let range = if items.is_empty() {
        format!("*/{total}")
    } else {
        let first = paging.offset();
        format!("{first}-{}/{total}", first + items.len() - 1)
    };
    let mut response = axum::Json(Value::Array(items)).into_response();
    if let Ok(value) = HeaderValue::from_str(&range) {
        response.headers_mut().insert(axum::http::header::CONTENT_RANGE, value);
    }
    response
}
