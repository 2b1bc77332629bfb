//! Burn-rate alerts (issue 50): each interval, every SLO of the files is
//! evaluated by `ops::slo_status` (the same figures as `monform slo
//! status`, computed by `monform-slo`), kept for `monform gate` in the
//! project's `.monform/slo-status.json` (`ops::write_slo_cache`, the one
//! writer `slo status` uses too), and a notification goes to the
//! SLO's `alerting.channels` (WEBHOOK and SLACK, as drift reports, and
//! EMAIL) when one
//! of its burn-rate pairs starts firing and when it stops: once per
//! episode. Which pairs fire is remembered with the drift memory
//! ([`Memory::slo_alerts`], in the same atomic write, before sending, as
//! drift reports are); a delivery that fails is forgotten again so the next
//! interval retries it.
//!
//! Choices: an SLO without `alerting.channels` is evaluated for the
//! gate's cache only; a pair of an SLO whose figures cannot be
//! read this interval (no data, the service unreachable) neither fires nor
//! resolves: it stays as remembered. An SLO taken out of the files ends
//! its episodes silently. EMAIL channels get an email through the
//! service's mail delivery (`deliver::send_email`, the emulator's
//! `POST /-/mailbox`); other channel types are refused when a notice is
//! sent, as for drift reports: the reconciler sends only what it can.

use std::collections::{BTreeMap, BTreeSet};

use monform_config::Desired;
use monform_engine::ops::{self, SloReport, SloStatusRequest};
use monform_model::resources::Slo;
use monform_model::{Address, Resource};
use monform_slo::{BurnRatePair, Severity, format_duration};
use serde_json::{Value, json};

use crate::deliver;
use crate::report::{FORMAT_VERSION, Memory, Subject, now};

/// The name of a burn-rate pair in the memory and the reports: `14.4x 1h/5m`.
pub fn pair_label(pair: &BurnRatePair) -> String {
    format!(
        "{}x {}/{}",
        pair.factor,
        format_duration(pair.long),
        format_duration(pair.short)
    )
}

/// One notification to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub address: String,
    /// `firing` or `resolved`.
    pub state: &'static str,
    pub pair: String,
    pub channels: Vec<String>,
    pub body: BurnRateNotice,
    pub slack: Value,
    /// An EMAIL channel's message: subject and text.
    pub email: (String, String),
}

/// The SLOs of the files with alert channels.
pub fn alerting(desired: &Desired) -> Vec<(Address, Vec<String>)> {
    desired
        .resources
        .iter()
        .filter_map(|(address, r)| match r.resource.as_ref() {
            Resource::Slo(Slo {
                alerting: Some(alerting),
                ..
            }) if !alerting.channels.is_empty() => Some((address.clone(), alerting.channels.clone())),
            _ => None,
        })
        .collect()
}

/// Compares the pairs firing now with the memory; `memory` becomes what
/// is reported once the notices are sent. An alerting SLO missing from
/// `reports`, or without data, stays as remembered.
pub fn news(
    memory: &mut Memory,
    subject: &Subject<'_>,
    reports: &[SloReport],
    alerting: &[(Address, Vec<String>)],
) -> Vec<Notice> {
    let mut notices = Vec::new();
    let mut next: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (address, channels) in alerting {
        let key = address.to_string();
        let before = memory.slo_alerts.get(&key).cloned().unwrap_or_default();
        let Some(report) = reports.iter().find(|r| &r.address == address) else {
            if !before.is_empty() {
                next.insert(key, before);
            }
            continue;
        };
        // Without data nothing is known: the episode stays as it was.
        if report.status.tally.total == 0 && report.status.burn_rates.iter().all(|b| b.burn_rate.is_none()) {
            if !before.is_empty() {
                next.insert(key, before);
            }
            continue;
        }
        let firing: BTreeSet<String> = report.status.firing.iter().map(pair_label).collect();
        for pair in &report.pairs {
            let label = pair_label(pair);
            let state = match (before.contains(&label), firing.contains(&label)) {
                (false, true) => "firing",
                (true, false) => "resolved",
                _ => continue,
            };
            notices.push(Notice {
                address: key.clone(),
                state,
                pair: label,
                channels: channels.clone(),
                body: body(subject, report, pair, state),
                slack: slack(report, pair, state),
                email: email(subject, report, pair, state),
            });
        }
        if !firing.is_empty() {
            next.insert(key, firing);
        }
    }
    memory.slo_alerts = next;
    notices
}

fn burn_over(report: &SloReport, window: std::time::Duration) -> Option<f64> {
    report
        .status
        .burn_rates
        .iter()
        .find(|b| b.window == window)
        .and_then(|b| b.burn_rate)
}

fn round(value: Option<f64>, places: i32) -> Option<f64> {
    let factor = 10f64.powi(places);
    value.map(|v| (v * factor).round() / factor)
}

/// The WEBHOOK body of a burn-rate notice (and the `slo_alert` event's
/// `notice`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BurnRateNotice {
    /// The body's version (the drift reports' too).
    pub format_version: u32,
    /// `slo-burn-rate`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `firing` or `resolved`.
    pub state: String,
    pub project: String,
    /// `--env`'s environment; null without.
    pub environment: Option<String>,
    /// RFC 3339, UTC.
    pub time: String,
    /// `slos.NAME`.
    pub slo: String,
    pub name: String,
    /// The objective, a percentage.
    pub target: f64,
    pub alert: AlertPairJson,
    pub burn_rates: BurnRatesJson,
    /// The SLI over the SLO's window, a fraction (6 decimals); null without data.
    pub sli: Option<f64>,
    /// The error budget left, a fraction (4 decimals); null without data.
    pub budget_left: Option<f64>,
}

/// The alert pair a notice is about.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlertPairJson {
    /// e.g. `14.4x 1h/5m`.
    pub name: String,
    /// `page` or `ticket`.
    pub severity: String,
    /// The burn rate both windows must reach.
    pub factor: f64,
    pub long_window: String,
    pub short_window: String,
}

/// The burn rates over the pair's windows (2 decimals); null without data.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct BurnRatesJson {
    pub long: Option<f64>,
    pub short: Option<f64>,
}

/// The WEBHOOK body of a burn-rate notice.
pub fn body(subject: &Subject<'_>, report: &SloReport, pair: &BurnRatePair, state: &str) -> BurnRateNotice {
    BurnRateNotice {
        format_version: FORMAT_VERSION,
        kind: "slo-burn-rate".to_owned(),
        state: state.to_owned(),
        project: subject.project.to_owned(),
        environment: subject.environment.map(str::to_owned),
        time: now(),
        slo: report.address.to_string(),
        name: report.name.clone(),
        target: report.target_percent,
        alert: AlertPairJson {
            name: pair_label(pair),
            severity: match pair.severity {
                Severity::Page => "page",
                Severity::Ticket => "ticket",
            }
            .to_owned(),
            factor: pair.factor,
            long_window: format_duration(pair.long),
            short_window: format_duration(pair.short),
        },
        burn_rates: BurnRatesJson {
            long: round(burn_over(report, pair.long), 2),
            short: round(burn_over(report, pair.short), 2),
        },
        sli: round(report.status.sli, 6),
        budget_left: round(report.status.budget_left, 4),
    }
}

/// The Slack message of a burn-rate notice.
pub fn slack(report: &SloReport, pair: &BurnRatePair, state: &str) -> Value {
    let rate = |window| burn_over(report, window).map_or_else(|| "?".to_owned(), |r| format!("{r:.1}x"));
    let text = if state == "firing" {
        format!(
            "{} ({}) is burning its error budget: {} over {} and {} over {} (alert at {}x)",
            report.address,
            report.name,
            rate(pair.long),
            format_duration(pair.long),
            rate(pair.short),
            format_duration(pair.short),
            pair.factor
        )
    } else {
        format!(
            "{} ({}): the {} burn-rate alert resolved",
            report.address,
            report.name,
            pair_label(pair)
        )
    };
    json!({ "text": text })
}

/// The email of a burn-rate notice: a subject line, and the Slack text
/// followed by the webhook body's figures.
pub fn email(subject: &Subject<'_>, report: &SloReport, pair: &BurnRatePair, state: &str) -> (String, String) {
    let title = format!(
        "[{state}] {} ({}): burn-rate alert {}",
        report.address,
        report.name,
        pair_label(pair)
    );
    let line = slack(report, pair, state)["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let figures = serde_json::to_string_pretty(&body(subject, report, pair, state)).unwrap_or_default();
    (title, format!("{line}\n\n{figures}\n"))
}

/// The channels each SLO notifies, as `deliver` sends to them.
pub fn channels_of(desired: &Desired, ids: &[String]) -> Result<Vec<deliver::Channel>, String> {
    deliver::channels_named(desired, ids, "an SLO's alerting.channels", true)
}

/// Reads every SLO's figures (`now_ms`: the evaluation time, `None` the
/// clock's; `environment`: the project's, in each verdict's fingerprint):
/// the alerting ones for their pairs, all of them for the gate's cache.
/// `None` when the files have no SLO.
pub async fn read(
    client: &monform_api::Client,
    desired: &Desired,
    state: &monform_engine::State,
    now_ms: Option<i64>,
    environment: Option<&str>,
    dir: &std::path::Path,
) -> Option<Result<Vec<SloReport>, String>> {
    let addresses = ops::slo_addresses(desired);
    if addresses.is_empty() {
        return None;
    }
    let request = SloStatusRequest {
        addresses,
        now_ms,
        // Settled results kept between intervals: each reads the last hours.
        runs_cache: Some(dir.join(ops::SLO_RUNS_CACHE)),
        environment: environment.map(str::to_owned),
        ..Default::default()
    };
    Some(
        ops::slo_status(client, desired, state, &request)
            .await
            .map_err(|e| e.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_named_by_factor_and_windows() {
        let labels: Vec<String> = monform_slo::default_burn_rates().iter().map(pair_label).collect();
        assert_eq!(labels, ["14.4x 1h/5m", "6x 6h/30m", "1x 3d/6h"]);
    }
}
