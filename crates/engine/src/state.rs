//! State: a cache of remote ids, the fingerprints of what was last applied
//! (to tell drift from config changes) and salted fingerprints of secret
//! values (so secrets, which the API never returns, show no perpetual diff).
//! It never holds a secret. Backends sit behind `StateBackend`: the local
//! file here, PostgreSQL in `postgres`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub mod postgres;

pub use postgres::PostgresState;

pub const STATE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub version: u32,
    /// Increases on every write; a saved plan records it to detect staleness.
    pub serial: u64,
    pub project: String,
    /// Salt of every fingerprint, random per state.
    pub salt: String,
    pub resources: BTreeMap<String, ResourceState>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceState {
    pub remote_id: String,
    /// `updated_at` after the last apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Fingerprint of the managed fields as last applied (secrets excluded).
    pub applied: String,
    /// Field path to salted fingerprint of the secret value last applied.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, String>,
    /// `preventDestroy: true` when last applied: still protected after the
    /// resource leaves the files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prevent_destroy: bool,
    /// The top-level fields the files set when last applied: one that
    /// disappears from the files is cleared rather than left behind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub managed: Vec<String>,
    /// Field path (as a plan shows it) to a short salted fingerprint of its
    /// value as last applied, secrets masked: a field that differs from the
    /// account while the files still say what was applied is drift. Empty in
    /// states written before it existed (drift is then told by version).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

impl State {
    pub fn new(project: &str) -> State {
        State {
            version: STATE_VERSION,
            serial: 0,
            project: project.to_owned(),
            salt: uuid::Uuid::new_v4().simple().to_string(),
            resources: BTreeMap::new(),
        }
    }

    /// A salted fingerprint: the same value and salt always give the same text.
    pub fn fingerprint(&self, value: &Value) -> String {
        fingerprint(&self.salt, value)
    }
}

pub fn fingerprint(salt: &str, value: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(salt.as_bytes());
    hasher.update([0]);
    hasher.update(canonical_json(value).as_bytes());
    let digest = hasher.finalize();
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// JSON with object keys sorted, so equal values hash equally.
fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical_json(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(",")),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| format!("{f}")),
        other => other.to_string(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the state {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("the state {path} is not valid: {detail}")]
    Corrupt { path: String, detail: String },
    #[error("cannot write the state {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("the state {path} belongs to project `{found}`, not `{expected}`")]
    Project {
        path: String,
        found: String,
        expected: String,
    },
    /// The PostgreSQL backend failed; `location` never holds the password.
    #[error("the state in {location}: {detail}")]
    Postgres { location: String, detail: String },
}

/// One write of the state, as a backend with history remembers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    pub serial: u64,
    /// UTC, ISO 8601.
    pub applied_at: String,
    /// `user@host`.
    pub applied_by: String,
    /// The monform command that wrote it, e.g. `monform apply`.
    pub command: String,
    /// The addresses added (`+`), changed (`~`) and removed (`-`).
    pub changes: String,
}

/// Where state is kept. Synchronous, and callable from async code: the
/// local backend does file I/O, PostgreSQL runs on a runtime of its own.
pub trait StateBackend: Send + Sync {
    /// The state, or a fresh one when there is none yet.
    fn load(&self, project: &str) -> Result<State, StateError>;
    /// Writes the state atomically: all of it or none.
    fn save(&self, state: &State) -> Result<(), StateError>;
    /// Where it lives, for messages.
    fn describe(&self) -> String;
    /// Takes the project's apply lock, or says who holds it.
    fn lock(&self, command: &str) -> Result<crate::lock::LockGuard, crate::lock::LockError>;
    /// The last `limit` writes, newest first; `None` when the backend keeps no history.
    fn history(&self, project: &str, limit: usize) -> Result<Option<Vec<HistoryEntry>>, StateError> {
        let _ = (project, limit);
        Ok(None)
    }
}

/// `.monform/state.json` of the project (`.monform/state.<env>.json` for
/// an environment), locked by `.monform/lock` (`.monform/lock.<env>`).
pub struct LocalState {
    path: PathBuf,
    lock: PathBuf,
}

impl LocalState {
    pub fn new(project_dir: &Path) -> LocalState {
        let dir = project_dir.join(".monform");
        LocalState {
            path: dir.join("state.json"),
            lock: dir.join("lock"),
        }
    }

    /// The state of one environment: a file and a lock of its own.
    pub fn for_environment(project_dir: &Path, environment: &str) -> LocalState {
        let dir = project_dir.join(".monform");
        LocalState {
            path: dir.join(format!("state.{environment}.json")),
            lock: dir.join(format!("lock.{environment}")),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl StateBackend for LocalState {
    fn load(&self, project: &str) -> Result<State, StateError> {
        let path = self.path.display().to_string();
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::new(project)),
            Err(source) => return Err(StateError::Read { path, source }),
        };
        let state: State = serde_json::from_str(&text).map_err(|e| StateError::Corrupt {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        if state.project != project {
            return Err(StateError::Project {
                path,
                found: state.project,
                expected: project.to_owned(),
            });
        }
        Ok(state)
    }

    fn save(&self, state: &State) -> Result<(), StateError> {
        let path = self.path.display().to_string();
        let write = |source| StateError::Write {
            path: path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write)?;
        let text = serde_json::to_string_pretty(state).map_err(|e| write(std::io::Error::other(e)))?;
        // Write a temporary file, flush it to disk, then rename over the old
        // state: a crash leaves either the old state or the new one.
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut file = std::fs::File::create(&temporary).map_err(write)?;
        file.write_all(text.as_bytes()).map_err(write)?;
        file.sync_all().map_err(write)?;
        drop(file);
        std::fs::rename(&temporary, &self.path).map_err(write)?;
        if let Ok(directory) = std::fs::File::open(dir) {
            let _ = directory.sync_all();
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn lock(&self, command: &str) -> Result<crate::lock::LockGuard, crate::lock::LockError> {
        crate::lock::acquire(&self.lock, command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_ignore_key_order_and_depend_on_salt() {
        let a = fingerprint("s", &json!({"a": 1, "b": [1, 2]}));
        let b = fingerprint("s", &json!({"b": [1, 2], "a": 1.0}));
        assert_eq!(a, b);
        assert_ne!(a, fingerprint("t", &json!({"a": 1, "b": [1, 2]})));
    }

    #[test]
    fn local_state_round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalState::new(dir.path());
        let mut state = backend.load("acme").unwrap();
        assert_eq!(state.serial, 0);
        state.serial = 3;
        state.resources.insert(
            "checks.a".into(),
            ResourceState {
                remote_id: "x".into(),
                version: None,
                applied: "f".into(),
                secrets: BTreeMap::new(),
                prevent_destroy: false,
                managed: Vec::new(),
                fields: BTreeMap::new(),
            },
        );
        backend.save(&state).unwrap();
        assert_eq!(backend.load("acme").unwrap(), state);
        assert!(matches!(backend.load("other"), Err(StateError::Project { .. })));
        let leftovers = std::fs::read_dir(dir.path().join(".monform")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn each_environment_has_its_own_state_and_lock() {
        let dir = tempfile::tempdir().unwrap();
        let staging = LocalState::for_environment(dir.path(), "staging");
        let production = LocalState::for_environment(dir.path(), "production");
        staging.save(&State::new("acme-staging")).unwrap();
        assert!(dir.path().join(".monform/state.staging.json").is_file());
        assert_eq!(
            production.load("acme").unwrap().serial,
            0,
            "a fresh state: nothing saved for production"
        );
        assert!(!dir.path().join(".monform/state.production.json").exists());
        let _held = staging.lock("test").unwrap();
        assert!(production.lock("test").is_ok(), "environments do not share a lock");
        assert!(staging.lock("test").is_err());
    }
}
