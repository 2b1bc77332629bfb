//! Dashboards: public pages listing checks by tag.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

string_enum! { DashboardWidth { Full = "FULL", Px960 = "960PX" } }

/// A dashboard. Defaults are those of the service's published schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dashboard {
    /// Title shown at the top.
    #[schemars(length(min = 1))]
    pub header: String,
    /// Subdomain the dashboard is served on; unique in the service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::address::SUBDOMAIN_PATTERN), extend("x-unique" = true))]
    pub custom_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub favicon: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(default = "default_width")]
    pub width: DashboardWidth,
    /// Seconds between refreshes.
    #[serde(default = "default_sixty")]
    #[schemars(range(min = 1))]
    pub refresh_rate: u32,
    #[serde(default = "default_true")]
    pub paginate: bool,
    /// Seconds between pages.
    #[serde(default = "default_sixty")]
    #[schemars(range(min = 1))]
    pub pagination_rate: u32,
    #[serde(default)]
    pub sort_by_status: bool,
    #[serde(default = "default_checks_per_page")]
    #[schemars(range(min = 1, max = 20))]
    pub checks_per_page: u32,
    #[serde(default)]
    pub use_tags_and_operator: bool,
    #[serde(default)]
    pub hide_tags: bool,
    #[serde(default)]
    pub enable_incidents: bool,
    #[serde(default)]
    pub expand_checks: bool,
    /// Tags of the checks shown.
    #[serde(default)]
    #[schemars(extend("x-set" = true))]
    pub tags: Vec<String>,
    #[serde(default = "default_true")]
    pub show_header: bool,
    #[serde(default)]
    pub show_check_run_links: bool,
    #[serde(default = "default_true")]
    pub show_group_names: bool,
    #[serde(default, rename = "customCSS")]
    pub custom_css: String,
    #[serde(default)]
    pub is_private: bool,
    #[serde(default = "default_true", rename = "showP95")]
    pub show_p95: bool,
    #[serde(default = "default_true", rename = "showP99")]
    pub show_p99: bool,
    /// monform only: refuse to delete this dashboard.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

fn default_width() -> DashboardWidth {
    DashboardWidth::Full
}
fn default_sixty() -> u32 {
    60
}
fn default_checks_per_page() -> u32 {
    15
}
