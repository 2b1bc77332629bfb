//! `monform serve`: the bundled monitoring service, until SIGINT or SIGTERM.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use monform_emulator::clock;
use monform_emulator::domain::outages::Outage;
use monform_emulator::listen::Limits;
use monform_emulator::{Config, RateLimit};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// SQLite file holding the service's data [default: .monform/local.db in --dir, the
    /// database `url = "local"` uses]
    #[arg(long)]
    db: Option<PathBuf>,
    /// An API key to accept (repeatable); without it a development key is made once and reused
    #[arg(long = "api-key")]
    api_keys: Vec<String>,
    /// The account the keys belong to; without it a development account is made once and reused
    #[arg(long)]
    account_id: Option<String>,
    /// Requests per key and window, as N/SECS (e.g. 600/60), or `off`
    #[arg(long, default_value = "600/60")]
    rate_limit: String,
    /// Failed authentications (401) allowed per client address, as N/SECS, before that
    /// address gets 429 for every request until the window closes; or `off`
    #[arg(long, default_value = "20/60", value_name = "N/SECS")]
    auth_failure_limit: String,
    /// Fraction of requests (0 to 1) that fail on purpose: 5xx, dropped connections, lost responses
    #[arg(long, default_value_t = 0.0)]
    fault_rate: f64,
    /// Seed of the fault injection, for reproducible runs
    #[arg(long, default_value_t = 0)]
    fault_seed: u64,
    /// Fraction of writes (0 to 1) answered as if stored but not stored, to test that
    /// applies verify what landed [default: 0, off]
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    fault_lost_writes: f64,
    /// Delay added to every request, in milliseconds
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Store checks' request URLs with scheme and host lowercased, as a service that
    /// normalises URLs would, to test that applies take a rewritten value for what they wrote
    #[arg(long)]
    normalise_urls: bool,
    /// Seconds a client has to send a request's line and headers, counted from its first
    /// byte (from the connection's opening for the first request); then the connection is closed
    #[arg(long, default_value_t = 10, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    header_read_timeout: u64,
    /// Seconds a client has to send a request's whole body once its headers arrived (408 after)
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout: u64,
    /// Seconds a connection may stay open with no request in flight (keep-alive) before it is closed
    #[arg(long, default_value_t = 60, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Connections served at once; more wait in the system's backlog until one closes
    #[arg(long, default_value_t = 512, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Run every activated check at its frequency, as the service does: results, alerts and
    /// notifications (webhooks and Slack really sent)
    #[arg(long)]
    schedule: bool,
    /// Runs needing a Node.js process (browser-type checks, API checks' scripts) at once;
    /// the others queue, and one queued past its maxResponseTime times out [default: cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    max_browser_runs: Option<u16>,
    /// Start a simulated clock at TIME (an ISO 8601 date-time, or -DURATION before now such
    /// as -30d); it flows from there and `POST /-/clock` moves it forward, playing the runs
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    clock_start: Option<String>,
    /// Fail a check (by id or name) from START (a date-time, or +DURATION after the clock's
    /// start) for DURATION; with :MS its runs are slow instead (repeatable)
    #[arg(long = "simulate-outage", value_name = "CHECK:START:DURATION[:MS]")]
    simulate_outages: Vec<String>,
}

pub fn run(dir: &Path, args: ServeArgs) -> ExitCode {
    match serve(dir, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn serve(dir: &Path, args: ServeArgs) -> Result<(), String> {
    let rate_limit = match args.rate_limit.as_str() {
        "off" => None,
        text => Some(RateLimit::parse(text).map_err(|e| format!("--rate-limit: {e}"))?),
    };
    let auth_failure_limit = match args.auth_failure_limit.as_str() {
        "off" => None,
        text => Some(RateLimit::parse(text).map_err(|e| format!("--auth-failure-limit: {e}"))?),
    };
    if !(0.0..=1.0).contains(&args.fault_rate) {
        return Err(format!("--fault-rate {} is not between 0 and 1", args.fault_rate));
    }
    if !(0.0..=1.0).contains(&args.fault_lost_writes) {
        return Err(format!(
            "--fault-lost-writes {} is not between 0 and 1",
            args.fault_lost_writes
        ));
    }
    let db = args.db.unwrap_or_else(|| {
        let db = crate::connect::local_db(dir);
        let old = dir.join(".monform").join("emulator.db");
        if old.exists() && !db.exists() {
            eprintln!(
                "note: {} (the default before) is no longer served: `--db {}` serves it, or rename it to local.db",
                old.display(),
                old.display()
            );
        }
        db
    });
    if let Some(parent) = db.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let clock_start = args.clock_start.as_deref().map(parse_clock_start).transpose()?;
    let outage_base = clock_start.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    let outages = args
        .simulate_outages
        .iter()
        .map(|text| Outage::parse(text, outage_base).map_err(|e| format!("--simulate-outage {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let generated_key = args.api_keys.is_empty();
    let config = Config {
        db: Some(db.clone()),
        api_keys: args.api_keys,
        account_id: args.account_id,
        rate_limit,
        auth_failure_limit,
        fault_rate: args.fault_rate,
        lost_write_rate: args.fault_lost_writes,
        fault_seed: args.fault_seed,
        latency: Duration::from_millis(args.latency_ms),
        normalise_urls: args.normalise_urls,
        run_scheduler: args.schedule,
        connections: Limits {
            header_read_timeout: Duration::from_secs(args.header_read_timeout),
            body_timeout: Duration::from_secs(args.body_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
            max_connections: args.max_connections as usize,
            ..Limits::default()
        },
        max_browser_runs: args
            .max_browser_runs
            .map_or_else(monform_emulator::domain::sessions::pool::default_size, usize::from),
        clock_start,
        outages,
        ..Config::default()
    };
    // Colours only for a person at a terminal: a log file or a journal
    // would get escape codes. Each request is logged at debug (RUST_LOG=debug).
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .init();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
        let server = monform_emulator::start(config, listener)
            .await
            .map_err(|e| e.to_string())?;
        eprint!(
            "{}",
            ready_lines(
                &server.url(),
                &db,
                &server.account_id,
                generated_key.then_some(server.api_key.as_str())
            )
        );
        super::context::shutdown_signal().await;
        eprintln!("shutting down: finishing requests in flight");
        server.shutdown().await.map_err(|e| e.to_string())
    })
}

/// `--clock-start`: an ISO 8601 date-time (or date), or `-DURATION`
/// before now; UNIX ms.
fn parse_clock_start(text: &str) -> Result<i64, String> {
    let parsed = match text.strip_prefix('-') {
        Some(before) => clock::parse_duration_ms(before).map(|ms| chrono::Utc::now().timestamp_millis() - ms),
        None => clock::parse(text).map(|t| t.timestamp_millis()),
    };
    parsed.ok_or_else(|| {
        format!("--clock-start `{text}` is neither a date-time (2026-10-01T00:00:00Z) nor -DURATION (-30d)")
    })
}

/// What `serve` says once it listens: where, which database and account,
/// and a line to paste into another shell to use it. `development_key` is
/// the key serve made for this database (printed: it opens only this
/// emulator, and printing it is how its user gets it); keys given with
/// `--api-key` are never printed.
fn ready_lines(url: &str, db: &Path, account: &str, development_key: Option<&str>) -> String {
    let mut out = format!("monform emulator listening on {url}\n");
    out.push_str(&format!("  database: {}\n", db.display()));
    out.push_str(&format!("  account:  {account}\n"));
    match development_key {
        Some(key) => {
            out.push_str(&format!("  API key:  {key}\n"));
            out.push_str(&format!(
                "export MONFORM_API_URL={url} MONFORM_ACCOUNT_ID={account} MONFORM_API_KEY={key}\n"
            ));
        }
        None => {
            out.push_str(&format!("export MONFORM_API_URL={url} MONFORM_ACCOUNT_ID={account}\n"));
            out.push_str("  (and MONFORM_API_KEY: one of the --api-key values, not printed)\n");
        }
    }
    out.push_str("  try: curl -H \"Authorization: Bearer $MONFORM_API_KEY\" \"$MONFORM_API_URL/v1/checks\"\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_keys_are_not_in_the_ready_lines() {
        let text = ready_lines("http://127.0.0.1:1", Path::new("e.db"), "acme", None);
        assert!(
            text.contains("export MONFORM_API_URL=http://127.0.0.1:1 MONFORM_ACCOUNT_ID=acme\n"),
            "{text}"
        );
        assert!(
            !text.contains("MONFORM_API_KEY=") && !text.contains("API key:"),
            "{text}"
        );
    }
}
