//! The private-location agent's health probes (spec 4): `/-/readiness`
//! (503 while shutting down), `/-/liveness`, `/health`, on the port from
//! `AGENT_HEALTH_PORT` (default 8081). `monform serve --agent-probes`.
//!
//! The probe server lives as long as the API server: readiness turns 503 as
//! soon as shutdown begins, while requests in flight finish, and the probe
//! server stops once the API server has stopped. No authentication, no rate
//! limit, no faults, no latency.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use tokio::net::TcpListener;

use crate::app::AppState;

pub const DEFAULT_PORT: u16 = 8081;
pub const PORT_VARIABLE: &str = "AGENT_HEALTH_PORT";

/// The probe port: `AGENT_HEALTH_PORT`, else 8081.
pub fn port() -> u16 {
    port_from(std::env::var(PORT_VARIABLE).ok().as_deref())
}

/// The probe port for a value of `AGENT_HEALTH_PORT` (unset or not a port: 8081).
pub fn port_from(value: Option<&str>) -> u16 {
    value.and_then(|p| p.trim().parse().ok()).unwrap_or(DEFAULT_PORT)
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

/// Serves the probes on 127.0.0.1 at `port()` until the API server stops.
pub async fn start(app: AppState) -> std::io::Result<SocketAddr> {
    serve(app, TcpListener::bind(("127.0.0.1", port())).await?)
}

/// Serves the probes on `listener` until the API server of `app` stops.
pub fn serve(app: AppState, listener: TcpListener) -> std::io::Result<SocketAddr> {
    let addr = listener.local_addr()?;
    let mut stopped = app.stopped.subscribe();
    let router = router(app);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                // An error means the state is gone: stop too.
                let _ = stopped.wait_for(|stopped| *stopped).await;
            })
            .await;
    });
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_from_the_environment_value() {
        assert_eq!(port_from(None), 8081);
        assert_eq!(port_from(Some("9090")), 9090);
        assert_eq!(port_from(Some(" 9091 ")), 9091);
        assert_eq!(port_from(Some("not a port")), 8081);
        assert_eq!(port_from(Some("70000")), 8081);
    }
}
