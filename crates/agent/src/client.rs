//! The agent's side of the service's agent endpoints (`/v1/agent/...`,
//! documented in ARCHITECTURE.md and `/openapi.json`), authenticated by the
//! private location's key.

use std::time::Duration;

use serde_json::{Value, json};

use monform_api::Secret;

use crate::config::Config;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// 401: the key is wrong or was revoked. Retrying cannot help.
    #[error("the service refused the private location key (wrong or revoked): {0}")]
    Refused(String),
    /// Transport errors, 408, 429 and 5xx: worth retrying later.
    #[error("the service is unreachable: {0}")]
    Unreachable(String),
    /// Another 4xx: this request will not succeed as it is.
    #[error("the service rejected the request ({status}): {message}")]
    Rejected { status: u16, message: String },
}

impl ClientError {
    pub fn retryable(&self) -> bool {
        matches!(self, ClientError::Unreachable(_))
    }
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    key: Secret,
    pub agent_id: String,
}

impl Client {
    pub fn new(config: &Config, agent_id: String) -> Result<Client, String> {
        let http = monform_http::client()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("monform-agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Client {
            http,
            base: config.api_url.clone(),
            key: config.key.clone(),
            agent_id,
        })
    }

    async fn post(&self, path: &str, body: Value, timeout: Duration) -> Result<Value, ClientError> {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(self.key.expose())
            .timeout(timeout)
            .json(&body)
            .send()
            .await
            // Without the URL: it is the service's, and messages may travel as events.
            .map_err(|e| ClientError::Unreachable(monform_api::describe_transport(&e)))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        let parsed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let message = parsed["message"]
            .as_str()
            .map_or_else(|| status.to_string(), str::to_owned);
        match status.as_u16() {
            200..=299 => Ok(parsed),
            401 | 403 => Err(ClientError::Refused(message)),
            408 | 429 | 500..=599 => Err(ClientError::Unreachable(format!("{status}: {message}"))),
            code => Err(ClientError::Rejected { status: code, message }),
        }
    }

    /// Registers the agent, or renews its registration. Returns how often
    /// to renew it, and the slug of the private location the key is of.
    pub async fn register(&self) -> Result<(Duration, Option<String>), ClientError> {
        let body = json!({
            "agentId": self.agent_id,
            "version": crate::VERSION,
            "platform": crate::platform(),
            "runtimeVersion": crate::RUNTIME_VERSION,
        });
        let answer = self.post("/v1/agent/register", body, Duration::from_secs(15)).await?;
        let every = Duration::from_secs(answer["heartbeatSeconds"].as_u64().unwrap_or(10).clamp(1, 60));
        let location = answer["privateLocation"]["slugName"].as_str().map(str::to_owned);
        Ok((every, location))
    }

    /// Takes up to `max` runs, waiting up to `wait` for one.
    pub async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Value>, ClientError> {
        let body = json!({ "agentId": self.agent_id, "max": max, "waitSeconds": wait.as_secs() });
        let answer = self
            .post("/v1/agent/leases", body, wait + Duration::from_secs(15))
            .await?;
        Ok(answer["runs"].as_array().cloned().unwrap_or_default())
    }

    /// Reports a run's outcome (the runner's `retry::to_record` form).
    pub async fn report(&self, run_id: &str, mut record: Value) -> Result<(), ClientError> {
        record["agentId"] = json!(self.agent_id);
        let path = format!("/v1/agent/runs/{run_id}/outcome");
        self.post(&path, record, Duration::from_secs(30)).await.map(drop)
    }

    /// Sends an error event (already scrubbed).
    pub async fn event(&self, event: Value) -> Result<(), ClientError> {
        self.post("/v1/agent/events", event, Duration::from_secs(15))
            .await
            .map(drop)
    }
}
