//! `monform slo status` as text: one table of the SLOs' figures with a
//! sparkline of each SLI (aligned for a terminal, with each SLO's burn
//! rates under it; or Markdown for a pull request), and the same as JSON
//! (the gate's words and cache are `commands/slo.rs`'s and
//! `ops::write_slo_cache`'s).

use monform_engine::ops::{SloReport, SloRunCost};
use serde::Serialize;

use super::budget::thousands;

/// An SLI as a percentage, or `no data`.
pub(crate) fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "no data".to_owned(), |v| format!("{:.3}%", v * 100.0))
}

/// The budget left as a percentage, or `unknown`.
pub(crate) fn budget_text(value: Option<f64>) -> String {
    value.map_or_else(|| "unknown".to_owned(), |b| format!("{:.1}%", b * 100.0))
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

/// How [`table`] draws its rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Columns padded to their widest cell, for a terminal.
    Aligned,
    /// A GitHub-flavoured Markdown table.
    Markdown,
}

/// The one table of SLOs both `human` and `markdown` show: a row per SLO
/// with its figures and the sparkline of its SLI over the window.
fn table(reports: &[SloReport], style: Style) -> String {
    let header = [
        "SLO",
        "target",
        "window",
        "SLI",
        "budget left",
        "good/total",
        "fast burn",
        "SLI over the window",
    ];
    let rows: Vec<[String; 8]> = reports
        .iter()
        .map(|report| {
            let status = &report.status;
            let address = match style {
                Style::Aligned => report.address.to_string(),
                Style::Markdown => format!("`{}`", report.address),
            };
            let sparkline = sparkline(&report.series, report.target_percent);
            [
                format!("{address} {}", name_cell(&report.name, style)),
                format!("{}%", report.target_percent),
                report.objective.window.to_string(),
                percent(status.sli),
                budget_text(status.budget_left),
                format!("{}/{}", status.tally.good, status.tally.total),
                match (report.burning_fast(), style) {
                    (true, Style::Markdown) => "**yes**".to_owned(),
                    (true, Style::Aligned) => "yes".to_owned(),
                    (false, _) => "no".to_owned(),
                },
                match style {
                    Style::Aligned => sparkline,
                    Style::Markdown => format!("`{sparkline}`"),
                },
            ]
        })
        .collect();
    let mut out = String::new();
    match style {
        Style::Markdown => {
            out.push_str(&format!("| {} |\n", header.join(" | ")));
            out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
            for row in &rows {
                out.push_str(&format!("| {} |\n", row.join(" | ")));
            }
        }
        Style::Aligned => {
            let width = |i: usize| {
                rows.iter()
                    .map(|row| row[i].chars().count())
                    .chain([header[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            };
            let widths: Vec<usize> = (0..header.len()).map(width).collect();
            let line = |cells: Vec<&str>| {
                let padded: Vec<String> = cells
                    .iter()
                    .zip(&widths)
                    .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
                    .collect();
                format!("{}\n", padded.join("  ").trim_end())
            };
            out.push_str(&line(header.to_vec()));
            for row in &rows {
                out.push_str(&line(row.iter().map(String::as_str).collect()));
            }
        }
    }
    out
}

/// The SLO's name after its address: in parentheses, or in a Markdown
/// cell with its `|` escaped (a name is the files' text).
fn name_cell(name: &str, style: Style) -> String {
    match style {
        Style::Aligned => format!("({name})"),
        Style::Markdown => name.replace('|', "\\|"),
    }
}

pub fn human(reports: &[SloReport]) -> String {
    if reports.is_empty() {
        return "no SLOs in the files\n".to_owned();
    }
    let mut out = table(reports, Style::Aligned);
    // Under the table, what needs a line of its own: the burn rates, the
    // pairs firing, slices without data, members not applied.
    for report in reports {
        let status = &report.status;
        out.push_str(&format!("\n{}\n", report.address));
        let windows: Vec<String> = status
            .burn_rates
            .iter()
            .map(|w| format!("{} {}", monform_slo::format_duration(w.window), rate(w.burn_rate)))
            .collect();
        if !windows.is_empty() {
            out.push_str(&format!("  burn rates: {}\n", windows.join("  ")));
        }
        if status.tally.missing_slices > 0 {
            out.push_str(&format!("  {} slices without data\n", status.tally.missing_slices));
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

/// `slo status --format json`: each SLO's SLI, error budget and burn rates.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "SloStatus")]
pub struct SloStatusJson {
    /// When the figures were computed (milliseconds since the epoch).
    pub evaluated_at: i64,
    pub slos: Vec<SloJson>,
}

/// One SLO's figures over its window.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SloJson {
    /// `slos.NAME`.
    pub address: String,
    pub name: String,
    /// The objective, in percent.
    pub target: f64,
    /// The window, e.g. `28d`.
    pub window: String,
    /// Good events (or slices) in the window.
    pub good: u64,
    pub total: u64,
    /// Time slices without data (excluded).
    pub missing_slices: u64,
    /// The fraction good, 0..1; null without data.
    pub sli: Option<f64>,
    /// The fraction allowed to be bad (1 - target).
    pub error_budget: f64,
    /// The share of the error budget left (negative when overspent); null without data.
    pub budget_left: Option<f64>,
    /// Over the whole window; null without data.
    pub burn_rate: Option<f64>,
    /// Per alert window.
    pub burn_rates: Vec<WindowBurnJson>,
    /// The alert pairs firing now.
    pub firing: Vec<FiringJson>,
    /// A `page` pair fires.
    pub burning_fast: bool,
    /// The member checks' addresses.
    pub members: Vec<String>,
    /// Members not applied yet (no results).
    pub unapplied: Vec<String>,
    /// The SLI per slice of the window, oldest first (null: no data).
    pub series: Vec<Option<f64>>,
}

/// The burn rate over one alert window.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WindowBurnJson {
    /// e.g. `1h`.
    pub window: String,
    pub good: u64,
    pub total: u64,
    pub burn_rate: Option<f64>,
}

/// A multi-window alert pair that fires.
#[derive(Serialize, schemars::JsonSchema)]
pub struct FiringJson {
    pub long: String,
    pub short: String,
    /// The burn rate both windows exceed.
    pub factor: f64,
    /// `page` or `ticket`.
    pub severity: String,
}

pub fn json_value(reports: &[SloReport], now_ms: i64) -> SloStatusJson {
    let slos = reports
        .iter()
        .map(|report| {
            let status = &report.status;
            SloJson {
                address: report.address.to_string(),
                name: report.name.clone(),
                target: report.target_percent,
                window: report.objective.window.to_string(),
                good: status.tally.good,
                total: status.tally.total,
                missing_slices: status.tally.missing_slices,
                sli: status.sli,
                error_budget: status.error_budget,
                budget_left: status.budget_left,
                burn_rate: status.burn_rate,
                burn_rates: status
                    .burn_rates
                    .iter()
                    .map(|w| WindowBurnJson {
                        window: monform_slo::format_duration(w.window),
                        good: w.tally.good,
                        total: w.tally.total,
                        burn_rate: w.burn_rate,
                    })
                    .collect(),
                firing: status
                    .firing
                    .iter()
                    .map(|p| FiringJson {
                        long: monform_slo::format_duration(p.long),
                        short: monform_slo::format_duration(p.short),
                        factor: p.factor,
                        severity: format!("{:?}", p.severity).to_lowercase(),
                    })
                    .collect(),
                burning_fast: report.burning_fast(),
                members: report.members.iter().map(ToString::to_string).collect(),
                unapplied: report.unapplied.iter().map(ToString::to_string).collect(),
                series: report.series.clone(),
            }
        })
        .collect();
    SloStatusJson {
        evaluated_at: now_ms,
        slos,
    }
}

pub fn markdown(reports: &[SloReport]) -> String {
    table(reports, Style::Markdown)
}

/// `every 20s from 1 location`.
fn schedule_words(every_seconds: u64, locations: u64) -> String {
    format!(
        "every {} from {locations} location{}",
        monform_slo::format_duration(std::time::Duration::from_secs(every_seconds)),
        if locations == 1 { "" } else { "s" }
    )
}

/// The plan's SLO notes in words, for the SLOs whose member checks fall
/// short of what their alerts need: a line per SLO (its run budget), a
/// line per member short of it; `code` quotes an address.
fn plan_note_lines(costs: &[SloRunCost], code: fn(&str) -> String) -> Vec<(String, Vec<String>)> {
    costs
        .iter()
        .filter(|cost| cost.members.iter().any(|m| m.needs.is_some()))
        .map(|cost| {
            let delta = cost.after.saturating_sub(cost.before);
            let line = format!(
                "{} needs {} runs per 5m from each check for its fast-burn alert: {} -> {} runs a month (+{}){}",
                code(&cost.slo.to_string()),
                cost.samples,
                thousands(cost.before),
                thousands(cost.after),
                thousands(delta),
                match cost.enforce {
                    true => "; the plan sets them (enforce: true)",
                    false => "; not set (enforce: true would)",
                }
            );
            let members = cost
                .members
                .iter()
                .filter_map(|m| {
                    let needs = m.needs?;
                    Some(format!(
                        "{}: a run {} (the files: {})",
                        code(&m.check.to_string()),
                        schedule_words(needs.every_seconds, needs.locations),
                        schedule_words(m.every_seconds, m.locations)
                    ))
                })
                .collect();
            (line, members)
        })
        .collect()
}

/// The plan's SLO notes for a terminal (empty when no SLO falls short).
pub fn plan_notes_human(costs: &[SloRunCost]) -> String {
    let mut out = String::new();
    for (line, members) in plan_note_lines(costs, |a| a.to_owned()) {
        // A blank line between the plan and the notes.
        if out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{line}\n"));
        for member in members {
            out.push_str(&format!("  {member}\n"));
        }
    }
    out
}

/// The plan's SLO notes in Markdown (empty when no SLO falls short).
pub fn plan_notes_markdown(costs: &[SloRunCost]) -> String {
    let notes = plan_note_lines(costs, |a| format!("`{a}`"));
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n**SLOs' check runs** (a month, 30 days):\n\n");
    for (line, members) in notes {
        out.push_str(&format!("- {line}\n"));
        for member in members {
            out.push_str(&format!("  - {member}\n"));
        }
    }
    out
}

/// One SLO of the plan JSON's `sloRuns`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SloRunsJson {
    /// `slos.ID`.
    pub slo: String,
    /// The runs its fast-burn alert needs in 5 minutes from each member check.
    pub samples: u64,
    /// `enforce: true`: the plan sets the members' schedule.
    pub enforce: bool,
    /// The members' runs a month (30 days) as the files write them.
    pub before: u64,
    /// The members' runs a month at what the SLO needs (never fewer).
    pub after: u64,
    pub members: Vec<MemberRunsJson>,
}

/// One member check of an SLO in `sloRuns`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberRunsJson {
    /// `checks.ID`.
    pub check: String,
    /// As the files write it: a run every this many seconds...
    pub every_seconds: u64,
    /// ...from this many locations at once (1 unless `runParallel`).
    pub locations: u64,
    /// What the SLO needs of it; absent (null) when it makes enough runs.
    pub needs: Option<ScheduleJson>,
    pub before: u64,
    pub after: u64,
}

/// A run every `everySeconds` from `locations` locations at once.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleJson {
    pub every_seconds: u64,
    pub locations: u64,
}

/// The plan JSON's `sloRuns`: every SLO, short of its needs or not.
pub fn plan_notes_json(costs: &[SloRunCost]) -> Vec<SloRunsJson> {
    costs
        .iter()
        .map(|cost| SloRunsJson {
            slo: cost.slo.to_string(),
            samples: cost.samples,
            enforce: cost.enforce,
            before: cost.before,
            after: cost.after,
            members: cost
                .members
                .iter()
                .map(|m| MemberRunsJson {
                    check: m.check.to_string(),
                    every_seconds: m.every_seconds,
                    locations: m.locations,
                    needs: m.needs.map(|n| ScheduleJson {
                        every_seconds: n.every_seconds,
                        locations: n.locations,
                    }),
                    before: m.before,
                    after: m.after,
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_slo::{Objective, Run, Window};

    /// `slos.checkout` (99.5%, 7d): 996 of 1,000 runs good, the last 4
    /// failed (burning fast); `slos.empty` with no result at all.
    fn reports() -> Vec<SloReport> {
        let now = 1_793_491_200_000; // 2026-11-01T00:00:00Z
        let runs: Vec<Run> = (0..1000)
            .map(|i| Run {
                at_ms: now - (i + 1) * 60_000,
                success: i >= 4,
                response_ms: 100,
                location: "eu-west-1".to_owned(),
            })
            .collect();
        let report = |id: &str, name: &str, runs: &[Run]| {
            let objective = Objective::availability(99.5, Window::parse("7d").unwrap());
            let pairs = monform_slo::default_burn_rates();
            let status = monform_slo::evaluate(&objective, runs, &pairs, now);
            SloReport {
                address: format!("slos.{id}").parse().unwrap(),
                name: name.to_owned(),
                target_percent: 99.5,
                objective,
                pairs,
                members: vec!["checks.checkout".parse().unwrap()],
                unapplied: Vec::new(),
                series: vec![Some(1.0), Some(0.999), None, Some(0.99)],
                status,
                channels: Vec::new(),
                history: Vec::new(),
                fingerprint: "0123456789abcdef".to_owned(),
            }
        };
        vec![
            report("checkout", "Checkout | availability", &runs),
            report("empty", "Empty", &[]),
        ]
    }

    #[test]
    fn one_table_aligned_and_in_markdown() {
        let reports = reports();
        insta::assert_snapshot!("slo_table_human", human(&reports));
        insta::assert_snapshot!("slo_table_markdown", markdown(&reports));
    }

    #[test]
    fn plan_notes_name_the_slos_short_of_their_samples() {
        use monform_engine::ops::{MemberRunCost, SloSchedule};
        let member = |id: &str, every: u64, needs: Option<(u64, u64)>, before: u64, after: u64| MemberRunCost {
            check: format!("checks.{id}").parse().unwrap(),
            every_seconds: every,
            locations: 1,
            needs: needs.map(|(every_seconds, locations)| SloSchedule {
                every_seconds,
                locations,
            }),
            before,
            after,
        };
        let costs = vec![
            SloRunCost {
                slo: "slos.shop".parse().unwrap(),
                samples: 14,
                enforce: false,
                members: vec![
                    member("api", 600, Some((20, 1)), 4_320, 129_600),
                    member("web", 60, Some((60, 3)), 43_200, 129_600),
                ],
                before: 47_520,
                after: 259_200,
            },
            SloRunCost {
                slo: "slos.easy".parse().unwrap(),
                samples: 1,
                enforce: true,
                members: vec![member("web", 60, None, 43_200, 43_200)],
                before: 43_200,
                after: 43_200,
            },
        ];
        insta::assert_snapshot!("slo_plan_notes_human", plan_notes_human(&costs));
        insta::assert_snapshot!("slo_plan_notes_markdown", plan_notes_markdown(&costs));
        let json = serde_json::to_value(plan_notes_json(&costs)).unwrap();
        assert_eq!(json[0]["members"][0]["needs"]["everySeconds"], 20);
        assert_eq!(json[1]["members"][0]["needs"], serde_json::Value::Null);
        assert_eq!(plan_notes_human(&costs[1..]), "");
    }
}
