//! A list request's latency while writers run (issue 28 item 7): the
//! emulator's store is one mutex, handed over fairly, so a reader waits
//! behind at most the writes queued before it, not behind every write that
//! keeps arriving. `GET /v1/checks?limit=100` is sent every 20 ms on its own
//! connection while [`WRITERS`] tasks create and delete variables as fast
//! as they can; the report gives the list's p50, p99 and worst latency.

use std::time::{Duration, Instant};

use monform_api::{Client, Method};
use serde::Serialize;
use serde_json::json;

/// Tasks writing at once.
pub const WRITERS: usize = 4;
/// How long the list is measured.
const DURATION: Duration = Duration::from_secs(8);
/// Time between two lists.
const EVERY: Duration = Duration::from_millis(20);
/// Issue 28's target for the p99.
pub const P99_TARGET_MS: f64 = 100.0;

#[derive(Debug, Clone, Serialize)]
pub struct ListUnderLoad {
    pub writers: usize,
    /// Writes the writers completed while the lists ran.
    pub writes: u64,
    pub lists: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Requests that failed (none expected).
    pub errors: u64,
}

/// Measures against the service `client` reaches (a client of its own for
/// the writers, so the lists never queue behind them inside one client).
pub async fn measure(client: &Client, writer: &Client) -> ListUnderLoad {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let writer = writer.clone();
            let stop = std::sync::Arc::clone(&stop);
            tokio::spawn(async move {
                let (mut writes, mut errors) = (0u64, 0u64);
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let key = format!("BENCH_CONTENTION_{w}_{n}");
                    n += 1;
                    let body = json!({ "key": key, "value": "x" });
                    let created = writer.send(Method::POST, "/v1/variables", &[], Some(&body)).await;
                    let deleted = writer
                        .send(Method::DELETE, &format!("/v1/variables/{key}"), &[], None)
                        .await;
                    for result in [created.is_ok(), deleted.is_ok()] {
                        if result { writes += 1 } else { errors += 1 }
                    }
                }
                (writes, errors)
            })
        })
        .collect();
    // Writers get going before the first list.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let query = [("limit", "100".to_owned())];
    let mut latencies = Vec::new();
    let mut errors = 0u64;
    let started = Instant::now();
    while started.elapsed() < DURATION {
        let sent = Instant::now();
        match client.send(Method::GET, "/v1/checks", &query, None).await {
            Ok(_) => latencies.push(sent.elapsed().as_secs_f64() * 1000.0),
            Err(_) => errors += 1,
        }
        tokio::time::sleep(EVERY.saturating_sub(sent.elapsed())).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut writes = 0;
    for task in writers {
        if let Ok((done, failed)) = task.await {
            writes += done;
            errors += failed;
        }
    }
    latencies.sort_by(f64::total_cmp);
    ListUnderLoad {
        writers: WRITERS,
        writes,
        lists: latencies.len(),
        p50_ms: round(percentile(&latencies, 0.50)),
        p99_ms: round(percentile(&latencies, 0.99)),
        max_ms: round(latencies.last().copied().unwrap_or(0.0)),
        errors,
    }
}

/// The nearest-rank percentile of sorted `values` (0 when empty).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn round(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.5), 100.0);
        assert_eq!(percentile(&values, 0.99), 198.0);
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert_eq!(percentile(&[], 0.99), 0.0);
    }
}
