//! The private-location agent probes: `/-/readiness` (503 while shutting
//! down), `/-/liveness`, `/health`; they stop with the API server.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::TestServer;
use monform_emulator::Config;
use monform_emulator::probes;
use reqwest::StatusCode;

async fn start_probes(ts: &TestServer) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    probes::serve(ts.server.app.clone(), listener).unwrap()
}

/// A fresh client each time: no pooled connection hides a stopped server.
async fn probe(addr: SocketAddr, path: &str) -> reqwest::Result<StatusCode> {
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build()?;
    Ok(client
        .get(format!("http://{addr}{path}"))
        .timeout(Duration::from_secs(2))
        .send()
        .await?
        .status())
}

/// Polls until `done`, for at most 3 s.
async fn eventually<F: AsyncFn() -> bool>(what: &str, done: F) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !done().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn probes_answer_200_without_a_key() {
    let ts = TestServer::start().await;
    let addr = start_probes(&ts).await;
    for path in ["/-/readiness", "/-/liveness", "/health"] {
        assert_eq!(probe(addr, path).await.unwrap(), StatusCode::OK, "{path}");
    }
    assert_eq!(probe(addr, "/v1/checks").await.unwrap(), StatusCode::NOT_FOUND);
    // Not API requests: not counted.
    assert_eq!(ts.server.app.metrics.total(None), 0);
}

#[tokio::test]
async fn readiness_turns_503_during_graceful_shutdown_and_the_probes_stop_with_the_server() {
    // The latency keeps a request in flight while the server shuts down.
    let ts = TestServer::with(Config {
        rate_limit: None,
        latency: Duration::from_millis(1500),
        ..Config::default()
    })
    .await;
    let addr = start_probes(&ts).await;
    assert_eq!(probe(addr, "/-/readiness").await.unwrap(), StatusCode::OK);

    let in_flight = tokio::spawn(ts.request(reqwest::Method::GET, "/v1/checks").send());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let TestServer { server, .. } = ts;
    let shutdown = tokio::spawn(server.shutdown());

    eventually("readiness 503", async || {
        probe(addr, "/-/readiness").await.ok() == Some(StatusCode::SERVICE_UNAVAILABLE)
    })
    .await;
    assert!(!shutdown.is_finished(), "the request in flight holds the server open");
    assert_eq!(probe(addr, "/-/liveness").await.unwrap(), StatusCode::OK);
    assert_eq!(probe(addr, "/health").await.unwrap(), StatusCode::OK);

    // The request in flight finishes, then the server, then the probes.
    let response = in_flight.await.unwrap().expect("the request in flight completes");
    assert_eq!(response.status(), StatusCode::OK);
    tokio::time::timeout(Duration::from_secs(3), shutdown)
        .await
        .expect("shutdown finishes")
        .unwrap()
        .unwrap();
    eventually("the probe server to stop", async || {
        probe(addr, "/health").await.is_err()
    })
    .await;
    let error = probe(addr, "/health").await.unwrap_err();
    assert!(error.is_connect(), "{error:?}");
}

#[tokio::test]
async fn dropping_the_server_stops_the_probes_too() {
    let ts = TestServer::start().await;
    let addr = start_probes(&ts).await;
    let app = ts.server.app.clone();
    assert_eq!(probe(addr, "/health").await.unwrap(), StatusCode::OK);
    drop(ts);
    eventually("the probe server to stop", async || {
        probe(addr, "/health").await.is_err()
    })
    .await;
    assert!(app.shutting_down.load(std::sync::atomic::Ordering::SeqCst));
    assert!(*app.stopped.borrow());
}

#[tokio::test]
async fn probes_started_after_the_server_stopped_stop_at_once() {
    let ts = TestServer::start().await;
    let app = ts.server.app.clone();
    ts.server.shutdown().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = probes::serve(app, listener).unwrap();
    eventually("the probe server to stop", async || {
        probe(addr, "/health").await.is_err()
    })
    .await;
}
