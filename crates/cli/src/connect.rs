//! Which service to talk to, and with what credentials: `--api-url`, then
//! `MONFORM_API_URL`, then `[api] url` of monform.toml. `local` runs the
//! bundled emulator in-process on `.monform/local.db`. The key and account
//! come only from `MONFORM_API_KEY` and `MONFORM_ACCOUNT_ID`. The client
//! paces itself at the budget the server states (600 per 60 s until it
//! says); `--rate-limit N/SECS|off` or `MONFORM_RATE_LIMIT` sets a ceiling
//! of one's own, or turns pacing off.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use monform_api::{Client, ClientConfig, Secret, Wait};
use monform_config::Project;

/// A client, and the in-process emulator when the URL is `local`.
pub struct Connection {
    pub client: Client,
    pub local: Option<monform_emulator::Server>,
}

impl Connection {
    pub async fn close(self) {
        if let Some(server) = self.local {
            let _ = server.shutdown().await;
        }
    }
}

pub async fn connect(dir: &Path, flag: Option<&str>, project: &Project) -> Result<Connection, String> {
    let url = flag
        .map(str::to_owned)
        .or_else(|| std::env::var("MONFORM_API_URL").ok().filter(|u| !u.is_empty()))
        .or_else(|| project.api_url.clone())
        .ok_or("no API URL: pass --api-url, set MONFORM_API_URL, or set [api] url in monform.toml (\"local\" runs the bundled emulator)")?;
    if url == "local" {
        let state_dir = dir.join(".monform");
        std::fs::create_dir_all(&state_dir).map_err(|e| format!("cannot create {}: {e}", state_dir.display()))?;
        let config = monform_emulator::Config {
            db: Some(state_dir.join("local.db")),
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
        return Ok(Connection {
            client,
            local: Some(server),
        });
    }
    let key = std::env::var("MONFORM_API_KEY").ok().filter(|k| !k.is_empty()).ok_or(
        "MONFORM_API_KEY is not set\n\nhint: export MONFORM_API_KEY (and MONFORM_ACCOUNT_ID); keys never live in files",
    )?;
    let mut config = ClientConfig::new(url, Secret::new(key));
    config.account_id = std::env::var("MONFORM_ACCOUNT_ID").ok().filter(|a| !a.is_empty());
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
    let client = Client::new(config).map_err(|e| e.to_string())?;
    client.observe_waits(Some(Arc::new(|wait| eprintln!("{}", waiting(&wait)))));
    Ok(Connection { client, local: None })
}

/// A connection that is never used: `plan --refresh=none` reads nothing,
/// so it needs neither a URL nor a key. Its client points at the discard
/// port of this machine, so a request sent by mistake goes nowhere.
pub fn offline() -> Result<Connection, String> {
    let config = ClientConfig::new("http://127.0.0.1:9", Secret::new(String::new()));
    let client = Client::new(config).map_err(|e| e.to_string())?;
    Ok(Connection { client, local: None })
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
