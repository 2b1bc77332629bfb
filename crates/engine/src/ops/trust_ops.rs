//! The user's own files in their monform folder (`ops::user_config_dir`):
//! `config.toml` (`[api] url`, the API they use by default) and
//! `trusted.toml`, the projects they trusted with their API key
//! (`monform trust`), each a canonical project folder and the URL its
//! monform.toml named then:
//!
//! ```toml
//! [[trusted]]
//! path = "/home/me/src/shop"
//! url = "https://monitoring.example.com"
//! at = "2026-11-29T03:10:00Z"
//! ```
//!
//! `trusted.toml` is written whole or not at all (`crate::durable`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The record of trusted projects in the user's monform folder.
pub const TRUST_FILE: &str = "trusted.toml";

/// The user's configuration file in their monform folder.
pub const USER_CONFIG_FILE: &str = "config.toml";

/// The URL of the emulator run in-process.
pub const LOCAL: &str = "local";

/// Two spellings of one API (a trailing `/` is no difference).
pub(crate) fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// A user file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read {}: {reason}", .path.display())]
    Read { path: PathBuf, reason: String },
    #[error("cannot write {}: {reason}", .path.display())]
    Write { path: PathBuf, reason: String },
    /// Trusting does not lift the rule on plain `http://`.
    #[error("{0}")]
    Unfit(#[from] monform_api::Unfit),
}

/// One project folder trusted with one URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The project's folder, canonical (symbolic links resolved).
    pub path: PathBuf,
    pub url: String,
    /// When it was trusted (RFC 3339, UTC).
    pub at: String,
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    #[serde(default)]
    trusted: Vec<TrustRecord>,
}

#[derive(Deserialize)]
struct UserConfig {
    #[serde(default)]
    api: Option<UserApi>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserApi {
    url: Option<String>,
}

/// `[api] url` of the user's `config.toml`, if the file sets one.
pub(crate) fn user_api_url(dir: &Path) -> Result<Option<String>, TrustError> {
    let path = dir.join(USER_CONFIG_FILE);
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    let config: UserConfig = toml::from_str(&text).map_err(|e| read_error(&path, e))?;
    Ok(config.api.and_then(|api| api.url).filter(|url| !url.is_empty()))
}

/// Whether the user trusted the project in `root` with `url`.
pub(crate) fn is_trusted(dir: &Path, root: &Path, url: &str) -> Result<bool, TrustError> {
    let path = canonical(root);
    Ok(trusted_projects(dir)?
        .iter()
        .any(|record| record.path == path && same_url(&record.url, url)))
}

/// Every trusted project, as recorded.
pub fn trusted_projects(dir: &Path) -> Result<Vec<TrustRecord>, TrustError> {
    let path = dir.join(TRUST_FILE);
    let Some(text) = read_optional(&path)? else {
        return Ok(Vec::new());
    };
    let file: TrustFile = toml::from_str(&text).map_err(|e| read_error(&path, e))?;
    Ok(file.trusted)
}

/// What [`trust_project`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trusted {
    /// Recorded in this file (`already`: the same pair was there).
    Recorded {
        record: TrustRecord,
        file: PathBuf,
        already: bool,
    },
    /// `local` needs no trust: no key of the user's goes to it.
    Local,
}

/// Records that the user trusts the project in `root` with `url` (its
/// monform.toml's): the key may then go there from that folder only.
pub fn trust_project(dir: &Path, root: &Path, url: &str) -> Result<Trusted, TrustError> {
    if url == LOCAL {
        return Ok(Trusted::Local);
    }
    monform_api::check_destination(url)?;
    let mut records = trusted_projects(dir)?;
    let path = canonical(root);
    let file = dir.join(TRUST_FILE);
    if let Some(record) = records.iter().find(|r| r.path == path && same_url(&r.url, url)) {
        return Ok(Trusted::Recorded {
            record: record.clone(),
            file,
            already: true,
        });
    }
    let record = TrustRecord {
        path,
        url: url.to_owned(),
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    records.push(record.clone());
    write(dir, &records)?;
    Ok(Trusted::Recorded {
        record,
        file,
        already: false,
    })
}

/// Forgets every URL trusted for the project in `root`; what was removed.
pub fn revoke_trust(dir: &Path, root: &Path) -> Result<Vec<TrustRecord>, TrustError> {
    let path = canonical(root);
    let (removed, kept): (Vec<_>, Vec<_>) = trusted_projects(dir)?.into_iter().partition(|r| r.path == path);
    if !removed.is_empty() {
        write(dir, &kept)?;
    }
    Ok(removed)
}

const HEADER: &str = "# Projects whose [api] url monform may send your API key to, each a\n\
                      # folder and the URL its monform.toml named when you ran `monform trust`.\n\
                      # `monform trust --revoke` in the folder removes its entries.\n\n";

fn write(dir: &Path, records: &[TrustRecord]) -> Result<(), TrustError> {
    let path = dir.join(TRUST_FILE);
    let failed = |reason: String| TrustError::Write {
        path: path.clone(),
        reason,
    };
    let body = toml::to_string(&TrustFile {
        trusted: records.to_vec(),
    })
    .map_err(|e| failed(e.to_string()))?;
    std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
    crate::durable::write(&path, format!("{HEADER}{body}").as_bytes()).map_err(|e| failed(e.to_string()))
}

/// The project's folder as recorded: canonical, so a symbolic link or a
/// relative `--dir` is the same project; as given when it cannot be.
fn canonical(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

fn read_optional(path: &Path) -> Result<Option<String>, TrustError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(read_error(path, error)),
    }
}

fn read_error(path: &Path, error: impl std::fmt::Display) -> TrustError {
    TrustError::Read {
        path: path.to_path_buf(),
        reason: error.to_string().trim_end().to_owned(),
    }
}
