//! The monitoring service of `spec/monitoring-api.md`, served over HTTP
//! from one SQLite file: what `monform serve` runs, and what tests,
//! benchmarks and `--api-url local` start in-process.
//!
//! **Architecture invariant:** request bodies are validated by
//! `monform-model` (the same rules as the loader); no field list lives here.
//! This crate does not depend on the engine.
//!
//! # Code map
//!
//! The service of the spec over one SQLite file (rusqlite, WAL): every object
//! a JSON document in `objects`, keyed by account, kind and id, in creation
//! order. Three layers, each importing only the ones below it (no import
//! cycles between modules):
//!
//! - `routes/`: the HTTP side. `routes/mod.rs` is the route table from which
//!   both the router and `/openapi.json` are built: each `Route` carries its
//!   body (a kind's create or update, a check type's, or a schema kept next to
//!   the handler that checks its own body), its query parameters, its success
//!   status and the statuses it adds (409 for kinds with a unique field or
//!   deletes refused while in use, from `routes/hooks.rs`; 408 on completion
//!   waits). `openapi.rs` adds what every route of a shape answers
//!   (400/401/403 under `/v*`, 404 with a path parameter, 413/415 with a body,
//!   429 and the fault 5xx everywhere); `openapi/links.rs` adds OpenAPI links from each
//!   create (and session trigger, and the listings of what no call creates)
//!   to every operation taking the id it returns, so stateful tools reach
//!   them; `openapi/bodies.rs` turns the model's
//!   wire schemas into one component per operation body (creates with the
//!   quirk fields, partial updates where `null` clears optional fields).
//!   Handlers only parse the
//!   request (`params.rs` is the one home of paging, time windows, quick
//!   ranges and `maxWaitSeconds`; `session_bodies.rs` checks session bodies,
//!   every violation at once), call the domain and shape the response (links,
//!   `Content-Range`, API forms). `objects.rs` and `hooks.rs` are the generic
//!   CRUD of every kind and what differs per kind (ids, uniqueness, 409s,
//!   computed fields, the reference's body fields the model does not know:
//!   an alert channel's `autoSubscribe`, a card's `id` and `statusPageId`);
//!   `present.rs` is how responses show each kind (computed fields, made as
//!   JSON text), and `stored.rs` writes a list page from the stored bodies'
//!   text with those fields spliced in (no `Value` round trip, byte for byte
//!   the same; a body the round trip would change goes the slow way). Request bodies go through `resource.rs`, which runs the
//!   model's shape walker on the API schema and the model's rules.
//!   `layers.rs` holds the layers around every route: the log line and
//!   `/-/metrics` (`observe.rs` counts), latency and faults (`faults.rs`; lost writes: answered, rolled back),
//!   the rate limit per key and the limit of failed authentications per
//!   client address (`ratelimit.rs`, `AuthFailures`). `agents.rs` has the agent endpoints
//!   (below), private-location keys and `GET /v1/agent-events`; each of its
//!   bodies is one field list from which both its check and its schema in
//!   `/openapi.json` are made.
//! - `domain/`: what the service does. `sessions/` (check and test sessions:
//!   `check.rs` and `test.rs` start and finish them, `lifecycle.rs` settles (in the
//!   background, one session a transaction, as their time comes; reads
//!   settle what is still due), awaits and cancels, `runs.rs` executes runs through `monform-runner` in
//!   the background (browser-type checks too where `BrowserSetup::discover`
//!   finds Node.js, playwright-core and Chromium at start; those needing a
//!   process wait for a slot of `pool.rs`, `Config::max_browser_runs`, and
//!   time out TIMED_OUT unrun when their `maxResponseTime` passes queued) and decides how each turned out, `results.rs` records
//!   check results and error groups), `alerts.rs` (the check alert state
//!   machine, a pure `step` over state, run verdict and settings, run when a
//!   check session settles, with `maintenance.rs` deciding silences),
//!   `notify/` (alert notifications; WEBHOOK and SLACK requests sent by a
//!   dispatcher task outside the store's lock), `retention.rs` (results older
//!   than 30 days rolled into the hourly `rollups` table), `compact.rs`
//!   (a check's results beyond its newest 2,000 kept per location and
//!   minute, a few bytes a run, read back as FINAL results by the listings,
//!   analytics and the report), `outages.rs` and `simulate.rs` (test-only:
//!   simulated outages, and clock jumps that play every check's runs over
//!   the skipped time, through the alert state machine; reached by
//!   `routes/admin.rs`, `/-/clock` and `/-/outages`, outside the route
//!   table and `/openapi.json`), `analytics.rs` and
//!   `stats.rs` (per-check analytics and the report), `heartbeats.rs` (pings
//!   of `/ping/{token}`, read by the runner), `scheduler.rs` (activated checks
//!   at their frequency when `Config::run_scheduler` is on), `agents.rs`
//!   (agent registrations, the queue of runs waiting for agents and its
//!   leases, lost by an agent silent for three heartbeats; `agents/keys.rs`:
//!   private-location keys as SHA-256 digests; the computed `lastSeen`,
//!   `agentCount`, `runningAgents`, `minAgentVersion`, error events), `checks.rs`
//!   (group settings applied, snippets inlined, tags), `objects.rs` (load or
//!   404), `incidents.rs` and `pages.rs` (incidents from `triggerIncident`,
//!   what a status page shows; rendered by `routes/pages.rs`).
//!   `Config::execute_checks` (default on) turns execution off (every run
//!   passes with a simulated time); `Config::backoff_second` shortens retry
//!   backoffs, each wait at most 2 s.
//! - `store.rs` (SQLite: objects, records by kind and time, counters, keys
//!   as SHA-256 digests (`store/keys.rs`, `digest.rs`; a database with keys
//!   in clear is converted when opened);
//!   at 100,000 checks a page of a listing reads its total from
//!   `object_counts`, kept by triggers, walks its offset in the
//!   `(account, kind, seq)` index alone and reads one range of rows, and
//!   remembers where the next page starts (a TEMP table, forgotten by a
//!   trigger when an object of the kind is deleted: creations only append), so
//!   a listing read in order never walks the rows before its page; `records_page`
//!   filters, counts and pages account-wide records (alert notifications,
//!   check alerts) inside SQLite, so a listing over 60,000 notifications
//!   parses only its page; `find` /
//!   `find_in_list` filter by a JSON field inside SQLite, so references,
//!   uniqueness and refused deletes parse only the objects that match; the
//!   alert channels with `autoSubscribe` on, which every check created
//!   without `autoAssignAlerts` subscribes to, have a partial index of their
//!   own (`objects_auto_subscribe`: a create reads those, not every channel's
//!   body; 500 channels parsed per create at 100,000 checks); the
//!   subscriptions of checks and groups to alert channels are a table of
//!   their own (`subscriptions`, kept by triggers from each body's
//!   `alertChannelSubscriptions`), which a page of alert channels reads
//!   (scanning every check's body per page was 38% of the emulator's CPU in a
//!   no-op plan at 100,000 checks); statements are
//!   prepared once (`prepare_cached`, 128 kept); a
//!   64 MiB page cache and a memory map; one connection behind a mutex, so every
//!   transaction runs alone and the per-connection page starts stay right,
//!   rather than a reader pool beside a writer: that would need the page
//!   starts shared and every call site sorted into reads and writes. Async
//!   handlers take the mutex synchronously; `Store::lock` waits for a held
//!   mutex inside `tokio::task::block_in_place`, so a waiting request hands
//!   its worker to another thread instead of stalling it (on 2 cores, two
//!   waiting requests used to stop the whole server, new connections
//!   included, until a slow transaction ended; `crates/emulator/tests/it/contention.rs`); the
//!   mutex is parking_lot's, handed to the longest waiter after each
//!   transaction, so the background settler cannot starve requests),
//!   its connections served by the `listen` crate (`monform-listen`: HTTP/1.1
//!   with hyper, as `axum::serve` does, plus what it lacks: a connection limit (a
//!   semaphore: at the limit the server stops accepting) and the header-read,
//!   body (tower-http's `DeadlineBody`, total, 408) and idle timeouts,
//!   `Config::connections`), `accounts.rs` (the keys and account set up at start; the development
//!   key, which a digest cannot give back, kept in `<db>.key`, mode 0600),
//!   `clock.rs` (the one clock: strictly increasing `updated_at`, `now_ms`,
//!   ISO dates; simulated by an offset, process-wide, `Config::clock_start`), `ids.rs` (new ids, ids as text), `error.rs` (the error body
//!   of the contract), `app.rs` (configuration and shared state).
//!
//! **Architecture invariants:** no field list here; validation is the
//! model's. It does not depend on the engine. Domain: no HTTP types (nothing
//! in `domain/` imports axum or `routes`; its errors are `ApiError` values
//! built with its constructors, the status being part of the service's
//! contract). Routes: no business rule; they parse, call the domain and
//! shape.

pub mod accounts;
pub mod app;
pub mod auth;
pub mod body;
pub mod clock;
pub mod digest;
pub mod domain;
pub mod error;
pub mod faults;
pub mod ids;
pub mod layers;
pub mod observe;
pub mod openapi;
pub mod ratelimit;
pub mod resource;
pub mod routes;
pub mod store;

/// Connections: a limit and timeouts (`Config::connections`), shared with
/// the reconciler's `/metrics` listener.
pub use monform_listen as listen;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use app::{App, AppState, Config, RateLimit};

use crate::domain::{notify, outages, retention, scheduler, sessions};
use crate::error::ApiError;
use crate::store::Store;

/// A running emulator.
pub struct Server {
    pub addr: SocketAddr,
    /// The key to use (the development key unless keys were given).
    pub api_key: String,
    pub account_id: String,
    pub app: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting requests and waits for those in flight.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        self.app.shutting_down.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.task.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    /// Waits until the server stops (for `monform serve`).
    pub async fn wait(self) -> std::io::Result<()> {
        let Server { task, shutdown, .. } = self;
        let _keep_open = shutdown;
        task.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot open the database {path}: {source}")]
    Database { path: String, source: rusqlite::Error },
    #[error("{0}")]
    Keys(String),
    #[error("cannot listen: {0}")]
    Listen(#[from] std::io::Error),
}

/// Opens the database, provisions keys and serves on `listener`.
pub async fn start(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let db_name = config
        .db
        .as_ref()
        .map_or_else(|| ":memory:".to_owned(), |p| p.display().to_string());
    let store = match &config.db {
        Some(path) => Store::open(path),
        None => Store::in_memory(),
    }
    .map_err(|source| StartError::Database {
        path: db_name.clone(),
        source,
    })?;
    let (api_key, account_id) = accounts::provision(&store, &config).map_err(|e| match e {
        accounts::ProvisionError::Database(source) => StartError::Database { path: db_name, source },
        other => StartError::Keys(other.to_string()),
    })?;
    let app: AppState = Arc::new(App {
        store,
        limiter: ratelimit::Limiter::new(config.rate_limit),
        auth_failures: ratelimit::AuthFailures::new(config.auth_failure_limit),
        faults: faults::Faults::new(config.fault_rate, config.fault_seed, config.latency)
            .with_lost_writes(config.lost_write_rate),
        stopped: tokio::sync::watch::Sender::new(false),
        runner: sessions::runs::runner(&config),
        browser_pool: sessions::pool::BrowserPool::new(config.max_browser_runs),
        config,
        shutting_down: AtomicBool::new(false),
        metrics: Default::default(),
    });
    let addr = listener.local_addr()?;
    if let Some(at) = app.config.clock_start {
        clock::start_at(at);
    }
    if let Err(e) = app
        .store
        .transaction(|tx| outages::set_startup_outages(tx, &app.config.outages))
    {
        tracing::warn!("cannot record the simulated outages: {e}");
    }
    // Results past retention go at once (a file may have slept for weeks).
    if let Err(e) = app.store.transaction(|tx| retention::sweep_now(tx, clock::now_ms())) {
        tracing::warn!("cannot sweep old check results: {e}");
    }
    tokio::spawn(notify::dispatch(app.clone()));
    tokio::spawn(sessions::lifecycle::settle_in_background(app.clone()));
    // Runs cut short by an earlier stop start again.
    if let Err(e) = sessions::runs::resume_runs(&app) {
        tracing::warn!("cannot resume the runs of unfinished sessions: {e}");
    }
    if app.config.run_scheduler && app.config.execute_checks {
        tokio::spawn(scheduler::run(app.clone()));
    }
    let router = build_router(app.clone());
    let (tx, rx) = oneshot::channel::<()>();
    let state = app.clone();
    let task = tokio::spawn(async move {
        let signalled = state.clone();
        let limits = state.config.connections;
        let result = listen::serve(listener, router, limits, async move {
            // Also reached when the `Server` is dropped.
            let _ = rx.await;
            signalled.shutting_down.store(true, std::sync::atomic::Ordering::SeqCst);
        })
        .await;
        // Long polls and background runs stop with the server.
        state.stopped.send_replace(true);
        result
    });
    Ok(Server {
        addr,
        api_key,
        account_id,
        app,
        shutdown: Some(tx),
        task,
    })
}

/// Starts on an ephemeral loopback port.
pub async fn start_local(config: Config) -> Result<Server, StartError> {
    start(config, TcpListener::bind("127.0.0.1:0").await?).await
}

/// The whole HTTP surface: the API's routes, `/openapi.json`, `/-/metrics`,
/// status pages as HTML (`/status/{url}`, or `/` by custom domain), and the error body for unknown routes (404) and wrong methods (405).
pub fn build_router(app: AppState) -> Router {
    let table = routes::table();
    let openapi = Arc::new(openapi::document(&table));
    routes::router(table)
        .route(
            "/openapi.json",
            get(move || async move { axum::Json((*openapi).clone()) }),
        )
        .route("/-/metrics", get(layers::metrics))
        .merge(routes::admin::router())
        .route("/status/{url}", get(routes::pages::by_url))
        .fallback(routes::pages::fallback)
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method not allowed on this route")
        })
        .layer(DefaultBodyLimit::max(body::BODY_LIMIT))
        // Outermost last: observe (counts everything, faults included), then
        // latency and faults, then the rate limit, then the handler.
        .layer(axum::middleware::from_fn_with_state(app.clone(), layers::limit))
        .layer(axum::middleware::from_fn_with_state(app.clone(), layers::inject))
        .layer(axum::middleware::from_fn_with_state(app.clone(), layers::observe))
        .with_state(app)
}
