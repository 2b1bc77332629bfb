//! The emulator's configuration and shared state.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use crate::ratelimit::RateLimit;
use crate::store::Store;

/// How `monform serve` (or a test) runs the emulator.
#[derive(Debug, Clone)]
pub struct Config {
    /// The SQLite file; `None` keeps everything in memory.
    pub db: Option<PathBuf>,
    /// Keys accepted; empty means the development key (created once, then reused).
    pub api_keys: Vec<String>,
    /// The account the keys belong to; `None` means the development account.
    pub account_id: Option<String>,
    /// `None` turns rate limiting off.
    pub rate_limit: Option<RateLimit>,
    /// Failed authentications (401) allowed per client address and window
    /// before it gets 429 (`ratelimit::AuthFailures`); `None` turns it off.
    pub auth_failure_limit: Option<RateLimit>,
    /// Fraction of requests that fail on purpose (0.0 to 1.0).
    pub fault_rate: f64,
    pub fault_seed: u64,
    /// Fraction of writes (0.0 to 1.0) acknowledged as if stored but not
    /// stored (`faults::LOST_WRITE`); drawn from `fault_seed` on a stream
    /// of their own.
    pub lost_write_rate: f64,
    /// Added to every request.
    pub latency: Duration,
    /// Store checks' request URLs with scheme and host lowercased
    /// (`domain::checks::normalise_url`). Off by default: the spec names no
    /// rewrite.
    pub normalise_urls: bool,
    /// How long a check or test session runs before it passes.
    pub session_duration: Duration,
    /// Whether sessions really execute their checks (`runner`); when false
    /// every run passes with a made-up response time, as before checks ran.
    pub execute_checks: bool,
    /// Whether a background scheduler runs every activated check at its
    /// frequency (`domain::scheduler`; needs `execute_checks`). Off by
    /// default: tests and one-shot commands do not want background runs.
    pub run_scheduler: bool,
    /// How long one second of a retry strategy's backoff really lasts
    /// (`monform_runner::retry`): the emulator shortens waits so sessions
    /// stay quick. Default 10 ms (a 60 s backoff waits 0.6 s); each wait is
    /// also capped at `domain::sessions::runs::MAX_WAIT`.
    pub backoff_second: Duration,
    /// How often private-location agents renew their registration; an agent
    /// silent for three of these has lost its leased runs (`domain::agents`).
    pub agent_heartbeat: Duration,
    /// Timeouts and the connection limit of `listen::serve`.
    pub connections: crate::listen::Limits,
    /// How many runs that need a process (browser-type checks, API checks'
    /// local scripts) run at once; others queue (`domain::sessions::pool`).
    /// Default: the number of cores.
    pub max_browser_runs: usize,
    /// Node.js, playwright-core and Chromium for browser-type checks;
    /// `None` looks for them (`BrowserSetup::discover`).
    pub browser: Option<monform_runner::BrowserSetup>,
    /// Start the (process-wide) clock at this time, UNIX ms, and let it
    /// flow from there (`clock`, `monform serve --clock-start`); `None`:
    /// the wall clock.
    pub clock_start: Option<i64>,
    /// Simulated outages for every account (`domain::outages`), added at
    /// start (`monform serve --simulate-outage`).
    pub outages: Vec<crate::domain::outages::Outage>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            db: None,
            api_keys: Vec::new(),
            account_id: None,
            rate_limit: Some(RateLimit::DEFAULT),
            auth_failure_limit: Some(crate::ratelimit::AuthFailures::DEFAULT),
            fault_rate: 0.0,
            fault_seed: 0,
            lost_write_rate: 0.0,
            latency: Duration::ZERO,
            normalise_urls: false,
            session_duration: Duration::from_millis(200),
            execute_checks: true,
            run_scheduler: false,
            backoff_second: Duration::from_millis(10),
            agent_heartbeat: Duration::from_secs(crate::domain::agents::HEARTBEAT_SECONDS as u64),
            connections: crate::listen::Limits::default(),
            max_browser_runs: crate::domain::sessions::pool::default_size(),
            browser: None,
            clock_start: None,
            outages: Vec::new(),
        }
    }
}

/// State shared by every request.
pub struct App {
    pub store: Store,
    pub config: Config,
    /// Set when shutdown begins: waits and the scheduler stop.
    pub shutting_down: AtomicBool,
    pub metrics: crate::observe::Metrics,
    /// Per-key request budgets (`config.rate_limit`).
    pub limiter: crate::ratelimit::Limiter,
    /// 401s per client address (`config.auth_failure_limit`).
    pub auth_failures: crate::ratelimit::AuthFailures,
    /// Fault injection and added latency (`config.fault_rate`, `fault_seed`, `latency`).
    pub faults: crate::faults::Faults,
    /// Turns true once the server has stopped; background runs and agent long polls stop with it.
    pub stopped: tokio::sync::watch::Sender<bool>,
    /// Executes the runs of sessions (`config.backoff_second`).
    pub runner: monform_runner::Runner,
    /// Slots for the runs that need a process (`config.max_browser_runs`).
    pub browser_pool: crate::domain::sessions::pool::BrowserPool,
}

pub type AppState = Arc<App>;
