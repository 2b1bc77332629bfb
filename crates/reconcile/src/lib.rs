//! `monform reconcile` (issue 30): a long-running process (or `--once`)
//! that keeps the service and the files in sync. Each interval it loads
//! the files, plans through `monform_engine::ops`, and per change follows
//! the resource's drift policy (`policy.rs`), applies through the same
//! `ops` operations as `monform apply` (lock, budget, `preventDestroy`,
//! mass-delete threshold, the project's Rego policies), reports new drift
//! (conflicts marked), its end, and each revert to the project's
//! WEBHOOK and SLACK channels (`report.rs`, `deliver.rs`), writes
//! `--events FILE`, and serves `/metrics`, `/healthz`, `/readyz`
//! (`metrics.rs`). One process leads per project (`leader.rs`).
//!
//! **Architecture invariant:** no terminal rendering and no file loading of
//! its own: the front end (the CLI) passes a [`Host`] that loads the files
//! and renders a plan as Markdown.
//!
//! # Code map
//!
//! `monform reconcile` (issue 30), a crate of its own: a long-running process
//! with its own signals, HTTP endpoint and leadership. The CLI passes a
//! `Host` (loads the files each interval, renders a plan as Markdown), the
//! client and the state backend. `lib.rs` (the loop: lead, run an interval,
//! wait `[reconcile] interval`, or 2, 4, 8 intervals (at most an hour) after
//! intervals that could not reach the service; SIGTERM/SIGINT set the stop
//! flag the executor reads, so the change in flight finishes, then exit 0),
//! `interval.rs` (one interval: load (a failure is reported and changes
//! nothing), `ops::plan`, judge, apply the changes to apply as `ops::prepare_apply`
//! with them as targets + `ops::execute` (the apply lock, run budget,
//! `preventDestroy`, mass-delete threshold, verification: what `monform apply`
//! does), report), `policy.rs` (per change: drift, a file change or both; drift
//! follows `lifecycle.drift` or `[reconcile] drift`; file changes are applied
//! with `apply-changes = true`; a change that is both is applied only when both
//! parts would be, since an update sends the whole object), `report.rs` (the
//! documented WEBHOOK body, the Slack message, and the
//! memory of reported drift: a drift is news when its address is new or its
//! fields' values changed; a reported address no longer drifted is "back in
//! sync"), `deliver.rs` (the `[reconcile] notify` channels of the files:
//! WEBHOOK with its method, headers and query parameters; SLACK at its URL;
//! errors never show a URL), `metrics.rs` (`/metrics` in the text format,
//! `/healthz`, `/readyz`), `leader.rs`, `log.rs` (`--log-format text|json`: each line a typed
//! `Message` by `kind`), `events.rs` (`--events FILE`: each line a typed
//! `Event` by `event`),
//! `slo_alerts.rs` (issue 50: each SLO with `alerting.channels` evaluated by
//! `ops::slo_status` each interval; a burn-rate pair's start and end sent
//! once per episode, remembered with the drift memory),
//! `sweep.rs` (`[reconcile] request-share`, issue 48: the share set on the
//! API client, which paces the reads and yields to the key's other clients;
//! each plan's budget, the share of an interval, for the engine's rolling
//! refresh; the drift reported read first; a sweep's log line and metrics).
//! An interval is counted from its start.
//!
//! **Architecture invariant:** it plans and applies only through
//! `monform_engine::ops` (and the crate root's re-exports), so a reconcile
//! can do nothing an apply could not; it never renders or loads files itself.
//!
//! Decisions: a drift report is remembered (in `.monform/reconcile.<project>.json`,
//! or the `monform_reconcile_memory` row with the PostgreSQL state) *before* it is
//! sent: a leader killed between the two loses that report rather than have
//! its successor send it again ("no drift report sent twice"); a delivery
//! that fails is forgotten again, so the next interval retries it.
//! `notify` and `codify` drift is reported once (a field changed in the
//! files too since the last apply as a conflict, with its applied value);
//! drift a `revert` policy undid is reported each time, as `reverted`
//! (what the service had, what the files restored; issue 45); file
//! changes are events and log lines. Objects the service changed to what
//! the files say (a codified branch merged) are recorded as applied by a
//! no-op apply, so the next edit of them is drift, not a conflict; the
//! state records the service's values only where the files say the same.
//! `codify` (issue 33): new drift of
//! that policy is handed to the `Host` (`Host::codify`; the CLI's runs
//! `monform_codify` and `git::commit_to_branch`), which commits it on a new
//! branch with git's plumbing and a private index, so the reconciler keeps
//! reading the files as they are and nothing a person has checked out moves;
//! the report names the branch (`codifiedBranch`). Tied to the drift memory,
//! so a drift is codified once, not every interval. Leadership: with the local state an exclusive
//! `flock` on `.monform/reconcile.<project>.lock`; with PostgreSQL a session
//! advisory lock `pg_try_advisory_lock(0x6d667263, hashtext(project))` on a
//! connection of the leader's own (not the apply lock's key), tried by waiting
//! replicas every second: PostgreSQL drops it with the connection, so a
//! SIGKILLed leader hands over within about a second of its socket closing.
//! `--once` exits like `plan --detailed-exitcode` (0 in sync, 2 changes found,
//! whether applied or reported, 1 an error), and fails at once when another
//! reconciler leads. Applying a change as a target also applies what it
//! references when that changed too (as `--target` does).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use monform_engine::Plan;
use monform_engine::ops::{Opened, Refusal};
use monform_model::AddressPattern;

pub mod deliver;
pub mod events;
pub mod interval;
pub mod leader;
pub mod log;
pub mod metrics;
pub mod policy;
pub mod report;
pub mod slo_alerts;
pub mod sweep;

pub use events::{Event, EventLine};
pub use interval::Outcome;
pub use log::{Level, Log, LogFormat, LogLine, Message};
pub use metrics::Metrics;

/// What the front end provides.
pub trait Host: Sync {
    /// Opens the files again, with their Rego policies (`ops::open_files`,
    /// as `monform apply` opens them, without the linter's findings: a
    /// reconciler acts on what loads); `Err`: why not, in words.
    fn open(&self) -> Result<Opened, Unloaded>;
    /// A plan as Markdown, for drift reports.
    fn markdown(&self, plan: &Plan) -> String;
    /// Writes drift whose policy is `codify` into the files on a new git
    /// branch, leaving the working tree alone: the branch's name, `None`
    /// when nothing could be written, `Err` why not.
    fn codify(&self, drifted: &[monform_engine::ops::Drifted]) -> Result<Option<String>, String> {
        let _ = drifted;
        Err("this host cannot codify".into())
    }
}

/// Why an interval's files did not open: an interval changes nothing then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unloaded {
    /// The files' problems, in words.
    Files(String),
    /// A policy that does not load (a rule the team wrote is never
    /// skipped), in words.
    Policies(String),
}

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The project's folder (local leadership and drift memory live in its `.monform/`).
    pub dir: PathBuf,
    pub once: bool,
    pub excludes: Vec<AddressPattern>,
    pub events: Option<PathBuf>,
    pub listen: Option<SocketAddr>,
    pub log: LogFormat,
    /// The PostgreSQL state's URL: leadership and drift memory go there.
    pub postgres_url: Option<String>,
    /// When SLOs are evaluated, UNIX ms (`None`: now); for tests against an
    /// emulator whose clock is simulated.
    pub slo_now_ms: Option<i64>,
}

/// What an interval works with.
pub struct Context<'a> {
    pub host: &'a dyn Host,
    /// The project as first opened: its state and API connection serve
    /// every interval (`ops::Opened::session_over`).
    pub opened: &'a Opened,
    pub settings: &'a Settings,
    pub metrics: Arc<Metrics>,
    pub log: Log,
    pub events: events::Events,
    pub http: reqwest::Client,
    /// Set by SIGTERM: no new change starts, those in flight finish.
    pub stop: Arc<AtomicBool>,
    pub file_memory: Box<dyn report::MemoryStore>,
    /// `[reconcile] interval` as the last load said.
    pub interval: std::sync::Mutex<Duration>,
    /// Where the rolling refresh stands (`sweep.rs`), from one interval
    /// to the next.
    pub sweep: sweep::Sweeping,
}

impl Context<'_> {
    fn event(&self, event: events::Event) {
        if let Err(why) = self.events.emit(event) {
            self.log
                .error("cannot write the events file", Message::Failed { error: why });
        }
    }

    /// A failure: its event (`event`, e.g. [`events::Event::load_failed`]),
    /// its log line, and the interval's outcome.
    fn failed(&self, event: fn(String, String) -> events::Event, message: &str, why: &str, api: bool) -> Outcome {
        self.event(event(message.to_owned(), why.to_owned()));
        self.log.error(message, Message::Failed { error: why.to_owned() });
        Outcome::Error { api }
    }

    fn refused(&self, refusal: &Refusal) -> Outcome {
        let api = matches!(refusal, Refusal::Fetch(_));
        let detail = match refusal {
            Refusal::Unsafe(problems) => problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
            Refusal::Clashes(problems) => problems.join("; "),
            other => other.to_string(),
        };
        let message = if api {
            "cannot read the service; nothing was changed"
        } else {
            "refused; nothing was changed"
        };
        let event = if api {
            events::Event::api_error
        } else {
            events::Event::refused
        };
        self.failed(event, message, &detail, api)
    }
}

/// Runs until SIGTERM (exit 0) or, with `--once`, one interval (its
/// outcome's code). `opened` is the first open's (with the state and the
/// API), for the interval and the leadership's name.
pub async fn run(host: &dyn Host, opened: &Opened, settings: Settings) -> u8 {
    let project = &opened.project;
    let log = Log { format: settings.log };
    let metrics = Arc::new(Metrics::default());
    let stop = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(tokio::sync::Notify::new());
    watch_signals(Arc::clone(&stop), Arc::clone(&wake));
    if let Some(address) = settings.listen {
        match metrics::serve(address, Arc::clone(&metrics)).await {
            Ok(bound) => log.info(
                "serving /metrics, /healthz and /readyz",
                Message::Serving {
                    listen: bound.to_string(),
                },
            ),
            Err(why) => {
                log.error("cannot serve metrics", Message::Failed { error: why.to_string() });
                return 1;
            }
        }
    }
    let http = match monform_http::client().build() {
        Ok(http) => http,
        Err(why) => {
            log.error(
                "cannot build the HTTP client",
                Message::Failed { error: why.to_string() },
            );
            return 1;
        }
    };
    let ctx = Context {
        host,
        opened,
        settings: &settings,
        metrics: Arc::clone(&metrics),
        log,
        events: events::Events::new(settings.events.clone()),
        http,
        stop: Arc::clone(&stop),
        file_memory: Box::new(report::FileMemory::new(&settings.dir, &project.name)),
        interval: std::sync::Mutex::new(project.reconcile.interval),
        sweep: sweep::Sweeping::default(),
    };
    metrics.update(|f| f.ready = true);
    loop {
        let Some(mut leadership) = lead(&ctx, &project.name, &wake).await else {
            return if ctx.settings.once { 1 } else { 0 };
        };
        metrics.update(|f| f.leader = true);
        log.info(
            "leading the reconciliation",
            Message::Leading {
                project: project.name.clone(),
            },
        );
        let mut memory = match leadership.load_memory(&project.name, ctx.file_memory.as_ref()).await {
            Ok(memory) => memory,
            Err(why) => {
                log.error("cannot read the drift memory", Message::Failed { error: why });
                return 1;
            }
        };
        let mut api_errors: u32 = 0;
        loop {
            if !leadership.holds().await {
                log.warn("lost the leadership; waiting to lead again", Message::LeadershipLost);
                metrics.update(|f| f.leader = false);
                break;
            }
            let began = std::time::Instant::now();
            let outcome = interval::run(&ctx, &mut leadership, &mut memory).await;
            if ctx.settings.once {
                return outcome.code();
            }
            if stop.load(Ordering::SeqCst) {
                log.info("stopped", Message::Stopped);
                return 0;
            }
            let interval = *ctx.interval.lock().unwrap_or_else(|e| e.into_inner());
            api_errors = match outcome {
                Outcome::Error { api: true } => api_errors.saturating_add(1),
                _ => 0,
            };
            // The service failing (or rate-limiting past the client's own
            // retries): wait 2, 4, then 8 intervals, at most an hour. An
            // interval is counted from its start: its reads are paced to
            // take about an interval when a sweep spans several.
            let wait = match api_errors {
                0 => interval.saturating_sub(began.elapsed()),
                _ => interval
                    .saturating_mul(1 << api_errors.min(3))
                    .min(Duration::from_secs(3600).max(interval)),
            };
            if sleep_or_stop(wait, &stop, &wake).await {
                log.info("stopped", Message::Stopped);
                return 0;
            }
        }
    }
}

/// Waits to lead; `None` when stopped first (or, `--once`, when another leads).
async fn lead(ctx: &Context<'_>, project: &str, wake: &tokio::sync::Notify) -> Option<leader::Leadership> {
    let mut said = false;
    let mut waiting_connection = None;
    loop {
        let attempt = match &ctx.settings.postgres_url {
            None => leader::try_local(&ctx.settings.dir, project),
            Some(url) => {
                let connection = match waiting_connection.take() {
                    Some(connection) => Ok(connection),
                    None => leader::connect(url).await,
                };
                match connection {
                    Ok(connection) => match leader::try_postgres(connection, project).await {
                        Ok(Ok(leadership)) => Ok(Some(leadership)),
                        Ok(Err(connection)) => {
                            waiting_connection = Some(connection);
                            Ok(None)
                        }
                        Err(why) => Err(why),
                    },
                    Err(why) => Err(why),
                }
            }
        };
        match attempt {
            Ok(Some(leadership)) => return Some(leadership),
            Ok(None) if ctx.settings.once => {
                ctx.log.error(
                    "another monform reconcile of this project is running",
                    Message::NotLeading {
                        project: project.to_owned(),
                    },
                );
                return None;
            }
            Ok(None) if !said => {
                ctx.log.info(
                    "another replica leads; waiting",
                    Message::NotLeading {
                        project: project.to_owned(),
                    },
                );
                said = true;
            }
            Ok(None) => {}
            Err(why) => {
                ctx.log
                    .error("cannot take the leadership", Message::Failed { error: why });
                if ctx.settings.once {
                    return None;
                }
            }
        }
        if sleep_or_stop(leader::POLL, &ctx.stop, wake).await {
            return None;
        }
    }
}

/// Sleeps `duration`; true when a stop signal came first.
async fn sleep_or_stop(duration: Duration, stop: &AtomicBool, wake: &tokio::sync::Notify) -> bool {
    if stop.load(Ordering::SeqCst) {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(duration) => stop.load(Ordering::SeqCst),
        _ = wake.notified() => true,
    }
}

/// SIGTERM and SIGINT set `stop` (the change in flight finishes) and wake
/// the loop.
fn watch_signals(stop: Arc<AtomicBool>, wake: Arc<tokio::sync::Notify>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return;
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        stop.store(true, Ordering::SeqCst);
        wake.notify_waiters();
        wake.notify_one();
    });
}
