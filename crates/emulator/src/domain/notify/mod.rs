//! Alert notifications (spec 2.14, 6; issue 8): for each alert, one record
//! per alert channel subscribed to the check (or its group) whose
//! `sendFailure` / `sendRecovery` / `sendDegraded` allows it, and for
//! WEBHOOK and SLACK channels a real HTTP request.
//!
//! [`plan`] runs inside the transaction that settles the session: it records
//! the notification (kind `alertNotifications`) and, for channels with a
//! transport, queues the request (kind [`OUTBOX`]) with status IN_PROGRESS.
//! The [`dispatch`] task (one per server) sends queued requests outside the
//! store's lock, each with a [`SEND_TIMEOUT`], then records SUCCESS (2xx) or
//! FAILURE and the response body (or the transport error) as
//! `notificationResult`, truncated to [`RESULT_LIMIT`] bytes. Requests
//! queued when the emulator stops are sent after the next start.
//!
//! Choices where the specification is silent:
//! - Which flag: failure alerts (ALERT_FAILURE, _REMAIN, ALERT_DEGRADED_FAILURE)
//!   need `sendFailure`, recoveries (ALERT_RECOVERY, ALERT_DEGRADED_RECOVERY)
//!   `sendRecovery`, the other degraded alerts `sendDegraded` (all default
//!   true). A channel subscribed both directly and through the group is
//!   notified once; inactive subscriptions (`activated: false`) are not.
//! - WEBHOOK: `method` (default POST) to `url` with `queryParameters`
//!   appended and `headers` sent. With a `template`, the body is the
//!   template with `{{NAME}}` replaced (spaces allowed inside the braces;
//!   unknown names left as written) from the alert's fields under their
//!   API names (`alertType`, `checkId`, `checkName`, `runLocation`...) and
//!   upper-case aliases (`ALERT_TYPE`, `CHECK_NAME`, `CHECK_ID`,
//!   `CHECK_TYPE`, `CHECK_RESULT_ID`, `CHECK_ALERT_ID`, `RUN_LOCATION`,
//!   `RESPONSE_TIME`, `STATUS_CODE`, `ERROR`, `STARTED_AT`, `ALERT_TITLE`,
//!   `TAGS`); the same applies to the url, header and query values. Values
//!   are inserted as they are (not JSON-escaped). Without a template, the
//!   body is the JSON of [`payload`]. GET and HEAD send no body. A
//!   `webhookSecret` signs the body: `X-Monform-Signature: sha256=<hex HMAC-SHA256>`.
//! - SLACK: POST `{"text": ...}` (and `channel` when configured) to `url`.
//! - EMAIL: delivered into the emulator's mailbox (`mailbox.rs`, read
//!   over `GET /-/mailbox`), the alert's title as the subject and the
//!   payload as the text; recorded as SUCCESS at once.
//! - SMS, CALL, PAGERDUTY, OPSGENIE, SLACK_APP: recorded at once as
//!   FAILURE with a `notificationResult` saying the emulator has no
//!   transport for that type; nothing is sent.
//! - `alertConfig` is the channel's `config` with secrets masked as
//!   `*****`: the model's sensitive fields (`webhookSecret`, `apiKey`,
//!   `serviceKey`...), every webhook header and query parameter value,
//!   credentials and query strings in URLs, and a Slack webhook URL's path
//!   (it is the credential). Nothing is logged but the channel id and the
//!   error.
//!
//! `requests.rs` builds the HTTP request of a channel, `dispatch.rs` sends them.

mod dispatch;
pub mod mailbox;
mod requests;

pub use dispatch::dispatch;
use requests::{slack_request, webhook_request};

use std::sync::LazyLock;
use std::time::Duration;

use monform_model::Kind;
use monform_model::facts::{expand, facts};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::clock::iso;
use crate::ids::{self, id_text};
use crate::store::Objects;

/// Record kind: requests waiting to be sent (id: the notification id).
/// Record kind: alert notifications (spec 2.14).
pub const ALERT_NOTIFICATIONS: &str = "alertNotifications";

/// The alert types of spec 2.15.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AlertType {
    NoAlert,
    AlertFailure,
    AlertFailureRemain,
    AlertFailureDegraded,
    AlertRecovery,
    AlertDegraded,
    AlertDegradedRemain,
    AlertDegradedFailure,
    AlertDegradedRecovery,
    AlertSsl,
}

impl AlertType {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertType::NoAlert => "NO_ALERT",
            AlertType::AlertFailure => "ALERT_FAILURE",
            AlertType::AlertFailureRemain => "ALERT_FAILURE_REMAIN",
            AlertType::AlertFailureDegraded => "ALERT_FAILURE_DEGRADED",
            AlertType::AlertRecovery => "ALERT_RECOVERY",
            AlertType::AlertDegraded => "ALERT_DEGRADED",
            AlertType::AlertDegradedRemain => "ALERT_DEGRADED_REMAIN",
            AlertType::AlertDegradedFailure => "ALERT_DEGRADED_FAILURE",
            AlertType::AlertDegradedRecovery => "ALERT_DEGRADED_RECOVERY",
            AlertType::AlertSsl => "ALERT_SSL",
        }
    }

    /// Whether the check is failing after this alert (what the
    /// representative result and a channel's `sendFailure` go by).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            AlertType::AlertFailure | AlertType::AlertFailureRemain | AlertType::AlertDegradedFailure
        )
    }

    pub fn is_recovery(self) -> bool {
        matches!(self, AlertType::AlertRecovery | AlertType::AlertDegradedRecovery)
    }
}

/// Record kind: notifications waiting to be sent.
pub const OUTBOX: &str = "notificationOutbox";

/// How long one request may take.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest `notificationResult` kept, in bytes.
pub const RESULT_LIMIT: usize = 4096;

/// How often the dispatcher looks at the outbox when nothing wakes it.
const POLL: Duration = Duration::from_millis(500);

const MASK: &str = "*****";

/// Wakes the dispatchers when a request is queued.
static QUEUED: LazyLock<Notify> = LazyLock::new(Notify::new);

/// The channel flag an alert type needs.
fn flag(alert_type: &str) -> &'static str {
    match serde_json::from_value::<AlertType>(json!(alert_type)) {
        Ok(kind) if kind.is_failure() => "sendFailure",
        Ok(kind) if kind.is_recovery() => "sendRecovery",
        _ => "sendDegraded",
    }
}

/// Ids of the channels subscribed (and active) to `check` or its `group`.
fn subscribed(check: &Value, group: Option<&Value>) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for owner in std::iter::once(check).chain(group) {
        for subscription in owner["alertChannelSubscriptions"].as_array().into_iter().flatten() {
            let id = id_text(&subscription["alertChannelId"]);
            if subscription["activated"] != false && !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// Records the notifications of `alert` (raised for `check`, stored form,
/// in `group`, from `result`) and queues the requests to send. Runs inside
/// the settling transaction; sends nothing itself.
pub fn plan(
    db: &Connection,
    account: &str,
    check: &Value,
    group: Option<&Value>,
    alert: &Value,
    result: &Value,
    at: i64,
) -> rusqlite::Result<()> {
    let needed = flag(alert["alertType"].as_str().unwrap_or_default());
    let mut queued = false;
    for channel_id in subscribed(check, group) {
        let Some(channel) = db.get(account, Kind::AlertChannel.section(), &channel_id)? else {
            continue;
        };
        if channel[needed] == false {
            continue;
        }
        let id = ids::new();
        let channel_type = channel["type"].as_str().unwrap_or_default().to_owned();
        let payload = payload(check, alert, result);
        let request = match channel_type.as_str() {
            "WEBHOOK" => Some(webhook_request(&channel["config"], &payload)),
            "SLACK" => Some(slack_request(&channel["config"], &payload)),
            _ => None,
        };
        let (status, outcome) = match (&request, channel_type.as_str()) {
            (Some(_), _) => ("IN_PROGRESS", Value::Null),
            (None, "EMAIL") => email(db, account, &channel, &payload, at)?,
            (None, _) => (
                "FAILURE",
                json!(format!(
                    "not sent: the emulator has no transport for {channel_type} channels"
                )),
            ),
        };
        let record = json!({
            "id": id,
            "type": channel_type,
            "status": status,
            "alertConfig": masked_config(&channel),
            "notificationResult": outcome,
            "timestamp": iso(at),
            "checkType": check["checkType"],
            "checkId": check["id"],
            "checkAlertId": alert["id"],
            "checkResultId": result["id"],
            "alertChannelId": channel["id"],
        });
        db.insert(
            account,
            ALERT_NOTIFICATIONS,
            &id,
            Some(&id_text(&check["id"])),
            at,
            &record,
        )?;
        if let Some(request) = request {
            db.insert(account, OUTBOX, &id, None, at, &request)?;
            queued = true;
        }
    }
    if queued {
        // The dispatcher waits for the store's lock, so it reads the
        // outbox once this transaction has committed.
        QUEUED.notify_waiters();
    }
    Ok(())
}

/// An alert to an EMAIL channel, delivered into the emulator's mailbox
/// (`mailbox.rs`): the notification's status and result.
fn email(
    db: &Connection,
    account: &str,
    channel: &Value,
    payload: &Value,
    at: i64,
) -> rusqlite::Result<(&'static str, Value)> {
    let to = channel["config"]["address"].as_str().unwrap_or_default();
    let subject = payload["alertTitle"].as_str().unwrap_or_default();
    let text = serde_json::to_string_pretty(payload).unwrap_or_default();
    let mail = mailbox::Mail {
        to,
        subject,
        text: &text,
        source: "alert",
        channel_id: channel["id"].clone(),
    };
    if let Some((field, problem)) = mailbox::problem(&mail) {
        return Ok(("FAILURE", json!(format!("not delivered: {field}: {problem}"))));
    }
    let message = mailbox::deliver(db, account, &mail, at)?;
    Ok((
        "SUCCESS",
        json!(format!(
            "delivered to the emulator's mailbox (GET /-/mailbox), message {}",
            message["id"].as_str().unwrap_or_default()
        )),
    ))
}

/// What a notification says about an alert (the webhook body without a
/// template, and the template's variables).
pub fn payload(check: &Value, alert: &Value, result: &Value) -> Value {
    json!({
        "alertType": alert["alertType"],
        "alertTitle": title(check, alert),
        "checkAlertId": alert["id"],
        "checkId": check["id"],
        "checkName": check["name"],
        "checkType": check["checkType"],
        "checkResultId": result["id"],
        "runLocation": alert["runLocation"],
        "responseTime": alert["responseTime"],
        "statusCode": alert["statusCode"],
        "error": alert["error"],
        "startedAt": alert["startedAt"],
        "timestamp": alert["created_at"],
        "tags": check.get("tags").cloned().unwrap_or(json!([])),
    })
}

/// One line about the alert, e.g. `check "Shop" (API) is failing in eu-west-1`.
fn title(check: &Value, alert: &Value) -> String {
    let what = match alert["alertType"].as_str().unwrap_or_default() {
        "ALERT_FAILURE" => "is failing",
        "ALERT_FAILURE_REMAIN" => "is still failing",
        "ALERT_DEGRADED_FAILURE" => "went from degraded to failing",
        "ALERT_RECOVERY" => "recovered",
        "ALERT_DEGRADED" => "is degraded",
        "ALERT_DEGRADED_REMAIN" => "is still degraded",
        "ALERT_FAILURE_DEGRADED" => "went from failing to degraded",
        "ALERT_DEGRADED_RECOVERY" => "is no longer degraded",
        other => other,
    };
    format!(
        "check \"{}\" ({}) {what} in {}",
        check["name"].as_str().unwrap_or_default(),
        check["checkType"].as_str().unwrap_or_default(),
        alert["runLocation"].as_str().unwrap_or("?"),
    )
}

/// The channel's `config` as a notification record shows it: secrets masked.
pub fn masked_config(channel: &Value) -> Value {
    let mut channel = channel.clone();
    for pattern in &facts(Kind::AlertChannel, &channel).sensitive {
        for path in expand(pattern, &channel.clone()) {
            if let Some(value) = path.segments().iter().try_fold(&mut channel, |v, s| match s {
                monform_model::Segment::Key(k) => v.get_mut(k.as_str()),
                monform_model::Segment::Index(i) => v.get_mut(*i),
            }) && !value.is_null()
            {
                *value = json!(MASK);
            }
        }
    }
    let is_slack = channel["type"] == "SLACK";
    let mut config = channel["config"].take();
    for list in ["headers", "queryParameters"] {
        for item in config.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
            if item.get("value").is_some() {
                item["value"] = json!(MASK);
            }
        }
    }
    if let Some(url) = config.get("url").and_then(Value::as_str) {
        config["url"] = json!(mask_url(url, is_slack));
    }
    config
}

/// `url` without credentials or query values (and, for Slack webhooks,
/// without the path, which is the credential).
fn mask_url(url: &str, hide_path: bool) -> String {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        // Not a URL we can take apart: show nothing of it.
        return MASK.to_owned();
    };
    if !parsed.username().is_empty() {
        let _ = parsed.set_username(MASK);
    }
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some(MASK));
    }
    if parsed.query().is_some() {
        let keys: Vec<String> = parsed.query_pairs().map(|(k, _)| k.into_owned()).collect();
        parsed
            .query_pairs_mut()
            .clear()
            .extend_pairs(keys.iter().map(|k| (k.as_str(), MASK)));
    }
    if hide_path && parsed.path() != "/" {
        parsed.set_path(MASK);
    }
    parsed.to_string()
}

// ---------------------------------------------------------------------------
// Sending.
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn secrets_are_masked() {
        let webhook = json!({ "id": 1, "type": "WEBHOOK", "config": {
            "name": "hook", "url": "https://user:pw@example.com/hook?token=abc", "method": "POST",
            "headers": [{ "key": "Authorization", "value": "Bearer s3cret" }],
            "queryParameters": [{ "key": "key", "value": "k3y" }],
            "webhookSecret": "shh" } });
        let config = masked_config(&webhook);
        let text = config.to_string();
        for secret in ["pw", "abc", "s3cret", "k3y", "shh"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(config["headers"][0]["key"], "Authorization");
        assert_eq!(config["name"], "hook");
        let opsgenie = json!({ "type": "OPSGENIE", "config": { "name": "o", "apiKey": "key-123", "region": "EU", "priority": "P1" } });
        assert_eq!(masked_config(&opsgenie)["apiKey"], MASK);
        let slack = json!({ "type": "SLACK", "config": { "url": "https://hooks.slack.com/services/T0/B0/XYZ" } });
        let url = masked_config(&slack)["url"].as_str().unwrap().to_owned();
        assert!(
            url.starts_with("https://hooks.slack.com/") && !url.contains("XYZ"),
            "{url}"
        );
    }

    #[test]
    fn flags_by_alert_type() {
        assert_eq!(flag("ALERT_FAILURE"), "sendFailure");
        assert_eq!(flag("ALERT_DEGRADED_FAILURE"), "sendFailure");
        assert_eq!(flag("ALERT_RECOVERY"), "sendRecovery");
        assert_eq!(flag("ALERT_DEGRADED"), "sendDegraded");
        assert_eq!(flag("ALERT_FAILURE_DEGRADED"), "sendDegraded");
        let check = json!({ "alertChannelSubscriptions": [{ "alertChannelId": 1, "activated": true }, { "alertChannelId": 2, "activated": false }] });
        let group = json!({ "alertChannelSubscriptions": [{ "alertChannelId": 1 }, { "alertChannelId": 3, "activated": true }] });
        assert_eq!(subscribed(&check, Some(&group)), ["1", "3"]);
    }
}
