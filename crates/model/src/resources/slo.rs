//! Service level objectives (issue 50): an objective over the runs of one
//! or more checks. monform-only: the service has no SLO API, so an SLO is
//! a local object (`Kind::is_local`), kept in the state and never sent.
//! The maths is `monform-slo`'s; the rules across fields are in
//! `rules/slo.rs` (`slo_rules`), those across resources in the loader.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

string_enum! {
    /// What makes a run good: it succeeded, or it succeeded within `threshold`.
    SloIndicator { Availability = "availability", Latency = "latency" }
}

string_enum! {
    /// What the SLI counts: runs, or time slices (`timeslice` long) whose runs were good.
    SloBudgeting { Occurrences = "occurrences", Timeslices = "timeslices" }
}

string_enum! {
    /// A calendar window: the UTC month so far.
    SloCalendar { Month = "month" }
}

/// A duration: a whole number and a unit (s, m, h, d, w).
pub const DURATION_PATTERN: &str = "^[1-9][0-9]{0,5}[smhdw]$";

/// An objective over checks' runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Slo {
    /// A display name (the logical id when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
    /// Member checks by address: `checks.checkout`, `checks.api[orders]`
    /// (an item of a `forEach`), `checks.api[*]` (all its items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true, "uniqueItems" = true))]
    pub checks: Option<Vec<SloCheckAddress>>,
    /// Member checks by tag: every check of the project carrying one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true, "uniqueItems" = true))]
    pub tags: Option<Vec<String>>,
    #[serde(default = "default_indicator")]
    pub indicator: SloIndicator,
    #[serde(default = "default_budgeting")]
    pub budgeting: SloBudgeting,
    /// The slice length with `budgeting: timeslices` (`1m`): at least the
    /// member checks' frequency, or most slices hold no run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub timeslice: Option<String>,
    /// A slice is good when at least this percent of its runs are good (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeslice_target: Option<f64>,
    /// The objective in percent, strictly between 0 and 100 (`99.5`).
    pub target: f64,
    /// A rolling window (`7d`, `28d`, `30d`); at most the service's 30 days
    /// of raw results. Or `calendar`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub window: Option<String>,
    /// A calendar window instead of a rolling one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar: Option<SloCalendar>,
    /// Latency only: a good run answers within this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 300000))]
    pub threshold: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerting: Option<SloAlerting>,
    /// monform only: `plan` sets the member checks' frequency (and
    /// locations) to what the objective needs, instead of warning.
    #[serde(default, skip_serializing_if = "is_false")]
    pub enforce: bool,
    /// monform only: refuse to delete this objective.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

/// `checks.<logical id>` or `checks.<id>[<key>]`, `[*]` for every item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct SloCheckAddress(#[schemars(regex(pattern = r"^checks\.[A-Za-z0-9_-]+(\[[^\]]+\])?$"))] pub String);

/// Burn-rate alerting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SloAlerting {
    /// Logical ids of the alert channels notified when a burn-rate pair
    /// fires and when it resolves.
    #[serde(default)]
    #[schemars(extend("x-ref" = "alertChannels", "x-set" = true, "uniqueItems" = true))]
    pub channels: Vec<LogicalRef>,
    /// The burn-rate pairs: `default` is the SRE workbook's (14.4x over 1h
    /// and 5m, 6x over 6h and 30m, 1x over 3d and 6h).
    #[serde(default = "default_burn_rates")]
    pub burn_rates: SloBurnRates,
}

string_enum! {
    /// Named sets of burn-rate pairs.
    SloBurnRates { Default = "default" }
}

fn default_indicator() -> SloIndicator {
    SloIndicator::Availability
}

fn default_budgeting() -> SloBudgeting {
    SloBudgeting::Occurrences
}

fn default_burn_rates() -> SloBurnRates {
    SloBurnRates::Default
}

/// The raw results the service keeps (monitoring-api.md, "Raw check
/// results retention: 30 days"): no rolling window can be longer.
pub const RESULTS_RETENTION_SECONDS: u64 = 30 * 86_400;

/// Seconds of a [`DURATION_PATTERN`] text, or `None`.
pub fn duration_seconds(text: &str) -> Option<u64> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    let count: u64 = digits.parse().ok()?;
    let unit: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return None,
    };
    count.checked_mul(unit).filter(|s| *s > 0)
}

impl Slo {
    /// The name shown for it: `name`, or the logical id.
    pub fn display_name<'a>(&'a self, id: &'a str) -> &'a str {
        self.name.as_deref().unwrap_or(id)
    }
}
