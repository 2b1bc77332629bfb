//! Alert channels: where alerts are sent. Typed per channel `type`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

string_enum! {
    AlertChannelType {
        Email = "EMAIL", Slack = "SLACK", SlackApp = "SLACK_APP", Webhook = "WEBHOOK", Sms = "SMS",
        Pagerduty = "PAGERDUTY", Opsgenie = "OPSGENIE", Call = "CALL",
    }
}

/// An alert channel: its `type`, the `config` of that type, and when it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum AlertChannel {
    #[serde(rename = "EMAIL")]
    Email(Channel<EmailConfig>),
    #[serde(rename = "SLACK")]
    Slack(Channel<SlackConfig>),
    #[serde(rename = "SLACK_APP")]
    SlackApp(Channel<SlackAppConfig>),
    #[serde(rename = "WEBHOOK")]
    Webhook(Channel<WebhookConfig>),
    #[serde(rename = "SMS")]
    Sms(Channel<PhoneConfig>),
    #[serde(rename = "PAGERDUTY")]
    Pagerduty(Channel<PagerdutyConfig>),
    #[serde(rename = "OPSGENIE")]
    Opsgenie(Channel<OpsgenieConfig>),
    #[serde(rename = "CALL")]
    Call(Channel<PhoneConfig>),
}

impl AlertChannel {
    pub fn channel_type(&self) -> AlertChannelType {
        match self {
            AlertChannel::Email(_) => AlertChannelType::Email,
            AlertChannel::Slack(_) => AlertChannelType::Slack,
            AlertChannel::SlackApp(_) => AlertChannelType::SlackApp,
            AlertChannel::Webhook(_) => AlertChannelType::Webhook,
            AlertChannel::Sms(_) => AlertChannelType::Sms,
            AlertChannel::Pagerduty(_) => AlertChannelType::Pagerduty,
            AlertChannel::Opsgenie(_) => AlertChannelType::Opsgenie,
            AlertChannel::Call(_) => AlertChannelType::Call,
        }
    }
}

/// The settings every channel type has, around its typed `config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "{C}Channel")]
pub struct Channel<C> {
    pub config: C,
    #[serde(default = "default_true")]
    pub send_recovery: bool,
    #[serde(default = "default_true")]
    pub send_failure: bool,
    #[serde(default = "default_true")]
    pub send_degraded: bool,
    /// Alert on SSL certificates about to expire.
    #[serde(default)]
    pub ssl_expiry: bool,
    /// Days before expiry to alert.
    #[serde(default = "default_ssl_expiry_threshold")]
    #[schemars(range(min = 1, max = 30))]
    pub ssl_expiry_threshold: u32,
    /// monform only: refuse to delete this channel.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

fn default_ssl_expiry_threshold() -> u32 {
    30
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EmailConfig {
    #[schemars(length(min = 3), extend("x-natural-key" = true))]
    pub address: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlackConfig {
    /// Incoming-webhook URL.
    #[schemars(length(min = 1), extend("x-natural-key" = true))]
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlackAppConfig {
    #[schemars(length(min = 1), extend("x-natural-key" = true))]
    pub channel: String,
}

string_enum! { WebhookMethod { Get = "GET", Post = "POST", Put = "PUT", Patch = "PATCH", Head = "HEAD", Delete = "DELETE" } }

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookConfig {
    #[schemars(length(min = 1))]
    pub name: String,
    #[schemars(length(min = 1), extend("x-natural-key" = true))]
    pub url: String,
    #[serde(default = "default_webhook_method")]
    pub method: WebhookMethod,
    #[serde(default)]
    pub headers: Vec<KeyValue>,
    #[serde(default)]
    pub query_parameters: Vec<KeyValue>,
    /// Body template; the service fills in the alert's fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Script>,
    /// Signs each request; never printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-sensitive" = true))]
    pub webhook_secret: Option<String>,
}

fn default_webhook_method() -> WebhookMethod {
    WebhookMethod::Post
}

/// SMS and CALL channels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PhoneConfig {
    /// E.164 phone number, e.g. +31612345678.
    #[schemars(regex(pattern = r"^\+[1-9][0-9]{6,14}$"), extend("x-natural-key" = true))]
    pub number: String,
    #[schemars(length(min = 1))]
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PagerdutyConfig {
    /// Integration key; never printed.
    #[schemars(length(min = 1), extend("x-natural-key" = true, "x-sensitive" = true))]
    pub service_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
}

string_enum! { OpsgenieRegion { Us = "US", Eu = "EU" } }
string_enum! { OpsgeniePriority { P1 = "P1", P2 = "P2", P3 = "P3", P4 = "P4", P5 = "P5" } }

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpsgenieConfig {
    #[schemars(length(min = 1), extend("x-natural-key" = true))]
    pub name: String,
    /// API key; never printed.
    #[schemars(length(min = 1), extend("x-sensitive" = true))]
    pub api_key: String,
    pub region: OpsgenieRegion,
    pub priority: OpsgeniePriority,
}
