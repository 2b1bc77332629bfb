//! How this command line talks to the service: the engine decides which
//! service and with what credentials (`ops::connect_api`, `ops::open`:
//! `--api-url`, then `MONFORM_API_URL`, then `[api] url` when the user
//! chose it; the key and account only from `MONFORM_API_KEY` and
//! `MONFORM_ACCOUNT_ID`; `--rate-limit` or `MONFORM_RATE_LIMIT`); this
//! module starts the bundled emulator for `local` (in-process on
//! `.monform/local.db`, the database `monform serve` uses too), words the
//! refusals, and says the client's retries and waits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use monform_api::{Client, Retry, Wait};
use monform_config::Project;
use monform_engine::ops::{self, Access, AccessRefusal, ApiUnopened, Connect, OpenEnv, StartedLocal};

/// A client, the in-process emulator when the URL is `local`, and which
/// service and account (`target`): the engine's (`ops::connect_api`).
pub type Connection = ops::Api;

/// The database of the bundled emulator in the project `dir`: `url =
/// "local"` runs it in-process there, and `monform serve` serves it by
/// default, so switching between them shows the same objects.
pub fn local_db(dir: &Path) -> PathBuf {
    dir.join(".monform").join("local.db")
}

/// The API a command talks to and where its URL came from, for the lines
/// about retries and the hint after an error.
#[derive(Debug, Clone)]
pub struct Origin {
    pub url: String,
    /// `--api-url`, `MONFORM_API_URL`, or `monform.toml:LINE`.
    pub source: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (from {})", self.url, self.source)
    }
}

/// The API of this run's connection (one per command), and whether it
/// ever failed to answer: `settle` then names it under the error.
static ORIGIN: OnceLock<Origin> = OnceLock::new();
static UNANSWERED: AtomicBool = AtomicBool::new(false);

/// Where the retry lines go while a progress bar is drawn (apply): through
/// it, so they do not tear it; else standard error.
type Say = Arc<dyn Fn(String) + Send + Sync>;
static SAY: std::sync::RwLock<Option<Say>> = std::sync::RwLock::new(None);

/// Sends the retry lines to `say` until called again with `None`.
pub fn route_lines(say: Option<Say>) {
    *SAY.write().unwrap_or_else(|p| p.into_inner()) = say;
}

/// Retry lines held back while the files load (`hold_lines`): `None` once released.
static HELD: std::sync::Mutex<Option<Vec<String>>> = std::sync::Mutex::new(None);

/// Holds the retry lines back until [`release_lines`]: a connection made
/// ahead of the files' load (`plan`) then says its retries after the
/// load's own output, as a connection made after the load does.
pub fn hold_lines() {
    *HELD.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
    route_lines(Some(Arc::new(|line: String| {
        match HELD.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(held) => held.push(line),
            None => eprintln!("{line}"),
        }
    })));
}

/// Says the lines held since [`hold_lines`], and the next ones as they come.
pub fn release_lines() {
    if let Some(held) = HELD.lock().unwrap_or_else(|p| p.into_inner()).take() {
        for line in held {
            eprintln!("{line}");
        }
    }
    route_lines(None);
}

fn say(text: String) {
    match SAY.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        Some(say) => say(text),
        None => eprintln!("{text}"),
    }
}

/// The hint naming the API when the command's requests went unanswered.
pub fn unanswered_hint() -> Option<String> {
    let origin = ORIGIN.get()?;
    UNANSWERED.load(Ordering::Relaxed).then(|| {
        format!(
            "hint: the API at {origin} did not answer; check that it runs and the URL is right (--api-url > MONFORM_API_URL > [api] url of monform.toml)"
        )
    })
}

/// A refusal to send the key, with what to do next.
fn refused(dir: &Path, project: &Project, refusal: &AccessRefusal) -> String {
    match refusal {
        AccessRefusal::NoUrl => "no API URL: pass --api-url, set MONFORM_API_URL, or set [api] url in monform.toml (\"local\" runs the bundled emulator)".into(),
        AccessRefusal::Untrusted { .. } => {
            let mut trust = "monform trust".to_owned();
            if dir != Path::new(".") {
                trust.push_str(&format!(" --dir {}", dir.display()));
            }
            if let Some(environment) = &project.environment {
                trust.push_str(&format!(" --env {environment}"));
            }
            format!(
                "{refusal}\n\nhint: a project's files cannot choose where your API key goes: if you trust this project with that URL, run `{trust}`; or choose the API yourself with MONFORM_API_URL or --api-url"
            )
        }
        AccessRefusal::Unfit { .. } | AccessRefusal::UserFiles(_) => refusal.to_string(),
    }
}

/// The line said before a retry, once per attempt number however many
/// requests fail together (a fetch sends a dozen at once).
pub fn retrying(origin: &Origin, retry: &Retry) -> String {
    let what = if retry.unanswered {
        "did not answer"
    } else {
        "answered with an error"
    };
    format!(
        "the API at {origin} {what} ({}); retry {} of {} in {:.1} s",
        retry.error,
        retry.attempt,
        retry.max_retries,
        retry.delay.as_secs_f64()
    )
}

/// What this process read of its environment, for opening a project
/// (`ops::open` reads none itself).
pub fn open_env() -> OpenEnv {
    OpenEnv::read(|name| std::env::var(name).ok())
}

/// Connects to the API of `project` in `dir` (`ops::connect_api`: the
/// engine resolves the URL, the key, the rate limit and `local`), or says
/// why not in this command line's words.
pub async fn connect(dir: &Path, flag: Option<&str>, project: &Project) -> Result<Connection, String> {
    let env = open_env();
    let rate_limit = RATE_LIMIT_FLAG.get().cloned().flatten();
    let connect = Connect {
        flag,
        rate_limit_flag: rate_limit.as_deref(),
        prefetch: false,
        local: Some(&Emulator),
        observe: Some(&observe),
    };
    ops::connect_api(dir, project, &env, &connect, None)
        .await
        .map_err(|why| unconnected(dir, project, &why))
}

/// Why no connection was made, with what to do next.
pub fn unconnected(dir: &Path, project: &Project, why: &ApiUnopened) -> String {
    match why {
        ApiUnopened::Access(refusal) => refused(dir, project, refusal),
        ApiUnopened::NoKey => "MONFORM_API_KEY is not set\n\nhint: export MONFORM_API_KEY (and MONFORM_ACCOUNT_ID); keys never live in files".into(),
        other => other.to_string(),
    }
}

/// The bundled emulator, in this process, for `url = "local"`.
pub struct Emulator;

impl ops::LocalService for Emulator {
    fn start(&self, db: PathBuf) -> BoxFuture<'_, Result<StartedLocal, String>> {
        Box::pin(async move {
            let config = monform_emulator::Config {
                db: Some(db),
                rate_limit: None,
                ..Default::default()
            };
            let server = monform_emulator::start_local(config).await.map_err(|e| e.to_string())?;
            Ok(StartedLocal {
                url: server.url(),
                api_key: server.api_key.clone(),
                account_id: server.account_id.clone(),
                stop: Box::new(move || {
                    Box::pin(async move {
                        let _ = server.shutdown().await;
                    })
                }),
            })
        })
    }
}

/// This command's lines about a client's waits and retries, and the API
/// `settle` names when requests went unanswered (a client of a URL, not
/// `local`: the engine calls it before any request).
pub fn observe(client: &Client, access: &Access) {
    let origin = Origin {
        url: access.url.clone(),
        source: access.source.to_string(),
    };
    client.observe_waits(Some(Arc::new(|wait| eprintln!("{}", waiting(&wait)))));
    let _ = ORIGIN.set(origin.clone());
    let said = AtomicUsize::new(0);
    client.observe_retries(Some(Arc::new(move |retry: &Retry| {
        if retry.unanswered {
            UNANSWERED.store(true, Ordering::Relaxed);
        }
        if said.fetch_max(retry.attempt, Ordering::Relaxed) < retry.attempt {
            say(retrying(&origin, retry));
        }
    })));
}

/// `--rate-limit`, set once by `main` before any command runs (a global
/// flag every command's connection honours, without threading it through each).
pub static RATE_LIMIT_FLAG: OnceLock<Option<String>> = OnceLock::new();

/// `N/SECS` or `off` (the engine's reading: `ops::parse_rate_limit`).
pub fn parse_rate_limit(text: &str) -> Result<Option<(u32, std::time::Duration)>, String> {
    ops::parse_rate_limit(text)
}

/// The line saying that requests wait for the rate limit's window.
pub fn waiting(wait: &Wait) -> String {
    let source = if wait.advertised {
        "the API's rate limit"
    } else {
        "the rate limit"
    };
    format!(
        "waiting {:.0} s for {source} ({} requests per {} s)",
        wait.duration.as_secs_f64().ceil(),
        wait.limit,
        wait.window.as_secs()
    )
}
