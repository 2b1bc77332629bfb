//! What a plan's deletes of checks throw away: their results of the last
//! 30 days (issue 20, item 3), read with ONE reporting request
//! (`GET /v1/reporting?quickRange=last30Days`) for all of them.
//!
//! The report (spec 2.16) carries per check an aggregate (success ratio,
//! average, p95, p99) but no count of results, so this says whether a check
//! has results to lose and what they amount to, not how many there are
//! (ARCHITECTURE.md, "Choices where the spec is silent").

use monform_api::{Client, ReportEntry};
use monform_model::{Address, Kind};

use crate::plan::{Action, Plan};

/// The report's name of the range.
pub const RANGE: &str = "last30Days";

/// The results the plan's check deletes discard.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Discarded {
    /// The plan deletes no check (or was not asked).
    #[default]
    Nothing,
    /// The report could not be read: what it discards is unknown.
    Unknown(String),
    /// Per deleted check, its report line when it has results in the range.
    Known(Vec<(Address, Option<ReportEntry>)>),
}

/// The deleted checks of `plan` and their remote ids.
fn deleted_checks(plan: &Plan) -> Vec<(&Address, &str)> {
    plan.changes
        .iter()
        .filter(|c| c.action == Action::Delete && c.address.kind == Kind::Check)
        .filter_map(|c| Some((&c.address, c.remote_id.as_deref()?)))
        .collect()
}

/// One report request for every check the plan deletes; none when it deletes none.
pub async fn discarded(client: &Client, plan: &Plan) -> Discarded {
    let deleted = deleted_checks(plan);
    if deleted.is_empty() {
        return Discarded::Nothing;
    }
    match client.reporting(RANGE).await {
        Ok(report) => Discarded::Known(lines_of(&deleted, &report)),
        Err(error) => Discarded::Unknown(error.to_string()),
    }
}

/// Each deleted check's line of the report, if it has results.
fn lines_of(deleted: &[(&Address, &str)], report: &[ReportEntry]) -> Vec<(Address, Option<ReportEntry>)> {
    deleted
        .iter()
        .map(|(address, id)| {
            let line = report
                .iter()
                .find(|e| e.check_id == *id)
                .filter(|e| has_results(e))
                .cloned();
            ((*address).clone(), line)
        })
        .collect()
}

/// The service answers all zeros for a check without results in the range;
/// a run always takes some time, so a real result makes the average positive.
fn has_results(entry: &ReportEntry) -> bool {
    entry.success_ratio.is_some_and(|r| r > 0.0) || entry.avg.is_some_and(|a| a > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn only_checks_with_results_have_a_line() {
        let a: Address = "checks.a".parse().unwrap();
        let b: Address = "checks.b".parse().unwrap();
        let c: Address = "checks.c".parse().unwrap();
        let report = [entry("1", 0.5, 12.0), entry("2", 0.0, 0.0)];
        let lines = lines_of(&[(&a, "1"), (&b, "2"), (&c, "3")], &report);
        assert_eq!(lines[0].1.as_ref().map(|e| e.check_id.as_str()), Some("1"));
        assert_eq!(lines[1].1, None);
        assert_eq!(lines[2].1, None);
    }
}
