//! Snippets: reusable setup and teardown code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

/// A snippet. Its identity in the account is its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Snippet {
    #[schemars(length(min = 1), extend("x-natural-key" = true))]
    pub name: String,
    // Must not be empty: a rule (`rules`), as schemars drops length limits on `Script`.
    pub script: Script,
    /// monform only: refuse to delete this snippet.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}
