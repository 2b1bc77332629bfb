//! The private-location agent (`monform agent`): registers with the
//! service under a private location's key, takes the runs queued for that
//! location, executes them with `monform-runner` from inside the network it
//! runs in, and reports each outcome. It serves health probes
//! ([`probes`]) and reports its own errors ([`events`]) unless
//! `EXTERNAL_OBSERVABILITY=off`.
//!
//! Behaviour (choices where the spec is silent, also in ARCHITECTURE.md):
//! - A key the service refuses (401/403) at any time ends the agent with
//!   an error and a non-zero exit, without retrying: a revoked key stays
//!   revoked. A service that cannot be reached is retried with jittered
//!   exponential backoff (1 s doubling to 30 s); readiness is 503 meanwhile.
//! - Runs are leased by long poll (20 s), at most `MONFORM_AGENT_CONCURRENCY`
//!   at once; an outcome whose report fails for a retryable reason is sent
//!   again until the run's deadline.
//! - SIGTERM / SIGINT: readiness turns 503 at once, no new run is taken, runs
//!   in flight finish and are reported (for at most
//!   `MONFORM_AGENT_SHUTDOWN_GRACE`, 30 s by default), then the agent logs
//!   each run it could not report and exits 0.
//! - The log says which private location the key serves, and each run's
//!   check, outcome and duration.
//!
//! # Code map
//!
//! The private-location agent behind `monform agent` (a crate of its own: a
//! long-running process with its own HTTP client, probe server and signal
//! handling, about 800 lines). `config.rs` (the environment: `MONFORM_API_URL`,
//! `MONFORM_AGENT_KEY` held in monform-api's `Secret`, whose `Debug` shows `***`,
//! `AGENT_HEALTH_PORT`, `EXTERNAL_OBSERVABILITY`, `MONFORM_AGENT_CONCURRENCY`,
//! `MONFORM_AGENT_SHUTDOWN_GRACE`; every problem at once; `VARIABLES`, the
//! list `monform agent --help` prints), `client.rs` (the agent endpoints; 401/403 =
//! refused key, transport errors, 408, 429 and 5xx = unreachable, other 4xx =
//! rejected; transport errors described without their URL), `probes.rs`
//! (`/-/readiness`, `/-/liveness`, `/health` on every interface),
//! `events.rs` (the `Scrubber`: the key, environment values of 8 characters or
//! more, every string of the run's check and variables, then anything shaped
//! like a URL or an IPv4 address; the `Reporter` logs an error and, with
//! external observability on, sends it with a backtrace, the agent and rustc
//! versions and the platform), `lib.rs` (register with backoff, renew every
//! `heartbeatSeconds`, lease by long poll as many runs as free slots, run
//! each with `monform-runner` (no `Heartbeats`: heartbeat checks are not
//! executed), report with retries until the run's deadline, graceful stop;
//! the runs taken and not reported are kept by id and check name, so the
//! log names each one shutdown left unreported). The CLI hides the global
//! options the agent does not read from its help and refuses them.
//!
//! **Architecture invariant:** the key reaches only the `Authorization`
//! header and the scrubber; nothing the agent logs or sends carries it.
//!
//! The agent endpoints (under `/v1/agent`, authenticated by `Authorization:
//! Bearer <private location key>`; an account API key is refused with 401):
//!
//! | route | body | answer |
//! |---|---|---|
//! | `POST /v1/agent/register` | `agentId`, `version`, `platform`, `runtimeVersion` | 200 `{agentId, privateLocation: {id, slugName}, heartbeatSeconds}`; also renews (an agent counts as connected for 60 s after its last request) |
//! | `POST /v1/agent/leases` | `agentId`, `max` (1..50), `waitSeconds` (0..30, long poll) | 200 `{runs: [{runId, location, check, variables, deadlineAtMs}]}`; 409 for an agent not registered |
//! | `POST /v1/agent/runs/{runId}/outcome` | `agentId` and the runner's record (`outcome`, `attempts`, `location`, `finishedAtMs`) | 204; 404 unknown run; 409 not leased to this agent; 400 not an outcome |
//! | `POST /v1/agent/events` | `agentId`, `message`, `backtrace`, `agentVersion`, `platform`, `runtimeVersion` | 201 the stored event (listed by `GET /v1/agent-events` with an account key) |
//!
//! Keys (account API key): `GET /v1/private-locations/{id}/keys` (masked),
//! `POST .../keys` (201, `rawKey` shown this once), `DELETE .../keys/{keyId}`
//! (204; agents using it are refused from their next request).

pub mod client;
pub mod config;
pub mod events;
pub mod probes;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use monform_runner::{BrowserSetup, Job, Runner, Variables};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use client::{Client, ClientError};
pub use config::Config;
use events::{Reporter, Scrubber};
use probes::Health;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const RUNTIME_VERSION: &str = env!("MONFORM_RUSTC_VERSION");

const LEASE_WAIT: Duration = Duration::from_secs(20);
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// `linux-x86_64` and the like.
pub fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Setup(String),
    #[error("cannot serve the health probes on port {port} (AGENT_HEALTH_PORT): {source}")]
    Probes { port: u16, source: std::io::Error },
    #[error(
        "the service refused the private location key: {0}\n  MONFORM_AGENT_KEY is wrong or was revoked; create a new key for the private location and restart the agent with it"
    )]
    KeyRefused(String),
    #[error("the service rejected the agent ({status}): {message}")]
    Rejected { status: u16, message: String },
}

impl From<ClientError> for AgentError {
    fn from(error: ClientError) -> AgentError {
        match error {
            ClientError::Refused(message) => AgentError::KeyRefused(message),
            ClientError::Rejected { status, message } => AgentError::Rejected { status, message },
            ClientError::Unreachable(message) => AgentError::Setup(message),
        }
    }
}

/// Jittered exponential backoff, so many agents do not retry in step.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(FIRST_BACKOFF)
    }

    fn next(&mut self) -> Duration {
        let jitter = u64::from(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .subsec_millis(),
        ) % 250;
        let wait = self.0 + Duration::from_millis(jitter);
        self.0 = (self.0 * 2).min(MAX_BACKOFF);
        wait
    }
}

/// What every run task shares.
#[derive(Clone)]
struct Shared {
    client: Client,
    reporter: Reporter,
    scrubber: Scrubber,
    runner: Runner,
    /// Runs taken and not yet reported (or given up): run id to check name,
    /// for the log at shutdown.
    pending: Arc<Mutex<BTreeMap<String, String>>>,
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs the agent until `shutdown` completes (then finishes the runs in
/// flight and returns `Ok`) or the service refuses its key.
pub async fn run(config: Config, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), AgentError> {
    let health = Arc::new(Health::default());
    let addr = probes::serve(health.clone(), config.health_port)
        .await
        .map_err(|source| AgentError::Probes {
            port: config.health_port,
            source,
        })?;
    let agent_id = uuid::Uuid::new_v4().to_string();
    tracing::info!(agent = %agent_id, version = VERSION, "health probes on port {}", addr.port());
    let client = Client::new(&config, agent_id).map_err(AgentError::Setup)?;
    let shared = Shared {
        reporter: Reporter::new(config.external_observability.then(|| client.clone())),
        scrubber: Scrubber::new(config.key.expose(), std::env::vars().map(|(_, v)| v)),
        // Browser-type checks run where Node.js, playwright-core and Chromium
        // are found; elsewhere they fail saying what to install. Their
        // scripts get an environment built from nothing (the runner's
        // `script_env`): never MONFORM_AGENT_KEY nor the rest of ours.
        runner: Runner::default().with_browser(BrowserSetup::discover(None)),
        client,
        pending: Arc::default(),
    };
    let (stop, mut stopped) = watch::channel(false);
    let signalled = health.clone();
    tokio::spawn(async move {
        shutdown.await;
        signalled.stopping.store(true, Ordering::SeqCst);
        stop.send_replace(true);
    });
    let Some(heartbeat) = register(&shared, &health, &mut stopped).await? else {
        return Ok(());
    };
    let (fatal_tx, mut fatal) = tokio::sync::mpsc::channel::<ClientError>(1);
    tokio::spawn(renew(shared.clone(), health.clone(), heartbeat, fatal_tx));
    let slots = Arc::new(Semaphore::new(config.concurrency));
    let mut tasks = JoinSet::new();
    let mut backoff = Backoff::new();
    let outcome = loop {
        reap(&mut tasks, &shared).await;
        let first = tokio::select! {
            permit = slots.clone().acquire_owned() => permit.map_err(|e| AgentError::Setup(e.to_string()))?,
            _ = stopped.wait_for(|s| *s) => break Ok(()),
        };
        let wanted = 1 + slots.available_permits();
        let leased = tokio::select! {
            leased = shared.client.lease(wanted, LEASE_WAIT) => leased,
            _ = stopped.wait_for(|s| *s) => break Ok(()),
            Some(error) = fatal.recv() => break Err(error.into()),
        };
        match leased {
            Ok(runs) => {
                health.connected.store(true, Ordering::SeqCst);
                backoff = Backoff::new();
                let mut first = Some(first);
                for run in runs {
                    let permit = match first.take() {
                        Some(p) => p,
                        None => match slots.clone().try_acquire_owned() {
                            Ok(p) => p,
                            Err(_) => break,
                        },
                    };
                    tasks.spawn(execute(shared.clone(), run, permit));
                }
            }
            Err(ClientError::Refused(message)) => break Err(AgentError::KeyRefused(message)),
            Err(error) => {
                if error.retryable() {
                    health.connected.store(false, Ordering::SeqCst);
                    tracing::warn!("{error}; retrying");
                } else {
                    // 409 after the service forgot the agent (a new database): register again.
                    shared
                        .reporter
                        .error(&shared.scrubber, &format!("cannot lease runs: {error}"))
                        .await;
                    if let Err(e) = shared.client.register().await {
                        tracing::warn!("cannot register again: {e}");
                    }
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff.next()) => {}
                    _ = stopped.wait_for(|s| *s) => break Ok(()),
                }
            }
        }
    };
    health.stopping.store(true, Ordering::SeqCst);
    if !tasks.is_empty() {
        tracing::info!("shutting down: finishing {} run(s) in flight", tasks.len());
    }
    let finished = tokio::time::timeout(config.shutdown_grace, async {
        while let Some(result) = tasks.join_next().await {
            panicked(&shared, result).await;
        }
    })
    .await;
    if finished.is_err() {
        tracing::warn!(
            "runs still going after {} s (MONFORM_AGENT_SHUTDOWN_GRACE) were abandoned",
            config.shutdown_grace.as_secs()
        );
    }
    // What the service will not hear from this agent: it times these runs out.
    for (run, check) in shared.pending().iter() {
        tracing::warn!("not reported at shutdown: run {run} of check \"{check}\"");
    }
    outcome
}

/// Registers, retrying while the service is unreachable; `None` when
/// shutdown began first.
async fn register(
    shared: &Shared,
    health: &Health,
    stopped: &mut watch::Receiver<bool>,
) -> Result<Option<Duration>, AgentError> {
    let mut backoff = Backoff::new();
    loop {
        let attempt = tokio::select! {
            attempt = shared.client.register() => attempt,
            _ = stopped.wait_for(|s| *s) => return Ok(None),
        };
        match attempt {
            Ok((heartbeat, location)) => {
                health.connected.store(true, Ordering::SeqCst);
                let location = location.unwrap_or_else(|| "(the service did not say)".into());
                tracing::info!("registered with the service as an agent of private location {location}; taking runs");
                return Ok(Some(heartbeat));
            }
            Err(error) if error.retryable() => {
                let wait = backoff.next();
                tracing::warn!("{error}; retrying in {} ms", wait.as_millis());
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stopped.wait_for(|s| *s) => return Ok(None),
                }
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// Renews the registration every `every`; readiness follows whether the
/// service answers. A refused key is sent to the main loop.
async fn renew(shared: Shared, health: Arc<Health>, every: Duration, fatal: tokio::sync::mpsc::Sender<ClientError>) {
    loop {
        tokio::time::sleep(every).await;
        match shared.client.register().await {
            Ok(_) => health.connected.store(true, Ordering::SeqCst),
            Err(ClientError::Refused(message)) => {
                let _ = fatal.send(ClientError::Refused(message)).await;
                return;
            }
            Err(error) => {
                health.connected.store(false, Ordering::SeqCst);
                tracing::warn!("cannot renew the registration: {error}");
            }
        }
    }
}

/// Reports panics of finished run tasks.
async fn reap(tasks: &mut JoinSet<()>, shared: &Shared) {
    while let Some(result) = tasks.try_join_next() {
        panicked(shared, result).await;
    }
}

async fn panicked(shared: &Shared, result: Result<(), tokio::task::JoinError>) {
    if let Err(error) = result
        && error.is_panic()
    {
        let payload = error.into_panic();
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic".to_owned());
        shared
            .reporter
            .error(&shared.scrubber, &format!("a run stopped with a panic: {message}"))
            .await;
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Executes one leased run and reports its outcome; the permit is held
/// until then.
async fn execute(shared: Shared, run: Value, _permit: OwnedSemaphorePermit) {
    let run_id = run["runId"].as_str().unwrap_or_default().to_owned();
    let check = &run["check"];
    let variables = Variables::for_check(run["variables"].as_array().cloned().unwrap_or_default(), check);
    let location = run["location"].as_str().unwrap_or_default();
    let name = check["name"].as_str().unwrap_or("(no name)").to_owned();
    shared.pending().insert(run_id.clone(), name.clone());
    let started = std::time::Instant::now();
    let job = Job {
        check,
        variables: &variables,
        heartbeats: None,
        location,
    };
    let attempts = shared.runner.run(job).await;
    let scrubber = shared.scrubber.with(check).with(&run["variables"]);
    if let Some(last) = attempts.last()
        && last.outcome.has_errors
    {
        // The run could not be made from here (not executed, unreachable,
        // refused): what the agent's operator needs to know about its network.
        let error = last.outcome.error.as_deref().unwrap_or("no reason given");
        let message = format!("run {run_id} could not be made from this location: {error}");
        shared.reporter.error(&scrubber, &message).await;
    }
    let record = monform_runner::retry::to_record(&attempts);
    let deadline = run["deadlineAtMs"].as_i64().unwrap_or(0);
    let mut backoff = Backoff::new();
    loop {
        match shared.client.report(&run_id, record.clone()).await {
            Ok(()) => {
                shared.pending().remove(&run_id);
                let status = attempts.last().map_or("UNKNOWN", |a| a.outcome.status.as_str());
                tracing::info!(
                    "run {run_id} reported: {status}, check \"{name}\" in {} ms",
                    started.elapsed().as_millis()
                );
                return;
            }
            Err(error) if error.retryable() && now_ms() < deadline => {
                tracing::warn!("cannot report the outcome of run {run_id} yet: {error}");
                tokio::time::sleep(backoff.next()).await;
            }
            Err(error) => {
                shared.pending().remove(&run_id);
                let message = format!("cannot report the outcome of run {run_id} (check \"{name}\"): {error}");
                shared.reporter.error(&scrubber, &message).await;
                return;
            }
        }
    }
}
