//! A log line per request and request counts by method, route and status,
//! served as Prometheus text at `/-/metrics` (so tests and benchmarks can
//! count API calls exactly).
//!
//! Injected faults (see `faults`) are counted too: under the status sent
//! (500, 502, 503) or `dropped` when the connection was dropped, and again in
//! `monform_emulator_faults_total` by fault mode.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// (method, route template, status label) → count.
type Counts = BTreeMap<(String, String, String), u64>;

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<Counts>,
    /// Label: the fault mode's name.
    faults: Mutex<Counts>,
}

fn bump(counts: &Mutex<Counts>, method: &str, route: &str, label: &str) {
    let mut counts = counts.lock().unwrap_or_else(|p| p.into_inner());
    *counts
        .entry((method.to_owned(), route.to_owned(), label.to_owned()))
        .or_default() += 1;
}

fn sum(counts: &Mutex<Counts>, keep: impl Fn(&str, &str, &str) -> bool) -> u64 {
    let counts = counts.lock().unwrap_or_else(|p| p.into_inner());
    counts
        .iter()
        .filter(|((m, r, l), _)| keep(m, r, l))
        .map(|(_, n)| n)
        .sum()
}

impl Metrics {
    pub fn record(&self, method: &str, route: &str, status: u16) {
        self.record_label(method, route, &status.to_string());
    }

    /// Counts a request under a status label (a status code, or `dropped`).
    pub fn record_label(&self, method: &str, route: &str, label: &str) {
        bump(&self.requests, method, route, label);
    }

    /// Counts an injected fault by mode (see `faults::Fault::name`).
    pub fn record_fault(&self, method: &str, route: &str, fault: &str) {
        bump(&self.faults, method, route, fault);
    }

    /// Total requests counted so far, optionally of one method.
    pub fn total(&self, method: Option<&str>) -> u64 {
        sum(&self.requests, |m, _, _| method.is_none_or(|x| x == m))
    }

    /// Requests counted under one status label (e.g. `"429"`, `"dropped"`).
    pub fn with_status(&self, label: &str) -> u64 {
        sum(&self.requests, |_, _, l| l == label)
    }

    /// Injected faults so far, optionally of one mode.
    pub fn faults(&self, fault: Option<&str>) -> u64 {
        sum(&self.faults, |_, _, f| fault.is_none_or(|x| x == f))
    }

    pub fn render(&self) -> String {
        let mut text = String::new();
        render_counter(
            &mut text,
            "monform_emulator_requests_total",
            "Requests served, by method, route and status (`dropped`: connection dropped on purpose).",
            "status",
            &self.requests,
        );
        render_counter(
            &mut text,
            "monform_emulator_faults_total",
            "Injected faults, by method, route and fault mode.",
            "fault",
            &self.faults,
        );
        text
    }
}

fn render_counter(text: &mut String, name: &str, help: &str, label: &str, counts: &Mutex<Counts>) {
    let counts = counts.lock().unwrap_or_else(|p| p.into_inner());
    text.push_str(&format!("# HELP {name} {help}\n# TYPE {name} counter\n"));
    for ((method, route, value), count) in counts.iter() {
        text.push_str(&format!(
            "{name}{{method=\"{method}\",route=\"{}\",{label}=\"{value}\"}} {count}\n",
            escape(route)
        ));
    }
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_renders_statuses_and_faults() {
        let metrics = Metrics::default();
        metrics.record("GET", "/v1/checks", 200);
        metrics.record("GET", "/v1/checks", 200);
        metrics.record_label("POST", "/v1/checks/api", "dropped");
        metrics.record_fault("POST", "/v1/checks/api", "dropped_after_commit");
        assert_eq!(metrics.total(None), 3);
        assert_eq!(metrics.total(Some("GET")), 2);
        assert_eq!(metrics.with_status("dropped"), 1);
        assert_eq!(metrics.faults(None), 1);
        assert_eq!(metrics.faults(Some("dropped")), 0);
        let text = metrics.render();
        assert!(
            text.contains("monform_emulator_requests_total{method=\"GET\",route=\"/v1/checks\",status=\"200\"} 2\n")
        );
        assert!(text.contains(
            "monform_emulator_requests_total{method=\"POST\",route=\"/v1/checks/api\",status=\"dropped\"} 1\n"
        ));
        assert!(text.contains(
            "monform_emulator_faults_total{method=\"POST\",route=\"/v1/checks/api\",fault=\"dropped_after_commit\"} 1\n"
        ));
    }
}
