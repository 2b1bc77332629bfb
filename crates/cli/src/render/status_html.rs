//! `monform status --format html`: one self-contained HTML file (inline CSS
//! and SVG, nothing fetched) with the project's checks grouped by check
//! group: success ratio as a bar, p95, a response-time sparkline, the last
//! status; and, when the files declare SLOs, a section per SLO with its
//! figures and a chart of its window (`status_html/slo_chart.rs`). The page is
//! `templates/status_report.html` (minijinja, HTML auto-escaped); the SVG
//! geometry is computed here.

use minijinja::Environment;
use monform_engine::ops::CheckStatus;
use serde::Serialize;

mod slo_chart;

pub use slo_chart::{Objective, objective};

/// The sparkline's box, in SVG user units.
const SPARK_WIDTH: f64 = 160.0;
const SPARK_HEIGHT: f64 = 32.0;

/// The checks of one check group (or of none).
#[derive(Debug, Serialize)]
pub struct Card {
    pub group: Option<String>,
    pub checks: Vec<Item>,
}

#[derive(Debug, Serialize)]
pub struct Item {
    /// The check as `--format json` shows it (`status::json_value`).
    #[serde(flatten)]
    pub row: serde_json::Value,
    /// The check, for ordering the card.
    #[serde(skip)]
    pub check: CheckStatus,
    /// Success ratio in percent, for the bar (0 without figures).
    pub percent: f64,
    pub bar_class: &'static str,
    /// SVG polyline points, empty when fewer than two samples.
    pub points: String,
    pub samples: usize,
    pub max_ms: Option<f64>,
}

/// Adds `check` (with its response-time `series`, oldest first) to the
/// card of its group.
pub fn place(cards: &mut Vec<Card>, check: CheckStatus) {
    let percent = check.success_ratio.map_or(0.0, |r| (r * 100.0).clamp(0.0, 100.0));
    let bar_class = match check.success_ratio {
        Some(r) if r >= 0.99 => "good",
        Some(r) if r >= 0.95 => "fair",
        Some(_) => "poor",
        None => "none",
    };
    let (points, samples, max_ms) = sparkline(&check.series);
    let group = check.group.clone();
    let item = Item {
        row: super::status::json_value(&check),
        check,
        percent,
        bar_class,
        points,
        samples,
        max_ms,
    };
    match cards.iter_mut().find(|c| c.group == group) {
        Some(card) => card.checks.push(item),
        None => cards.push(Card {
            group,
            checks: vec![item],
        }),
    }
}

/// Polyline points of `series` scaled into the sparkline's box (gaps
/// skipped), the number of samples and the largest.
fn sparkline(series: &[Option<f64>]) -> (String, usize, Option<f64>) {
    let samples: Vec<(usize, f64)> = series
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|v| v.is_finite()).map(|v| (i, v)))
        .collect();
    let max = samples
        .iter()
        .map(|(_, v)| *v)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    if samples.len() < 2 {
        return (String::new(), samples.len(), max);
    }
    let top = max.unwrap_or(1.0).max(1.0);
    let step = SPARK_WIDTH / (series.len().saturating_sub(1).max(1) as f64);
    let points = samples
        .iter()
        .map(|(i, v)| {
            let x = *i as f64 * step;
            let y = SPARK_HEIGHT - 2.0 - (v / top) * (SPARK_HEIGHT - 4.0);
            format!("{x:.1},{y:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ");
    (points, samples.len(), max)
}

/// The whole HTML file.
pub fn render(
    project: &str,
    range: &str,
    generated: &str,
    summary: &str,
    mut cards: Vec<Card>,
    objectives: &[Objective],
) -> Result<String, minijinja::Error> {
    // Named groups in order, the checks of no group last; failing checks
    // first within each.
    cards.sort_by(|a, b| (a.group.is_none(), &a.group).cmp(&(b.group.is_none(), &b.group)));
    for card in &mut cards {
        let mut rows: Vec<CheckStatus> = card.checks.iter().map(|c| c.check.clone()).collect();
        super::status::sort(&mut rows);
        card.checks
            .sort_by_key(|c| rows.iter().position(|r| r.address == c.check.address));
    }
    let mut environment = Environment::new();
    environment.add_template("status_report.html", include_str!("../../templates/status_report.html"))?;
    let total: usize = cards.iter().map(|c| c.checks.len()).sum();
    environment
        .get_template("status_report.html")?
        .render(minijinja::context! {
            project => project,
            range => range,
            cards => cards,
            total => total,
            summary => summary,
            width => SPARK_WIDTH,
            height => SPARK_HEIGHT,
            generated => generated,
            objectives => objectives,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(address: &str, ratio: Option<f64>, group: Option<&str>, series: Vec<Option<f64>>) -> CheckStatus {
        CheckStatus {
            address: address.parse().expect("an address"),
            name: format!("Check {address}"),
            check_type: Some(monform_model::resources::CheckType::Api),
            success_ratio: ratio,
            p95: Some(120.0),
            p99: None,
            avg: None,
            last_status: Some(monform_engine::ops::LastRun::Status(monform_model::RunStatus::Passed)),
            group: group.map(str::to_owned),
            series,
        }
    }

    #[test]
    fn sparklines_scale_into_the_box_and_skip_gaps() {
        let (points, samples, max) = sparkline(&[Some(100.0), None, Some(50.0), Some(0.0)]);
        assert_eq!(points, "0.0,2.0 106.7,16.0 160.0,30.0");
        assert_eq!((samples, max), (3, Some(100.0)));
        assert_eq!(sparkline(&[Some(5.0)]).0, "");
    }

    #[test]
    fn checks_are_grouped_named_groups_first() {
        let mut cards = Vec::new();
        place(&mut cards, row("checks.b", Some(0.5), None, vec![]));
        place(
            &mut cards,
            row("checks.a", Some(1.0), Some("Web"), vec![Some(1.0), Some(2.0)]),
        );
        let html = render("shop", "last24Hours", "2026-11-23 10:00 UTC", "2 checks", cards, &[]).unwrap();
        let web = html.find(">Web</h2>").unwrap();
        let none = html.find(">Checks without a group</h2>").unwrap();
        assert!(web < none, "{html}");
        assert!(html.contains("<polyline"), "{html}");
        assert!(html.contains("width: 50.0%"), "{html}");
        assert!(
            !html.contains("http://") && !html.contains("https://") && !html.contains("<script"),
            "self-contained: {html}"
        );
    }
}
