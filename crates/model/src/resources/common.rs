//! Shapes shared by several kinds: locations, runtimes, key/value pairs,
//! environment variables, alert settings, retry strategies, scripts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A text that names none of a string enum's values: what `FromStr` on a
/// [`string_enum!`] type (or [`crate::RunStatus`]) returns, naming the text
/// and every value it could have been.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{text}` (expected one of {})", allowed.join(", "))]
pub struct UnknownName {
    /// The enum's name, e.g. `CheckType`.
    pub kind: &'static str,
    pub text: String,
    /// The wire names, in declaration order.
    pub allowed: &'static [&'static str],
}

/// Declares a string enum whose wire names are given explicitly, and the list
/// of those names (used by rules, the emulator and error messages). `FromStr`
/// takes exactly the wire names, so text from the service or a file is parsed
/// once and matched exhaustively from there on.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        pub enum $name {
            $(#[serde(rename = $wire)] $variant,)+
        }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The wire names of [`Self::ALL`], in the same order.
            pub const NAMES: &'static [&'static str] = &[$($wire),+];
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire,)+ }
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl std::str::FromStr for $name {
            type Err = $crate::resources::common::UnknownName;
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text {
                    $($wire => Ok($name::$variant),)+
                    _ => Err($crate::resources::common::UnknownName {
                        kind: stringify!($name),
                        text: text.to_owned(),
                        allowed: $name::NAMES,
                    }),
                }
            }
        }
    };
}

string_enum! {
    /// A public data-center location (spec 2.1).
    Location {
        UsEast1 = "us-east-1", UsEast2 = "us-east-2", UsWest1 = "us-west-1", UsWest2 = "us-west-2",
        CaCentral1 = "ca-central-1", SaEast1 = "sa-east-1", EuWest1 = "eu-west-1",
        EuCentral1 = "eu-central-1", EuWest2 = "eu-west-2", EuWest3 = "eu-west-3",
        EuNorth1 = "eu-north-1", EuSouth1 = "eu-south-1", MeSouth1 = "me-south-1",
        ApSoutheast1 = "ap-southeast-1", ApNortheast1 = "ap-northeast-1", ApEast1 = "ap-east-1",
        ApSoutheast2 = "ap-southeast-2", ApSoutheast3 = "ap-southeast-3",
        ApNortheast2 = "ap-northeast-2", ApNortheast3 = "ap-northeast-3", ApSouth1 = "ap-south-1",
        AfSouth1 = "af-south-1",
    }
}

impl Location {
    /// Where a run goes when nothing names a location (a test session of a
    /// check without `locations`, a run record without one): the service's
    /// default, and the one default of monform and the emulator.
    pub const DEFAULT: Location = Location::UsEast1;

    /// Human-readable region name, as `GET /v1/locations` returns it.
    pub fn region_name(self) -> &'static str {
        match self {
            Location::UsEast1 => "N. Virginia",
            Location::UsEast2 => "Ohio",
            Location::UsWest1 => "N. California",
            Location::UsWest2 => "Oregon",
            Location::CaCentral1 => "Canada",
            Location::SaEast1 => "São Paulo",
            Location::EuWest1 => "Ireland",
            Location::EuCentral1 => "Frankfurt",
            Location::EuWest2 => "London",
            Location::EuWest3 => "Paris",
            Location::EuNorth1 => "Stockholm",
            Location::EuSouth1 => "Milan",
            Location::MeSouth1 => "Bahrain",
            Location::ApSoutheast1 => "Singapore",
            Location::ApNortheast1 => "Tokyo",
            Location::ApEast1 => "Hong Kong",
            Location::ApSoutheast2 => "Sydney",
            Location::ApSoutheast3 => "Jakarta",
            Location::ApNortheast2 => "Seoul",
            Location::ApNortheast3 => "Osaka",
            Location::ApSouth1 => "Mumbai",
            Location::AfSouth1 => "Cape Town",
        }
    }
}

string_enum! {
    /// A runtime: a fixed set of dependencies checks run with (spec 9.4).
    RuntimeId {
        R2026_04 = "2026.04", R2025_04 = "2025.04", R2024_09 = "2024.09", R2024_02 = "2024.02",
        R2023_09 = "2023.09", R2023_02 = "2023.02", R2022_10 = "2022.10",
    }
}

string_enum! {
    IpFamily { V4 = "IPv4", V6 = "IPv6" }
}

/// A header or query parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyValue {
    #[schemars(length(min = 1))]
    pub key: String,
    /// Hidden in every output when `secret` is true or the key names a
    /// credential (`Authorization`, `Cookie`, `X-Api-Key`, `*-Token`...).
    #[schemars(extend("x-sensitive-if" = "secret", "x-sensitive-if-named" = "key"))]
    pub value: String,
    #[serde(default)]
    pub locked: bool,
    /// monform only, never sent: hide the value in every output (plans,
    /// saved plans, export), as a header named like a credential is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(extend("x-meta" = true))]
    pub secret: bool,
}

/// An environment variable attached to a check or a group (spec 2.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnvironmentVariable {
    #[schemars(length(min = 1))]
    pub key: String,
    /// Hidden in every output when `secret` is true.
    #[schemars(extend("x-sensitive-if" = "secret"))]
    pub value: String,
    /// Only hides the value in the service's UI.
    #[serde(default)]
    pub locked: bool,
    /// Once set, the value can no longer be read back.
    #[serde(default)]
    pub secret: bool,
}

/// HTTP basic authentication for API checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BasicAuth {
    pub username: String,
    #[schemars(extend("x-sensitive" = true))]
    pub password: String,
}

/// Maximum number of environment variables on a check or a group (spec 8).
pub const MAX_ENVIRONMENT_VARIABLES: usize = 100;

string_enum! {
    EscalationType { RunBased = "RUN_BASED", TimeBased = "TIME_BASED" }
}

/// When and how often a failing check alerts (spec 2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AlertSettings {
    #[serde(default = "default_escalation")]
    pub escalation_type: EscalationType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_based_escalation: Option<RunBasedEscalation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_based_escalation: Option<TimeBasedEscalation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminders: Option<Reminders>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_run_failure_threshold: Option<ParallelRunFailureThreshold>,
}

fn default_escalation() -> EscalationType {
    EscalationType::RunBased
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunBasedEscalation {
    /// Consecutive failed runs before the first alert.
    #[schemars(range(min = 1, max = 5))]
    pub failed_run_threshold: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeBasedEscalation {
    /// Minutes a check fails before the first alert: 5, 10, 15 or 30.
    #[schemars(extend("enum" = [5, 10, 15, 30]))]
    pub minutes_failing_threshold: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reminders {
    /// Reminders after the first alert: 0 to 5, or 100000 for "until resolved".
    #[serde(default)]
    #[schemars(extend("enum" = [0, 1, 2, 3, 4, 5, 100000]))]
    pub amount: u32,
    /// Minutes between reminders.
    #[serde(default = "default_reminder_interval")]
    #[schemars(extend("enum" = [1, 2, 3, 4, 5, 10, 15, 30]))]
    pub interval: u32,
}

fn default_reminder_interval() -> u32 {
    5
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParallelRunFailureThreshold {
    #[serde(default)]
    pub enabled: bool,
    /// Percentage of parallel runs that must fail before alerting.
    #[serde(default = "default_parallel_percentage")]
    #[schemars(extend("enum" = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]))]
    pub percentage: u32,
}

fn default_parallel_percentage() -> u32 {
    10
}

string_enum! {
    RetryType { Fixed = "FIXED", Linear = "LINEAR", Exponential = "EXPONENTIAL", SingleRetry = "SINGLE_RETRY" }
}

string_enum! {
    RetryOnlyOn { NetworkError = "NETWORK_ERROR" }
}

/// How failed runs are retried (spec 2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetryStrategy {
    #[serde(rename = "type")]
    pub kind: RetryType,
    #[serde(default = "default_backoff")]
    #[schemars(range(min = 0))]
    pub base_backoff_seconds: u32,
    #[serde(default = "default_true")]
    pub same_region: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10))]
    pub max_retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 600))]
    pub max_duration_seconds: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_on: Option<Vec<RetryOnlyOn>>,
}

fn default_backoff() -> u32 {
    60
}

pub(crate) fn default_true() -> bool {
    true
}

pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}

/// Source code: written inline, or read by the loader from a file relative to
/// the resource file. After loading it is always the text itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Script(pub String);

/// The largest script the service takes: its request body is limited to
/// 1 MiB (spec: api-contract, 413), so a script whose JSON form (quotes and
/// escapes included) is larger can never be sent. A rule (`rules`) for
/// inline scripts and `{ file }` ones alike.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// The bytes `text` takes as a JSON string in a request body.
pub fn json_len(text: &str) -> usize {
    2 + text
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

impl JsonSchema for Script {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Script".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Source code, inline or `{ file: path }` relative to this file.",
            "x-script": true,
            "oneOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": { "file": { "type": "string", "minLength": 1 } },
                    "required": ["file"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// A reference to another resource of the project by its logical id. The
/// field it sits on says which section it points into (`x-ref`).
pub type LogicalRef = String;

string_enum! {
    /// What `monform reconcile` does when the service changed and the files
    /// did not (issue 30); `codify` writes the service's values into the
    /// files on a git branch and reports it (issue 33).
    DriftPolicy { Revert = "revert", Notify = "notify", Ignore = "ignore", Codify = "codify" }
}

/// monform only, never sent: `lifecycle: { ignoreChanges, drift }` on any
/// resource (issue 30).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lifecycle {
    /// Field paths as the plan writes them (`muted`, `request.headers`,
    /// `alertSettings.reminders.amount`): sent on create, never compared,
    /// never sent on update.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("uniqueItems" = true))]
    pub ignore_changes: Vec<String>,
    /// What `monform reconcile` does when the service changed and the files
    /// did not; the default is `[reconcile] drift` in monform.toml.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftPolicy>,
}

#[cfg(test)]
mod tests {
    use crate::resources::{CheckType, Location};

    #[test]
    fn from_str_takes_the_wire_names_and_names_the_rest() {
        for check_type in CheckType::ALL {
            assert_eq!(check_type.as_str().parse::<CheckType>(), Ok(*check_type));
        }
        assert_eq!(CheckType::NAMES.len(), CheckType::ALL.len());
        let err = "SMTP".parse::<CheckType>().err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some(
                "unknown CheckType `SMTP` (expected one of AGENTIC, API, BROWSER, HEARTBEAT, ICMP, MULTI_STEP, TCP, PLAYWRIGHT, URL, DNS)"
            )
        );
        // Wire names only: not the Rust name, not another case.
        assert!("api".parse::<CheckType>().is_err());
        assert!("Api".parse::<CheckType>().is_err());
        assert_eq!(Location::DEFAULT.as_str(), "us-east-1");
        assert_eq!(
            "960PX"
                .parse::<crate::resources::dashboard::DashboardWidth>()
                .ok()
                .map(|w| w.as_str()),
            Some("960PX")
        );
    }
}
