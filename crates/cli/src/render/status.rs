//! `monform status` output: a table of the project's checks, or JSON.

use serde::Serialize;

/// One check of the project with its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub address: String,
    pub name: String,
    pub check_type: String,
    /// Fraction 0..1; `None` when the report does not list the check.
    pub success_ratio: Option<f64>,
    /// Milliseconds.
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub avg: Option<f64>,
    /// PASSED, FAILED, DEGRADED, ...; `None` without a recent result;
    /// `MISSING` when the check no longer exists remotely.
    pub last_status: Option<String>,
}

/// How a check stands by its last status, worst first: the order of the
/// table (failing checks first, whatever their address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Standing {
    /// FAILED, TIMED_OUT, or MISSING (deleted outside monform).
    Failing,
    Degraded,
    Passing,
    /// No result in the last 6 hours.
    Unknown,
}

impl Row {
    pub fn standing(&self) -> Standing {
        match self.last_status.as_deref() {
            None => Standing::Unknown,
            Some("PASSED") => Standing::Passing,
            Some("DEGRADED") => Standing::Degraded,
            Some(_) => Standing::Failing,
        }
    }
}

/// Failing checks first, then degraded ones, then the rest; by address within.
pub fn sort(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        let rank = |r: &Row| match r.standing() {
            Standing::Failing => 0,
            Standing::Degraded => 1,
            Standing::Passing | Standing::Unknown => 2,
        };
        (rank(a), &a.address).cmp(&(rank(b), &b.address))
    });
}

/// `3 checks: 1 failing, 1 degraded, 1 passing` (and how many have no
/// recent run), for the end of the table and the HTML report's header.
pub fn summary_line(rows: &[Row]) -> String {
    let count = |standing: Standing| rows.iter().filter(|r| r.standing() == standing).count();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut text = format!(
        "{}: {} failing, {} degraded, {} passing",
        plural(rows.len(), "check", "checks"),
        count(Standing::Failing),
        count(Standing::Degraded),
        count(Standing::Passing)
    );
    let unknown = count(Standing::Unknown);
    if unknown > 0 {
        text.push_str(&format!(", {} without a run in the last 6 hours", unknown));
    }
    text
}

fn percent(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_owned(), |r| format!("{:.2}%", r * 100.0))
}

fn millis(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |ms| format!("{} ms", ms.round() as i64))
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
pub fn human(rows: &[Row], color: bool) -> String {
    if rows.is_empty() {
        return "The project has no applied checks.\n".to_owned();
    }
    let header = ["ADDRESS", "NAME", "TYPE", "SUCCESS", "P95", "LAST"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.address.clone(),
                r.name.clone(),
                r.check_type.clone(),
                percent(r.success_ratio),
                millis(r.p95),
                r.last_status.clone().unwrap_or_else(|| "-".to_owned()),
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

    fn with_status(address: &str, status: Option<&str>) -> Row {
        Row {
            address: address.into(),
            name: address.into(),
            check_type: "API".into(),
            success_ratio: None,
            p95: None,
            p99: None,
            avg: None,
            last_status: status.map(str::to_owned),
        }
    }

    #[test]
    fn failing_checks_come_first_then_degraded() {
        let mut rows = vec![
            with_status("checks.a", Some("PASSED")),
            with_status("checks.b", None),
            with_status("checks.c", Some("DEGRADED")),
            with_status("checks.d", Some("TIMED_OUT")),
            with_status("checks.e", Some("FAILED")),
        ];
        sort(&mut rows);
        let order: Vec<&str> = rows.iter().map(|r| r.address.as_str()).collect();
        assert_eq!(order, ["checks.d", "checks.e", "checks.c", "checks.a", "checks.b"]);
        assert_eq!(summary_line(&rows[..1]), "1 check: 1 failing, 0 degraded, 0 passing");
    }

    #[test]
    fn aligns_columns_without_colour() {
        let rows = [
            Row {
                address: "checks.home".into(),
                name: "Home".into(),
                check_type: "URL".into(),
                success_ratio: Some(1.0),
                p95: Some(120.4),
                p99: Some(130.0),
                avg: Some(100.0),
                last_status: Some("PASSED".into()),
            },
            Row {
                address: "checks.orders-api".into(),
                name: "Orders API".into(),
                check_type: "API".into(),
                success_ratio: None,
                p95: None,
                p99: None,
                avg: None,
                last_status: None,
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
    }
}
