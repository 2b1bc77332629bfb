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

/// Playwright check: a Playwright test suite from a code bundle, or an
/// existing Playwright project (`playwright`) run with `@playwright/test`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaywrightCheck {
    /// Path of the code bundle the suite is read from (`*.spec.js` /
    /// `*.test.js` files); not needed with `playwright`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code_bundle_path: String,
    /// An existing Playwright project to run as it is: its config (with its
    /// projects, fixtures, `globalSetup`, `storageState`, TypeScript specs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playwright: Option<PlaywrightProject>,
    /// What the suite of `playwright` needs, read by the loader (never
    /// written in the files): its files and their content hash, so a
    /// changed spec is an update of the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_bundle: Option<CodeBundle>,
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

/// The Playwright project a PLAYWRIGHT check runs: its config, and which
/// of its projects and tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlaywrightProject {
    /// The project's `playwright.config.ts` (or `.js`, `.mjs`, `.cjs`),
    /// relative to this file; once loaded, relative to `codeBundle`'s root.
    #[schemars(length(min = 1, max = 1000))]
    pub config: String,
    /// The config's project(s) to run (`--project`); all of them (those
    /// that run in Chromium) when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectNames>,
    /// Only the tests whose title matches this regular expression
    /// (`--grep`), e.g. `@smoke`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub grep: Option<String>,
}

/// One project name, or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ProjectNames {
    One(#[schemars(length(min = 1, max = 200))] String),
    Many(#[schemars(length(min = 1, max = 20))] Vec<String>),
}

impl ProjectNames {
    /// The names, in the order written.
    pub fn names(&self) -> Vec<&str> {
        match self {
            ProjectNames::One(name) => vec![name.as_str()],
            ProjectNames::Many(names) => names.iter().map(String::as_str).collect(),
        }
    }
}

/// The files a Playwright project's suite needs (the config, the specs,
/// their local imports, fixtures, `globalSetup`, the lock file; never
/// `node_modules`), as the loader read them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeBundle {
    /// `sha256:` and the hex digest of the files' paths and contents.
    #[schemars(length(min = 71, max = 71))]
    pub sha256: String,
    /// Every file, by its path below the bundle's root (`/` separators).
    #[schemars(length(min = 1, max = MAX_BUNDLE_FILES))]
    pub files: Vec<BundleFile>,
}

/// The most files a code bundle holds.
pub const MAX_BUNDLE_FILES: usize = 2000;

/// One file of a code bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BundleFile {
    #[schemars(length(min = 1, max = 1000))]
    pub path: String,
    pub content: String,
}

fn default_test_command() -> String {
    "npx playwright test".to_owned()
}
fn default_browsers() -> Vec<String> {
    vec!["chromium".to_owned()]
}
