//! Loopback targets and session helpers shared by `runner.rs` and
//! `alerts.rs`: a tiny HTTP server, a TCP listener, a request recorder (for
//! webhooks and Slack), an emulator that executes checks.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use monform_emulator::Config;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{TestServer, parts};

pub async fn emulator() -> TestServer {
    TestServer::with(Config {
        rate_limit: None,
        session_duration: Duration::from_millis(20),
        execute_checks: true,
        ..Config::default()
    })
    .await
}

/// As [`emulator`], with the scheduler running every activated check.
pub async fn scheduling_emulator() -> TestServer {
    TestServer::with(Config {
        rate_limit: None,
        session_duration: Duration::from_millis(20),
        execute_checks: true,
        run_scheduler: true,
        ..Config::default()
    })
    .await
}

/// An HTTP target: `/ok` (200 JSON), `/fail` (500), `/slow` (300 ms), `/hang` (10 s).
pub async fn http_target() -> SocketAddr {
    let app = Router::new()
        .route(
            "/ok",
            get(|| async { axum::Json(json!({ "status": "up", "items": [{ "id": 7 }] })) }),
        )
        .route(
            "/fail",
            get(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom") }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                "slow"
            }),
        )
        .route(
            "/echo",
            axum::routing::any(
                |method: axum::http::Method,
                 uri: axum::http::Uri,
                 headers: axum::http::HeaderMap,
                 body: String| async move {
                    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
                    axum::Json(json!({
                        "method": method.as_str(), "query": uri.query(), "body": body,
                        "authorization": header("authorization"), "contentType": header("content-type"),
                        "test": header("x-test"),
                    }))
                },
            ),
        )
        .route(
            "/redirect",
            get(|| async { axum::response::Redirect::temporary("/ok") }),
        )
        .route(
            "/hang",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "late"
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// A TCP target answering `PONG <what it read>` and closing.
pub async fn tcp_target() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 256];
                let n = stream.read(&mut buffer).await.unwrap_or(0);
                let reply = format!("PONG {}", String::from_utf8_lossy(&buffer[..n]));
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    addr
}

pub async fn create(ts: &TestServer, kind: &str, body: Value) -> String {
    let created = ts
        .create(&format!("/v1/checks/{kind}?autoAssignAlerts=false"), &body, 201)
        .await;
    created["id"].as_str().unwrap().to_owned()
}

pub async fn api_check(ts: &TestServer, target: SocketAddr, path: &str, extra: Value) -> String {
    let mut body = json!({
        "name": format!("api {path}"),
        "request": { "url": format!("http://{target}{path}"), "method": "GET" },
        "locations": ["eu-west-1"],
    });
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    create(ts, "api", body).await
}

/// Triggers a check session for `check_id` and awaits its end.
pub async fn run_session(ts: &TestServer, check_id: &str) -> Value {
    let (status, body) = parts(
        ts.post(
            "/v2/check-sessions/trigger",
            &json!({ "target": { "checkId": [check_id] } }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let session = body["sessions"][0]["checkSessionId"].as_str().unwrap().to_owned();
    let (status, body) = parts(
        ts.get(&format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=10"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

pub async fn listed_results(ts: &TestServer, check_id: &str) -> Vec<Value> {
    let (status, body) = parts(ts.get(&format!("/v1/check-results/{check_id}")).await).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

/// An HTTP target whose answers the test steers: `/switch` fails (500)
/// while `failing` is set; `/fail-first/{n}/{name}` fails the first `n`
/// requests for `name`; `/alternate/{name}` fails every other request.
pub struct Steered {
    pub addr: SocketAddr,
    pub failing: Arc<AtomicBool>,
}

pub async fn steered_target() -> Steered {
    let failing = Arc::new(AtomicBool::new(false));
    let counts: Arc<Mutex<std::collections::HashMap<String, usize>>> = Arc::default();
    let count = move |name: String| {
        let mut counts = counts.lock().unwrap();
        let n = counts.entry(name).or_default();
        *n += 1;
        *n
    };
    let answer = |ok: bool| {
        if ok {
            (axum::http::StatusCode::OK, "fine")
        } else {
            (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "broken")
        }
    };
    let flag = failing.clone();
    let first = count.clone();
    let app = Router::new()
        .route(
            "/switch",
            get(move || {
                let flag = flag.clone();
                async move { answer(!flag.load(Ordering::SeqCst)) }
            }),
        )
        .route(
            "/fail-first/{n}/{name}",
            get(
                move |axum::extract::Path((n, name)): axum::extract::Path<(usize, String)>| {
                    let seen = first(name);
                    async move { answer(seen > n) }
                },
            ),
        )
        .route(
            "/alternate/{name}",
            get(move |axum::extract::Path(name): axum::extract::Path<String>| {
                let seen = count(name);
                async move { answer(seen % 2 == 0) }
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Steered { addr, failing }
}

/// A request a [`Recorder`] received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: std::collections::HashMap<String, String>,
    pub body: String,
}

/// A loopback HTTP server that records every request (a webhook or Slack
/// endpoint) and answers `status` with `body`.
pub struct Recorder {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    pub hits: Arc<AtomicUsize>,
}

impl Recorder {
    pub async fn start(status: u16, body: &'static str) -> Recorder {
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let hits = Arc::new(AtomicUsize::new(0));
        let (seen, counted) = (requests.clone(), hits.clone());
        let app = Router::new().fallback(
            move |method: axum::http::Method,
                  uri: axum::http::Uri,
                  headers: axum::http::HeaderMap,
                  body_text: String| {
                let (seen, counted) = (seen.clone(), counted.clone());
                async move {
                    let headers = headers
                        .iter()
                        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
                        .collect();
                    seen.lock().unwrap().push(Recorded {
                        method: method.as_str().to_owned(),
                        path: uri.path().to_owned(),
                        query: uri.query().map(str::to_owned),
                        headers,
                        body: body_text,
                    });
                    counted.fetch_add(1, Ordering::SeqCst);
                    (axum::http::StatusCode::from_u16(status).unwrap(), body)
                }
            },
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Recorder { addr, requests, hits }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Waits (up to 5 s) until `n` requests arrived; returns them all.
    pub async fn wait_for(&self, n: usize) -> Vec<Recorded> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while self.hits.load(Ordering::SeqCst) < n && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.requests.lock().unwrap().clone()
    }
}

/// Alert notifications once none is IN_PROGRESS (waits up to 5 s), newest first.
pub async fn settled_notifications(ts: &TestServer) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = parts(ts.get("/v1/alert-notifications?limit=100").await).await;
        assert_eq!(status, 200, "{body}");
        let list = body.as_array().unwrap().clone();
        if list.iter().all(|n| n["status"] != "IN_PROGRESS") || tokio::time::Instant::now() > deadline {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Check alerts of the last 6 hours, newest first.
pub async fn check_alerts(ts: &TestServer) -> Vec<Value> {
    let (status, body) = parts(ts.get("/v1/check-alerts?limit=100").await).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

/// The alert types raised for `check_id`, oldest first.
pub async fn alert_types(ts: &TestServer, check_id: &str) -> Vec<String> {
    let mut types: Vec<String> = check_alerts(ts)
        .await
        .iter()
        .filter(|a| a["checkId"] == check_id)
        .map(|a| a["alertType"].as_str().unwrap().to_owned())
        .collect();
    types.reverse();
    types
}

/// The report entry of `check_id` (default range).
pub async fn report_of(ts: &TestServer, check_id: &str, query: &str) -> Value {
    let (status, body) = parts(ts.get(&format!("/v1/reporting{query}")).await).await;
    assert_eq!(status, 200, "{body}");
    body.as_array()
        .unwrap()
        .iter()
        .find(|r| r["checkId"] == check_id)
        .cloned()
        .unwrap_or_else(|| panic!("{check_id} in {body}"))
}
