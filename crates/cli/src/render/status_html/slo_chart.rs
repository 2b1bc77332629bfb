//! An SLO's section of the HTML status report: its figures (the same
//! words as `slo status`) and one inline SVG with two panels over its
//! window: the error budget left so far (a line from the window's start)
//! and the SLI of each day (bars, against the target). The SVG holds
//! numbers, dates and fixed words only, never text from the files, so it
//! is written here and put into the page as it is; no script, no font or
//! file fetched.

use monform_engine::ops::SloReport;
use monform_slo::Part;
use serde::Serialize;

use crate::render::slo::{budget_text, percent};

/// The chart's box, in SVG user units.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 246.0;
/// Room for the axis labels on the left.
const LEFT: f64 = 46.0;
const RIGHT: f64 = 8.0;
/// Each panel's plot: its top and its height.
const BUDGET_TOP: f64 = 20.0;
const SLI_TOP: f64 = 140.0;
const PANEL: f64 = 80.0;

const MS_PER_DAY: i64 = 86_400_000;

/// One SLO's section, as the template shows it.
#[derive(Debug, Serialize)]
pub struct Objective {
    pub address: String,
    pub name: String,
    pub target: String,
    pub window: String,
    pub sli: String,
    pub budget_left: String,
    pub good: u64,
    pub total: u64,
    /// `good`, `poor` (budget spent) or `none` (no data), for the colour.
    pub standing: &'static str,
    /// The page-severity pair that fires, in words.
    pub burning: Option<String>,
    /// Each alert window's burn rate: `5m 0.00x`.
    pub burn_rates: Vec<String>,
    pub unapplied: Vec<String>,
    /// The chart (numbers and fixed words only: see the module's header).
    pub svg: String,
}

/// The section of `report` (whose `history` was asked for).
pub fn objective(report: &SloReport) -> Objective {
    let status = &report.status;
    Objective {
        address: report.address.to_string(),
        name: report.name.clone(),
        target: format!("{}%", report.target_percent),
        window: report.objective.window.to_string(),
        sli: percent(status.sli),
        budget_left: budget_text(status.budget_left),
        good: status.tally.good,
        total: status.tally.total,
        standing: match status.budget_left {
            None => "none",
            Some(left) if left > 0.0 => "good",
            Some(_) => "poor",
        },
        burning: status
            .firing
            .iter()
            .find(|pair| pair.severity == monform_slo::Severity::Page)
            .map(|pair| {
                format!(
                    "burning fast: {}x the budget's rate over {} and {}",
                    pair.factor,
                    monform_slo::format_duration(pair.long),
                    monform_slo::format_duration(pair.short)
                )
            }),
        burn_rates: status
            .burn_rates
            .iter()
            .map(|w| {
                format!(
                    "{} {}",
                    monform_slo::format_duration(w.window),
                    w.burn_rate.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}x"))
                )
            })
            .collect(),
        unapplied: report.unapplied.iter().map(ToString::to_string).collect(),
        svg: chart(&report.history, report.target_percent),
    }
}

/// `2026-10-07` for a day, `10-07 12:30` for a shorter part.
fn label(part: &Part, daily: bool) -> String {
    let at = chrono::DateTime::from_timestamp_millis(part.interval.start).unwrap_or_default();
    match daily {
        true => at.format("%Y-%m-%d").to_string(),
        false => at.format("%m-%d %H:%M").to_string(),
    }
}

/// The two panels over `parts` (oldest first).
pub fn chart(parts: &[Part], target_percent: f64) -> String {
    // Days when the history is by day (the rule is `monform_slo`'s).
    let daily = match (parts.first(), parts.last()) {
        (Some(first), Some(last)) => {
            monform_slo::part_length_ms(monform_slo::Interval {
                start: first.interval.start,
                end: last.interval.end,
            }) == MS_PER_DAY
        }
        _ => false,
    };
    let n = parts.len().max(1) as f64;
    let plot = WIDTH - LEFT - RIGHT;
    let slot = plot / n;
    let x_mid = |i: usize| LEFT + (i as f64 + 0.5) * slot;
    let last_left = parts.iter().rev().find_map(|p| p.budget_left);
    let mut svg = format!(
        "<svg class=\"slo\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"error budget left over the window{}, and the SLI per {}\">",
        last_left.map_or_else(String::new, |left| format!(", now {:.1}%", left * 100.0)),
        if daily { "day" } else { "part" },
    );

    // The budget left so far: 100% at the top, 0% (or -100% once
    // overspent: lower is drawn at the bottom) below.
    let low = if parts.iter().any(|p| p.budget_left.is_some_and(|v| v < 0.0)) {
        -1.0
    } else {
        0.0
    };
    let budget_y = |v: f64| BUDGET_TOP + (1.0 - v.clamp(low, 1.0)) / (1.0 - low) * PANEL;
    svg.push_str(&format!(
        "<text x=\"{LEFT}\" y=\"{}\">error budget left</text>",
        BUDGET_TOP - 6.0
    ));
    for (value, text) in [(1.0, "100%"), (0.0, "0%"), (-1.0, "-100%")] {
        if value < low {
            continue;
        }
        let y = budget_y(value);
        svg.push_str(&format!(
            "<line class=\"rule\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/><text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{text}</text>",
            WIDTH - RIGHT,
            LEFT - 4.0,
            y + 3.0
        ));
    }
    let points: Vec<(usize, f64)> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.budget_left.map(|v| (i, v)))
        .collect();
    if points.len() > 1 {
        let line: Vec<String> = points
            .iter()
            .map(|(i, v)| format!("{:.1},{:.1}", x_mid(*i), budget_y(*v)))
            .collect();
        svg.push_str(&format!("<polyline class=\"budget\" points=\"{}\"/>", line.join(" ")));
    }
    for (i, value) in &points {
        svg.push_str(&format!(
            "<circle class=\"budget\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"><title>to the end of {}: {:.1}% of the error budget left</title></circle>",
            x_mid(*i),
            budget_y(*value),
            label(&parts[*i], daily),
            value * 100.0
        ));
    }

    // The SLI of each part: bars from the floor (the budget spent twice
    // over, as the terminal's sparkline) to 100%, the target dashed.
    let floor = (1.0 - 2.0 * (100.0 - target_percent) / 100.0).max(0.0);
    let target = target_percent / 100.0;
    let sli_y = |v: f64| SLI_TOP + (1.0 - (v.clamp(floor, 1.0) - floor) / (1.0 - floor)) * PANEL;
    svg.push_str(&format!(
        "<text x=\"{LEFT}\" y=\"{}\">SLI per {}</text>",
        SLI_TOP - 6.0,
        if daily { "day" } else { "part" }
    ));
    for (value, class) in [(1.0, "rule"), (target, "target"), (floor, "rule")] {
        let y = sli_y(value);
        svg.push_str(&format!(
            "<line class=\"{class}\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/><text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}%</text>",
            WIDTH - RIGHT,
            LEFT - 4.0,
            y + 3.0,
            trim(value * 100.0)
        ));
    }
    let bar = (slot - 2.0).max(1.0);
    for (i, part) in parts.iter().enumerate() {
        let Some(sli) = part.sli else {
            continue;
        };
        // At least a hairline, so a part at the floor still shows.
        let top = sli_y(sli).min(SLI_TOP + PANEL - 1.0);
        svg.push_str(&format!(
            "<rect class=\"{}\" x=\"{:.1}\" y=\"{top:.1}\" width=\"{bar:.1}\" height=\"{:.1}\"><title>{}: {:.3}% good ({} of {})</title></rect>",
            if sli >= target { "good" } else { "poor" },
            x_mid(i) - bar / 2.0,
            SLI_TOP + PANEL - top,
            label(part, daily),
            sli * 100.0,
            thousands(part.tally.good),
            thousands(part.tally.total)
        ));
    }
    if let (Some(first), Some(last)) = (parts.first(), parts.last()) {
        let y = SLI_TOP + PANEL + 16.0;
        svg.push_str(&format!(
            "<text class=\"axis\" x=\"{LEFT}\" y=\"{y}\" text-anchor=\"start\">{}</text><text class=\"axis\" x=\"{:.1}\" y=\"{y}\" text-anchor=\"end\">{}</text>",
            label(first, daily),
            WIDTH - RIGHT,
            label(last, daily)
        ));
    }
    svg.push_str("</svg>");
    // An element a line: a report's source (and its snapshot) stays readable.
    svg.replace("><", ">\n<")
}

/// `99.5`, `99`, `100`: no trailing zeros.
fn trim(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn thousands(n: u64) -> String {
    crate::render::budget::thousands(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_slo::{Interval, Tally};

    fn part(start: i64, good: u64, total: u64, left: Option<f64>) -> Part {
        Part {
            interval: Interval {
                start,
                end: start + MS_PER_DAY,
            },
            tally: Tally {
                good,
                total,
                missing_slices: 0,
            },
            sli: (total > 0).then(|| good as f64 / total as f64),
            budget_left: left,
        }
    }

    /// 2026-10-01T00:00:00Z.
    const OCT_1: i64 = 1_790_812_800_000;

    #[test]
    fn two_days_one_with_an_outage() {
        // Target 98%: the floor is 96%. Day 2: 1,410 of 1,440, 97.917%,
        // below the target: a poor bar whose top is 41.7 units below 100%
        // ((1 - 0.97917) / 0.04 * 80). Budget left so far: 100%, then
        // 1 - (30 / 2,880) / 0.02 = 47.9%, 41.7 units below the top too.
        let parts = [
            part(OCT_1, 1_440, 1_440, Some(1.0)),
            part(OCT_1 + MS_PER_DAY, 1_410, 1_440, Some(1.0 - (30.0 / 2_880.0) / 0.02)),
        ];
        insta::assert_snapshot!(chart(&parts, 98.0));
    }

    #[test]
    fn an_overspent_budget_draws_down_to_minus_100_percent() {
        let parts = [
            part(OCT_1, 0, 0, None),
            part(OCT_1 + MS_PER_DAY, 50, 100, Some(-24.0)),
            part(OCT_1 + 2 * MS_PER_DAY, 100, 100, Some(-11.5)),
        ];
        let svg = chart(&parts, 98.0);
        assert!(svg.contains(">-100%</text>"), "{svg}");
        assert!(svg.contains("now -1150.0%"), "{svg}");
        // The day without data has no bar; the others do.
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        assert!(!svg.contains("<script") && !svg.contains("href"), "{svg}");
    }
}
