//! Read-only records: check results, alert notifications, check alerts,
//! error groups, per-check analytics and the report (spec 2.14 to 2.19 and
//! section 4, "Results, alerts, errors" and "Analytics and reporting").
//!
//! Records are stored by whoever produces them (check results and error
//! groups by `sessions`, alerts by `crate::alerts`, notifications by
//! `crate::notify`; roll-ups of old results by `crate::retention`) under
//! the kinds below, with `ts` in UNIX milliseconds; these routes only read.
//! Lists are newest first. Reads finish due sessions first
//! ([`sessions::settle_due`]) so their results are seen.
//!
//! Choices where the specification is silent:
//! - `from`/`to` take UNIX seconds (decimals allowed) or an ISO 8601 date(-time).
//! - Window rule (spec 4) for both check-result listings and check alerts:
//!   at most 6 h wide, missing bounds 6 h from the other (or now). Alert
//!   notifications: defaults as the spec (6 h), at most 24 h wide as the
//!   reference. `to` before `from` is a 400.
//! - Unknown check: 404 on the result listings, error groups and analytics.
//! - `GET /v2/check-results/{checkId}` answers as in the reference:
//!   `{entries, nextId, length}` with the cursor `nextId` (instead of
//!   `page`), the same filters and window rule, and `fields` to project.
//! - Analytics: `series` is a string array as spec 2.18 says; each string is
//!   one JSON row `{"timestamp", <groupBy key>?, <metric>: value}` per bucket
//!   (`aggregationInterval` minutes from `from`, or the whole window) and
//!   group. A metric without suffix is the average (`retries`: the sum);
//!   `availability` is the percentage of passing runs. Values are null when
//!   a bucket has no sample of that metric. `limit`/`page` page the rows.
//!   Only `from` given: `to` is now; only `to`: `from` is 24 h earlier.
//! - Report: `aggregate` is `{successRatio: 0, avg: 0, p95: 0, p99: 0}` when
//!   the window holds no result (the reference requires numbers);
//!   `successRatio` is a fraction (0..1, four decimals). `filterByTags`
//!   keeps checks carrying every tag given. Tags and activation are the
//!   check's with its group's settings applied.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Datelike, Duration as Span, NaiveDate, Utc};
use monform_model::Kind;
use monform_model::resources::Location;
use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::Route;
use super::objects::load;
use super::sessions::{self, CHECK_RESULTS, RESULT_INTERNAL_FIELDS, effective_check, has_tags, iso, now_ms};
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::Params;
use crate::clock;
use crate::error::{ApiError, ApiResult};
use crate::paging::{MAX_LIMIT, Paging, paged};
use crate::store::Objects;

/// Record kinds read here (besides [`CHECK_RESULTS`]).
pub const ALERT_NOTIFICATIONS: &str = "alertNotifications";
pub const CHECK_ALERTS: &str = "checkAlerts";
pub const ERROR_GROUPS: &str = "errorGroups";

const HOUR_MS: i64 = 3_600_000;
/// The widest result and check-alert window (spec 4 and 8).
pub const RESULT_WINDOW_MS: i64 = 6 * HOUR_MS;
/// The widest alert-notification window (reference).
pub const NOTIFICATION_WINDOW_MS: i64 = 24 * HOUR_MS;

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "GET",
            "/v1/check-results/{checkId}",
            "List a check's results (deprecated; 6-hour window; 5 requests per 10 s)",
            get(list_results_v1),
        )
        .paged()
        .results_query(),
        Route::new(
            "GET",
            "/v2/check-results/{checkId}",
            "List a check's results (cursor: limit, nextId; 6-hour window)",
            get(list_results_v2),
        )
        .with_query(
            "limit",
            json!({ "type": "integer", "minimum": 1, "maximum": MAX_LIMIT }),
        )
        .with_query("nextId", json!({ "type": "string" }))
        .with_query("fields", json!({ "type": "array", "items": { "type": "string" } }))
        .results_query(),
        Route::new(
            "GET",
            "/v1/alert-notifications",
            "List alert notifications (filters: alertChannelId, hasFailures)",
            get(list_alert_notifications),
        )
        .paged()
        .window()
        .with_query("alertChannelId", json!({ "type": "integer", "minimum": 1 }))
        .with_query("hasFailures", json!({ "type": "boolean" })),
        Route::new(
            "GET",
            "/v1/check-alerts",
            "List check alerts (6-hour window)",
            get(list_check_alerts),
        )
        .paged()
        .window(),
        Route::new(
            "GET",
            "/v1/error-groups/checks/{checkId}",
            "List a check's error groups",
            get(list_error_groups),
        )
        .paged(),
        Route::new(
            "GET",
            "/v1/analytics/api-checks/{id}",
            "Metrics of an API check (metrics required)",
            get(|s, c, p, q| analytics(Endpoint::Api, s, c, p, q)),
        )
        .analytics_query(Endpoint::Api),
        Route::new(
            "GET",
            "/v1/analytics/browser-checks/{id}",
            "Metrics of a browser check (metrics required)",
            get(|s, c, p, q| analytics(Endpoint::Browser, s, c, p, q)),
        )
        .analytics_query(Endpoint::Browser),
        Route::new(
            "GET",
            "/v1/reporting",
            "Aggregate statistics per check (successRatio, avg, p95, p99)",
            get(reporting),
        )
        .window()
        .with_query("quickRange", json!({ "type": "string", "enum": REPORT_RANGES }))
        .with_query(
            "filterByTags",
            json!({ "type": "array", "items": { "type": "string" } }),
        )
        .with_query("deactivated", json!({ "type": "boolean" })),
    ]
}

// ---------------------------------------------------------------------------
// Parameters.
// ---------------------------------------------------------------------------

/// The query parameters of these routes, for `/openapi.json`.
impl Route {
    /// `from` and `to` (`time_param`).
    fn window(self) -> Route {
        let time = json!({
            "anyOf": [
                { "type": "number", "minimum": 0, "exclusiveMaximum": 100_000_000_000i64, "description": "UNIX seconds" },
                { "type": "string", "format": "date-time" },
            ],
        });
        self.with_query("from", time.clone()).with_query("to", time)
    }

    /// `ResultQuery::from_params`.
    fn results_query(self) -> Route {
        let locations: Vec<&str> = Location::ALL.iter().map(|l| l.as_str()).collect();
        self.window()
            .with_query("location", json!({ "type": "string", "enum": locations }))
            .with_query(
                "checkType",
                json!({ "type": "string", "enum": sessions::check_type_names() }),
            )
            .with_query("hasFailures", json!({ "type": "boolean" }))
            .with_query(
                "resultType",
                json!({ "type": "string", "enum": ["FINAL", "ATTEMPT", "ALL"] }),
            )
    }

    /// `analytics`: metrics (required), window, interval, filters, paging.
    fn analytics_query(self, endpoint: Endpoint) -> Route {
        let mut metrics: Vec<String> = ["availability", "retries"].iter().map(|m| (*m).to_owned()).collect();
        for base in endpoint.bases() {
            metrics.push((*base).to_owned());
            metrics.extend(SUFFIXES.iter().map(|suffix| format!("{base}_{suffix}")));
        }
        self.requiring_query(
            "metrics",
            json!({ "type": "array", "minItems": 1, "items": { "type": "string", "enum": metrics } }),
        )
        .window()
        .with_query("quickRange", json!({ "type": "string", "enum": ANALYTICS_RANGES }))
        .with_query(
            "aggregationInterval",
            json!({ "type": "integer", "minimum": 1, "maximum": 43_200 }),
        )
        .with_query(
            "filterByStatus",
            json!({ "type": "array", "items": { "type": "string", "enum": ["success", "failure"] } }),
        )
        .with_query("groupBy", json!({ "type": "string", "enum": endpoint.group_by() }))
        .paged()
    }
}

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
fn one_of(params: &Params, key: &str, allowed: &[&str]) -> ApiResult<Option<String>> {
    match params.one(key) {
        None => Ok(None),
        Some(value) if allowed.contains(&value) => Ok(Some(value.to_owned())),
        Some(value) => Err(ApiError::invalid(
            key,
            format!("`{value}` is not one of {}", allowed.join(", ")),
        )),
    }
}

fn optional_int(params: &Params, key: &str, min: i64, max: i64) -> ApiResult<Option<i64>> {
    match params.one(key) {
        None => Ok(None),
        Some(_) => params.int(key, 0, min, max).map(Some),
    }
}

/// A stored check result without its internal fields.
fn present_result(mut record: Value) -> Value {
    if let Some(object) = record.as_object_mut() {
        for field in RESULT_INTERNAL_FIELDS {
            object.remove(*field);
        }
    }
    record
}

// ---------------------------------------------------------------------------
// Check results.
// ---------------------------------------------------------------------------

struct ResultQuery {
    from: i64,
    to: i64,
    location: Option<String>,
    check_type: Option<String>,
    has_failures: Option<bool>,
    result_type: String,
}

impl ResultQuery {
    fn from_params(params: &Params) -> ApiResult<ResultQuery> {
        let locations: Vec<&str> = Location::ALL.iter().map(|l| l.as_str()).collect();
        let location = one_of(params, "location", &locations)?;
        let check_type = one_of(params, "checkType", &sessions::check_type_names())?;
        let has_failures = params.bool("hasFailures")?;
        let result_type = one_of(params, "resultType", &["FINAL", "ATTEMPT", "ALL"])?.unwrap_or_else(|| "FINAL".into());
        let (from, to) = bounded_window(params, RESULT_WINDOW_MS, RESULT_WINDOW_MS)?;
        Ok(ResultQuery {
            from,
            to,
            location,
            check_type,
            has_failures,
            result_type,
        })
    }

    fn matches(&self, record: &Value) -> bool {
        self.location.as_ref().is_none_or(|l| record["runLocation"] == *l)
            && self.check_type.as_ref().is_none_or(|t| record["checkType"] == *t)
            && self.has_failures.is_none_or(|f| record["hasFailures"] == f)
            && (self.result_type == "ALL" || record["resultType"] == *self.result_type)
    }

    /// The check's matching results, newest first (404 for an unknown check).
    fn run(&self, app: &AppState, account: &str, check_id: &str) -> ApiResult<Vec<Value>> {
        app.store.transaction(|tx| {
            load(tx, account, Kind::Check, check_id)?;
            sessions::settle_due(tx, account)?;
            let rows = tx.records(account, CHECK_RESULTS, Some(check_id), self.from, self.to)?;
            Ok(rows
                .into_iter()
                .filter(|r| self.matches(&r.body))
                .map(|r| present_result(r.body))
                .collect())
        })
    }
}

/// `GET /v1/check-results/{checkId}`: a bare page and `Content-Range`.
async fn list_results_v1(
    State(app): State<AppState>,
    caller: Caller,
    Path(check_id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let query = ResultQuery::from_params(&params)?;
    let results = query.run(&app, &caller.account, &check_id)?;
    let (items, total) = paging.slice(results);
    Ok(paged(items, total, paging))
}

/// Fields `fields` may name (reference).
const RESULT_FIELDS: &[&str] = &[
    "id",
    "name",
    "checkId",
    "hasFailures",
    "hasErrors",
    "isDegraded",
    "isCancelled",
    "overMaxResponseTime",
    "runLocation",
    "startedAt",
    "stoppedAt",
    "created_at",
    "createdAt",
    "responseTime",
    "apiCheckResult",
    "browserCheckResult",
    "multiStepCheckResult",
    "agenticCheckResult",
    "playwrightCheckResult",
    "tracerouteCheckResult",
    "grpcCheckResult",
    "sslCheckResult",
    "checkRunId",
    "attempts",
    "resultType",
    "sequenceId",
    "traceId",
    "errorGroupIds",
];

/// `GET /v2/check-results/{checkId}`: `{entries, nextId, length}`.
async fn list_results_v2(
    State(app): State<AppState>,
    caller: Caller,
    Path(check_id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let limit = params.int("limit", 10, 1, MAX_LIMIT)? as usize;
    let fields = params.many("fields");
    let unknown: Vec<&str> = fields
        .iter()
        .map(String::as_str)
        .filter(|f| !RESULT_FIELDS.contains(f))
        .collect();
    if !unknown.is_empty() {
        return Err(ApiError::invalid(
            "fields",
            format!(
                "unknown fields {}; known: {}",
                unknown.join(", "),
                RESULT_FIELDS.join(", ")
            ),
        ));
    }
    let query = ResultQuery::from_params(&params)?;
    let results = query.run(&app, &caller.account, &check_id)?;
    let start = match params.one("nextId").filter(|n| !n.is_empty()) {
        None => 0,
        Some(next) => results
            .iter()
            .position(|r| r["id"] == next)
            .ok_or_else(|| ApiError::invalid("nextId", format!("`{next}` is not a valid cursor")))?,
    };
    let next_id = results.get(start + limit).map_or(Value::Null, |r| r["id"].clone());
    let entries: Vec<Value> = results
        .into_iter()
        .skip(start)
        .take(limit)
        .map(|r| {
            if fields.is_empty() {
                return r;
            }
            let mut out = Map::new();
            for field in &fields {
                let source = if field == "createdAt" {
                    "created_at"
                } else {
                    field.as_str()
                };
                if let Some(value) = r.get(source) {
                    out.insert(field.clone(), value.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    Ok(axum::Json(json!({ "length": entries.len(), "entries": entries, "nextId": next_id })).into_response())
}

// ---------------------------------------------------------------------------
// Alerts, notifications, error groups.
// ---------------------------------------------------------------------------

/// Account-wide records of `kind` in the window, newest first, filtered.
fn account_records(
    app: &AppState,
    account: &str,
    kind: &str,
    (from, to): (i64, i64),
    keep: impl Fn(&Value) -> bool,
) -> ApiResult<Vec<Value>> {
    let db = app.store.lock();
    Ok(db
        .records(account, kind, None, from, to)?
        .into_iter()
        .map(|r| r.body)
        .filter(|b| keep(b))
        .collect())
}

async fn list_alert_notifications(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let window = bounded_window(&params, RESULT_WINDOW_MS, NOTIFICATION_WINDOW_MS)?;
    let channel = optional_int(&params, "alertChannelId", 1, i64::MAX)?;
    let failed = params.bool("hasFailures")?;
    let items = account_records(&app, &caller.account, ALERT_NOTIFICATIONS, window, |n| {
        channel.is_none_or(|c| n["alertChannelId"].as_i64() == Some(c))
            && failed.is_none_or(|f| (n["status"] == "FAILURE") == f)
    })?;
    let (items, total) = paging.slice(items);
    Ok(paged(items, total, paging))
}

async fn list_check_alerts(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let window = bounded_window(&params, RESULT_WINDOW_MS, RESULT_WINDOW_MS)?;
    let items = account_records(&app, &caller.account, CHECK_ALERTS, window, |_| true)?;
    let (items, total) = paging.slice(items);
    Ok(paged(items, total, paging))
}

async fn list_error_groups(
    State(app): State<AppState>,
    caller: Caller,
    Path(check_id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let db = app.store.lock();
    load(&db, &caller.account, Kind::Check, &check_id)?;
    let rows = db.records(&caller.account, ERROR_GROUPS, Some(&check_id), i64::MIN, i64::MAX)?;
    let (items, total) = paging.slice(rows.into_iter().map(|r| r.body).collect());
    Ok(paged(items, total, paging))
}

// ---------------------------------------------------------------------------
// Windows for analytics and reports.
// ---------------------------------------------------------------------------

const ANALYTICS_RANGES: &[&str] = &[
    "last24Hours",
    "last7Days",
    "last30Days",
    "thisWeek",
    "thisMonth",
    "lastWeek",
    "lastMonth",
];
const REPORT_RANGES: &[&str] = &[
    "last24Hrs",
    "last7Days",
    "last30Days",
    "thisWeek",
    "thisMonth",
    "lastWeek",
    "lastMonth",
];

fn midnight(date: NaiveDate) -> DateTime<Utc> {
    date.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()
}

/// The window of a quick range (UTC calendar; weeks start on Monday).
pub fn quick_range(name: &str, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let today = now.date_naive();
    let week_start = midnight(today - Span::days(i64::from(today.weekday().num_days_from_monday())));
    let month_start = midnight(today.with_day(1).unwrap_or(today));
    let previous_month_start = {
        let (year, month) = if today.month() == 1 {
            (today.year() - 1, 12)
        } else {
            (today.year(), today.month() - 1)
        };
        midnight(NaiveDate::from_ymd_opt(year, month, 1).unwrap_or(today))
    };
    match name {
        "last7Days" => (now - Span::days(7), now),
        "last30Days" => (now - Span::days(30), now),
        "thisWeek" => (week_start, now),
        "thisMonth" => (month_start, now),
        "lastWeek" => (week_start - Span::days(7), week_start),
        "lastMonth" => (previous_month_start, month_start),
        _ => (now - Span::hours(24), now),
    }
}

/// `from`/`to` (either overrides `quickRange`), else the quick range.
fn report_window(params: &Params, ranges: &[&str]) -> ApiResult<(i64, i64)> {
    let range = one_of(params, "quickRange", ranges)?.unwrap_or_else(|| ranges[0].to_owned());
    let now = Utc::now();
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

fn round(value: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    (value * factor).round() / factor
}

/// `values` reduced by `aggregation` (avg, max, median, min, pNN, stddev,
/// sum); None when empty.
pub fn aggregate(values: &[f64], aggregation: &str) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let percentile = |p: f64| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = ((p / 100.0) * n).ceil().max(1.0) as usize;
        sorted[rank.min(sorted.len()) - 1]
    };
    Some(match aggregation {
        "max" => values.iter().copied().fold(f64::MIN, f64::max),
        "min" => values.iter().copied().fold(f64::MAX, f64::min),
        "sum" => values.iter().sum(),
        "median" | "p50" => percentile(50.0),
        "p90" => percentile(90.0),
        "p95" => percentile(95.0),
        "p99" => percentile(99.0),
        "stddev" => (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt(),
        _ => mean,
    })
}

/// A check's FINAL, not cancelled results in the window.
fn final_results(db: &Connection, account: &str, check_id: &str, (from, to): (i64, i64)) -> ApiResult<Vec<Value>> {
    Ok(db
        .records(account, CHECK_RESULTS, Some(check_id), from, to)?
        .into_iter()
        .map(|r| r.body)
        .filter(|r| r["resultType"] == "FINAL" && r["isCancelled"] != true)
        .collect())
}

// ---------------------------------------------------------------------------
// Analytics.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Api,
    Browser,
}

const SUFFIXES: &[&str] = &[
    "avg", "max", "median", "min", "p50", "p90", "p95", "p99", "stddev", "sum",
];
const API_BASES: &[&str] = &["responseTime", "wait", "dns", "tcp", "firstByte", "download"];
const BROWSER_BASES: &[&str] = &[
    "responseTime",
    "TTFB",
    "FCP",
    "LCP",
    "CLS",
    "TBT",
    "consoleErrors",
    "networkErrors",
    "userScriptErrors",
    "documentErrors",
];
const WEB_VITALS: &[&str] = &["TTFB", "FCP", "LCP", "CLS", "TBT"];

impl Endpoint {
    fn bases(self) -> &'static [&'static str] {
        match self {
            Endpoint::Api => API_BASES,
            Endpoint::Browser => BROWSER_BASES,
        }
    }
    fn check_type(self) -> &'static str {
        match self {
            Endpoint::Api => "API",
            Endpoint::Browser => "BROWSER",
        }
    }
    fn group_by(self) -> &'static [&'static str] {
        match self {
            Endpoint::Api => &["runLocation", "statusCode"],
            Endpoint::Browser => &["runLocation", "pageIndex"],
        }
    }
}

/// A requested metric: its base and aggregation suffix.
#[derive(Debug, Clone, PartialEq)]
struct Metric {
    name: String,
    base: &'static str,
    suffix: Option<&'static str>,
}

/// Spec 2.18: the bases, `availability` and `retries`; each base also with
/// every suffix.
fn parse_metric(name: &str, endpoint: Endpoint) -> Option<Metric> {
    let bases = endpoint.bases();
    let found = |text: &str| {
        bases
            .iter()
            .chain(&["availability", "retries"])
            .find(|b| **b == text)
            .copied()
    };
    if let Some(base) = found(name) {
        return Some(Metric {
            name: name.to_owned(),
            base,
            suffix: None,
        });
    }
    let (base, suffix) = name.rsplit_once('_')?;
    let base = bases.iter().find(|b| **b == base).copied()?;
    let suffix = SUFFIXES.iter().find(|s| **s == suffix).copied()?;
    Some(Metric {
        name: name.to_owned(),
        base,
        suffix: Some(suffix),
    })
}

fn metric_metadata(metric: &Metric) -> Value {
    let (label, unit) = match metric.base {
        "responseTime" => ("Response time", "milliseconds"),
        "wait" => ("Wait", "milliseconds"),
        "dns" => ("DNS", "milliseconds"),
        "tcp" => ("TCP", "milliseconds"),
        "firstByte" => ("First byte", "milliseconds"),
        "download" => ("Download", "milliseconds"),
        "TTFB" => ("Time to first byte", "milliseconds"),
        "FCP" => ("First contentful paint", "milliseconds"),
        "LCP" => ("Largest contentful paint", "milliseconds"),
        "CLS" => ("Cumulative layout shift", "score"),
        "TBT" => ("Total blocking time", "milliseconds"),
        "consoleErrors" => ("Console errors", "count"),
        "networkErrors" => ("Network errors", "count"),
        "userScriptErrors" => ("User script errors", "count"),
        "documentErrors" => ("Document errors", "count"),
        "availability" => ("Availability", "percentage"),
        _ => ("Retries", "count"),
    };
    let mut out = json!({ "label": label, "unit": unit });
    if let Some(suffix) = metric.suffix {
        out["label"] = json!(format!("{label} ({suffix})"));
        out["aggregation"] = json!(suffix);
    }
    out
}

/// One metric's value in a result (for browser web vitals, of one page or
/// the average of all pages).
fn metric_value(result: &Value, base: &str, page: Option<usize>) -> Option<f64> {
    match base {
        "responseTime" => result["responseTime"].as_f64(),
        "availability" => Some(if result["hasFailures"] == true || result["hasErrors"] == true {
            0.0
        } else {
            100.0
        }),
        "retries" => Some(result["attempts"].as_f64().unwrap_or(0.0)),
        "wait" | "dns" | "tcp" | "firstByte" | "download" => {
            result["apiCheckResult"]["response"]["timingPhases"][base].as_f64()
        }
        vital if WEB_VITALS.contains(&vital) => {
            let pages = result["browserCheckResult"]["pages"].as_array()?;
            let values: Vec<f64> = pages
                .iter()
                .enumerate()
                .filter(|(i, _)| page.is_none_or(|p| p == *i))
                .filter_map(|(_, p)| p["webVitals"][vital]["value"].as_f64())
                .collect();
            aggregate(&values, "avg")
        }
        errors => result["browserCheckResult"]["traceSummary"][errors].as_f64(),
    }
}

/// A result (and, for `groupBy=pageIndex`, one of its pages) in a bucket.
type Sample<'a> = (&'a Value, Option<usize>);

async fn analytics(
    endpoint: Endpoint,
    State(app): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let names = params.many("metrics");
    if names.is_empty() {
        return Err(ApiError::invalid(
            "metrics",
            "required: comma-separated metric names, e.g. responseTime_avg,availability",
        ));
    }
    let mut metrics = Vec::new();
    let mut unknown = Vec::new();
    for name in &names {
        match parse_metric(name, endpoint) {
            Some(metric) => metrics.push(metric),
            None => unknown.push(name.as_str()),
        }
    }
    if !unknown.is_empty() {
        return Err(ApiError::invalid(
            "metrics",
            format!(
                "unknown metrics {}; use {}, availability, retries, each base also with _{}",
                unknown.join(", "),
                endpoint.bases().join(", "),
                SUFFIXES.join(", _")
            ),
        ));
    }
    let window = report_window(&params, ANALYTICS_RANGES)?;
    let interval = optional_int(&params, "aggregationInterval", 1, 43_200)?;
    let statuses = params.many("filterByStatus");
    if let Some(bad) = statuses.iter().find(|s| *s != "success" && *s != "failure") {
        return Err(ApiError::invalid(
            "filterByStatus",
            format!("`{bad}` is not one of success, failure"),
        ));
    }
    let group_by = one_of(&params, "groupBy", endpoint.group_by())?;
    let paging = Paging::from_params(&params)?;

    let (check, results) = app.store.transaction(|tx| {
        let check = load(tx, &caller.account, Kind::Check, &id)?;
        if check["checkType"] != endpoint.check_type() {
            return Err(ApiError::invalid(
                "id",
                format!(
                    "check {id} is a {} check; this endpoint serves {} checks",
                    check["checkType"].as_str().unwrap_or("?"),
                    endpoint.check_type()
                ),
            ));
        }
        sessions::settle_due(tx, &caller.account)?;
        let mut results = final_results(tx, &caller.account, &id, window)?;
        // Past the raw retention, the hourly roll-ups stand in for the results.
        let rollups = crate::retention::rollups(tx, &caller.account, &id, window)?;
        results.extend(rollups.iter().flat_map(crate::retention::Rollup::as_results));
        Ok::<_, ApiError>((check, results))
    })?;

    // Samples by (group sort key, bucket start): the group's key and (result, page) pairs.
    let mut buckets: BTreeMap<(String, i64), (Value, Vec<Sample<'_>>)> = BTreeMap::new();
    for result in &results {
        let failed = result["hasFailures"] == true || result["hasErrors"] == true;
        if !statuses.is_empty() && !statuses.iter().any(|s| (s == "failure") == failed) {
            continue;
        }
        // A roll-up's hour may start before the window.
        let ts = clock::parse(result["stoppedAt"].as_str().unwrap_or_default())
            .map_or(window.0, |t| t.timestamp_millis())
            .max(window.0);
        let bucket = match interval {
            Some(minutes) => {
                let width = minutes * 60_000;
                window.0 + (ts - window.0).div_euclid(width) * width
            }
            None => window.0,
        };
        let keys: Vec<(Value, Option<usize>)> = match group_by.as_deref() {
            Some("runLocation") => vec![(result["runLocation"].clone(), None)],
            Some("statusCode") => vec![(result["apiCheckResult"]["response"]["status"].clone(), None)],
            Some("pageIndex") => {
                let pages = result["browserCheckResult"]["pages"].as_array().map_or(0, Vec::len);
                (0..pages).map(|i| (json!(i), Some(i))).collect()
            }
            _ => vec![(Value::Null, None)],
        };
        for (key, page) in keys {
            let sort_key = match &key {
                Value::Number(n) => format!("{:020}", n.as_f64().unwrap_or(0.0) as i64),
                other => other.to_string(),
            };
            buckets
                .entry((sort_key, bucket))
                .or_insert_with(|| (key, Vec::new()))
                .1
                .push((result, page));
        }
    }
    let rows: Vec<Value> = buckets
        .into_iter()
        .map(|((_, bucket), (key, samples))| {
            let mut row = Map::new();
            row.insert("timestamp".into(), json!(iso(bucket)));
            if let Some(group) = &group_by {
                row.insert(group.clone(), key);
            }
            for metric in &metrics {
                let values: Vec<f64> = samples
                    .iter()
                    .filter_map(|(r, page)| metric_value(r, metric.base, *page))
                    .collect();
                let aggregation = metric
                    .suffix
                    .unwrap_or(if metric.base == "retries" { "sum" } else { "avg" });
                row.insert(
                    metric.name.clone(),
                    aggregate(&values, aggregation).map_or(Value::Null, |v| json!(round(v, 2))),
                );
            }
            Value::Object(row)
        })
        .collect();
    let (rows, _) = paging.slice(rows);
    let series: Vec<Value> = rows.iter().map(|r| Value::String(r.to_string())).collect();
    let metadata: Map<String, Value> = metrics.iter().map(|m| (m.name.clone(), metric_metadata(m))).collect();
    Ok(axum::Json(json!({
        "checkId": check["id"],
        "name": check["name"],
        "checkType": check["checkType"],
        "activated": check.get("activated").cloned().unwrap_or(json!(true)),
        "muted": check.get("muted").cloned().unwrap_or(json!(false)),
        "frequency": check.get("frequency").cloned().unwrap_or(json!(10)),
        "from": iso(window.0),
        "to": iso(window.1),
        "tags": check.get("tags").cloned().unwrap_or(json!([])),
        "series": series,
        "pagination": { "page": paging.page, "limit": paging.limit },
        "metadata": metadata,
    }))
    .into_response())
}

// ---------------------------------------------------------------------------
// Reporting.
// ---------------------------------------------------------------------------

/// `{successRatio, avg, p95, p99}` of results (zeros when there are none).
pub fn report_aggregate(results: &[Value]) -> Value {
    if results.is_empty() {
        return json!({ "successRatio": 0, "avg": 0, "p95": 0, "p99": 0 });
    }
    let passed = results
        .iter()
        .filter(|r| r["hasFailures"] != true && r["hasErrors"] != true)
        .count();
    let times: Vec<f64> = results.iter().filter_map(|r| r["responseTime"].as_f64()).collect();
    let stat = |aggregation: &str| aggregate(&times, aggregation).map_or(0.0, |v| round(v, 2));
    json!({
        "successRatio": round(passed as f64 / results.len() as f64, 4),
        "avg": stat("avg"),
        "p95": stat("p95"),
        "p99": stat("p99"),
    })
}

async fn reporting(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let window = report_window(&params, REPORT_RANGES)?;
    let tags = params.many("filterByTags");
    let deactivated = params.bool("deactivated")?;
    let report = app.store.transaction(|tx| {
        sessions::settle_due(tx, &caller.account)?;
        let mut report = Vec::new();
        for row in tx.all(&caller.account, Kind::Check.section())? {
            let check = effective_check(tx, &caller.account, row.body)?;
            let is_deactivated = check["activated"] == false;
            if !has_tags(&check, &tags) || deactivated.is_some_and(|d| d != is_deactivated) {
                continue;
            }
            let results = final_results(tx, &caller.account, &row.id, window)?;
            let rollups = crate::retention::rollups(tx, &caller.account, &row.id, window)?;
            report.push(json!({
                "name": check["name"],
                "checkId": row.id,
                "checkType": check["checkType"],
                "deactivated": is_deactivated,
                "tags": check.get("tags").cloned().unwrap_or(json!([])),
                "aggregate": crate::retention::report(&results, &rollups),
            }));
        }
        Ok::<_, ApiError>(report)
    })?;
    Ok(axum::Json(Value::Array(report)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_follow_the_suffix_rule() {
        assert!(parse_metric("responseTime", Endpoint::Api).is_some());
        assert!(parse_metric("dns_p95", Endpoint::Api).is_some());
        assert!(parse_metric("availability", Endpoint::Browser).is_some());
        assert!(parse_metric("availability_avg", Endpoint::Api).is_none());
        assert!(parse_metric("retries_sum", Endpoint::Api).is_none());
        assert!(parse_metric("TTFB_avg", Endpoint::Api).is_none());
        assert!(parse_metric("TTFB_stddev", Endpoint::Browser).is_some());
        assert!(parse_metric("dns_p42", Endpoint::Api).is_none());
    }

    #[test]
    fn aggregates() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(aggregate(&values, "avg"), Some(5.5));
        assert_eq!(aggregate(&values, "median"), Some(5.0));
        assert_eq!(aggregate(&values, "p90"), Some(9.0));
        assert_eq!(aggregate(&values, "p99"), Some(10.0));
        assert_eq!(aggregate(&values, "sum"), Some(55.0));
        assert_eq!(aggregate(&values, "min"), Some(1.0));
        assert_eq!(aggregate(&[], "max"), None);
        assert_eq!(aggregate(&[2.0, 4.0], "stddev"), Some(1.0));
    }

    #[test]
    fn quick_ranges_follow_the_calendar() {
        // Wednesday 2026-03-18 12:00 UTC.
        let now = midnight(NaiveDate::from_ymd_opt(2026, 3, 18).unwrap()) + Span::hours(12);
        let day = |y, m, d| midnight(NaiveDate::from_ymd_opt(y, m, d).unwrap());
        assert_eq!(quick_range("thisWeek", now), (day(2026, 3, 16), now));
        assert_eq!(quick_range("lastWeek", now), (day(2026, 3, 9), day(2026, 3, 16)));
        assert_eq!(quick_range("thisMonth", now), (day(2026, 3, 1), now));
        assert_eq!(quick_range("lastMonth", now), (day(2026, 2, 1), day(2026, 3, 1)));
        assert_eq!(quick_range("last24Hrs", now), (now - Span::hours(24), now));
        let january = day(2026, 1, 10);
        assert_eq!(quick_range("lastMonth", january).0, day(2025, 12, 1));
    }

    #[test]
    fn aggregate_is_zero_without_results() {
        assert_eq!(
            report_aggregate(&[]),
            json!({ "successRatio": 0, "avg": 0, "p95": 0, "p99": 0 })
        );
        let results = [
            json!({ "hasFailures": false, "responseTime": 100.0 }),
            json!({ "hasFailures": true, "responseTime": 300.0 }),
        ];
        assert_eq!(report_aggregate(&results)["successRatio"], json!(0.5));
        assert_eq!(report_aggregate(&results)["avg"], json!(200.0));
    }
}
