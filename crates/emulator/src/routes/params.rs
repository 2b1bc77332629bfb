//! Query parameters shared by the routes, parsed in one place: pages of
//! lists (`limit` 1..100, default 10; `page` >= 1, default 1; a bare JSON
//! array and `Content-Range: first-last/total`), time windows (`from`/`to`
//! in UNIX seconds, decimals allowed, or an ISO 8601 date(-time); spec 4's
//! bounded window; quick ranges), closed sets and optional numbers.

use std::time::Duration;

use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::body::Params;
use crate::clock::{self, now_ms};
use crate::domain::analytics::quick_range;
use crate::error::{ApiError, ApiResult};

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

    /// The response for this page of a full list.
    pub fn respond(&self, items: Vec<Value>) -> Response {
        let (items, total) = self.slice(items);
        paged(items, total, *self)
    }
}

/// The response for one page of a list of `total` items.
pub fn paged(items: Vec<Value>, total: usize, paging: Paging) -> Response {
    let count = items.len();
    // Writing a `Value` into a `Vec` cannot fail.
    let body = serde_json::to_vec(&Value::Array(items)).unwrap_or_default();
    paged_json(body, count, total, paging)
}

/// The response for one page of `count` items of a list of `total`, whose
/// JSON array is `body`: what `axum::Json` answers (its content type), with
/// the page's `Content-Range`.
pub fn paged_json(body: Vec<u8>, count: usize, total: usize, paging: Paging) -> Response {
    let range = if count == 0 {
        format!("*/{total}")
    } else {
        let first = paging.offset();
        format!("{first}-{}/{total}", first + count - 1)
    };
    let json = HeaderValue::from_static("application/json");
    let mut response = ([(axum::http::header::CONTENT_TYPE, json)], body).into_response();
    if let Ok(value) = HeaderValue::from_str(&range) {
        response.headers_mut().insert(axum::http::header::CONTENT_RANGE, value);
    }
    response
}

const HOUR_MS: i64 = 3_600_000;
/// The widest result and check-alert window (spec 4 and 8).
pub const RESULT_WINDOW_MS: i64 = 6 * HOUR_MS;
/// The widest alert-notification window (reference).
pub const NOTIFICATION_WINDOW_MS: i64 = 24 * HOUR_MS;

/// A `from`/`to` parameter in UNIX milliseconds: UNIX seconds or an ISO date.
pub fn time_param(params: &Params, key: &str) -> ApiResult<Option<i64>> {
    let Some(text) = params.one(key).map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if let Ok(seconds) = text.parse::<f64>() {
        if seconds.is_finite() && (0.0..1e11).contains(&seconds) {
            return Ok(Some((seconds * 1000.0).round() as i64));
        }
        return Err(ApiError::invalid(
            key,
            format!("{text} is not a UNIX timestamp in seconds"),
        ));
    }
    clock::parse(text)
        .map(|t| Some(t.timestamp_millis()))
        .ok_or_else(|| ApiError::invalid(key, format!("`{text}` is not a UNIX timestamp in seconds nor a date")))
}

/// The spec 4 window: missing bounds are `default` away from the other (or
/// now); wider than `widest` is a 400.
pub fn bounded_window(params: &Params, default: i64, widest: i64) -> ApiResult<(i64, i64)> {
    let (from, to) = match (time_param(params, "from")?, time_param(params, "to")?) {
        (None, None) => {
            let to = now_ms();
            (to - default, to)
        }
        (None, Some(to)) => (to - default, to),
        (Some(from), None) => (from, from + default),
        (Some(from), Some(to)) => (from, to),
    };
    if to < from {
        return Err(two_bounds("must not be before `from`"));
    }
    if to - from > widest {
        let hours = widest / HOUR_MS;
        return Err(two_bounds(&format!(
            "must be at most {hours} hours after `from` (the window is at most {hours} hours wide)"
        )));
    }
    Ok((from, to))
}

fn two_bounds(problem: &str) -> ApiError {
    let mut error = ApiError::invalid("to", problem);
    error
        .attributes
        .insert("from".into(), Value::String(format!("`to` {problem}")));
    error
}

/// One value of a closed set, or a 400 listing them.
pub fn one_of(params: &Params, key: &str, allowed: &[&str]) -> ApiResult<Option<String>> {
    match params.one(key) {
        None => Ok(None),
        Some(value) if allowed.contains(&value) => Ok(Some(value.to_owned())),
        Some(value) => Err(ApiError::invalid(
            key,
            format!("`{value}` is not one of {}", allowed.join(", ")),
        )),
    }
}

pub fn optional_int(params: &Params, key: &str, min: i64, max: i64) -> ApiResult<Option<i64>> {
    match params.one(key) {
        None => Ok(None),
        Some(_) => params.int(key, 0, min, max).map(Some),
    }
}

/// `from`/`to` (either overrides `quickRange`), else the quick range.
pub fn report_window(params: &Params, ranges: &[&str]) -> ApiResult<(i64, i64)> {
    let range = one_of(params, "quickRange", ranges)?.unwrap_or_else(|| ranges[0].to_owned());
    let now = clock::now_utc();
    let (from, to) = match (time_param(params, "from")?, time_param(params, "to")?) {
        (None, None) => {
            let (from, to) = quick_range(&range, now);
            (from.timestamp_millis(), to.timestamp_millis())
        }
        (Some(from), None) => (from, now.timestamp_millis()),
        (None, Some(to)) => (to - 24 * HOUR_MS, to),
        (Some(from), Some(to)) => (from, to),
    };
    if from >= to {
        return Err(two_bounds("must be after `from`"));
    }
    Ok((from, to))
}

// ---------------------------------------------------------------------------
// Statistics.
// ---------------------------------------------------------------------------

/// `maxWaitSeconds` of a completion route: a number of seconds in
/// 1..=`max` (`whole`: an integer), default `max`.
pub fn max_wait(params: &Params, max: i64, whole: bool) -> ApiResult<Duration> {
    if whole {
        let seconds = params.int("maxWaitSeconds", max, 1, max)?;
        return Ok(Duration::from_secs(seconds as u64));
    }
    let seconds = match params.one("maxWaitSeconds") {
        None => max as f64,
        Some(text) => match text.parse::<f64>() {
            Ok(n) if (1.0..=max as f64).contains(&n) => n,
            Ok(n) => {
                return Err(ApiError::invalid(
                    "maxWaitSeconds",
                    format!("{n} is out of range 1..{max}"),
                ));
            }
            Err(_) => {
                return Err(ApiError::invalid("maxWaitSeconds", format!("`{text}` is not a number")));
            }
        },
    };
    Ok(Duration::from_secs_f64(seconds))
}
