//! Checks: the shared fields of spec 2.1 and one body per check type.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

mod script;
pub use script::{
    BrowserCheck, BundleFile, CodeBundle, Dependency, MAX_BUNDLE_FILES, MultiStepCheck, PlaywrightCheck,
    PlaywrightEngine, PlaywrightProject, ProjectNames, ScriptCheck,
};
use script::{BrowserName, MultiStepName, ScriptCheckSchema};

string_enum! {
    /// The ten check types of spec 2.1.
    CheckType {
        Agentic = "AGENTIC", Api = "API", Browser = "BROWSER", Heartbeat = "HEARTBEAT",
        Icmp = "ICMP", MultiStep = "MULTI_STEP", Tcp = "TCP", Playwright = "PLAYWRIGHT",
        Url = "URL", Dns = "DNS",
    }
}

impl CheckType {
    /// The `checkType` of a check in its API form (a missing one is the
    /// empty text, which names no type).
    pub fn of_check(check: &serde_json::Value) -> Result<CheckType, UnknownName> {
        check["checkType"].as_str().unwrap_or_default().parse()
    }

    /// The path segment of `POST /v1/checks/{type}`.
    pub fn path_segment(self) -> &'static str {
        match self {
            CheckType::Agentic => "agentic",
            CheckType::Api => "api",
            CheckType::Browser => "browser",
            CheckType::Heartbeat => "heartbeat",
            CheckType::Icmp => "icmp",
            CheckType::MultiStep => "multistep",
            CheckType::Tcp => "tcp",
            CheckType::Playwright => "playwright",
            CheckType::Url => "url",
            CheckType::Dns => "dns",
        }
    }

    /// Only these types may run at sub-minute frequency (frequency 0, spec 2.4).
    pub fn allows_sub_minute(self) -> bool {
        matches!(self, CheckType::Api | CheckType::Tcp)
    }

    /// Whether a run is a script in a browser (Node.js and Playwright): the
    /// runner's browser pool and the emulator's session slots take these.
    pub fn runs_in_browser(self) -> bool {
        matches!(self, CheckType::Browser | CheckType::MultiStep | CheckType::Playwright)
    }

    /// Whether the monitored job pings the service instead of being run:
    /// nothing can trigger such a check, and a run only judges the pings.
    pub fn is_pinged(self) -> bool {
        matches!(self, CheckType::Heartbeat)
    }
}

/// Frequencies (minutes) the service schedules; 0 means sub-minute.
pub const FREQUENCIES: &[u32] = &[0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440];
/// Sub-minute offsets (seconds) allowed with frequency 0.
pub const SUB_MINUTE_OFFSETS: &[u32] = &[10, 20, 30];
/// Maximum length of a check or status page description.
pub const MAX_DESCRIPTION: usize = 500;
/// Maximum length of an agentic check's prompt.
pub const MAX_PROMPT: usize = 10_000;
/// Response-time thresholds accept 0..=this many milliseconds (spec 2.1):
/// also the longest a runner lets any run take.
pub const MAX_RESPONSE_TIME_MS: u32 = 300_000;
/// `degradedResponseTime` when a check does not set it (spec 2.1).
pub const DEFAULT_DEGRADED_RESPONSE_TIME_MS: u32 = 10_000;
/// `maxResponseTime` when a check does not set it (spec 2.1).
pub const DEFAULT_MAX_RESPONSE_TIME_MS: u32 = 20_000;

/// A check: the shared fields plus the body of its `checkType`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "checkType")]
pub enum Check {
    #[serde(rename = "AGENTIC")]
    Agentic(Typed<AgenticCheck>),
    #[serde(rename = "API")]
    Api(Typed<ApiCheck>),
    #[serde(rename = "BROWSER")]
    Browser(#[schemars(with = "ScriptCheckSchema<BrowserName>")] Typed<BrowserCheck>),
    #[serde(rename = "HEARTBEAT")]
    Heartbeat(Typed<HeartbeatCheck>),
    #[serde(rename = "ICMP")]
    Icmp(Typed<IcmpCheck>),
    #[serde(rename = "MULTI_STEP")]
    MultiStep(#[schemars(with = "ScriptCheckSchema<MultiStepName>")] Typed<MultiStepCheck>),
    #[serde(rename = "TCP")]
    Tcp(Typed<TcpCheck>),
    #[serde(rename = "PLAYWRIGHT")]
    Playwright(Typed<PlaywrightCheck>),
    #[serde(rename = "URL")]
    Url(Typed<UrlCheck>),
    #[serde(rename = "DNS")]
    Dns(Typed<DnsCheck>),
}

impl Check {
    pub fn check_type(&self) -> CheckType {
        match self {
            Check::Agentic(_) => CheckType::Agentic,
            Check::Api(_) => CheckType::Api,
            Check::Browser(_) => CheckType::Browser,
            Check::Heartbeat(_) => CheckType::Heartbeat,
            Check::Icmp(_) => CheckType::Icmp,
            Check::MultiStep(_) => CheckType::MultiStep,
            Check::Tcp(_) => CheckType::Tcp,
            Check::Playwright(_) => CheckType::Playwright,
            Check::Url(_) => CheckType::Url,
            Check::Dns(_) => CheckType::Dns,
        }
    }

    pub fn common(&self) -> &CheckCommon {
        match self {
            Check::Agentic(c) => &c.common,
            Check::Api(c) => &c.common,
            Check::Browser(c) => &c.common,
            Check::Heartbeat(c) => &c.common,
            Check::Icmp(c) => &c.common,
            Check::MultiStep(c) => &c.common,
            Check::Tcp(c) => &c.common,
            Check::Playwright(c) => &c.common,
            Check::Url(c) => &c.common,
            Check::Dns(c) => &c.common,
        }
    }

    /// Environment variables, for the types that carry them.
    pub fn environment_variables(&self) -> Option<&[EnvironmentVariable]> {
        match self {
            Check::Browser(c) => c.spec.environment_variables.as_deref(),
            Check::MultiStep(c) => c.spec.environment_variables.as_deref(),
            Check::Playwright(c) => c.spec.environment_variables.as_deref(),
            Check::Agentic(c) => c.spec.environment_variables.as_deref(),
            _ => None,
        }
    }
}

/// The shared fields of a check and the body of one check type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{T}")]
pub struct Typed<T> {
    #[serde(flatten)]
    pub common: CheckCommon,
    #[serde(flatten)]
    pub spec: T,
}

/// Fields every check type has (spec 2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckCommon {
    #[schemars(length(min = 1))]
    pub name: String,
    /// Whether the check runs.
    #[serde(default = "default_true")]
    pub activated: bool,
    /// When true, no notifications are sent on failure or recovery.
    #[serde(default)]
    pub muted: bool,
    /// Deprecated: retryStrategy replaces it.
    #[serde(default = "default_true")]
    pub double_check: bool,
    /// Inverts what counts as a failure.
    #[serde(default)]
    pub should_fail: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true))]
    pub locations: Option<Vec<Location>>,
    /// Logical ids of managed private locations, or slugs of existing ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "privateLocations", "x-ref-soft" = true, "x-wire" = "privateLocations", "x-set" = true))]
    pub private_locations: Option<Vec<LogicalRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-set" = true))]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert_settings: Option<AlertSettings>,
    /// When true the account's alert settings apply instead of the check's own.
    #[serde(default = "default_true")]
    pub use_global_alert_settings: bool,
    /// Logical id of the check group this check belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "groups", "x-wire" = "groupId"))]
    pub group: Option<LogicalRef>,
    /// Run order inside the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub group_order: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_id: Option<RuntimeId>,
    /// Logical ids of the alert channels this check notifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "alertChannels", "x-wire" = "alertChannelSubscriptions", "x-wire-shape" = "subscriptions", "x-set" = true))]
    pub alert_channels: Option<Vec<LogicalRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_strategy: Option<RetryStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_incident: Option<TriggerIncident>,
    /// Run in all selected locations at once instead of round-robin.
    #[serde(default)]
    pub run_parallel: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub description: Option<String>,
    /// Minutes between runs; 0 is sub-minute (API and TCP only, see frequencyOffset).
    #[serde(default = "default_frequency")]
    #[schemars(extend("enum" = FREQUENCIES))]
    pub frequency: u32,
    /// Spreads runs inside the frequency; with frequency 0 it is the period in seconds (10, 20 or 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub frequency_offset: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_check_domain: Option<String>,
    /// Milliseconds after which a run counts as degraded.
    #[serde(default = "default_degraded_response_time")]
    #[schemars(range(min = 0, max = MAX_RESPONSE_TIME_MS))]
    pub degraded_response_time: u32,
    /// Milliseconds after which a run counts as failed.
    #[serde(default = "default_max_response_time")]
    #[schemars(range(min = 0, max = MAX_RESPONSE_TIME_MS))]
    pub max_response_time: u32,
    /// monform only: refuse to delete this check.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

pub(crate) fn default_frequency() -> u32 {
    crate::runs::DEFAULT_FREQUENCY as u32
}
fn default_degraded_response_time() -> u32 {
    DEFAULT_DEGRADED_RESPONSE_TIME_MS
}
fn default_max_response_time() -> u32 {
    DEFAULT_MAX_RESPONSE_TIME_MS
}

string_enum! {
    IncidentSeverity { Critical = "CRITICAL", Major = "MAJOR", Medium = "MEDIUM", Minor = "MINOR" }
}

/// Makes the check open and resolve an incident on a status page service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TriggerIncident {
    /// Logical id of the status page service the incident is opened on.
    #[schemars(extend("x-ref" = "statusPageServices", "x-wire" = "serviceId"))]
    pub service: LogicalRef,
    pub severity: IncidentSeverity,
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub notify_subscribers: bool,
}

/// Declares an assertion type with its allowed sources and comparisons.
macro_rules! assertion {
    ($(#[$meta:meta])* $name:ident, $source:ident, $comparison:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            pub source: $source,
            pub comparison: $comparison,
            #[serde(default)]
            pub property: String,
            #[serde(default)]
            pub target: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub regex: Option<String>,
        }
    };
}

string_enum! { ApiAssertionSource { StatusCode = "STATUS_CODE", JsonBody = "JSON_BODY", Headers = "HEADERS", TextBody = "TEXT_BODY", ResponseTime = "RESPONSE_TIME" } }
string_enum! {
    /// Comparisons of API, DNS and group-default assertions.
    Comparison {
        Equals = "EQUALS", NotEquals = "NOT_EQUALS", HasKey = "HAS_KEY", NotHasKey = "NOT_HAS_KEY",
        HasValue = "HAS_VALUE", NotHasValue = "NOT_HAS_VALUE", IsEmpty = "IS_EMPTY", NotEmpty = "NOT_EMPTY",
        GreaterThan = "GREATER_THAN", LessThan = "LESS_THAN", Contains = "CONTAINS",
        NotContains = "NOT_CONTAINS", IsNull = "IS_NULL", NotNull = "NOT_NULL",
    }
}
assertion!(ApiAssertion, ApiAssertionSource, Comparison);

string_enum! { TcpAssertionSource { ResponseData = "RESPONSE_DATA", ResponseTime = "RESPONSE_TIME" } }
string_enum! {
    TcpComparison {
        Equals = "EQUALS", NotEquals = "NOT_EQUALS", IsEmpty = "IS_EMPTY", NotEmpty = "NOT_EMPTY",
        LessThan = "LESS_THAN", GreaterThan = "GREATER_THAN", Contains = "CONTAINS", NotContains = "NOT_CONTAINS",
    }
}
assertion!(TcpAssertion, TcpAssertionSource, TcpComparison);

string_enum! { UrlAssertionSource { StatusCode = "STATUS_CODE" } }
string_enum! { UrlComparison { Equals = "EQUALS", NotEquals = "NOT_EQUALS", LessThan = "LESS_THAN", GreaterThan = "GREATER_THAN" } }
assertion!(UrlAssertion, UrlAssertionSource, UrlComparison);

string_enum! { DnsAssertionSource { ResponseTime = "RESPONSE_TIME", ResponseCode = "RESPONSE_CODE", TextAnswer = "TEXT_ANSWER", JsonAnswer = "JSON_ANSWER" } }
assertion!(DnsAssertion, DnsAssertionSource, Comparison);

string_enum! { IcmpAssertionSource { Latency = "LATENCY", JsonResponse = "JSON_RESPONSE" } }
string_enum! {
    IcmpComparison {
        Equals = "EQUALS", NotEquals = "NOT_EQUALS", IsEmpty = "IS_EMPTY", NotEmpty = "NOT_EMPTY",
        GreaterThan = "GREATER_THAN", LessThan = "LESS_THAN", Contains = "CONTAINS",
        NotContains = "NOT_CONTAINS", IsNull = "IS_NULL", NotNull = "NOT_NULL",
    }
}
assertion!(IcmpAssertion, IcmpAssertionSource, IcmpComparison);

string_enum! { HttpMethod { Get = "GET", Post = "POST", Put = "PUT", Head = "HEAD", Delete = "DELETE", Patch = "PATCH" } }
string_enum! { BodyType { Json = "JSON", Form = "FORM", Raw = "RAW", Graphql = "GRAPHQL", None = "NONE" } }

/// The HTTP request an API check makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiRequest {
    #[serde(default = "default_method")]
    pub method: HttpMethod,
    #[schemars(length(min = 1, max = 2048))]
    pub url: String,
    #[serde(default = "default_true")]
    pub follow_redirects: bool,
    #[serde(default, rename = "skipSSL")]
    pub skip_ssl: bool,
    #[serde(default = "default_ip_family")]
    pub ip_family: IpFamily,
    #[serde(default)]
    pub body: String,
    #[serde(default = "default_body_type")]
    pub body_type: BodyType,
    #[serde(default)]
    pub headers: Vec<KeyValue>,
    #[serde(default)]
    pub query_parameters: Vec<KeyValue>,
    #[serde(default)]
    pub assertions: Vec<ApiAssertion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuth>,
}

fn default_method() -> HttpMethod {
    HttpMethod::Get
}
pub(crate) fn default_ip_family() -> IpFamily {
    IpFamily::V4
}
fn default_body_type() -> BodyType {
    BodyType::None
}

/// API check: an HTTP request with assertions, optional setup and teardown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiCheck {
    pub request: ApiRequest,
    /// Logical id of the snippet run before the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "snippets", "x-wire" = "setupSnippetId"))]
    pub setup_snippet: Option<LogicalRef>,
    /// Logical id of the snippet run after the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-ref" = "snippets", "x-wire" = "tearDownSnippetId"))]
    pub tear_down_snippet: Option<LogicalRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_setup_script: Option<Script>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_tear_down_script: Option<Script>,
}

string_enum! { TimeUnit { Seconds = "seconds", Minutes = "minutes", Hours = "hours", Days = "days" } }

/// When pings are expected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Heartbeat {
    /// Interval expected between pings.
    #[schemars(range(min = 1))]
    pub period: u32,
    pub period_unit: TimeUnit,
    /// Grace added to the period before a missing ping fails the check.
    #[schemars(range(min = 0))]
    pub grace: u32,
    pub grace_unit: TimeUnit,
}

/// Heartbeat check: fails when the monitored job stops pinging.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeartbeatCheck {
    pub heartbeat: Heartbeat,
}

/// The TCP connection a TCP check opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TcpRequest {
    #[schemars(length(min = 1, max = 2048))]
    pub hostname: String,
    #[schemars(range(min = 1, max = 65535))]
    pub port: u32,
    /// Sent after connecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub data: Option<String>,
    #[serde(default)]
    pub assertions: Vec<TcpAssertion>,
    #[serde(default = "default_ip_family")]
    pub ip_family: IpFamily,
}

/// TCP check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TcpCheck {
    pub request: TcpRequest,
}

/// The page a URL check fetches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UrlRequest {
    #[schemars(length(min = 1, max = 2048))]
    pub url: String,
    #[serde(default = "default_true")]
    pub follow_redirects: bool,
    #[serde(default, rename = "skipSSL")]
    pub skip_ssl: bool,
    #[serde(default = "default_ip_family")]
    pub ip_family: IpFamily,
    #[serde(default)]
    pub assertions: Vec<UrlAssertion>,
}

/// URL check: a plain GET with status-code assertions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UrlCheck {
    pub request: UrlRequest,
}

string_enum! { DnsRecordType { A = "A", Aaaa = "AAAA", Cname = "CNAME", Mx = "MX", Txt = "TXT", Soa = "SOA", Ns = "NS", Https = "HTTPS" } }
string_enum! { DnsProtocol { Tcp = "TCP", Udp = "UDP" } }

/// The DNS query a DNS check makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DnsRequest {
    #[schemars(length(min = 1, max = 100))]
    pub query: String,
    pub record_type: DnsRecordType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub name_server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<u32>,
    #[serde(default = "default_dns_protocol")]
    pub protocol: DnsProtocol,
    #[serde(default)]
    pub assertions: Vec<DnsAssertion>,
}

fn default_dns_protocol() -> DnsProtocol {
    DnsProtocol::Udp
}

/// DNS check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsCheck {
    pub request: DnsRequest,
}

/// The pings an ICMP check sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IcmpRequest {
    #[schemars(length(min = 1, max = 2048))]
    pub hostname: String,
    #[serde(default = "default_ip_family")]
    pub ip_family: IpFamily,
    #[serde(default = "default_ping_count")]
    #[schemars(range(min = 1, max = 50))]
    pub ping_count: u32,
    #[serde(default)]
    pub assertions: Vec<IcmpAssertion>,
}

fn default_ping_count() -> u32 {
    10
}

/// ICMP check: ping a host, with latency and packet-loss thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IcmpCheck {
    pub request: IcmpRequest,
    /// Packet loss (percent, above 0, at most 100) at which the check degrades.
    #[serde(default = "default_degraded_packet_loss")]
    #[schemars(range(max = 100), extend("exclusiveMinimum" = 0))]
    pub degraded_packet_loss_threshold: f64,
    /// Packet loss (percent, above 0, at most 100, at least the degraded threshold) at which it fails.
    #[serde(default = "default_max_packet_loss")]
    #[schemars(range(max = 100), extend("exclusiveMinimum" = 0))]
    pub max_packet_loss_threshold: f64,
}

pub(crate) fn default_degraded_packet_loss() -> f64 {
    10.0
}
pub(crate) fn default_max_packet_loss() -> f64 {
    20.0
}

/// Agentic check: an AI agent follows a prompt and judges the outcome.
/// The spec shows no create body for this type; monform's choice is a
/// prompt plus environment variables (see ARCHITECTURE.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgenticCheck {
    /// What the agent must do and verify.
    // 1 to MAX_PROMPT characters: a rule (`rules`), as schemars drops length limits on `Script`.
    pub prompt: Script,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub environment_variables: Option<Vec<EnvironmentVariable>>,
}
