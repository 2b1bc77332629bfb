//! Maintenance windows: periods in which checks pause or alerts are silenced.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::check::IncidentSeverity;
use super::common::*;

string_enum! { RepeatUnit { Day = "DAY", Week = "WEEK", Month = "MONTH" } }

/// A maintenance window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceWindow {
    #[schemars(length(min = 1, max = 200))]
    pub name: String,
    /// Tags of the checks and groups the window applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true))]
    pub tags: Option<Vec<String>>,
    /// ISO 8601 date-time, e.g. 2026-12-01T02:00:00Z.
    #[schemars(extend("format" = "date-time"))]
    pub starts_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub ends_at: String,
    /// Repeat every N units; omit (with repeatUnit) for a one-off window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 365))]
    pub repeat_interval: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_unit: Option<RepeatUnit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub repeat_ends_at: Option<String>,
    /// IANA time zone, e.g. Europe/Amsterdam.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default)]
    pub pause_all_checks: bool,
    #[serde(default)]
    pub silence_all_alerts: bool,
    /// Tags of the checks whose alerts are silenced (when silenceAllAlerts is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true))]
    pub silence_alerts_tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_page_visibility: Option<StatusPageVisibility>,
    /// monform only: refuse to delete this window.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

/// How the window shows on status pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusPageVisibility {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<IncidentSeverity>,
    #[serde(default)]
    pub affect_all_services: bool,
    #[serde(default)]
    pub notify_on_start: bool,
    #[serde(default)]
    pub notify_on_end: bool,
    #[serde(default)]
    pub suppress_auto_incidents: bool,
    /// Minutes before the start to remind subscribers (60..10080, at most 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 3))]
    pub reminder_minutes_before: Option<Vec<u32>>,
    #[serde(default = "default_true")]
    pub auto_start: bool,
    #[serde(default = "default_true")]
    pub auto_end: bool,
    #[serde(default = "default_true")]
    pub show_affected_services: bool,
    /// Logical ids of the status pages the window shows on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "statusPages", "x-wire" = "statusPageIds", "x-set" = true))]
    pub status_pages: Option<Vec<LogicalRef>>,
    /// Logical ids of the affected status page services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "statusPageServices", "x-wire" = "serviceIds", "x-set" = true))]
    pub services: Option<Vec<LogicalRef>>,
}
