//! The emulator's throughput and start-up time, in-process over loopback
//! HTTP with a file-backed SQLite database and rate limiting off:
//!
//! - ICMP check creation (`POST /v1/checks/icmp`), requests/second with 8
//!   concurrent clients;
//! - `GET /v1/checks?limit=100` over a 10,000-check database, first page,
//!   a page at random and every page in order, and `GET /v1/checks/{id}` at random;
//! - `start_local` on an empty and on a 10,000-check database (must be
//!   under 1 s).
//!
//! `cargo bench -p monform-emulator --bench emulator` (release). Sizes can
//! be lowered for a quick run with `MONFORM_BENCH_CHECKS` (default 10000)
//! and `MONFORM_BENCH_CREATES` (default 2000).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use monform_emulator::store::Objects;
use monform_emulator::{Config, Server, start_local};
use monform_model::Kind;
use serde_json::{Value, json};

const CLIENTS: usize = 8;
const START_RUNS: usize = 5;
const START_LIMIT: Duration = Duration::from_secs(1);

fn config(db: &Path) -> Config {
    Config {
        db: Some(db.to_path_buf()),
        rate_limit: None,
        ..Config::default()
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One throughput measurement.
struct Throughput {
    requests: usize,
    elapsed: Duration,
    /// Sorted request latencies.
    latencies: Vec<Duration>,
}

impl Throughput {
    fn per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    fn percentile(&self, p: f64) -> Duration {
        let index = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies.get(index).copied().unwrap_or_default()
    }
}

/// Sends `requests` requests from `CLIENTS` concurrent clients; each must answer `status`.
async fn hammer<F>(requests: usize, status: u16, make: F) -> Throughput
where
    F: Fn(usize) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let make = Arc::new(make);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (make, next) = (make.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= requests {
                    break;
                }
                let sent = Instant::now();
                let response = make(i).send().await.expect("request sent");
                let got = response.status().as_u16();
                let body = response.bytes().await.expect("response body");
                assert_eq!(got, status, "{}", String::from_utf8_lossy(&body));
                latencies.push(sent.elapsed());
            }
            latencies
        }));
    }
    let mut latencies = Vec::with_capacity(requests);
    for task in tasks {
        latencies.extend(task.await.expect("client task"));
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    Throughput {
        requests,
        elapsed,
        latencies,
    }
}

fn icmp(i: usize) -> Value {
    json!({
        "name": format!("Ping {i}"),
        "request": { "hostname": format!("host-{i}.example.com") },
        "heartbeat": {},
        "script": "",
        "tags": ["bench", format!("shard-{}", i % 10)],
        "locations": ["eu-west-1", "us-east-1"],
        "frequency": 5,
    })
}

/// Adds checks straight to the database (copies of one created through the
/// API, with their own ids and names) until there are `total`; their ids.
fn fill(server: &Server, template: &Value, total: usize) -> Vec<String> {
    let account = server.account_id.clone();
    let section = Kind::Check.section();
    server
        .app
        .store
        .transaction(|tx| {
            let (_, have) = tx.page(&account, section, 0, 1)?;
            let mut ids = Vec::new();
            for i in have..total {
                let id = uuid::Uuid::new_v4().to_string();
                let mut body = template.clone();
                body["id"] = json!(id);
                body["name"] = json!(format!("Ping {i}"));
                body["request"]["hostname"] = json!(format!("host-{i}.example.com"));
                tx.insert(&account, section, &id, None, 0, &body)?;
                ids.push(id);
            }
            Ok::<_, rusqlite::Error>(ids)
        })
        .expect("database filled")
}

/// Times `start_local` (and the first answered request) `runs` times.
async fn start_times(db: &Path, runs: usize) -> Vec<(Duration, Duration)> {
    let client = monform_http::client().build().expect("an HTTP client");
    let mut times = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let server = start_local(config(db)).await.expect("emulator starts");
        let up = started.elapsed();
        let response = client
            .get(format!("{}/v1/checks?limit=1", server.url()))
            .bearer_auth(&server.api_key)
            .send()
            .await
            .expect("first request");
        assert_eq!(response.status(), 200);
        let first = started.elapsed();
        server.shutdown().await.expect("shutdown");
        times.push((up, first));
    }
    times
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort_unstable();
    values[values.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let creates = env_usize("MONFORM_BENCH_CREATES", 2000);
    let checks = env_usize("MONFORM_BENCH_CHECKS", 10_000).max(creates);
    let dir = tempfile::tempdir().expect("temporary directory");
    let empty_db = dir.path().join("empty.db");
    let db = dir.path().join("emulator.db");
    let mut rows: Vec<[String; 6]> = Vec::new();

    // Start-up on an empty database: the first start in the process also
    // builds the model's schemas and the OpenAPI document.
    let cold = start_times(&empty_db, 1).await[0];
    let warm = start_times(&empty_db, START_RUNS).await;
    let empty_up = median(warm.iter().map(|t| t.0).collect());
    let empty_first = median(warm.iter().map(|t| t.1).collect());

    let server = start_local(config(&db)).await.expect("emulator starts");
    let client = monform_http::client()
        .pool_max_idle_per_host(CLIENTS)
        .build()
        .expect("client");
    let base = server.url();
    let key = server.api_key.clone();

    // Creation.
    let create = {
        let (client, base, key) = (client.clone(), base.clone(), key.clone());
        hammer(creates, 201, move |i| {
            client
                .post(format!("{base}/v1/checks/icmp?autoAssignAlerts=false"))
                .bearer_auth(&key)
                .json(&icmp(i))
        })
        .await
    };
    rows.push(throughput_row(
        &format!("POST /v1/checks/icmp ({CLIENTS} clients)"),
        &create,
    ));

    // Listing over `checks` checks.
    let template = client
        .get(format!("{base}/v1/checks?limit=1"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("list")
        .json::<Value>()
        .await
        .expect("JSON")[0]
        .clone();
    let filled = Instant::now();
    let ids = Arc::new(fill(&server, &without_presented(template), checks));
    let fill_time = filled.elapsed();
    let total = client
        .get(format!("{base}/v1/checks?limit=1"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("list")
        .headers()["content-range"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(total.ends_with(&format!("/{checks}")), "{total}");
    let pages = checks.div_ceil(100);
    // Pages at random first, while no page start is remembered yet; then
    // every page in order, as a client reads a whole listing.
    for (label, pick) in [
        ("first page", (|_, _| 1) as fn(usize, usize) -> usize),
        ("page at random", |i, pages| 1 + (i * 7919) % pages),
        ("pages in order", |i, pages| 1 + i % pages),
    ] {
        let list = {
            let (client, base, key) = (client.clone(), base.clone(), key.clone());
            hammer(2000, 200, move |i| {
                let page = pick(i, pages);
                client
                    .get(format!("{base}/v1/checks?limit=100&page={page}"))
                    .bearer_auth(&key)
            })
            .await
        };
        rows.push(throughput_row(
            &format!("GET /v1/checks?limit=100, {label} ({checks} checks, {CLIENTS} clients)"),
            &list,
        ));
    }
    let one = {
        let (client, base, key, ids) = (client.clone(), base.clone(), key.clone(), ids.clone());
        hammer(2000, 200, move |i| {
            let id = &ids[(i * 7919) % ids.len().max(1)];
            client.get(format!("{base}/v1/checks/{id}")).bearer_auth(&key)
        })
        .await
    };
    rows.push(throughput_row(
        &format!("GET /v1/checks/{{id}}, at random ({checks} checks, {CLIENTS} clients)"),
        &one,
    ));
    drop(client);
    server.shutdown().await.expect("shutdown");

    let full = start_times(&db, START_RUNS).await;
    let full_up = median(full.iter().map(|t| t.0).collect());
    let full_first = median(full.iter().map(|t| t.1).collect());
    let worst = warm
        .iter()
        .chain(&full)
        .map(|t| t.0)
        .chain([cold.0])
        .max()
        .unwrap_or_default();
    let starts = [
        ("empty database, first start in the process".to_owned(), cold),
        (
            format!("empty database (median of {START_RUNS})"),
            (empty_up, empty_first),
        ),
        (
            format!("{checks} checks (median of {START_RUNS})"),
            (full_up, full_first),
        ),
    ];

    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(db.with_extension("db-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!();
    println!("monform-emulator benchmark: in-process, loopback HTTP, file-backed SQLite, rate limit off");
    println!(
        "({checks} checks: {creates} created over HTTP, the rest copied into the database in {} ms; database {:.1} MiB)",
        fill_time.as_millis(),
        size as f64 / (1024.0 * 1024.0)
    );
    println!();
    let header = ["throughput", "requests", "seconds", "req/s", "p50 ms", "p99 ms"];
    let width = rows.iter().map(|r| r[0].len()).max().unwrap_or(0).max(header[0].len());
    let line = |r: &[String; 6]| {
        println!(
            "{:<width$}  {:>8}  {:>8}  {:>8}  {:>8}  {:>8}",
            r[0], r[1], r[2], r[3], r[4], r[5]
        );
    };
    line(&header.map(str::to_owned));
    println!("{}", "-".repeat(width + 5 * 10));
    rows.iter().for_each(line);
    println!();
    let width = starts
        .iter()
        .map(|s| s.0.len())
        .max()
        .unwrap_or(0)
        .max("start_local".len());
    println!(
        "{:<width$}  {:>14}  {:>20}",
        "start_local", "until started", "until first answer"
    );
    println!("{}", "-".repeat(width + 2 + 14 + 2 + 20));
    for (label, (up, first)) in &starts {
        println!("{label:<width$}  {:>11} ms  {:>17} ms", ms(*up), ms(*first));
    }
    println!();
    let verdict = if worst < START_LIMIT { "OK" } else { "TOO SLOW" };
    println!(
        "slowest start: {} ms (limit {} ms): {verdict}",
        ms(worst),
        START_LIMIT.as_millis()
    );
    assert!(worst < START_LIMIT, "start-up must stay under {START_LIMIT:?}");
}

/// A check as stored: without the fields responses add.
fn without_presented(mut check: Value) -> Value {
    if let Some(object) = check.as_object_mut() {
        object.remove("alertChannels");
    }
    check
}

fn throughput_row(label: &str, t: &Throughput) -> [String; 6] {
    [
        label.to_owned(),
        t.requests.to_string(),
        format!("{:.2}", t.elapsed.as_secs_f64()),
        format!("{:.0}", t.per_second()),
        ms(t.percentile(0.5)),
        ms(t.percentile(0.99)),
    ]
}
