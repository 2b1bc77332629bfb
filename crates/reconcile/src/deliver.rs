//! Sending reports to the project's own alert channels named by
//! `[reconcile] notify`: WEBHOOK channels get the JSON body of `report.rs`
//! (with the channel's method, headers and query parameters), SLACK
//! channels a `{"text"}` message at their incoming-webhook URL. SLO
//! burn-rate alerts may also go to EMAIL channels: a message for the
//! channel's address through the service's mail delivery (the emulator's
//! `POST /-/mailbox`, [`send_email`]); a service without one answers 404,
//! said as such.

use std::time::Duration;

use monform_config::{Desired, Reconcile};
use monform_model::{Address, Kind};
use serde_json::Value;

/// The HTTP client reports are sent with (for front ends building a `Context`).
pub use reqwest::Client as HttpClient;

/// A channel reports go to.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    pub id: String,
    pub kind: ChannelKind,
    /// The webhook's URL; for EMAIL, the recipient's address.
    pub url: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub query: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    Webhook,
    Slack,
    Email,
}

/// The channels `[reconcile] notify` names, or why one cannot be used.
pub fn channels(desired: &Desired, settings: &Reconcile) -> Result<Vec<Channel>, String> {
    let ids: Vec<String> = settings.notify.iter().map(|(id, _)| id.clone()).collect();
    channels_named(desired, &ids, "[reconcile] notify", false)
}

/// The alert channels of the files `ids` names (`source` says who names
/// them, for the errors; `email`: whether EMAIL channels are taken), or
/// why one cannot be used.
pub fn channels_named(desired: &Desired, ids: &[String], source: &str, email: bool) -> Result<Vec<Channel>, String> {
    let mut found = Vec::new();
    for id in ids {
        let address = Address::new(Kind::AlertChannel, id.clone());
        let Some(resource) = desired.resources.get(&address) else {
            return Err(format!(
                "{source} names `{id}`, which is not an alert channel of this project"
            ));
        };
        let json = resource.resource.to_json();
        let config = &json["config"];
        let pairs = |key: &str| -> Vec<(String, String)> {
            config[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|kv| Some((kv["key"].as_str()?.to_owned(), kv["value"].as_str()?.to_owned())))
                .collect()
        };
        let url = config["url"].as_str().unwrap_or_default().to_owned();
        let channel = match json["type"].as_str() {
            Some("WEBHOOK") => Channel {
                id: id.clone(),
                kind: ChannelKind::Webhook,
                url,
                method: config["method"].as_str().unwrap_or("POST").to_owned(),
                headers: pairs("headers"),
                query: pairs("queryParameters"),
            },
            Some("SLACK") => Channel {
                id: id.clone(),
                kind: ChannelKind::Slack,
                url,
                method: "POST".to_owned(),
                headers: Vec::new(),
                query: Vec::new(),
            },
            Some("EMAIL") if email => Channel {
                id: id.clone(),
                kind: ChannelKind::Email,
                url: config["address"].as_str().unwrap_or_default().to_owned(),
                method: "POST".to_owned(),
                headers: Vec::new(),
                query: Vec::new(),
            },
            other => {
                return Err(format!(
                    "{source} names `{id}`, a {} channel: the reconciler's reports go to WEBHOOK and SLACK channels{}",
                    other.unwrap_or("?"),
                    if email { " (and EMAIL)" } else { "" }
                ));
            }
        };
        found.push(channel);
    }
    Ok(found)
}

/// Sends `body` to `channel`. The error names the channel, never its URL
/// (a Slack URL is a credential).
pub async fn send(http: &reqwest::Client, channel: &Channel, body: &Value) -> Result<(), String> {
    let method = reqwest::Method::from_bytes(channel.method.as_bytes()).unwrap_or(reqwest::Method::POST);
    let mut request = http
        .request(method, &channel.url)
        .timeout(Duration::from_secs(10))
        .json(body);
    if !channel.query.is_empty() {
        request = request.query(&channel.query);
    }
    for (key, value) in &channel.headers {
        request = request.header(key, value);
    }
    match request.send().await {
        Ok(response) if response.status().is_success() => Ok(()),
        Ok(response) => Err(format!("alert channel `{}` answered {}", channel.id, response.status())),
        Err(error) => Err(format!(
            "alert channel `{}` could not be reached: {}",
            channel.id,
            describe(&error)
        )),
    }
}

/// Sends an email for `channel` (EMAIL) through the service's mail
/// delivery (`POST /-/mailbox`, the emulator's). The error names the
/// channel and what the service said.
pub async fn send_email(
    client: &monform_api::Client,
    channel: &Channel,
    channel_remote_id: Option<&str>,
    subject: &str,
    text: &str,
) -> Result<(), String> {
    let mut body = serde_json::json!({ "to": channel.url, "subject": subject, "text": text });
    if let Some(id) = channel_remote_id {
        body["alertChannelId"] = Value::String(id.to_owned());
    }
    match client.send(reqwest::Method::POST, "/-/mailbox", &[], Some(&body)).await {
        Ok(_) => Ok(()),
        Err(error) if error.status() == Some(404) => Err(format!(
            "alert channel `{}` (EMAIL): the service has no mail delivery (POST /-/mailbox: 404); \
             EMAIL burn-rate alerts are delivered by `monform serve`, use a WEBHOOK or SLACK channel otherwise",
            channel.id
        )),
        Err(error) => Err(format!("alert channel `{}` (EMAIL): {error}", channel.id)),
    }
}

fn describe(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else {
        "request failed"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_config::DesiredResource;
    use monform_config::source::Span;
    use monform_model::Resource;
    use serde_json::json;

    fn desired(channels: &[(&str, Value)]) -> Desired {
        let mut desired = Desired::default();
        for (id, json) in channels {
            let address = Address::new(Kind::AlertChannel, *id);
            let resource = Resource::from_json(Kind::AlertChannel, json.clone()).unwrap();
            desired.insert(DesiredResource {
                address,
                resource: Box::new(resource),
                span: Span::new(0, 0, 0),
                references: Vec::new(),
                own_fields: Vec::new(),
                sensitive: Vec::new(),
                env_reads: Vec::new(),
            });
        }
        desired
    }

    fn settings(ids: &[&str]) -> Reconcile {
        Reconcile {
            notify: ids.iter().map(|id| ((*id).to_owned(), Span::new(0, 0, 0))).collect(),
            ..Reconcile::default()
        }
    }

    #[test]
    fn webhook_and_slack_channels_are_read_and_others_refused() {
        let desired = desired(&[
            (
                "hook",
                json!({"type": "WEBHOOK", "config": {"name": "n", "url": "http://127.0.0.1:1/h", "method": "PUT",
                    "headers": [{"key": "X-Token", "value": "t"}]}}),
            ),
            (
                "slack",
                json!({"type": "SLACK", "config": {"url": "https://hooks.slack.com/services/x"}}),
            ),
            ("mail", json!({"type": "EMAIL", "config": {"address": "a@example.com"}})),
        ]);
        let found = channels(&desired, &settings(&["hook", "slack"])).unwrap();
        assert_eq!(found[0].kind, ChannelKind::Webhook);
        assert_eq!(found[0].method, "PUT");
        assert_eq!(found[0].headers, [("X-Token".to_owned(), "t".to_owned())]);
        assert_eq!(found[1].kind, ChannelKind::Slack);
        let refused = channels(&desired, &settings(&["mail"])).unwrap_err();
        assert!(refused.contains("a EMAIL channel"), "{refused}");
        // An SLO's alerting takes EMAIL channels: the address is where it goes.
        let mail = channels_named(&desired, &["mail".to_owned()], "an SLO's alerting.channels", true).unwrap();
        assert_eq!(
            (mail[0].kind, mail[0].url.as_str()),
            (ChannelKind::Email, "a@example.com")
        );
        let missing = channels(&desired, &settings(&["nope"])).unwrap_err();
        assert!(missing.contains("not an alert channel of this project"), "{missing}");
    }
}
