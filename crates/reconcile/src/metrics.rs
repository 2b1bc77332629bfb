//! `/metrics` (Prometheus text format 0.0.4), `/healthz` and `/readyz` on
//! `--listen` (issue 30 item 4), served with a connection cap and short
//! timeouts ([`LIMITS`], issue 43 item 5): 400 idle connections once took
//! every descriptor of a process limited to 256, and `/healthz` and the
//! loop's reading of monform.toml failed with them.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use monform_listen::{Limits, WhenFull};

/// The reconciler's figures.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Figures>,
}

#[derive(Debug, Default, Clone)]
pub struct Figures {
    /// Drifted resources now, by section (`checks`, `groups`...).
    pub drifted: BTreeMap<String, u64>,
    /// Unix time of the last interval that planned (and acted) without error.
    pub last_success: Option<f64>,
    pub duration_sum: f64,
    pub duration_count: u64,
    /// Intervals by result: `in_sync`, `changes`, `error`.
    pub runs: BTreeMap<&'static str, u64>,
    /// Failed API requests (an interval that could not read or write the service).
    pub api_errors: u64,
    /// Changes the reconciler applied.
    pub applied: u64,
    /// Drift reports sent (each channel counts).
    pub reports: u64,
    pub leader: bool,
    pub ready: bool,
    /// The rolling refresh (`sweep.rs`): sweeps of the account completed,
    /// the last one's seconds, requests and share of the key's budget
    /// (a fraction), how far the one under way is, the read requests sent
    /// in all, and the times the reads yielded to the key's other clients.
    pub sweeps: u64,
    pub sweep_seconds: f64,
    pub sweep_requests: u64,
    pub sweep_share: f64,
    pub sweep_progress: f64,
    pub read_requests: u64,
    pub yields: u64,
}

impl Metrics {
    pub fn update(&self, change: impl FnOnce(&mut Figures)) {
        let mut figures = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut figures);
    }

    pub fn figures(&self) -> Figures {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let f = self.figures();
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, samples: Vec<(String, String)>| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        let drifted = f
            .drifted
            .iter()
            .map(|(kind, n)| (format!("{{kind=\"{kind}\"}}"), n.to_string()))
            .collect();
        metric(
            "monform_reconcile_drifted_resources",
            "gauge",
            "Resources changed outside monform at the last interval, by kind.",
            drifted,
        );
        metric(
            "monform_reconcile_last_success_timestamp_seconds",
            "gauge",
            "Unix time of the last interval that completed without error (0: none yet).",
            vec![(String::new(), f.last_success.unwrap_or(0.0).to_string())],
        );
        metric(
            "monform_reconcile_duration_seconds",
            "summary",
            "How long intervals took.",
            // A summary's samples are `NAME_sum` and `NAME_count`.
            vec![
                ("_sum".to_owned(), f.duration_sum.to_string()),
                ("_count".to_owned(), f.duration_count.to_string()),
            ],
        );
        let runs = f
            .runs
            .iter()
            .map(|(result, n)| (format!("{{result=\"{result}\"}}"), n.to_string()))
            .collect();
        metric("monform_reconcile_runs_total", "counter", "Intervals by result.", runs);
        metric(
            "monform_reconcile_api_errors_total",
            "counter",
            "Intervals that failed to read or write the service.",
            vec![(String::new(), f.api_errors.to_string())],
        );
        metric(
            "monform_reconcile_applied_changes_total",
            "counter",
            "Changes the reconciler applied.",
            vec![(String::new(), f.applied.to_string())],
        );
        metric(
            "monform_reconcile_reports_total",
            "counter",
            "Drift and back-in-sync reports delivered, per channel.",
            vec![(String::new(), f.reports.to_string())],
        );
        metric(
            "monform_reconcile_leader",
            "gauge",
            "1 when this process leads the project's reconciliation.",
            vec![(String::new(), u8::from(f.leader).to_string())],
        );
        let one = |value: String| vec![(String::new(), value)];
        metric(
            "monform_reconcile_sweeps_total",
            "counter",
            "Sweeps of the account completed (every object read at least once each).",
            one(f.sweeps.to_string()),
        );
        metric(
            "monform_reconcile_sweep_seconds",
            "gauge",
            "How long the last completed sweep took.",
            one(f.sweep_seconds.to_string()),
        );
        metric(
            "monform_reconcile_sweep_requests",
            "gauge",
            "Requests the last completed sweep sent.",
            one(f.sweep_requests.to_string()),
        );
        metric(
            "monform_reconcile_sweep_share",
            "gauge",
            "The last completed sweep's requests as a share of the API key's rate limit (0 to 1; [reconcile] request-share bounds it).",
            one(f.sweep_share.to_string()),
        );
        metric(
            "monform_reconcile_sweep_progress",
            "gauge",
            "How much of the sweep under way is read (0 to 1).",
            one(f.sweep_progress.to_string()),
        );
        metric(
            "monform_reconcile_read_requests_total",
            "counter",
            "Requests the reconciler's plans sent to read the service.",
            one(f.read_requests.to_string()),
        );
        metric(
            "monform_reconcile_yields_total",
            "counter",
            "Times the reads waited because the key's other clients left less than the reconciler's share.",
            one(f.yields.to_string()),
        );
        out
    }
}

/// The listener's limits. Its clients are a scraper or two, health and
/// readiness probes and a person with curl, each sending a short GET as
/// soon as it connects: 16 connections are plenty, and a head may take 5 s.
/// At the cap the oldest idle connection is closed for the new one rather
/// than the new one waiting: waiting, a probe would queue behind every
/// idle connection opened before it (400 of them, 16 freed per head
/// timeout: 2 minutes), past any probe's timeout. The process then holds
/// at most 17 descriptors for the listener, however many connect.
pub const LIMITS: Limits = Limits {
    header_read_timeout: Duration::from_secs(5),
    // The endpoints take no body.
    body_timeout: Duration::from_secs(5),
    // Under a scrape interval (15 s at the shortest usual): a scraper
    // reconnects each time rather than hold a connection between scrapes.
    idle_timeout: Duration::from_secs(10),
    max_connections: 16,
    when_full: WhenFull::CloseOldestIdle,
};

/// Serves the three endpoints until the process ends.
pub async fn serve(address: SocketAddr, metrics: Arc<Metrics>) -> Result<SocketAddr, String> {
    let listener = monform_listen::bind(address).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let app = Router::new()
        .route("/metrics", get(metrics_page))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(metrics);
    tokio::spawn(monform_listen::serve(listener, app, LIMITS, std::future::pending()));
    Ok(bound)
}

async fn metrics_page(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        metrics.render(),
    )
}

async fn ready(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    if metrics.figures().ready {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_each_family_once_with_its_type() {
        let metrics = Metrics::default();
        metrics.update(|f| {
            f.drifted.insert("checks".into(), 2);
            f.duration_sum = 1.5;
            f.duration_count = 3;
        });
        let text = metrics.render();
        assert!(
            text.contains("monform_reconcile_drifted_resources{kind=\"checks\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("monform_reconcile_duration_seconds_sum 1.5\n"), "{text}");
        assert!(
            text.contains("# TYPE monform_reconcile_duration_seconds summary\n"),
            "{text}"
        );
    }
}
