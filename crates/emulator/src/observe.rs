//! A log line per request and request counts by method, route and status,
//! served as Prometheus text at `/-/metrics` (so tests and benchmarks can
//! count API calls exactly).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::AppState;

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
}

impl Metrics {
    pub fn record(&self, method: &str, route: &str, status: u16) {
        let mut requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        *requests
            .entry((method.to_owned(), route.to_owned(), status))
            .or_default() += 1;
    }

    /// Total requests counted so far, optionally of one method.
    pub fn total(&self, method: Option<&str>) -> u64 {
        let requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        requests
            .iter()
            .filter(|((m, _, _), _)| method.is_none_or(|x| x == m))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn render(&self) -> String {
        let requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        let mut text = String::from(
            "# HELP monform_emulator_requests_total Requests served, by method, route and status.\n# TYPE monform_emulator_requests_total counter\n",
        );
        for ((method, route, status), count) in requests.iter() {
            text.push_str(&format!(
                "monform_emulator_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {count}\n",
                route.replace('\\', "\\\\").replace('"', "\\\"")
            ));
        }
        text
    }
}

/// Logs and counts every request, by its route template (not its URL, so ids
/// do not explode the label set).
pub async fn observe(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    let status = response.status().as_u16();
    if route != "/-/metrics" {
        app.metrics.record(&method, &route, status);
    }
    tracing::info!(target: "monform::emulator", %method, %route, status, duration_ms = started.elapsed().as_secs_f64() * 1000.0, "request");
    response
}

pub async fn metrics(State(app): State<AppState>) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(),
    )
        .into_response()
}
