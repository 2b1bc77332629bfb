//! The bodies of the check types that run a script: browser and
//! multi-step (one struct, `ScriptCheck`, with a schema definition per
//! type) and Playwright (a test suite from a code bundle).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::resources::common::{EnvironmentVariable, Script};

/// A file a browser or multi-step script imports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dependency {
    #[schemars(length(min = 1, max = 1000))]
    pub path: String,
    pub content: Script,
}

/// The body of a browser check (a Playwright script run in a browser) and
/// of a multi-step check (a script chaining several API requests): the two
/// types take the same fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScriptCheck {
    pub script: Script,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub environment_variables: Option<Vec<EnvironmentVariable>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<Dependency>>,
}

/// Browser check: a Playwright script run in a browser.
pub type BrowserCheck = ScriptCheck;
/// Multi-step check: a script chaining several API requests.
pub type MultiStepCheck = ScriptCheck;

/// The schema of a `Typed<ScriptCheck>` under the definition name of one
/// check type (`BrowserCheck`, `MultiStepCheck`), so that the published
/// schema keeps a definition per type although the struct is shared.
pub(super) struct ScriptCheckSchema<M>(std::marker::PhantomData<M>);

/// A check type whose body is a `ScriptCheck`, named for the schema.
pub(super) trait ScriptCheckName {
    const NAME: &'static str;
}

/// Marker: the schema of a `BROWSER` check.
pub(super) struct BrowserName;
/// Marker: the schema of a `MULTI_STEP` check.
pub(super) struct MultiStepName;

impl ScriptCheckName for BrowserName {
    const NAME: &'static str = "BrowserCheck";
}

impl ScriptCheckName for MultiStepName {
    const NAME: &'static str = "MultiStepCheck";
}

impl<M: ScriptCheckName> JsonSchema for ScriptCheckSchema<M> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        M::NAME.into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        format!("{}::{}", module_path!(), M::NAME).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        super::Typed::<ScriptCheck>::json_schema(generator)
    }
}

string_enum! { PlaywrightEngine { Node = "node", Bun = "bun" } }

/// Playwright check: a Playwright test suite from a code bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaywrightCheck {
    /// Path of the code bundle the suite is read from.
    #[schemars(length(min = 1))]
    pub code_bundle_path: String,
    #[serde(default = "default_test_command")]
    pub test_command: String,
    #[serde(default)]
    pub install_command: String,
    #[serde(default = "default_browsers")]
    #[schemars(extend("x-set" = true))]
    pub browsers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playwright_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<PlaywrightEngine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub environment_variables: Option<Vec<EnvironmentVariable>>,
}

fn default_test_command() -> String {
    "npx playwright test".to_owned()
}
fn default_browsers() -> Vec<String> {
    vec!["chromium".to_owned()]
}
