//! The API connection of an opened project: **the one place** credentials
//! are resolved. The URL by the engine's rule ([`super::super::choose_api`]:
//! `--api-url`, `MONFORM_API_URL`, `[api] url` when the user chose it);
//! the key and account only from `MONFORM_API_KEY` and
//! `MONFORM_ACCOUNT_ID`; `local`, the bundled emulator in-process on
//! `.monform/local.db`, started by the front end's [`LocalService`] (the
//! engine does not depend on the emulator); the client paces itself at the
//! budget the server states, under `--rate-limit N/SECS|off` or
//! `MONFORM_RATE_LIMIT` when set.

use std::path::{Path, PathBuf};

use futures_util::future::BoxFuture;
use monform_api::{Client, ClientConfig, Secret};
use monform_config::Project;

use super::OpenEnv;
use crate::ops::access_ops::{self, Access, AccessRefusal, AccessRequest, ProjectUrl, UrlSource};
use crate::state::Target;

/// Whether and how to reach the service.
#[derive(Default)]
pub enum ApiRequest<'a> {
    /// No API (validate, an editor's diagnostics).
    #[default]
    None,
    /// A client that is never used (`plan --refresh=none` reads nothing,
    /// so it needs neither a URL nor a key): it points at the discard
    /// port of this machine, so a request sent by mistake goes nowhere.
    Offline,
    Connect(Connect<'a>),
}

/// A connection to the service.
#[derive(Default)]
pub struct Connect<'a> {
    /// `--api-url`.
    pub flag: Option<&'a str>,
    /// `--rate-limit` (over `MONFORM_RATE_LIMIT`).
    pub rate_limit_flag: Option<&'a str>,
    /// Connect before the resource files load and start reading every
    /// kind's listing (`ops::prefetch`): for a plan that reads everything
    /// (an apply plans under its lock, after it is taken).
    pub prefetch: bool,
    /// Starts the bundled emulator for `url = "local"`; `None`: this front
    /// end does not ([`ApiUnopened::NoLocal`]).
    pub local: Option<&'a dyn LocalService>,
    /// Called with each client made for a URL (not `local`), before any
    /// request: the front end's retry and wait lines.
    pub observe: Option<&'a ObserveClient>,
}

/// What [`Connect::observe`] calls.
pub type ObserveClient = dyn Fn(&Client, &Access) + Sync;

/// Starts the bundled emulator on a database file (the front end's: the
/// CLI links the emulator, the engine does not).
pub trait LocalService: Sync {
    fn start(&self, db: PathBuf) -> BoxFuture<'_, Result<StartedLocal, String>>;
}

/// A running local service.
pub struct StartedLocal {
    pub url: String,
    /// Its own key (never the user's).
    pub api_key: String,
    pub account_id: String,
    /// Stops it.
    pub stop: StopLocal,
}

/// A client of the service and what it is connected to.
pub struct Api {
    pub client: Client,
    /// Which service and account, as the state records them.
    pub target: Target,
    /// Where the key may go and why; `None` for the offline client.
    pub access: Option<Access>,
    local: bool,
    /// Taken by the first [`Api::close`]: a front end closes while a
    /// session still borrows the connection.
    stop: std::sync::Mutex<Option<StopLocal>>,
}

/// Stops a local service.
pub type StopLocal = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

impl Api {
    fn new(client: Client, target: Target, access: Option<Access>, stop: Option<StopLocal>) -> Api {
        Api {
            client,
            target,
            access,
            local: stop.is_some(),
            stop: std::sync::Mutex::new(stop),
        }
    }

    /// A client the front end made itself, for a service it runs (a
    /// benchmark's own emulator, with its key): no rule chose it.
    pub fn of_client(client: Client, target: Target) -> Api {
        Api::new(client, target, None, None)
    }

    /// Stops the local service, if one was started (once; the client then
    /// reaches nothing).
    pub async fn close(&self) {
        let stop = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(stop) = stop {
            stop().await;
        }
    }

    pub fn is_local(&self) -> bool {
        self.local
    }
}

/// Where a rate limit was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitSource {
    Flag,
    Environment,
}

impl std::fmt::Display for RateLimitSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RateLimitSource::Flag => "--rate-limit",
            RateLimitSource::Environment => super::RATE_LIMIT_VARIABLE,
        })
    }
}

/// Why no client was made.
#[derive(Debug, thiserror::Error)]
pub enum ApiUnopened {
    /// The key may not go to the URL (or there is none).
    #[error("{0}")]
    Access(#[from] AccessRefusal),
    /// `url = "local"` in a front end that does not start the emulator.
    #[error("the bundled emulator (url = \"local\") is not started here")]
    NoLocal,
    #[error("cannot create {}: {error}", path.display())]
    LocalDir { path: PathBuf, error: std::io::Error },
    #[error("cannot start the local emulator: {0}")]
    Local(String),
    #[error("{} is not set", super::API_KEY_VARIABLE)]
    NoKey,
    #[error("{given_in}: {error}")]
    RateLimit { given_in: RateLimitSource, error: String },
    /// The client's configuration is refused (the URL does not parse...).
    #[error("{error}{}", from.as_ref().map(|from| format!(" (from {from})")).unwrap_or_default())]
    Client { error: String, from: Option<UrlSource> },
}

/// `N/SECS` (e.g. `600/60`) or `off`: the ceiling a client paces itself at.
pub fn parse_rate_limit(text: &str) -> Result<Option<(u32, std::time::Duration)>, String> {
    if text == "off" {
        return Ok(None);
    }
    monform_model::rate_limit::parse(text).map(Some)
}

/// A client for `project` of the folder `dir` (see the module's
/// documentation). `project_text` is monform.toml as read, to name the
/// line of its `[api] url` without reading the file again.
pub async fn connect_api(
    dir: &Path,
    project: &Project,
    env: &OpenEnv,
    connect: &Connect<'_>,
    project_text: Option<&str>,
) -> Result<Api, ApiUnopened> {
    let project_url = ProjectUrl::of(project);
    let request = AccessRequest {
        root: dir,
        flag: connect.flag,
        env_url: env.api_url.as_deref(),
        project_url: project_url.as_ref(),
        user_dir: env.user_dir.as_deref(),
    };
    let access = access_ops::choose_with_text(&request, project_text)?;
    if access.is_local() {
        return local(dir, connect, access).await;
    }
    let key = env.api_key.clone().ok_or(ApiUnopened::NoKey)?;
    let url = access.url.clone();
    let target = Target {
        api_url: url.trim_end_matches('/').to_owned(),
        account: env.account_id.clone(),
    };
    let mut config = ClientConfig::new(url, Secret::new(key));
    config.account_id = target.account.clone();
    let chosen = match connect.rate_limit_flag {
        Some(flag) => Some((RateLimitSource::Flag, flag)),
        None => env.rate_limit.as_deref().map(|l| (RateLimitSource::Environment, l)),
    };
    if let Some((given_in, text)) = chosen {
        config.rate_limit = parse_rate_limit(text).map_err(|error| ApiUnopened::RateLimit { given_in, error })?;
        config.rate_limit_chosen = true;
    }
    let client = Client::new(config).map_err(|e| ApiUnopened::Client {
        error: e.to_string(),
        from: Some(access.source.clone()),
    })?;
    if let Some(observe) = connect.observe {
        observe(&client, &access);
    }
    Ok(Api::new(client, target, Some(access), None))
}

/// The bundled emulator on `dir/.monform/local.db`, the database `monform
/// serve` uses too (one service, whichever way it is reached).
async fn local(dir: &Path, connect: &Connect<'_>, access: Access) -> Result<Api, ApiUnopened> {
    let service = connect.local.ok_or(ApiUnopened::NoLocal)?;
    let state_dir = dir.join(".monform");
    std::fs::create_dir_all(&state_dir).map_err(|error| ApiUnopened::LocalDir {
        path: state_dir.clone(),
        error,
    })?;
    let started = service
        .start(state_dir.join("local.db"))
        .await
        .map_err(ApiUnopened::Local)?;
    let mut config = ClientConfig::new(started.url.clone(), Secret::new(started.api_key.clone()));
    config.rate_limit = None;
    config.account_id = Some(started.account_id.clone());
    let stop = started.stop;
    let client = match Client::new(config) {
        Ok(client) => client,
        Err(e) => {
            stop().await;
            return Err(ApiUnopened::Client {
                error: e.to_string(),
                from: None,
            });
        }
    };
    let target = Target {
        api_url: super::super::LOCAL.into(),
        account: Some(started.account_id),
    };
    Ok(Api::new(client, target, Some(access), Some(stop)))
}

/// See [`ApiRequest::Offline`].
pub(super) fn offline() -> Result<Api, ApiUnopened> {
    let config = ClientConfig::new("http://127.0.0.1:9", Secret::new(String::new()));
    let client = Client::new(config).map_err(|e| ApiUnopened::Client {
        error: e.to_string(),
        from: None,
    })?;
    // Never recorded: a plan saves no state, and an apply refuses to plan offline.
    let target = Target {
        api_url: "offline".into(),
        account: None,
    };
    Ok(Api::new(client, target, None, None))
}
