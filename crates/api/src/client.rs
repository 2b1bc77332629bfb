//! Requests, retries and rate limiting.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value};

use crate::Error;
use crate::breaker::{Admission, Breaker};
use crate::pace::{PaceStats, Pacer, WaitObserver};

/// A credential that never shows in `Debug` output or logs.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Base URL, e.g. `https://api.example.com` or the emulator's.
    pub url: String,
    pub api_key: Secret,
    pub account_id: Option<String>,
    /// Requests per window assumed until the server states its budget
    /// (`X-RateLimit-*`), which then replaces it; `None` turns pacing off
    /// (a 429's `Retry-After` is still honoured).
    pub rate_limit: Option<(u32, Duration)>,
    /// `rate_limit` was chosen by the user: it stays a ceiling under the
    /// server's budget instead of being replaced by it.
    pub rate_limit_chosen: bool,
    pub timeout: Duration,
    /// Attempts after the first for a retryable failure.
    pub max_retries: usize,
    /// First backoff delay; doubles each attempt, with jitter.
    pub min_backoff: Duration,
    /// Requests in flight at once, over every caller of the client (the
    /// others wait for a slot before they are sent, so the wait is not
    /// part of their timeout). Each request in flight holds a connection:
    /// unbounded, the read-back of 1,000 changed checks opened 1,000, more
    /// than the service serves at once (the emulator's 512), and those past
    /// its limit waited unanswered until they timed out.
    pub max_in_flight: usize,
    /// Pages past which [`Client::prefetch`] reads a kind whole (fewer:
    /// only its first page).
    pub ahead_pages: usize,
}

/// More than monform sends at once by its own design (a plan's fetch: 15
/// kinds, 4 pages each), an eighth of the connections the emulator serves.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;

/// The service's documented budget (spec 8): 600 requests per 60 s.
pub const DEFAULT_RATE_LIMIT: (u32, Duration) = (600, Duration::from_secs(60));

impl ClientConfig {
    pub fn new(url: impl Into<String>, api_key: Secret) -> ClientConfig {
        ClientConfig {
            url: url.into(),
            api_key,
            account_id: None,
            rate_limit: Some(DEFAULT_RATE_LIMIT),
            rate_limit_chosen: false,
            timeout: Duration::from_secs(30),
            max_retries: 6,
            min_backoff: Duration::from_millis(200),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            ahead_pages: DEFAULT_AHEAD_PAGES,
        }
    }
}

/// Per-call options of [`Client::send_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SendOptions {
    /// Overrides the client's timeout for this call.
    pub timeout: Option<Duration>,
    /// A 408 is returned to the caller at once (a long poll that is not
    /// done yet), not retried.
    pub no_retry_on_408: bool,
}

/// A response: status, `Content-Range` and JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_range: Option<String>,
    pub body: Value,
}

/// A successful response before its body is parsed: listings parse theirs
/// into raw items, not a tree of values.
pub(crate) struct RawReply {
    pub status: u16,
    pub content_range: Option<String>,
    pub bytes: bytes::Bytes,
}

/// A failed request about to be tried again, as reported to an observer:
/// without it a service that does not answer is a quarter of a minute of
/// silence before the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub method: String,
    pub path: String,
    /// The retry about to be made: 1 for the second attempt.
    pub attempt: usize,
    /// Retries allowed after the first attempt.
    pub max_retries: usize,
    pub delay: Duration,
    /// Why the last attempt failed.
    pub error: String,
    /// The service did not answer at all (no connection, a timeout), as
    /// opposed to an error status.
    pub unanswered: bool,
}

pub type RetryObserver = Arc<dyn Fn(&Retry) + Send + Sync>;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest response body read: beyond it the response is an error, not an
/// allocation failure.
const MAX_BODY: usize = 256 * 1024 * 1024;

/// Listings under way in the background, by kind, each taken once.
pub(crate) type Prefetched =
    std::collections::HashMap<monform_model::Kind, tokio::task::JoinHandle<Result<Ahead, Error>>>;

/// What a listing read ahead holds: all of it, or only its first page
/// (a kind too small for reading ahead to pay: see `resources.rs`).
pub(crate) enum Ahead {
    Whole(Vec<crate::Remote>),
    FirstPage(RawReply),
}

/// Pages past which a kind's listing is read whole ahead of being asked
/// for (`Client::prefetch`): 20,000 objects.
pub const DEFAULT_AHEAD_PAGES: usize = 200;

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    config: Arc<ClientConfig>,
    pacer: Option<Arc<Pacer>>,
    sent: Arc<AtomicU64>,
    breaker: Arc<Breaker>,
    retries: Arc<RwLock<Option<RetryObserver>>>,
    /// A permit per request in flight (`ClientConfig::max_in_flight`).
    in_flight: Arc<tokio::sync::Semaphore>,
    /// Listings started ahead of being asked for ([`Client::prefetch`]).
    pub(crate) prefetched: Arc<std::sync::Mutex<Prefetched>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.config.url)
            .finish_non_exhaustive()
    }
}

impl Client {
    pub fn new(config: ClientConfig) -> Result<Client, Error> {
        if !(config.url.starts_with("http://") || config.url.starts_with("https://")) {
            return Err(Error::Config(format!(
                "API URL `{}` must start with http:// or https://",
                config.url
            )));
        }
        let http = monform_http::client()
            .timeout(config.timeout)
            // A host that drops packets is said (and retried) after 10 s, not
            // after the whole request's timeout.
            .connect_timeout(config.timeout.min(CONNECT_TIMEOUT))
            .user_agent(concat!("monform/", env!("CARGO_PKG_VERSION")))
            // No more idle connections kept than can be in use at once.
            .pool_max_idle_per_host(config.max_in_flight.max(1))
            .build()
            .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        let pacer = config
            .rate_limit
            .map(|(requests, window)| Arc::new(Pacer::new(requests, window, config.rate_limit_chosen)));
        let in_flight = Arc::new(tokio::sync::Semaphore::new(config.max_in_flight.max(1)));
        Ok(Client {
            http,
            config: Arc::new(config),
            pacer,
            sent: Arc::new(AtomicU64::new(0)),
            breaker: Arc::default(),
            retries: Arc::default(),
            in_flight,
            prefetched: Arc::default(),
        })
    }

    pub(crate) fn ahead_pages(&self) -> usize {
        self.config.ahead_pages
    }

    pub fn base_url(&self) -> &str {
        self.config.url.trim_end_matches('/')
    }

    /// Requests sent so far, retries included.
    pub fn requests_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Whether the service stopped answering: [`crate::breaker::LIMIT`]
    /// requests in a row did not reach it. Requests then fail at once
    /// (one probe every few seconds) instead of being retried.
    pub fn unreachable(&self) -> bool {
        self.breaker.is_open()
    }

    /// No request is retried from now on (the user interrupted): each
    /// fails with its first error, so the run ends within seconds.
    pub fn stop_retrying(&self) {
        self.breaker.stop();
    }

    /// How the client paced itself so far (waits for budget, the server's budget).
    pub fn pace(&self) -> PaceStats {
        self.pacer.as_ref().map(|p| p.stats()).unwrap_or_default()
    }

    /// Holds this client's requests to `share` of the key's budget, spread
    /// evenly, yielding to the key's other clients (`pace::Share`; the
    /// reconciler's `request-share`); `None`: the whole budget. Nothing
    /// when pacing is off (`ClientConfig::rate_limit` `None`).
    pub fn set_share(&self, share: Option<crate::pace::Share>) {
        if let Some(pacer) = &self.pacer {
            pacer.set_share(share);
        }
    }

    /// The budget the share is taken of: the server's last stated limit
    /// and window, else the one assumed until it states one.
    pub fn budget(&self) -> (u32, Duration) {
        self.pace()
            .advertised
            .or(self.config.rate_limit)
            .unwrap_or(DEFAULT_RATE_LIMIT)
    }

    /// Calls `observer` each time requests start waiting for the rate
    /// limit's window to reset (once per window); `None` stops it.
    pub fn observe_waits(&self, observer: Option<WaitObserver>) {
        if let Some(pacer) = &self.pacer {
            pacer.observe(observer);
        }
    }

    /// Calls `observer` before each retry of a failed request (the library
    /// prints nothing itself); `None` stops it.
    pub fn observe_retries(&self, observer: Option<RetryObserver>) {
        *self.retries.write().unwrap_or_else(|p| p.into_inner()) = observer;
    }

    /// Sends a request, retrying transient failures. A POST is retried only
    /// when the failure shows it had no effect.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, Error> {
        self.send_with(method, path, query, body, SendOptions::default()).await
    }

    /// [`Client::send`] with per-call options: a long poll (a completion
    /// call) needs a longer timeout and must see its 408 instead of having
    /// it retried.
    pub async fn send_with(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        options: SendOptions,
    ) -> Result<Reply, Error> {
        let raw = self.send_raw(method.clone(), path, query, body, options).await?;
        let body = if raw.bytes.is_empty() || raw.status == StatusCode::NO_CONTENT.as_u16() {
            Value::Null
        } else {
            serde_json::from_slice(&raw.bytes).map_err(|_| Error::Decode {
                method: method.to_string(),
                path: path.to_owned(),
                detail: format!("body is not JSON ({} bytes)", raw.bytes.len()),
            })?
        };
        Ok(Reply {
            status: raw.status,
            content_range: raw.content_range,
            body,
        })
    }

    /// [`Client::send_with`] without parsing the body of a success.
    pub(crate) async fn send_raw(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        options: SendOptions,
    ) -> Result<RawReply, Error> {
        let is_create = method == Method::POST;
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(Duration::from_secs(30))
            .with_max_times(self.config.max_retries)
            .with_jitter();
        let attempt = AtomicUsize::new(0);
        let notify = |e: &Error, delay: Duration| {
            tracing::debug!(target: "monform::api", "retrying in {delay:?}: {e}");
            let observer = self.retries.read().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(observer) = observer {
                observer(&Retry {
                    method: method.to_string(),
                    path: path.to_owned(),
                    attempt: attempt.fetch_add(1, Ordering::Relaxed) + 1,
                    max_retries: self.config.max_retries,
                    delay,
                    error: e.to_string(),
                    unanswered: matches!(e, Error::Transport { .. }),
                });
            }
        };
        let tries = AtomicUsize::new(0);
        let breaker = Arc::clone(&self.breaker);
        (|| {
            let method = method.clone();
            let retry = tries.fetch_add(1, Ordering::Relaxed) > 0;
            async move {
                // The run was interrupted during the pause before this
                // retry (which `Breaker::stop` ended): it is not sent.
                if retry && self.breaker.is_stopped() {
                    return Err(Error::Transport {
                        method: method.to_string(),
                        path: path.to_owned(),
                        detail: "not retried: the run was interrupted".into(),
                        connect: true,
                    });
                }
                self.attempt(method, path, query, body, options.timeout).await
            }
        })
        .retry(backoff)
        .sleep(move |delay| {
            let breaker = Arc::clone(&breaker);
            async move { breaker.pause(delay).await }
        })
        .when(|e: &Error| {
            self.breaker.may_retry()
                && e.is_transient()
                && (!is_create || e.certainly_not_applied())
                && !(options.no_retry_on_408 && e.status() == Some(408))
        })
        .adjust(|e: &Error, delay| e.retry_after().or(delay))
        .notify(notify)
        .await
    }

    async fn attempt(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<RawReply, Error> {
        // Held until this attempt ends: while it is the open breaker's
        // probe, the other requests wait for its outcome.
        let _probe = match self.breaker.admit().await {
            Admission::Send => None,
            Admission::Probe(guard) => Some(guard),
            Admission::Refused => {
                return Err(Error::Transport {
                    method: method.to_string(),
                    path: path.to_owned(),
                    detail: format!(
                        "not sent: the service at {} did not answer the last {} requests",
                        self.base_url(),
                        self.breaker.streak()
                    ),
                    connect: true,
                });
            }
        };
        if let Some(pacer) = &self.pacer {
            pacer.acquire().await;
        }
        // Held until the body is read: the connection is in use until then.
        // Never closed, so acquiring cannot fail.
        let _slot = self.in_flight.acquire().await.ok();
        self.sent.fetch_add(1, Ordering::Relaxed);
        let url = format!("{}{path}", self.base_url());
        let mut request = self
            .http
            .request(method.clone(), &url)
            .bearer_auth(self.config.api_key.expose())
            .query(query);
        if let Some(account) = &self.config.account_id {
            request = request.header("X-Service-Account", account);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        let transport = |e: reqwest::Error| Error::Transport {
            method: method.to_string(),
            path: path.to_owned(),
            detail: describe(&e),
            connect: e.is_connect(),
        };
        let response = match request.send().await {
            Ok(response) => {
                self.breaker.answered();
                response
            }
            Err(e) => {
                if e.is_connect() || e.is_timeout() {
                    self.breaker.unreachable();
                }
                return Err(transport(e));
            }
        };
        let status = response.status();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_range = header("content-range");
        let number = |name: &str| header(name).and_then(|v| v.trim().parse::<u64>().ok());
        let retry_after = number("retry-after").map(Duration::from_secs);
        if let Some(pacer) = &self.pacer {
            if let (Some(limit), Some(remaining), Some(reset)) = (
                number("x-ratelimit-limit"),
                number("x-ratelimit-remaining"),
                number("x-ratelimit-reset"),
            ) {
                let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
                pacer.learn(clamp(limit), clamp(remaining), Duration::from_secs(reset));
            }
            if status == StatusCode::TOO_MANY_REQUESTS {
                pacer.exhausted(retry_after.unwrap_or(self.config.min_backoff));
            }
        }
        if response.content_length().is_some_and(|n| n as usize > MAX_BODY) {
            return Err(Error::Decode {
                method: method.to_string(),
                path: path.to_owned(),
                detail: "response body is too large".into(),
            });
        }
        let bytes = response.bytes().await.map_err(transport)?;
        if bytes.len() > MAX_BODY {
            return Err(Error::Decode {
                method: method.to_string(),
                path: path.to_owned(),
                detail: "response body is too large".into(),
            });
        }
        if !status.is_success() {
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(Error::Status(Box::new(crate::error::StatusError {
                method: method.to_string(),
                path: path.to_owned(),
                status: status.as_u16(),
                reason: status.canonical_reason().unwrap_or("Error").to_owned(),
                message: body
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message")
                    .to_owned(),
                attributes: body
                    .get("attributes")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_else(Map::new),
                retry_after,
            })));
        }
        Ok(RawReply {
            status: status.as_u16(),
            content_range,
            bytes,
        })
    }
}

/// A transport error in words, with its cause chain (reqwest's own text is
/// terse), without the request's URL.
pub fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "could not connect".to_owned()
    } else {
        "connection failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_retry_is_reported_to_the_observer() {
        // A loopback port nothing listens on: every attempt is refused.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(9);
        let mut config = ClientConfig::new(format!("http://127.0.0.1:{port}"), Secret::new("k"));
        config.max_retries = 2;
        config.min_backoff = Duration::from_millis(1);
        config.rate_limit = None;
        let client = Client::new(config).expect("a client");
        let seen: Arc<std::sync::Mutex<Vec<Retry>>> = Arc::default();
        let sink = Arc::clone(&seen);
        client.observe_retries(Some(Arc::new(move |retry: &Retry| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(retry.clone());
        })));
        assert!(client.send(Method::GET, "/v1/checks", &[], None).await.is_err());
        let seen = seen.lock().unwrap_or_else(|p| p.into_inner());
        let attempts: Vec<(usize, usize, bool)> =
            seen.iter().map(|r| (r.attempt, r.max_retries, r.unanswered)).collect();
        assert_eq!(attempts, [(1, 2, true), (2, 2, true)]);
        assert!(
            seen[0].error.starts_with("GET /v1/checks failed: could not connect"),
            "{}",
            seen[0].error
        );
    }
}
