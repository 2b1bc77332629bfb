//! The private-location agent's health probes (spec 4): `/-/readiness`
//! (503 while shutting down), `/-/liveness`, `/health`, on the port from
//! `AGENT_HEALTH_PORT` (default 8081).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;

use crate::app::AppState;

pub const DEFAULT_PORT: u16 = 8081;

/// The probe port: `AGENT_HEALTH_PORT`, else 8081.
pub fn port() -> u16 {
    std::env::var("AGENT_HEALTH_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_PORT)
}

pub fn router(app: AppState) -> Router {
    Router::new()
        .route("/-/readiness", get(readiness))
        .route("/-/liveness", get(|| async { StatusCode::OK }))
        .route("/health", get(|| async { StatusCode::OK }))
        .with_state(app)
}

async fn readiness(State(app): State<AppState>) -> StatusCode {
    if app.shutting_down.load(Ordering::SeqCst) {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

/// Serves the probes on 127.0.0.1 at `port()` until the process ends.
pub async fn start(app: AppState) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port())).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, router(app)).await;
    });
    Ok(addr)
}
