//! State: a cache of remote ids, the fingerprints of what was last applied
//! (to tell drift from config changes) and salted fingerprints of secret
//! values (so secrets, which the API never returns, show no perpetual diff).
//! It never holds a secret. Backends sit behind `StateBackend`: the local
//! file in `local` (a snapshot and a journal), PostgreSQL in `postgres`.
//! An apply records its changes through a `StateWriter` on a thread of its
//! own (`recorder`), so what a write costs grows with the change, not with
//! the project.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

mod fingerprints;
mod format;
mod journal;
pub mod local;
pub mod postgres;
mod recorder;

pub use fingerprints::{FieldSet, FieldSets, Fingerprints};
pub use local::LocalState;
pub use postgres::PostgresState;
pub use recorder::Recorder;

/// The state format: 2 is the lean snapshot (`format`); 1 (every entry
/// with its field names, 32-digit fingerprints) is read and migrated.
pub const STATE_VERSION: u32 = 2;

/// Hex digits of a fingerprint: 64 bits, plenty to tell one value from
/// another of the same field. Version 1 kept 32; their first 16 are the
/// same fingerprint, so a migrated state compares equal.
pub const FINGERPRINT_DIGITS: usize = 16;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub version: u32,
    /// Increases on every write; a saved plan records it to detect staleness.
    pub serial: u64,
    pub project: String,
    /// Salt of every fingerprint, random per state.
    pub salt: String,
    /// The service and account it was last applied to: a plan against
    /// another one warns before showing the project as new there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    pub resources: BTreeMap<String, ResourceState>,
}

/// Which service and account a state was applied to. The URL is as the
/// user chose it (`local` for the bundled emulator, whose port changes
/// from run to run); the account is the one the requests were made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub api_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.account {
            Some(account) => write!(f, "{} (account {account})", self.api_url),
            None => f.write_str(&self.api_url),
        }
    }
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
    #[serde(default, skip_serializing_if = "<[String]>::is_empty")]
    pub managed: FieldSet,
    /// Field path (as a plan shows it) to a short salted fingerprint of its
    /// value as last applied, secrets masked: a field that differs from the
    /// account while the files still say what was applied is drift; one the
    /// files changed too is a conflict. A number or a boolean is kept as
    /// itself (`=5000`, padded), so a conflict can show what was applied
    /// (`forms::field_print`). Empty in states written before it existed
    /// (drift is then told by version).
    #[serde(default, skip_serializing_if = "Fingerprints::is_empty")]
    pub fields: Fingerprints,
    /// Field path to the service's normal form of the value written there
    /// (`normal.rs`: the fingerprints of what was written and of what the
    /// service holds instead), so a rewrite is not shown as a change again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub normal: BTreeMap<String, String>,
    /// Remote ids of the objects this resource's create-first replaces
    /// retired whose delete the service has not confirmed yet: still the
    /// project's (kinds without tags have nothing else saying so), so the
    /// next plan deletes them as duplicates (`execute/confirm.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<String>,
}

impl State {
    pub fn new(project: &str) -> State {
        State {
            version: STATE_VERSION,
            serial: 0,
            project: project.to_owned(),
            salt: uuid::Uuid::new_v4().simple().to_string(),
            target: None,
            resources: BTreeMap::new(),
        }
    }

    /// A salted fingerprint: the same value and salt always give the same text.
    pub fn fingerprint(&self, value: &Value) -> String {
        fingerprint(&self.salt, value)
    }

    /// Applies one recorded change: its removals, then its entries.
    pub fn apply(&mut self, delta: &Delta) {
        if let Some(target) = &delta.target {
            self.target = Some(target.clone());
        }
        for address in &delta.remove {
            self.resources.remove(address);
        }
        for (address, entry) in &delta.set {
            self.resources.insert(address.clone(), entry.clone());
        }
        self.serial = self.serial.max(delta.serial);
    }

    /// A state read in an older format, in this one: version 1's 32-digit
    /// fingerprints cut to their first `FINGERPRINT_DIGITS` (the same
    /// fingerprint, see there). Nothing else changes. Every entry is looked
    /// at, whatever the version says: PostgreSQL keeps version 1 entries
    /// in rows no write has touched since.
    pub fn upgrade(mut self) -> State {
        let cut = |f: &mut String| f.truncate(FINGERPRINT_DIGITS.min(f.len()));
        for entry in self.resources.values_mut() {
            cut(&mut entry.applied);
            entry.secrets.values_mut().for_each(cut);
        }
        self.version = STATE_VERSION;
        self
    }
}

/// What one completed change did to the state (or several, batched):
/// entries removed, then entries written; `serial` is the state's serial
/// after it. The unit of the local journal and of PostgreSQL's row writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    pub serial: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, ResourceState>,
    /// A new service and account the state is applied to ([`State::target`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
}

impl Delta {
    /// What turns `before` into `after` (`after`'s serial).
    pub fn between(before: &State, after: &State) -> Delta {
        Delta {
            serial: after.serial,
            remove: before
                .resources
                .keys()
                .filter(|a| !after.resources.contains_key(*a))
                .cloned()
                .collect(),
            set: after
                .resources
                .iter()
                .filter(|(a, e)| before.resources.get(*a) != Some(*e))
                .map(|(a, e)| (a.clone(), e.clone()))
                .collect(),
            target: (before.target != after.target).then(|| after.target.clone()).flatten(),
        }
    }

    /// Adds `next` (which comes after): one delta that does both.
    pub fn merge(&mut self, next: &Delta) {
        for address in &next.remove {
            self.set.remove(address);
            if !self.remove.contains(address) {
                self.remove.push(address.clone());
            }
        }
        for (address, entry) in &next.set {
            self.set.insert(address.clone(), entry.clone());
        }
        if next.target.is_some() {
            self.target = next.target.clone();
        }
        self.serial = next.serial;
    }

    /// The addresses it touches, as a history row names them: `+` written
    /// (`~` when `before` had it), `-` removed.
    pub fn describe(&self, before: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut parts: Vec<String> = self
            .set
            .keys()
            .map(|a| format!("{}{a}", if before(a) { '~' } else { '+' }))
            .collect();
        parts.extend(
            self.remove
                .iter()
                .filter(|a| !self.set.contains_key(*a))
                .map(|a| format!("-{a}")),
        );
        parts
    }
}

pub fn fingerprint(salt: &str, value: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(salt.as_bytes());
    hasher.update([0]);
    hasher.update(canonical_json(value).as_bytes());
    let digest = hasher.finalize();
    digest
        .iter()
        .take(FINGERPRINT_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect()
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
    /// A write based on an older state than the one stored: another
    /// monform wrote it meanwhile.
    #[error(
        "refusing to overwrite a newer state {path}: it is at serial {stored}, this write is serial {writing}; plan again"
    )]
    Newer { path: String, stored: u64, writing: u64 },
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

/// One call an agent made through `monform mcp` (issue 51), as the
/// state's history keeps it: what, by which client, on which plan, and
/// how it ended. Never a secret: the plan is named by its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    /// UTC, ISO 8601.
    pub at: String,
    /// `user@host` of the server, as the history names who applied.
    pub by: String,
    /// The MCP client, as it named itself (`name version`).
    pub client: String,
    /// The tool called, e.g. `apply`.
    pub tool: String,
    /// The plan's hash, for `plan` and `apply`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// `applied`, `refused: WHY`, `failed: WHY`.
    pub outcome: String,
}

/// Records an apply's changes as they complete, for one backend. Called
/// from the `Recorder`'s thread, never from the executor's.
pub trait StateWriter: Send {
    /// Makes `changes` durable, in order, as one write (one fsync, one
    /// transaction): after it returns, a crash loses none of them.
    fn write(&mut self, changes: &[Delta]) -> Result<(), StateError>;
    /// The end of the apply, `state` being everything written: a backend
    /// with a journal folds it into its snapshot.
    fn finish(self: Box<Self>, state: &State) -> Result<(), StateError>;
}

/// Where state is kept. Synchronous, and callable from async code: the
/// local backend does file I/O, PostgreSQL runs on a runtime of its own.
pub trait StateBackend: Send + Sync {
    /// The state, or a fresh one when there is none yet.
    fn load(&self, project: &str) -> Result<State, StateError>;
    /// Writes the state atomically: all of it or none. A state older than
    /// the stored one (a lower serial) is refused.
    fn save(&self, state: &State) -> Result<(), StateError>;
    /// Where it lives, for messages.
    fn describe(&self) -> String;
    /// A writer for an apply that starts from `state` (as loaded under the
    /// lock). A journal left by a crash is folded first.
    fn writer(&self, state: &State) -> Result<Box<dyn StateWriter>, StateError>;
    /// Takes the project's apply lock, or says who holds it.
    fn lock(&self, command: &str) -> Result<crate::lock::LockGuard, crate::lock::LockError>;
    /// The last `limit` writes, newest first; `None` when the backend keeps no history.
    fn history(&self, project: &str, limit: usize) -> Result<Option<Vec<HistoryEntry>>, StateError> {
        let _ = (project, limit);
        Ok(None)
    }
    /// Adds an agent's call to the history (`monform mcp`); a backend
    /// that cannot keep it says so, and the call is refused.
    fn record_call(&self, project: &str, call: &CallRecord) -> Result<(), StateError> {
        let _ = (project, call);
        Err(StateError::Corrupt {
            path: self.describe(),
            detail: "this state backend keeps no history of calls".to_owned(),
        })
    }
    /// The last `limit` calls recorded by [`StateBackend::record_call`], newest first.
    fn calls(&self, project: &str, limit: usize) -> Result<Vec<CallRecord>, StateError> {
        let _ = (project, limit);
        Ok(Vec::new())
    }
}

/// An entry for tests (and the conformance suite): applied now, setting
/// `managed`.
#[cfg(any(test, feature = "test-support"))]
pub(crate) fn test_entry(id: &str, managed: &[&str]) -> ResourceState {
    ResourceState {
        remote_id: id.into(),
        version: Some("2026-11-22T10:00:00.000Z".into()),
        applied: "0123456789abcdef".into(),
        secrets: BTreeMap::new(),
        prevent_destroy: false,
        managed: managed.iter().map(|s| s.to_string()).collect(),
        fields: Fingerprints::default(),
        normal: BTreeMap::new(),
        retired: Vec::new(),
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
    fn a_delta_removes_then_writes_and_names_what_it_touched() {
        let entry = |id: &str| ResourceState {
            remote_id: id.into(),
            version: None,
            applied: String::new(),
            secrets: BTreeMap::new(),
            prevent_destroy: false,
            managed: FieldSet::default(),
            fields: Fingerprints::default(),
            normal: BTreeMap::new(),
            retired: Vec::new(),
        };
        let mut state = State::new("p");
        state.resources.insert("checks.a".into(), entry("1"));
        state.resources.insert("checks.b".into(), entry("2"));
        let delta = Delta {
            target: None,
            serial: 4,
            remove: vec!["checks.a".into(), "checks.b".into()],
            set: BTreeMap::from([("checks.b".into(), entry("3")), ("groups.c".into(), entry("4"))]),
        };
        let before = |a: &str| state.resources.contains_key(a);
        assert_eq!(delta.describe(&before), ["~checks.b", "+groups.c", "-checks.a"]);
        state.apply(&delta);
        assert_eq!(state.serial, 4);
        let ids: Vec<&str> = state.resources.values().map(|r| r.remote_id.as_str()).collect();
        assert_eq!(ids, ["3", "4"]);
    }
}
