//! The monitoring service of `spec/monitoring-api.md`, served over HTTP
//! from one SQLite file: what `monform serve` runs, and what tests,
//! benchmarks and `--api-url local` start in-process.
//!
//! **Architecture invariant:** request bodies are validated by
//! `monform-model` (the same rules as the loader); no field list lives here.
//! This crate does not depend on the engine.

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

use crate::domain::{notify, retention, scheduler, sessions};
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
