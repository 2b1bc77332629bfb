//! The health probes (spec 4): `GET /-/readiness` (200 when registered and
//! ready; 503 before, while the service is unreachable, and from the moment
//! shutdown begins), `GET /-/liveness` and `GET /health` (200 while the
//! process runs). No authentication.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use tokio::net::TcpListener;

/// What readiness reads.
#[derive(Debug, Default)]
pub struct Health {
    /// Registered, and the service answered the last request.
    pub connected: AtomicBool,
    pub stopping: AtomicBool,
}

impl Health {
    pub fn ready(&self) -> bool {
        self.connected.load(Ordering::SeqCst) && !self.stopping.load(Ordering::SeqCst)
    }
}

pub fn router(health: Arc<Health>) -> Router {
    Router::new()
        .route("/-/readiness", get(readiness))
        .route("/-/liveness", get(|| async { StatusCode::OK }))
        .route("/health", get(|| async { StatusCode::OK }))
        .with_state(health)
}

async fn readiness(State(health): State<Arc<Health>>) -> StatusCode {
    if health.ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// Serves the probes on every interface at `port` (kubelets and load
/// balancers probe from outside the container) until the process ends.
pub async fn serve(health: Arc<Health>, port: u16) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(("0.0.0.0", port)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router(health)).await {
            tracing::error!("the health probes stopped: {e}");
        }
    });
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn readiness_follows_connection_and_shutdown() {
        let health = Arc::new(Health::default());
        let addr = serve(health.clone(), 0).await.unwrap();
        let status = async |path: &str| {
            monform_http::client()
                .build()
                .expect("an HTTP client")
                .get(format!("http://127.0.0.1:{}{path}", addr.port()))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        };
        assert_eq!(status("/-/readiness").await, 503);
        assert_eq!((status("/-/liveness").await, status("/health").await), (200, 200));
        health.connected.store(true, Ordering::SeqCst);
        assert_eq!(status("/-/readiness").await, 200);
        health.stopping.store(true, Ordering::SeqCst);
        assert_eq!(status("/-/readiness").await, 503);
        assert_eq!(status("/-/liveness").await, 200);
    }
}
