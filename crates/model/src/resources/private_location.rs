//! Private locations (spec 2.12): agents that run checks inside a network.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

/// Slugs: 1 to 30 letters, digits or dashes. That a slug must not look like
/// a data-center location is a rule (`rules`), since the service's pattern
/// needs a look-ahead that editors' regex engines differ on.
pub const SLUG_PATTERN: &str = r"^[a-zA-Z0-9-]{1,30}$";

/// A private location. Its identity in the account is `slugName`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrivateLocation {
    #[schemars(length(min = 1))]
    pub name: String,
    /// Cannot change after creation: changing it replaces the location.
    #[schemars(regex(pattern = r"^[a-zA-Z0-9-]{1,30}$"), extend("x-replace" = true, "x-natural-key" = true))]
    pub slug_name: String,
    #[serde(default = "default_icon")]
    pub icon: String,
    /// Proxy for the agents' outgoing API-check calls; may embed credentials, so never printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-sensitive" = true))]
    pub proxy_url: Option<String>,
    /// monform only: refuse to delete this location.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

fn default_icon() -> String {
    "location".to_owned()
}
