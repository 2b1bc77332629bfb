//! Read-only records: check results (stored, and compacted ones read back
//! as FINAL results: `domain::compact`), alert notifications, check alerts,
//! error groups, per-check analytics and the report (spec 2.14 to 2.19 and
//! section 4, "Results, alerts, errors" and "Analytics and reporting").
//!
//! Records are stored by whoever produces them (check results and error
//! groups by `domain::sessions`, alerts by `domain::alerts`, notifications
//! by `domain::notify`; roll-ups of old results by `domain::retention`)
//! with `ts` in UNIX milliseconds; these routes only read. Lists are newest
//! first. Reads finish due sessions first (`settle_due`) so their results
//! are seen. Analytics and the report are computed by `domain::analytics`.
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
//! - Analytics: `series` follows the reference (objects), not spec 2.18's
//!   `string[]` (docs/api-contract-notes.md): one entry per group (one in
//!   all without `groupBy`), `{<groupBy key>?, data: [rows]}`, each row
//!   `{"timestamp", <groupBy key>?, <metric>: value}` per bucket
//!   (`aggregationInterval` minutes from `from`, or the whole window). A metric without suffix is the average (`retries`: the sum);
//!   `availability` is the percentage of passing runs. Values are null when
//!   a bucket has no sample of that metric. `limit`/`page` page the rows.
//!   Only `from` given: `to` is now; only `to`: `from` is 24 h earlier.
//! - Report: `aggregate` is `{successRatio: 0, avg: 0, p95: 0, p99: 0}` when
//!   the window holds no result (the reference requires numbers);
//!   `successRatio` is a fraction (0..1, four decimals). `filterByTags`
//!   keeps checks carrying every tag given. Tags and activation are the
//!   check's with its group's settings applied.

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use monform_model::Kind;
use monform_model::resources::Location;
use serde_json::{Map, Value, json};

use super::Route;
use super::params::{
    MAX_LIMIT, NOTIFICATION_WINDOW_MS, Paging, RESULT_WINDOW_MS, bounded_window, one_of, optional_int, paged,
    report_window,
};
use crate::app::AppState;
use crate::auth::Caller;
use crate::body::Params;
use crate::clock::iso;
use crate::domain::alerts::CHECK_ALERTS;
use crate::domain::analytics;
use crate::domain::analytics::{
    ANALYTICS_RANGES, AnalyticsQuery, Endpoint, REPORT_RANGES, SUFFIXES, metric_metadata, parse_metric,
};
use crate::domain::checks::check_type_names;
use crate::domain::notify::ALERT_NOTIFICATIONS;
use crate::domain::objects::load;
use crate::domain::sessions::lifecycle::settle_due;
use crate::domain::sessions::results::{ERROR_GROUPS, RESULT_INTERNAL_FIELDS};
use crate::error::{ApiError, ApiResult};
use crate::store::{Filter, Objects};

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
                json!({ "type": "string", "enum": crate::domain::checks::check_type_names() }),
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
        let check_type = one_of(params, "checkType", &check_type_names())?;
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
            let check = load(tx, account, Kind::Check, check_id)?;
            settle_due(tx, account)?;
            let window = (self.from, self.to);
            let mut rows = analytics::stored_and_compacted(tx, account, check_id, &check, window)?;
            rows.retain(|(_, record)| self.matches(record));
            Ok(rows
                .into_iter()
                .rev()
                .map(|(_, record)| present_result(record))
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
    Ok(paging.respond(results))
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

async fn list_alert_notifications(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let window = bounded_window(&params, RESULT_WINDOW_MS, NOTIFICATION_WINDOW_MS)?;
    let channel = optional_int(&params, "alertChannelId", 1, i64::MAX)?;
    let failed = params.bool("hasFailures")?;
    let mut filters = Vec::new();
    if let Some(channel) = channel {
        filters.push(Filter {
            path: "$.alertChannelId",
            text: channel.to_string(),
            equal: true,
        });
    }
    if let Some(failed) = failed {
        filters.push(Filter {
            path: "$.status",
            text: "FAILURE".into(),
            equal: failed,
        });
    }
    let (rows, total) = app.store.lock().records_page(
        &caller.account,
        ALERT_NOTIFICATIONS,
        window,
        &filters,
        (paging.offset(), paging.limit),
    )?;
    Ok(paged(rows.into_iter().map(|r| r.body).collect(), total, paging))
}

async fn list_check_alerts(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let paging = Paging::from_params(&params)?;
    let window = bounded_window(&params, RESULT_WINDOW_MS, RESULT_WINDOW_MS)?;
    let (rows, total) = app.store.lock().records_page(
        &caller.account,
        CHECK_ALERTS,
        window,
        &[],
        (paging.offset(), paging.limit),
    )?;
    Ok(paged(rows.into_iter().map(|r| r.body).collect(), total, paging))
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
    Ok(paging.respond(rows.into_iter().map(|r| r.body).collect()))
}

// ---------------------------------------------------------------------------
// Windows for analytics and reports.
// ---------------------------------------------------------------------------

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

    let query = AnalyticsQuery {
        endpoint,
        metrics,
        window,
        interval,
        statuses,
        group_by,
    };
    let (check, rows) = analytics::analytics(&app, &caller.account, &id, &query)?;
    let (rows, _) = paging.slice(rows);
    let series = series(rows, query.group_by.as_deref());
    let metadata: Map<String, Value> = query
        .metrics
        .iter()
        .map(|m| (m.name.clone(), metric_metadata(m)))
        .collect();
    Ok(axum::Json(json!({
        "checkId": check["id"],
        "name": check["name"],
        "checkType": check["checkType"],
        "activated": check.get("activated").cloned().unwrap_or(json!(true)),
        "muted": check.get("muted").cloned().unwrap_or(json!(false)),
        "frequency": check.get("frequency").cloned().unwrap_or(json!(10)),
        "from": iso(query.window.0),
        "to": iso(query.window.1),
        "tags": check.get("tags").cloned().unwrap_or(json!([])),
        "series": series,
        "pagination": { "page": paging.page, "limit": paging.limit },
        "metadata": metadata,
    }))
    .into_response())
}

/// `series` as the reference's `AnalyticsSeriesEntry` objects: one entry
/// per group (one in all without `groupBy`), carrying the group's key
/// (`runLocation: "eu-west-1"`) and its rows in `data`, in the order the
/// groups first appear.
fn series(rows: Vec<Value>, group_by: Option<&str>) -> Vec<Value> {
    let mut entries: Vec<Value> = Vec::new();
    for row in rows {
        let key = group_by.map_or(Value::Null, |g| row[g].clone());
        let found = entries.iter_mut().find(|e| group_by.is_none_or(|g| e[g] == key));
        match found.and_then(|e| e["data"].as_array_mut()) {
            Some(data) => data.push(row),
            None => {
                let mut entry = json!({ "data": [row] });
                if let Some(g) = group_by {
                    entry[g] = key;
                }
                entries.push(entry);
            }
        }
    }
    entries
}

// ---------------------------------------------------------------------------
// Reporting.
// ---------------------------------------------------------------------------

async fn reporting(State(app): State<AppState>, caller: Caller, params: Params) -> ApiResult<Response> {
    let window = report_window(&params, REPORT_RANGES)?;
    let tags = params.many("filterByTags");
    let deactivated = params.bool("deactivated")?;
    let report = analytics::report(&app, &caller.account, window, &tags, deactivated)?;
    Ok(axum::Json(Value::Array(report)).into_response())
}
