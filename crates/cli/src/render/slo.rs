//! `monform slo status` and `monform gate` as text: a table per SLO with
//! its windows' burn rates and a sparkline of its SLI (human), the same
//! as JSON (and the gate's cache), and Markdown for a pull request.

use monform_engine::ops::SloReport;
use serde_json::{Value, json};

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "no data".to_owned(), |v| format!("{:.3}%", v * 100.0))
}

fn rate(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}x"))
}

/// Eight levels of a block sparkline; a gap for a part without data. The
/// scale runs from the target's error budget spent twice (bottom) to 100%.
pub fn sparkline(series: &[Option<f64>], target_percent: f64) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let floor = (1.0 - 2.0 * (100.0 - target_percent) / 100.0).max(0.0);
    series
        .iter()
        .map(|value| match value {
            None => ' ',
            Some(v) => {
                let scaled = ((v - floor) / (1.0 - floor)).clamp(0.0, 1.0);
                BLOCKS[((scaled * 7.0).round() as usize).min(7)]
            }
        })
        .collect()
}

/// One line of verdict for the gate: why an SLO blocks, or `None`.
pub fn blocking_reason(report: &SloReport, min_budget: f64) -> Option<String> {
    let status = &report.status;
    if report.burning_fast() {
        let pair = status
            .firing
            .iter()
            .find(|p| p.severity == monform_slo::Severity::Page)?;
        return Some(format!(
            "{}: burning fast: {}x the budget's rate over {} and {}",
            report.address,
            pair.factor,
            monform_slo::format_duration(pair.long),
            monform_slo::format_duration(pair.short)
        ));
    }
    match status.budget_left {
        None => Some(format!(
            "{}: no results in its {} window: the budget is unknown",
            report.address, report.objective.window
        )),
        Some(left) if left < min_budget => Some(format!(
            "{}: {:.1}% of the error budget left, below the {:.1}% required",
            report.address,
            left * 100.0,
            min_budget * 100.0
        )),
        Some(_) => None,
    }
}

pub fn human(reports: &[SloReport]) -> String {
    let mut out = String::new();
    if reports.is_empty() {
        out.push_str("no SLOs in the files\n");
        return out;
    }
    for report in reports {
        let status = &report.status;
        out.push_str(&format!(
            "{} ({})\n  target {}% over {}  SLI {}  budget left {}  {}/{} good{}\n  {}\n",
            report.address,
            report.name,
            report.target_percent,
            report.objective.window,
            percent(status.sli),
            status
                .budget_left
                .map_or_else(|| "unknown".to_owned(), |b| format!("{:.1}%", b * 100.0)),
            status.tally.good,
            status.tally.total,
            if status.tally.missing_slices > 0 {
                format!(" ({} slices without data)", status.tally.missing_slices)
            } else {
                String::new()
            },
            sparkline(&report.series, report.target_percent),
        ));
        let windows: Vec<String> = status
            .burn_rates
            .iter()
            .map(|w| format!("{} {}", monform_slo::format_duration(w.window), rate(w.burn_rate)))
            .collect();
        if !windows.is_empty() {
            out.push_str(&format!("  burn rates: {}\n", windows.join("  ")));
        }
        for pair in &status.firing {
            out.push_str(&format!(
                "  FIRING: {}x over {} and {} ({:?})\n",
                pair.factor,
                monform_slo::format_duration(pair.long),
                monform_slo::format_duration(pair.short),
                pair.severity
            ));
        }
        if !report.unapplied.is_empty() {
            let names: Vec<String> = report.unapplied.iter().map(ToString::to_string).collect();
            out.push_str(&format!("  not applied yet (no results): {}\n", names.join(", ")));
        }
    }
    out
}

pub fn json_value(reports: &[SloReport], now_ms: i64) -> Value {
    let slos: Vec<Value> = reports
        .iter()
        .map(|report| {
            let status = &report.status;
            json!({
                "address": report.address.to_string(),
                "name": report.name,
                "target": report.target_percent,
                "window": report.objective.window.to_string(),
                "good": status.tally.good,
                "total": status.tally.total,
                "missingSlices": status.tally.missing_slices,
                "sli": status.sli,
                "errorBudget": status.error_budget,
                "budgetLeft": status.budget_left,
                "burnRate": status.burn_rate,
                "burnRates": status.burn_rates.iter().map(|w| json!({
                    "window": monform_slo::format_duration(w.window),
                    "good": w.tally.good,
                    "total": w.tally.total,
                    "burnRate": w.burn_rate,
                })).collect::<Vec<_>>(),
                "firing": status.firing.iter().map(|p| json!({
                    "long": monform_slo::format_duration(p.long),
                    "short": monform_slo::format_duration(p.short),
                    "factor": p.factor,
                    "severity": format!("{:?}", p.severity).to_lowercase(),
                })).collect::<Vec<_>>(),
                "burningFast": report.burning_fast(),
                "members": report.members.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "unapplied": report.unapplied.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "series": report.series,
            })
        })
        .collect();
    json!({ "evaluatedAt": now_ms, "slos": slos })
}

pub fn markdown(reports: &[SloReport]) -> String {
    let mut out =
        String::from("| SLO | target | window | SLI | budget left | fast burn |\n|---|---|---|---|---|---|\n");
    for report in reports {
        let status = &report.status;
        out.push_str(&format!(
            "| `{}` {} | {}% | {} | {} | {} | {} |\n",
            report.address,
            report.name,
            report.target_percent,
            report.objective.window,
            percent(status.sli),
            status
                .budget_left
                .map_or_else(|| "unknown".to_owned(), |b| format!("{:.1}%", b * 100.0)),
            if report.burning_fast() { "**yes**" } else { "no" },
        ));
    }
    out
}
