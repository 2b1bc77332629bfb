//! Saved plans by hash, and the approvals a person gave them.
//!
//! The `plan` tool saves each plan (the engine's [`SavedPlan`], which
//! holds no secret) as `.monform/plans/HASH.json`, HASH being the SHA-256
//! of the file's bytes: the file cannot change without its hash changing.
//! A person approves a hash with `monform approve HASH` in a terminal
//! ([`approve`]), which writes it to the approvals file in the user's
//! monform folder (or the file `MONFORM_APPROVALS` names, for a review
//! bot that approves): a file outside the project, that the server only
//! reads ([`is_approved`]). `apply` then applies the plan of that hash only
//! if planning again gives exactly it (the engine's stale-plan check).

use std::path::{Path, PathBuf};

use monform_engine::SavedPlan;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where the plans are kept, under the project root.
pub const PLANS_DIR: &str = ".monform/plans";
/// The approvals file's name in the user's monform folder.
pub const APPROVALS_FILE: &str = "approvals.json";
/// The variable naming another approvals file (one a review bot writes).
pub const APPROVALS_VARIABLE: &str = "MONFORM_APPROVALS";
/// Hex digits of a plan hash (SHA-256).
pub const HASH_DIGITS: usize = 64;
/// The shortest prefix `monform approve` takes for a hash.
pub const MIN_PREFIX: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("`{0}` is not a plan hash (64 hex digits, as the plan tool returned it)")]
    BadHash(String),
    #[error("no saved plan has hash {0} in {PLANS_DIR}/ (plan again)")]
    NoPlan(String),
    #[error("the hash {0} names {1} saved plans: give more digits")]
    Ambiguous(String, usize),
    #[error("{path} does not hash to {hash}: it changed after it was saved (plan again)")]
    Altered { path: String, hash: String },
    #[error("{path} is not a saved monform plan: {why}")]
    NotAPlan { path: String, why: String },
    #[error("cannot read {path}: {why}")]
    Read { path: String, why: String },
    #[error("cannot write {path}: {why}")]
    Write { path: String, why: String },
    #[error("no user folder to keep approvals in (HOME and XDG_CONFIG_HOME are unset; or set {APPROVALS_VARIABLE})")]
    NoUserDir,
}

/// The SHA-256 of a saved plan's bytes, in hex.
pub fn hash_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn is_hash(text: &str) -> bool {
    text.len() == HASH_DIGITS && text.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Saves `plan` under the project root and returns its hash.
pub fn save_plan(root: &Path, plan: &SavedPlan) -> Result<String, ApprovalError> {
    let text = serde_json::to_string_pretty(plan).map_err(|e| ApprovalError::Write {
        path: PLANS_DIR.to_owned(),
        why: e.to_string(),
    })?;
    let hash = hash_of(text.as_bytes());
    let dir = root.join(PLANS_DIR);
    let path = dir.join(format!("{hash}.json"));
    let failed = |e: std::io::Error| ApprovalError::Write {
        path: format!("{PLANS_DIR}/{hash}.json"),
        why: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(failed)?;
    monform_engine::durable::write(&path, text.as_bytes()).map_err(failed)?;
    Ok(hash)
}

/// The saved plan of `hash`, read back only if its bytes still hash to it.
pub fn read_plan(root: &Path, hash: &str) -> Result<SavedPlan, ApprovalError> {
    if !is_hash(hash) {
        return Err(ApprovalError::BadHash(shown_hash(hash)));
    }
    let name = format!("{PLANS_DIR}/{hash}.json");
    let bytes = match std::fs::read(root.join(&name)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ApprovalError::NoPlan(hash.to_owned())),
        Err(e) => {
            return Err(ApprovalError::Read {
                path: name,
                why: e.to_string(),
            });
        }
    };
    if hash_of(&bytes) != hash {
        return Err(ApprovalError::Altered {
            path: name,
            hash: hash.to_owned(),
        });
    }
    serde_json::from_slice(&bytes).map_err(|e| ApprovalError::NotAPlan {
        path: name,
        why: e.to_string(),
    })
}

/// A hash as given, cut short: an argument is never echoed at length.
fn shown_hash(text: &str) -> String {
    let cut: String = text.chars().take(HASH_DIGITS + 1).collect();
    if cut.chars().count() > HASH_DIGITS {
        format!("{}...", &cut.chars().take(HASH_DIGITS).collect::<String>())
    } else {
        cut
    }
}

/// The one saved plan whose hash starts with `prefix` (at least
/// [`MIN_PREFIX`] digits), for a person typing it.
pub fn find_plan(root: &Path, prefix: &str) -> Result<String, ApprovalError> {
    let prefix = prefix.trim().to_ascii_lowercase();
    if prefix.len() < MIN_PREFIX || prefix.len() > HASH_DIGITS || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApprovalError::BadHash(shown_hash(&prefix)));
    }
    let dir = root.join(PLANS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ApprovalError::NoPlan(prefix)),
        Err(e) => {
            return Err(ApprovalError::Read {
                path: PLANS_DIR.to_owned(),
                why: e.to_string(),
            });
        }
    };
    let found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .filter(|name| is_hash(name) && name.starts_with(&prefix))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(ApprovalError::NoPlan(prefix)),
        many => Err(ApprovalError::Ambiguous(prefix, many.len())),
    }
}

/// One approval: a plan of one project, by whom and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The project root, absolute.
    pub project: String,
    pub plan_hash: String,
    #[serde(default)]
    pub approved_by: String,
    #[serde(default)]
    pub approved_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ApprovalsFile {
    #[serde(default)]
    approvals: Vec<Approval>,
}

/// The approvals file: `MONFORM_APPROVALS`, or `approvals.json` in the
/// user's monform folder.
pub fn approvals_path(named: Option<&str>, user_dir: Option<&Path>) -> Result<PathBuf, ApprovalError> {
    match (named.filter(|n| !n.is_empty()), user_dir) {
        (Some(named), _) => Ok(PathBuf::from(named)),
        (None, Some(dir)) => Ok(dir.join(APPROVALS_FILE)),
        (None, None) => Err(ApprovalError::NoUserDir),
    }
}

/// The project root as approvals name it.
pub fn project_key(root: &Path) -> String {
    std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .display()
        .to_string()
}

fn read_approvals(path: &Path) -> Result<ApprovalsFile, ApprovalError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| ApprovalError::Read {
            path: path.display().to_string(),
            why: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ApprovalsFile::default()),
        Err(e) => Err(ApprovalError::Read {
            path: path.display().to_string(),
            why: e.to_string(),
        }),
    }
}

/// Whether a person approved `hash` for the project at `root`.
pub fn is_approved(path: &Path, root: &Path, hash: &str) -> Result<bool, ApprovalError> {
    let key = project_key(root);
    Ok(read_approvals(path)?
        .approvals
        .iter()
        .any(|a| a.plan_hash == hash && a.project == key))
}

/// Records a person's approval of the saved plan `hash` of `root`
/// (`monform approve`); the plan must be there and intact.
pub fn approve(path: &Path, root: &Path, hash: &str, by: &str) -> Result<SavedPlan, ApprovalError> {
    let plan = read_plan(root, hash)?;
    let mut file = read_approvals(path)?;
    let key = project_key(root);
    if !file.approvals.iter().any(|a| a.plan_hash == hash && a.project == key) {
        file.approvals.push(Approval {
            project: key,
            plan_hash: hash.to_owned(),
            approved_by: by.to_owned(),
            approved_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
    }
    let failed = |e: std::io::Error| ApprovalError::Write {
        path: path.display().to_string(),
        why: e.to_string(),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    let text = serde_json::to_string_pretty(&file).map_err(|e| ApprovalError::Write {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    monform_engine::durable::write(path, text.as_bytes()).map_err(failed)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_read_back_by_its_hash_and_refused_once_altered() {
        let dir = tempfile::tempdir().unwrap();
        let plan: SavedPlan = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "project": "p", "stateSerial": 0, "changes": [], "secrets": {}
        }))
        .unwrap();
        let hash = save_plan(dir.path(), &plan).unwrap();
        assert_eq!(read_plan(dir.path(), &hash).unwrap(), plan);
        assert_eq!(find_plan(dir.path(), &hash[..8]).unwrap(), hash);
        let file = dir.path().join(PLANS_DIR).join(format!("{hash}.json"));
        let text = std::fs::read_to_string(&file).unwrap().replace("\"p\"", "\"q\"");
        std::fs::write(&file, text).unwrap();
        assert!(matches!(
            read_plan(dir.path(), &hash),
            Err(ApprovalError::Altered { .. })
        ));
        assert!(matches!(read_plan(dir.path(), "../x"), Err(ApprovalError::BadHash(_))));
    }

    #[test]
    fn approvals_are_per_project_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let plan: SavedPlan = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "project": "p", "stateSerial": 0, "changes": [], "secrets": {}
        }))
        .unwrap();
        let hash = save_plan(dir.path(), &plan).unwrap();
        let file = dir.path().join("user/approvals.json");
        assert!(!is_approved(&file, dir.path(), &hash).unwrap());
        approve(&file, dir.path(), &hash, "me").unwrap();
        assert!(is_approved(&file, dir.path(), &hash).unwrap());
        assert!(!is_approved(&file, other.path(), &hash).unwrap());
    }
}
