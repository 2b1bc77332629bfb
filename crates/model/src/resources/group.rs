//! Check groups (spec 2.7).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::check::ApiAssertion;
use super::common::*;

/// A check group: shared settings for the checks inside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Group {
    #[schemars(length(min = 1))]
    pub name: String,
    #[serde(default = "default_true")]
    pub activated: bool,
    #[serde(default)]
    pub muted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true))]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true))]
    pub locations: Option<Vec<Location>>,
    /// How many checks run at once when the group is triggered from CI/CD or the API.
    #[serde(default = "default_concurrency")]
    #[schemars(range(min = 1))]
    pub concurrency: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_check_defaults: Option<ApiCheckDefaults>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_check_defaults: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_id: Option<RuntimeId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub environment_variables: Option<Vec<EnvironmentVariable>>,
    /// Logical ids of the alert channels the group notifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "alertChannels", "x-wire" = "alertChannelSubscriptions", "x-wire-shape" = "subscriptions", "x-set" = true))]
    pub alert_channels: Option<Vec<LogicalRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "snippets", "x-wire" = "setupSnippetId"))]
    pub setup_snippet: Option<LogicalRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "snippets", "x-wire" = "tearDownSnippetId"))]
    pub tear_down_snippet: Option<LogicalRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_setup_script: Option<Script>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_tear_down_script: Option<Script>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "privateLocations", "x-ref-soft" = true, "x-wire" = "privateLocations", "x-set" = true))]
    pub private_locations: Option<Vec<LogicalRef>>,
    #[serde(default)]
    pub run_parallel: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert_settings: Option<AlertSettings>,
    /// A retry strategy, or `FALLBACK` to let each check use its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_strategy: Option<GroupRetryStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_global_alert_settings: Option<bool>,
    /// Deprecated.
    #[serde(default)]
    pub double_check: bool,
    /// monform only: refuse to delete this group.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

fn default_concurrency() -> u32 {
    3
}

/// A group's retry strategy: its own, or the literal `FALLBACK`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GroupRetryStrategy {
    Fallback(Fallback),
    Strategy(RetryStrategy),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Fallback {
    #[serde(rename = "FALLBACK")]
    Fallback,
}

/// Defaults the group applies to its API checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiCheckDefaults {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub headers: Vec<KeyValue>,
    #[serde(default)]
    pub query_parameters: Vec<KeyValue>,
    #[serde(default)]
    pub assertions: Vec<ApiAssertion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuth>,
}
