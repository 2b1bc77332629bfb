//! Which service to talk to, and with what credentials: `--api-url`, then
//! `MONFORM_API_URL`, then `[api] url` of monform.toml, then `[api] url`
//! of the user's `~/.config/monform/config.toml`. A project's own URL gets
//! the key only when the user chose it too (`ops::choose_api`: the user's
//! config names it, or `monform trust` recorded it), and plain `http://`
//! only goes to this machine. `local` runs the
//! bundled emulator in-process on `.monform/local.db`, the database
//! `monform serve` uses too (one service, whichever way it is reached). The key and account
//! come only from `MONFORM_API_KEY` and `MONFORM_ACCOUNT_ID`. The client
//! paces itself at the budget the server states (600 per 60 s until it
//! says); `--rate-limit N/SECS|off` or `MONFORM_RATE_LIMIT` sets a ceiling
//! of one's own, or turns pacing off.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use monform_api::{Client, ClientConfig, Retry, Secret, Wait};
use monform_config::Project;
use monform_engine::Target;
use monform_engine::ops::{self, AccessRefusal, AccessRequest, ProjectUrl};

/// A client, and the in-process emulator when the URL is `local`.
pub struct Connection {
    pub client: Client,
    pub local: Option<monform_emulator::Server>,
    /// Which service and account, as the state records them.
    pub target: Target,
}

/// The database of the bundled emulator in the project `dir`: `url =
/// "local"` runs it in-process there, and `monform serve` serves it by
/// default, so switching between them shows the same objects.
pub fn local_db(dir: &Path) -> PathBuf {
    dir.join(".monform").join("local.db")
}

impl Connection {
    pub async fn close(self) {
        if let Some(server) = self.local {
            let _ = server.shutdown().await;
        }
    }
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

/// Where this command may send the API key: the engine's rule
/// (`ops::choose_api`) over what this process read (`--api-url`,
/// `MONFORM_API_URL`, the user's monform folder), in this command line's words.
pub fn origin(dir: &Path, flag: Option<&str>, project: &Project) -> Result<Origin, String> {
    let env = |name: &str| std::env::var(name).ok();
    let env_url = env("MONFORM_API_URL");
    let user_dir = ops::user_config_dir(&env);
    let project_url = ProjectUrl::of(project);
    let request = AccessRequest {
        root: dir,
        flag,
        env_url: env_url.as_deref(),
        project_url: project_url.as_ref(),
        user_dir: user_dir.as_deref(),
    };
    match ops::choose_api(&request) {
        Ok(access) => Ok(Origin {
            url: access.url,
            source: access.source.to_string(),
        }),
        Err(refusal) => Err(refused(dir, project, &refusal)),
    }
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

pub async fn connect(dir: &Path, flag: Option<&str>, project: &Project) -> Result<Connection, String> {
    let origin = origin(dir, flag, project)?;
    let url = origin.url.clone();
    if url == "local" {
        let state_dir = dir.join(".monform");
        std::fs::create_dir_all(&state_dir).map_err(|e| format!("cannot create {}: {e}", state_dir.display()))?;
        let config = monform_emulator::Config {
            db: Some(local_db(dir)),
            rate_limit: None,
            ..Default::default()
        };
        let server = monform_emulator::start_local(config)
            .await
            .map_err(|e| format!("cannot start the local emulator: {e}"))?;
        let mut client_config = ClientConfig::new(server.url(), Secret::new(server.api_key.clone()));
        client_config.rate_limit = None;
        client_config.account_id = Some(server.account_id.clone());
        let client = Client::new(client_config).map_err(|e| e.to_string())?;
        let target = Target {
            api_url: "local".into(),
            account: Some(server.account_id.clone()),
        };
        return Ok(Connection {
            client,
            local: Some(server),
            target,
        });
    }
    let key = std::env::var("MONFORM_API_KEY").ok().filter(|k| !k.is_empty()).ok_or(
        "MONFORM_API_KEY is not set\n\nhint: export MONFORM_API_KEY (and MONFORM_ACCOUNT_ID); keys never live in files",
    )?;
    let target = Target {
        api_url: url.trim_end_matches('/').to_owned(),
        account: std::env::var("MONFORM_ACCOUNT_ID").ok().filter(|a| !a.is_empty()),
    };
    let mut config = ClientConfig::new(url, Secret::new(key));
    config.account_id = target.account.clone();
    let chosen = match RATE_LIMIT_FLAG.get().cloned().flatten() {
        Some(flag) => Some(("--rate-limit", flag)),
        None => std::env::var("MONFORM_RATE_LIMIT")
            .ok()
            .filter(|l| !l.is_empty())
            .map(|l| ("MONFORM_RATE_LIMIT", l)),
    };
    if let Some((source, text)) = chosen {
        config.rate_limit = parse_rate_limit(&text).map_err(|e| format!("{source}: {e}"))?;
        config.rate_limit_chosen = true;
    }
    let client = Client::new(config).map_err(|e| format!("{e} (from {})", origin.source))?;
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
    Ok(Connection {
        client,
        local: None,
        target,
    })
}

/// A connection that is never used: `plan --refresh=none` reads nothing,
/// so it needs neither a URL nor a key. Its client points at the discard
/// port of this machine, so a request sent by mistake goes nowhere.
pub fn offline() -> Result<Connection, String> {
    let config = ClientConfig::new("http://127.0.0.1:9", Secret::new(String::new()));
    let client = Client::new(config).map_err(|e| e.to_string())?;
    // Never recorded: a plan saves no state, and `apply` refuses `none`.
    let target = Target {
        api_url: "offline".into(),
        account: None,
    };
    Ok(Connection {
        client,
        local: None,
        target,
    })
}

/// `--rate-limit`, set once by `main` before any command runs (a global
/// flag every command's connection honours, without threading it through each).
pub static RATE_LIMIT_FLAG: OnceLock<Option<String>> = OnceLock::new();

/// `N/SECS` or `off`.
pub fn parse_rate_limit(text: &str) -> Result<Option<(u32, std::time::Duration)>, String> {
    if text == "off" {
        return Ok(None);
    }
    monform_emulator::RateLimit::parse(text)
        .map(|r| Some((r.requests, r.window)))
        .map_err(|e| e.to_string())
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
