//! The real emulator on a loopback port: [`Emulator`] for blocking tests
//! (a runtime of its own), [`start_emulator`] for async ones; a client of
//! it, and the requests it served while something ran.

use std::future::Future;

use monform_api::{Client, ClientConfig, Secret};
use monform_emulator::Server;

/// The emulator on `127.0.0.1` in the caller's runtime, rate limiting off
/// (tests make requests much faster than users do).
pub async fn start_emulator() -> Server {
    start_emulator_with(monform_emulator::Config {
        rate_limit: None,
        ..Default::default()
    })
    .await
}

/// The emulator on `127.0.0.1` in the caller's runtime, as `config` says
/// (a database file, quick sessions, checks not executed...).
pub async fn start_emulator_with(config: monform_emulator::Config) -> Server {
    monform_emulator::start_local(config).await.expect("emulator starts")
}

/// A client of `server`: its development key and account, no rate limit.
pub fn client_for(server: &Server) -> Client {
    let mut config = ClientConfig::new(server.url(), Secret::new(server.api_key.clone()));
    config.rate_limit = None;
    config.account_id = Some(server.account_id.clone());
    Client::new(config).expect("a valid client configuration")
}

/// The requests `server` served: of `method`, or all.
pub fn served(server: &Server, method: Option<&str>) -> u64 {
    server.app.metrics.total(method)
}

/// What `run` gave, and the requests (of `method`, or all) `server`
/// served while it ran.
pub async fn served_during<T>(server: &Server, method: Option<&str>, run: impl Future<Output = T>) -> (T, u64) {
    let before = served(server, method);
    let value = run.await;
    (value, served(server, method) - before)
}

/// The emulator on `127.0.0.1`, served by a runtime of its own (dropped with it).
pub struct Emulator {
    pub server: monform_emulator::Server,
    runtime: tokio::runtime::Runtime,
    /// [`Emulator::call`]'s client, built at the first call: a client reads
    /// the system's roots of trust when built (35-85 ms in a debug build),
    /// which once a call was about 25 s of a test making 300 objects.
    http: std::sync::OnceLock<reqwest::blocking::Client>,
}

impl Emulator {
    /// Rate limiting off: tests make requests much faster than users do.
    pub fn start() -> Emulator {
        Emulator::with(monform_emulator::Config {
            rate_limit: None,
            ..Default::default()
        })
    }

    pub fn with(config: monform_emulator::Config) -> Emulator {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let server = runtime.block_on(start_emulator_with(config));
        Emulator {
            server,
            runtime,
            http: std::sync::OnceLock::new(),
        }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// A client of this emulator (`client_for`).
    pub fn client(&self) -> Client {
        client_for(&self.server)
    }

    /// A direct API call with the development key, for changes "behind
    /// monform's back"; asserts success and returns the JSON body (`null`
    /// when there is none).
    pub fn call(&self, method: &str, path: &str, body: Option<serde_json::Value>) -> serde_json::Value {
        let client = self
            .http
            .get_or_init(|| monform_http::blocking().build().expect("an HTTP client"));
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = client
            .request(method, format!("{}{path}", self.server.url()))
            .bearer_auth(&self.server.api_key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().expect("request sent");
        let status = response.status();
        let text = response.text().unwrap_or_default();
        assert!(status.is_success(), "{path}: {status}: {text}");
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }

    /// The check session `id` once final (`GET /v2/check-sessions/{id}`):
    /// the completion route answers 408 while it runs, at most 30 s a
    /// call; a session still running after two minutes is a failure.
    pub fn finished_session(&self, id: &str) -> serde_json::Value {
        let client = self
            .http
            .get_or_init(|| monform_http::blocking().build().expect("an HTTP client"));
        for _ in 0..4 {
            let response = client
                .get(format!(
                    "{}/v2/check-sessions/{id}/completion?maxWaitSeconds=30",
                    self.server.url()
                ))
                .bearer_auth(&self.server.api_key)
                .timeout(std::time::Duration::from_secs(40))
                .send()
                .expect("the completion route answers");
            match response.status().as_u16() {
                200 => return self.call("GET", &format!("/v2/check-sessions/{id}"), None),
                408 => continue,
                status => panic!("session {id}: {status}: {}", response.text().unwrap_or_default()),
            }
        }
        panic!("session {id} still running after two minutes");
    }

    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
