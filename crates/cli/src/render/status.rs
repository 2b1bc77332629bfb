//! `monform status` output: a table of the project's checks, or JSON (the
//! checks, their counts and the SLOs as `slo status --format json` shows
//! them). It renders the engine's `ops::CheckStatus` as it comes (no copy
//! of its own); the JSON output's shape is written here.

use monform_engine::ops::{CheckStatus, LastRun};
use monform_model::reports::QuickRange;
use serde_json::Value;

use super::slo::SloJson;

pub use monform_engine::ops::Standing;

/// How `check` stands by its last run (the engine's rule).
pub fn standing(check: &CheckStatus) -> Standing {
    check.standing()
}

/// Failing checks first, then degraded ones, then the rest; by address
/// (as written) within.
pub fn sort(checks: &mut [CheckStatus]) {
    checks.sort_by_cached_key(|check| {
        let rank = match standing(check) {
            Standing::Failing => 0,
            Standing::Degraded => 1,
            Standing::Passing | Standing::Unknown => 2,
        };
        (rank, check.address.to_string())
    });
}

/// One check as `--format json` and the HTML report's template show it:
/// success ratio a fraction 0..1, times in milliseconds; each `null` when
/// the check had no run in the range (or the report does not list it).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StatusRow")]
pub struct Row {
    /// `checks.NAME`.
    pub address: String,
    /// The report's name, else the files'.
    pub name: String,
    /// `API`, `BROWSER`...; empty when the report does not list the check.
    pub check_type: &'static str,
    /// A fraction, 0..1.
    pub success_ratio: Option<f64>,
    /// Milliseconds.
    pub p95: Option<f64>,
    /// Milliseconds.
    pub p99: Option<f64>,
    /// Milliseconds.
    pub avg: Option<f64>,
    /// The latest run's status (`PASSED`, `DEGRADED`, `FAILED`...), `MISSING` when the
    /// check was deleted outside monform; null without a recent run.
    pub last_status: Option<&'static str>,
}

/// `check` as its `--format json` row.
pub fn row(check: &CheckStatus) -> Row {
    Row {
        address: check.address.to_string(),
        name: check.name.clone(),
        check_type: check.check_type.map_or("", |t| t.as_str()),
        success_ratio: check.success_ratio,
        p95: check.p95,
        p99: check.p99,
        avg: check.avg,
        last_status: check.last_status.map(LastRun::as_str),
    }
}

/// [`row`] as a JSON value, for the HTML report's template.
pub fn json_value(check: &CheckStatus) -> Value {
    serde_json::to_value(row(check)).unwrap_or_default()
}

/// `monform status --format json`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Status")]
pub struct StatusJson {
    /// The window of the checks' figures (`last24Hours`, `last7Days`...).
    pub range: &'static str,
    /// How many checks stand how (the counts of the human table's last line).
    pub summary: Summary,
    /// Failing checks first, then degraded ones, then the rest; by address within.
    pub checks: Vec<Row>,
    /// When the SLOs were evaluated (milliseconds since the epoch); null without SLOs.
    pub evaluated_at: Option<i64>,
    /// Each SLO of the files (or those named), as `slo status --format json` shows it; empty without SLOs.
    pub slos: Vec<SloJson>,
}

/// The checks counted by how their last run stands.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StatusSummary")]
pub struct Summary {
    pub checks: usize,
    /// Last run failed or timed out, or the check was deleted outside monform.
    pub failing: usize,
    pub degraded: usize,
    pub passing: usize,
    /// No run in the last 6 hours.
    pub without_recent_run: usize,
}

/// How many of `checks` stand how.
pub fn summary(checks: &[CheckStatus]) -> Summary {
    let count = |wanted: Standing| checks.iter().filter(|r| standing(r) == wanted).count();
    Summary {
        checks: checks.len(),
        failing: count(Standing::Failing),
        degraded: count(Standing::Degraded),
        passing: count(Standing::Passing),
        without_recent_run: count(Standing::Unknown),
    }
}

/// `--format json`: the counts, every check as [`row`], the SLOs.
pub fn json_text(range: QuickRange, checks: &[CheckStatus], slos: Vec<SloJson>, now_ms: i64) -> String {
    let json = StatusJson {
        range: range.analytics_name(),
        summary: summary(checks),
        checks: checks.iter().map(row).collect(),
        evaluated_at: (!slos.is_empty()).then_some(now_ms),
        slos,
    };
    serde_json::to_string_pretty(&json).unwrap_or_default()
}

/// `3 checks: 1 failing, 1 degraded, 1 passing` (and how many have no
/// recent run), for the end of the table and the HTML report's header.
pub fn summary_line(rows: &[CheckStatus]) -> String {
    let counts = summary(rows);
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut text = format!(
        "{}: {} failing, {} degraded, {} passing",
        plural(counts.checks, "check", "checks"),
        counts.failing,
        counts.degraded,
        counts.passing
    );
    let unknown = counts.without_recent_run;
    if unknown > 0 {
        text.push_str(&format!(", {} without a run in the last 6 hours", unknown));
    }
    text
}

/// What a figure shows for a check without a run in the range: the
/// service's zeros would read as 0% success and 0 ms.
pub const NO_DATA: &str = "no data";

fn percent(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| NO_DATA.to_owned(), |r| format!("{:.2}%", r * 100.0))
}

fn millis(ms: Option<f64>) -> String {
    ms.map_or_else(|| NO_DATA.to_owned(), |ms| format!("{} ms", ms.round() as i64))
}

fn paint(status: &str, color: bool) -> String {
    if !color {
        return status.to_owned();
    }
    let code = match status {
        "PASSED" => "32",
        "DEGRADED" => "33",
        "-" => "2",
        _ => "31",
    };
    format!("\x1b[{code}m{status}\x1b[0m")
}

/// An aligned table with a header line.
pub fn human(rows: &[CheckStatus], color: bool) -> String {
    if rows.is_empty() {
        return "The project has no applied checks.\n".to_owned();
    }
    let header = ["ADDRESS", "NAME", "TYPE", "SUCCESS", "P95", "LAST"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.address.to_string(),
                r.name.clone(),
                r.check_type.map_or("", |t| t.as_str()).to_owned(),
                percent(r.success_ratio),
                millis(r.p95),
                r.last_status.map_or("-", LastRun::as_str).to_owned(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push = |row: [&str; 6], last: String| {
        let mut line = String::new();
        for (i, cell) in row.iter().take(5).enumerate() {
            let w = widths[i];
            // Numbers right-aligned.
            if i == 3 || i == 4 {
                line.push_str(&format!("{cell:>w$}  "));
            } else {
                line.push_str(&format!("{cell:<w$}  "));
            }
        }
        line.push_str(&last);
        out.push_str(line.trim_end());
        out.push('\n');
    };
    push(header, header[5].to_owned());
    for row in &cells {
        let refs = [
            row[0].as_str(),
            row[1].as_str(),
            row[2].as_str(),
            row[3].as_str(),
            row[4].as_str(),
            row[5].as_str(),
        ];
        push(refs, paint(&row[5], color));
    }
    out.push('\n');
    out.push_str(&summary_line(rows));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_model::RunStatus;

    fn with_status(address: &str, status: Option<RunStatus>) -> CheckStatus {
        CheckStatus {
            address: address.parse().expect("an address"),
            name: address.into(),
            check_type: Some(monform_model::resources::CheckType::Api),
            success_ratio: None,
            p95: None,
            p99: None,
            avg: None,
            last_status: status.map(LastRun::Status),
            group: None,
            series: Vec::new(),
        }
    }

    #[test]
    fn failing_checks_come_first_then_degraded() {
        let mut rows = vec![
            with_status("checks.a", Some(RunStatus::Passed)),
            with_status("checks.b", None),
            with_status("checks.c", Some(RunStatus::Degraded)),
            with_status("checks.d", Some(RunStatus::TimedOut)),
            with_status("checks.e", Some(RunStatus::Failed)),
        ];
        sort(&mut rows);
        let order: Vec<String> = rows.iter().map(|r| r.address.to_string()).collect();
        assert_eq!(order, ["checks.d", "checks.e", "checks.c", "checks.a", "checks.b"]);
        assert_eq!(summary_line(&rows[..1]), "1 check: 1 failing, 0 degraded, 0 passing");
    }

    #[test]
    fn aligns_columns_without_colour() {
        let rows = [
            CheckStatus {
                address: "checks.home".parse().expect("an address"),
                name: "Home".into(),
                check_type: Some(monform_model::resources::CheckType::Url),
                success_ratio: Some(1.0),
                p95: Some(120.4),
                p99: Some(130.0),
                avg: Some(100.0),
                last_status: Some(LastRun::Status(RunStatus::Passed)),
                group: None,
                series: Vec::new(),
            },
            CheckStatus {
                address: "checks.orders-api".parse().expect("an address"),
                name: "Orders API".into(),
                check_type: Some(monform_model::resources::CheckType::Api),
                success_ratio: None,
                p95: None,
                p99: None,
                avg: None,
                last_status: None,
                group: None,
                series: Vec::new(),
            },
        ];
        let text = human(&rows, false);
        assert!(!text.contains('\x1b'));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[4],
            "2 checks: 0 failing, 0 degraded, 1 passing, 1 without a run in the last 6 hours"
        );
        assert_eq!(lines[0].find("NAME"), lines[1].find("Home"));
        assert!(lines[1].contains("100.00%") && lines[1].contains("120 ms"));
        assert!(lines[2].ends_with('-'));
        assert!(lines[2].contains("no data"), "{text}");
    }
}
