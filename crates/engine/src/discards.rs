//! What a plan's deletes of checks throw away: their results of the last
//! 30 days (issue 20, item 3), read with ONE reporting request
//! (`GET /v1/reporting?quickRange=last30Days`) for all of them.
//!
//! The report (spec 2.16) carries per check an aggregate (success ratio,
//! average, p95, p99) but no count of results, and the result listing
//! answers 6 hours at a time, one check per request. So the count is an
//! estimate, said as one: the check's scheduled runs in 30 days (after its
//! group, `monform_model::runs`) for the part of the 30 days since it was
//! created, counted as if it ran all along (a check deactivated since
//! counts its schedule). Only for checks the report says have results
//! (ARCHITECTURE.md, "Choices where the spec is silent").

use chrono::{DateTime, Utc};
use monform_api::{Client, ReportEntry};
use monform_model::{Address, Kind};
use serde_json::Value;

use crate::actual::Actual;
use crate::budget::RemoteGroups;
use crate::plan::{Action, Plan};
pub use crate::plan::{Discard, Discarded};

/// The report's name of the range.
pub const RANGE: &str = "last30Days";
const RANGE_SECONDS: i64 = 30 * 24 * 3600;

/// The deleted checks of `plan` and their remote ids.
fn deleted_checks(plan: &Plan) -> Vec<(&Address, &str)> {
    plan.changes
        .iter()
        .filter(|c| c.action == Action::Delete && c.address.kind == Kind::Check)
        .filter_map(|c| Some((&c.address, c.remote_id.as_deref()?)))
        .collect()
}

/// One report request for every check the plan deletes; none when it deletes none.
pub async fn discarded(client: &Client, plan: &Plan, actual: &Actual) -> Discarded {
    let deleted = deleted_checks(plan);
    if deleted.is_empty() {
        return Discarded::Nothing;
    }
    match client.reporting(RANGE).await {
        Ok(report) => Discarded::Known(lines_of(&deleted, &report, actual, Utc::now())),
        Err(error) => Discarded::Unknown(error.to_string()),
    }
}

/// Each deleted check's line of the report, if it has results, and their estimated count.
fn lines_of(deleted: &[(&Address, &str)], report: &[ReportEntry], actual: &Actual, now: DateTime<Utc>) -> Vec<Discard> {
    let groups = RemoteGroups::new(actual);
    deleted
        .iter()
        .map(|(address, id)| {
            let line = report
                .iter()
                .find(|e| e.check_id == *id)
                .filter(|e| has_results(e))
                .cloned();
            let body = actual
                .owned
                .get(*address)
                .into_iter()
                .chain(actual.duplicates.iter().filter(|(a, _)| a == *address).map(|(_, r)| r))
                .find(|r| r.id == *id)
                .map(|r| r.body());
            let estimated = match (&line, body) {
                // The report saw results: at least one.
                (Some(_), Some(body)) => estimate(&groups, &body, now).max(1),
                _ => 0,
            };
            Discard {
                address: (*address).clone(),
                report: line,
                estimated,
            }
        })
        .collect()
}

/// Scheduled runs of the check in the range, since it was created.
fn estimate(groups: &RemoteGroups, check: &Value, now: DateTime<Utc>) -> u64 {
    let mut running = check.clone();
    running["activated"] = Value::Bool(true);
    let per_range = groups.runs_per_month(&running);
    let lived = check["created_at"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map_or(RANGE_SECONDS, |created| {
            (now - created.with_timezone(&Utc)).num_seconds()
        })
        .clamp(0, RANGE_SECONDS);
    let scaled = u128::from(per_range) * lived as u128 / RANGE_SECONDS as u128;
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

/// The service answers all zeros for a check without results in the range;
/// a run always takes some time, so a real result makes the average positive.
/// (`status` shows such a check's figures as "no data".)
pub(crate) fn has_results(entry: &ReportEntry) -> bool {
    entry.success_ratio.is_some_and(|r| r > 0.0) || entry.avg.is_some_and(|a| a > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_api::Remote;
    use serde_json::json;

    fn entry(id: &str, ratio: f64, avg: f64) -> ReportEntry {
        ReportEntry {
            check_id: id.into(),
            name: String::new(),
            check_type: "API".into(),
            deactivated: false,
            tags: Vec::new(),
            success_ratio: Some(ratio),
            avg: Some(avg),
            p95: Some(avg),
            p99: Some(avg),
        }
    }

    #[test]
    fn only_checks_with_results_have_a_line_and_an_estimate() {
        let a: Address = "checks.a".parse().unwrap();
        let b: Address = "checks.b".parse().unwrap();
        let c: Address = "checks.c".parse().unwrap();
        let now = DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut actual = Actual::default();
        // Ten days old, every minute in one of two locations: 14,400 runs.
        let young = json!({"id": "1", "frequency": 1, "locations": ["a", "b"], "activated": false,
            "created_at": "2026-11-13T00:00:00.000Z"});
        actual.owned.insert(a.clone(), Remote::new(Kind::Check, &young));
        actual
            .owned
            .insert(b.clone(), Remote::new(Kind::Check, &json!({"id": "2", "frequency": 1})));
        let report = [entry("1", 0.5, 12.0), entry("2", 0.0, 0.0)];
        let lines = lines_of(&[(&a, "1"), (&b, "2"), (&c, "3")], &report, &actual, now);
        assert_eq!(lines[0].report.as_ref().map(|e| e.check_id.as_str()), Some("1"));
        assert_eq!(lines[0].estimated, 14_400);
        assert_eq!((lines[1].report.as_ref(), lines[1].estimated), (None, 0));
        assert_eq!((lines[2].report.as_ref(), lines[2].estimated), (None, 0));
    }
}
