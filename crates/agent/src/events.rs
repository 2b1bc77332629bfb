//! Error-level events the agent sends to the service (spec 6), unless
//! `EXTERNAL_OBSERVABILITY=off`: message, backtrace, agent version,
//! platform and runtime version. Never secrets, environment variables,
//! check configuration, URLs, headers or response bodies: every message
//! and backtrace goes through [`Scrubber`] first, which removes the key,
//! the values of the process's environment variables, every string of the
//! run's check configuration and variables, and anything shaped like a URL.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use crate::client::Client;

const REDACTED: &str = "[redacted]";
/// Values shorter than these are not redacted one by one (`GET`, `on`,
/// `info` would blank the message); URLs and the key are always removed.
const MIN_VALUE_LEN: usize = 4;
const MIN_ENVIRONMENT_LEN: usize = 8;
const MAX_MESSAGE: usize = 2_000;
const MAX_BACKTRACE: usize = 20_000;

static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s]+|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?(?:/[^\s]*)?")
        .unwrap_or_else(|_| unreachable!("a literal pattern"))
});

/// What must not leave the agent.
#[derive(Debug, Default, Clone)]
pub struct Scrubber {
    values: Vec<String>,
}

impl Scrubber {
    /// The key and the process's environment variable values.
    pub fn new(key: &str, environment: impl IntoIterator<Item = String>) -> Scrubber {
        let mut scrubber = Scrubber::default();
        scrubber
            .values
            .extend(environment.into_iter().filter(|v| v.len() >= MIN_ENVIRONMENT_LEN));
        scrubber.values.push(key.to_owned());
        scrubber.settle();
        scrubber
    }

    /// Also every string in `value` (a check, its variables).
    pub fn with(&self, value: &Value) -> Scrubber {
        let mut scrubber = self.clone();
        collect(value, &mut scrubber.values);
        scrubber.settle();
        scrubber
    }

    fn settle(&mut self) {
        self.values.retain(|v| v.chars().count() >= MIN_VALUE_LEN);
        // Longest first, so a value containing another goes whole.
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        self.values.dedup();
    }

    pub fn scrub(&self, text: &str, limit: usize) -> String {
        let mut text = text.to_owned();
        for value in &self.values {
            if text.contains(value.as_str()) {
                text = text.replace(value.as_str(), REDACTED);
            }
        }
        let mut text = URL.replace_all(&text, "<url>").into_owned();
        if text.len() > limit {
            let mut end = limit;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push('…');
        }
        text
    }
}

fn collect(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(s) => into.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect(v, into)),
        Value::Object(map) => map.values().for_each(|v| collect(v, into)),
        _ => {}
    }
}

/// Sends events when external observability is on; otherwise drops them.
#[derive(Clone)]
pub struct Reporter {
    client: Option<Client>,
}

impl Reporter {
    pub fn new(client: Option<Client>) -> Reporter {
        Reporter { client }
    }

    /// Logs `message` (scrubbed, at error level) and sends it with a
    /// backtrace of here.
    pub async fn error(&self, scrubber: &Scrubber, message: &str) {
        let message = scrubber.scrub(message, MAX_MESSAGE);
        tracing::error!("{message}");
        let Some(client) = &self.client else {
            return;
        };
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        let event = json!({
            "agentId": client.agent_id,
            "message": message,
            "backtrace": scrubber.scrub(&backtrace, MAX_BACKTRACE),
            "agentVersion": crate::VERSION,
            "platform": crate::platform(),
            "runtimeVersion": crate::RUNTIME_VERSION,
        });
        if let Err(e) = client.event(event).await {
            tracing::warn!(
                "cannot send an error event: {}",
                scrubber.scrub(&e.to_string(), MAX_MESSAGE)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_configuration_and_urls_never_pass() {
        let base = Scrubber::new("pl_abcdef123", ["/home/agent/secret-dir".to_owned(), "on".to_owned()]);
        let check = json!({ "request": { "url": "https://api.internal/orders?token=t0k3n",
            "headers": [{ "key": "X-Api-Key", "value": "hv-987654" }], "body": "{\"password\":\"hunter22\"}" } });
        let scrubber = base.with(&check);
        let message = "request to https://api.internal/orders?token=t0k3n failed (X-Api-Key: hv-987654, \
            key pl_abcdef123, dir /home/agent/secret-dir, 10.1.2.3:8443/x, body {\"password\":\"hunter22\"}): on";
        let scrubbed = scrubber.scrub(message, 10_000);
        for secret in [
            "t0k3n",
            "api.internal",
            "hv-987654",
            "pl_abcdef123",
            "secret-dir",
            "10.1.2.3",
            "hunter22",
        ] {
            assert!(!scrubbed.contains(secret), "{secret} in {scrubbed}");
        }
        assert!(scrubbed.ends_with(": on"), "short values stay: {scrubbed}");
        assert!(scrubber.scrub(&"é".repeat(100), 11).ends_with('…'));
    }
}
