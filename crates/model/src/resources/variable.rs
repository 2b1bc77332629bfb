//! Account-level environment variables (spec 2.5). Their logical id is the key.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

/// An environment variable of the account. `key` is the logical id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Variable {
    /// Never printed when `secret` is true: plans show `(sensitive)`.
    #[schemars(extend("x-sensitive-if" = "secret"))]
    pub value: String,
    /// Only hides the value in the service's UI.
    #[serde(default)]
    pub locked: bool,
    /// Once set, the value cannot be read back; the service returns null.
    #[serde(default)]
    #[schemars(extend("x-replace" = true))]
    pub secret: bool,
    /// monform only: refuse to delete this variable.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}
