//! Per-check analytics and the report (spec 2.18, 2.19): metrics, buckets
//! and aggregates over a check's FINAL results (and, past the raw
//! retention, its hourly roll-ups). The request side (parameters and the
//! response) is `routes::reads`, where the choices are listed.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Duration as Span, NaiveDate, Utc};
use monform_model::Kind;
use monform_model::resources::CheckType;
use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::app::AppState;
use crate::clock::{self, iso};
use crate::domain::compact;
use crate::domain::objects::load;
use crate::domain::retention;
use crate::domain::sessions::lifecycle::settle_due;
use crate::domain::sessions::results::CHECK_RESULTS;
use crate::domain::stats::{aggregate, round};
use crate::error::{ApiError, ApiResult};
use crate::store::Objects;

pub use monform_model::reports::{ANALYTICS_RANGES, REPORT_RANGES};
pub use report::report;

mod report;

pub fn midnight(date: NaiveDate) -> DateTime<Utc> {
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

/// A check's FINAL, not cancelled results in the window (stored and
/// compacted), newest first.
pub fn final_results(db: &Connection, account: &str, check_id: &str, window: (i64, i64)) -> ApiResult<Vec<Value>> {
    let check = db.get(account, Kind::Check.section(), check_id)?.unwrap_or(Value::Null);
    Ok(stored_and_compacted(db, account, check_id, &check, window)?
        .into_iter()
        .rev()
        .map(|(_, r)| r)
        .filter(|r| r["resultType"] == "FINAL" && r["isCancelled"] != true)
        .collect())
}

/// Every result of a check in `from..to` with its time: the stored ones
/// and the compacted ones (`compact`) as records, oldest first.
pub fn stored_and_compacted(
    db: &Connection,
    account: &str,
    check_id: &str,
    check: &Value,
    (from, to): (i64, i64),
) -> rusqlite::Result<Vec<(i64, Value)>> {
    let compacted = compact::records(db, account, check_id, check, (from, to))?;
    let stored = db.records_timed(account, CHECK_RESULTS, Some(check_id), from, to)?;
    if compacted.is_empty() {
        return Ok(stored.into_iter().rev().collect());
    }
    let mut all: Vec<(i64, Value)> = stored.into_iter().rev().chain(compacted).collect();
    // Stable: stored results of one millisecond keep their order.
    all.sort_by_key(|(ts, _)| *ts);
    Ok(all)
}

// ---------------------------------------------------------------------------
// Analytics.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Api,
    Browser,
}

pub const SUFFIXES: &[&str] = &[
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
    pub fn bases(self) -> &'static [&'static str] {
        match self {
            Endpoint::Api => API_BASES,
            Endpoint::Browser => BROWSER_BASES,
        }
    }
    pub fn check_type(self) -> CheckType {
        match self {
            Endpoint::Api => CheckType::Api,
            Endpoint::Browser => CheckType::Browser,
        }
    }
    pub fn group_by(self) -> &'static [&'static str] {
        match self {
            Endpoint::Api => &["runLocation", "statusCode"],
            Endpoint::Browser => &["runLocation", "pageIndex"],
        }
    }
}

/// A requested metric: its base and aggregation suffix.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub base: &'static str,
    pub suffix: Option<&'static str>,
}

/// Spec 2.18: the bases, `availability` and `retries`; each base also with
/// every suffix.
pub fn parse_metric(name: &str, endpoint: Endpoint) -> Option<Metric> {
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

pub fn metric_metadata(metric: &Metric) -> Value {
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

/// What an analytics request asks for.
pub struct AnalyticsQuery {
    pub endpoint: Endpoint,
    pub metrics: Vec<Metric>,
    pub window: (i64, i64),
    /// Bucket width in minutes (`None`: one bucket for the window).
    pub interval: Option<i64>,
    /// `success` and/or `failure` (empty: both).
    pub statuses: Vec<String>,
    pub group_by: Option<String>,
}

/// The check and its rows: one per bucket and group, each with the group's
/// key and every metric (null where the bucket has no sample).
pub fn analytics(app: &AppState, account: &str, id: &str, query: &AnalyticsQuery) -> ApiResult<(Value, Vec<Value>)> {
    let (check, results) = app.store.transaction(|tx| {
        let check = load(tx, account, Kind::Check, id)?;
        if CheckType::of_check(&check) != Ok(query.endpoint.check_type()) {
            return Err(ApiError::invalid(
                "id",
                format!(
                    "check {id} is a {} check; this endpoint serves {} checks",
                    check["checkType"].as_str().unwrap_or("?"),
                    query.endpoint.check_type()
                ),
            ));
        }
        settle_due(tx, account)?;
        let mut results = final_results(tx, account, id, query.window)?;
        // Past the raw retention, the hourly roll-ups stand in for the results.
        let rollups = retention::rollups(tx, account, id, query.window)?;
        results.extend(rollups.iter().flat_map(retention::Rollup::as_results));
        Ok::<_, ApiError>((check, results))
    })?;

    // Samples by (group sort key, bucket start): the group's key and (result, page) pairs.
    let mut buckets: BTreeMap<(String, i64), (Value, Vec<Sample<'_>>)> = BTreeMap::new();
    for result in &results {
        let failed = result["hasFailures"] == true || result["hasErrors"] == true;
        if !query.statuses.is_empty() && !query.statuses.iter().any(|s| (s == "failure") == failed) {
            continue;
        }
        // A roll-up's hour may start before the window.
        let ts = clock::parse(result["stoppedAt"].as_str().unwrap_or_default())
            .map_or(query.window.0, |t| t.timestamp_millis())
            .max(query.window.0);
        let bucket = match query.interval {
            Some(minutes) => {
                let width = minutes * 60_000;
                query.window.0 + (ts - query.window.0).div_euclid(width) * width
            }
            None => query.window.0,
        };
        let keys: Vec<(Value, Option<usize>)> = match query.group_by.as_deref() {
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
            if let Some(group) = &query.group_by {
                row.insert(group.clone(), key);
            }
            for metric in &query.metrics {
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
    Ok((check, rows))
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
}
