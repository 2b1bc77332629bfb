//! Drift reports (issue 30): what drifted, remembered so each drift is
//! reported once (not every interval while it lasts) and its end once
//! ("back in sync"); the JSON body sent to the project's WEBHOOK channels,
//! the message sent to its SLACK channels (Slack's incoming-webhook
//! format), and the lines of `--events FILE`.
//!
//! The WEBHOOK body (`formatVersion` 1):
//!
//! ```json
//! { "formatVersion": 1, "type": "drift",            // or "in-sync"
//!   "project": "acme-web", "environment": null, "time": "2026-11-25T18:00:00Z",
//!   "drifted": [ { "address": "checks.homepage", "action": "update",
//!                  "reason": "changed outside monform (drift)", "policy": "notify",
//!                  "fields": [ { "path": "muted", "before": true, "after": false,
//!                                "sensitive": false } ] } ],
//!   "resolved": [],                                   // "in-sync": the addresses back in sync
//!   "markdown": "### monform plan for `acme-web` ..." }
//! ```
//!
//! A sensitive field has `"sensitive": true` and neither `before` nor
//! `after`: secrets never leave the process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use monform_engine::{Change, Plan};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One drifted resource as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drifted {
    pub address: String,
    pub action: monform_engine::Action,
    pub reason: String,
    pub policy: String,
    pub fields: Vec<Field>,
    /// The git branch holding the service's values (policy `codify`),
    /// `codifiedBranch` in the WEBHOOK body; absent otherwise.
    #[serde(rename = "codifiedBranch", skip_serializing_if = "Option::is_none")]
    pub codified_branch: Option<String>,
}

/// A field of a drifted resource: before is the service's value, after the files'.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    pub sensitive: bool,
}

impl Drifted {
    pub fn of(change: &Change, policy: monform_model::DriftPolicy) -> Drifted {
        Drifted {
            address: change.address.to_string(),
            action: change.action,
            reason: change.reason.text().to_owned(),
            policy: policy.as_str().to_owned(),
            fields: change
                .fields
                .iter()
                .map(|f| Field {
                    path: f.path.clone(),
                    // The plan carries no secret; masked again in case.
                    before: if f.sensitive { None } else { f.before.clone() },
                    after: if f.sensitive { None } else { f.after.clone() },
                    sensitive: f.sensitive,
                })
                .collect(),
            codified_branch: None,
        }
    }

    /// Tells one drift from another of the same address: its fields' values.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(&(self.action, &self.fields)).unwrap_or_default();
        let digest = Sha256::digest(text.as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

/// The drifts reported and not yet back in sync: address -> fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    pub reported: BTreeMap<String, String>,
}

/// What to report this interval.
#[derive(Debug, Default)]
pub struct News {
    /// New drifts (or drifts that changed since reported).
    pub drifted: Vec<Drifted>,
    /// Reported drifts that ended.
    pub resolved: Vec<String>,
}

impl Memory {
    /// Compares the drifts of this interval with what was reported; `self`
    /// becomes what is reported once the news is sent.
    pub fn news(&mut self, now: Vec<Drifted>) -> News {
        let mut news = News::default();
        let current: BTreeMap<String, String> = now.iter().map(|d| (d.address.clone(), d.fingerprint())).collect();
        for drift in now {
            if self.reported.get(&drift.address) != current.get(&drift.address) {
                news.drifted.push(drift);
            }
        }
        news.resolved = self
            .reported
            .keys()
            .filter(|a| !current.contains_key(*a))
            .cloned()
            .collect();
        self.reported = current;
        news
    }
}

/// Where the memory lives: a file beside the local state, or a PostgreSQL row.
pub trait MemoryStore: Send + Sync {
    fn load(&self) -> Result<Memory, String>;
    fn save(&self, memory: &Memory) -> Result<(), String>;
}

/// `.monform/reconcile.<project>.json`, written durably.
pub struct FileMemory {
    pub path: PathBuf,
}

impl FileMemory {
    pub fn new(dir: &Path, project: &str) -> FileMemory {
        FileMemory {
            path: dir.join(".monform").join(format!("reconcile.{project}.json")),
        }
    }
}

impl MemoryStore for FileMemory {
    fn load(&self) -> Result<Memory, String> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", self.path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Memory::default()),
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }

    fn save(&self, memory: &Memory) -> Result<(), String> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let bytes = serde_json::to_vec(memory).map_err(|e| e.to_string())?;
        write_durably(&self.path, &bytes).map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

/// Temp file, fsync, rename: a crash leaves the old memory or the new one.
fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let temporary = path.with_extension("json.tmp");
    let mut file = std::fs::File::create(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)?;
    if let Some(parent) = path.parent() {
        std::fs::File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// Who a report is about.
pub struct Subject<'a> {
    pub project: &'a str,
    pub environment: Option<&'a str>,
}

/// The WEBHOOK body of a drift report.
pub fn drift_body(subject: &Subject<'_>, drifted: &[Drifted], markdown: &str) -> Value {
    json!({
        "formatVersion": 1,
        "type": "drift",
        "project": subject.project,
        "environment": subject.environment,
        "time": now(),
        "drifted": drifted,
        "resolved": [],
        "markdown": markdown,
    })
}

/// The WEBHOOK body of a back-in-sync report.
pub fn in_sync_body(subject: &Subject<'_>, resolved: &[String]) -> Value {
    json!({
        "formatVersion": 1,
        "type": "in-sync",
        "project": subject.project,
        "environment": subject.environment,
        "time": now(),
        "drifted": [],
        "resolved": resolved,
        "markdown": "",
    })
}

/// The Slack message (incoming-webhook format): a short summary.
pub fn slack_text(subject: &Subject<'_>, drifted: &[Drifted], resolved: &[String]) -> Value {
    let scope = match subject.environment {
        Some(environment) => format!("{} ({environment})", subject.project),
        None => subject.project.to_owned(),
    };
    let text = if drifted.is_empty() {
        format!(
            ":white_check_mark: monform: {scope} is back in sync: {}",
            resolved.join(", ")
        )
    } else {
        let addresses: Vec<&str> = drifted.iter().map(|d| d.address.as_str()).collect();
        format!(
            ":warning: monform: {} changed outside monform in {scope}: {}",
            plural(drifted.len(), "resource"),
            addresses.join(", ")
        )
    };
    json!({ "text": text })
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Only the drifted changes of `plan`, for its Markdown.
pub fn drift_only(plan: &Plan, drifted: &[Drifted]) -> Plan {
    let mut only = plan.clone();
    only.changes
        .retain(|c| drifted.iter().any(|d| d.address == c.address.to_string()));
    only.order = Default::default();
    only.excluded.clear();
    only.suggested_moves.clear();
    only.discarded = Default::default();
    only
}

/// `--events FILE`: one JSON object a line, appended.
pub struct Events {
    path: Option<PathBuf>,
}

impl Events {
    pub fn new(path: Option<PathBuf>) -> Events {
        Events { path }
    }

    /// Appends `{"time", "event", ...fields}`; a failure to write is returned
    /// for the log, never fatal.
    pub fn emit(&self, event: &str, fields: Value) -> Result<(), String> {
        use std::io::Write;
        let Some(path) = &self.path else { return Ok(()) };
        let mut line = json!({ "time": now(), "event": event });
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        let mut text = line.to_string();
        text.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        file.write_all(text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drift(address: &str, after: i64) -> Drifted {
        Drifted {
            address: address.into(),
            action: monform_engine::Action::Update,
            reason: "changed outside monform (drift)".into(),
            policy: "notify".into(),
            fields: vec![Field {
                path: "frequency".into(),
                before: Some(json!(5)),
                after: Some(json!(after)),
                sensitive: false,
            }],
            codified_branch: None,
        }
    }

    #[test]
    fn a_drift_is_news_once_then_again_when_it_changes_and_its_end_once() {
        let mut memory = Memory::default();
        assert_eq!(memory.news(vec![drift("checks.a", 10)]).drifted.len(), 1);
        let again = memory.news(vec![drift("checks.a", 10)]);
        assert!(again.drifted.is_empty() && again.resolved.is_empty());
        assert_eq!(memory.news(vec![drift("checks.a", 15)]).drifted.len(), 1);
        let ended = memory.news(Vec::new());
        assert_eq!(ended.resolved, ["checks.a"]);
        assert!(memory.news(Vec::new()).resolved.is_empty());
    }

    #[test]
    fn sensitive_fields_carry_no_values() {
        let change = Change {
            address: "variables.TOKEN".parse().unwrap(),
            action: monform_engine::Action::Update,
            remote_id: None,
            from: None,
            reason: monform_engine::Reason::Drift,
            fields: vec![monform_engine::FieldChange {
                path: "value".into(),
                before: Some(json!("leaked")),
                after: Some(json!("leaked")),
                sensitive: true,
                drift: true,
                known_after_apply: false,
                cleared: false,
                conflict: None,
            }],
            unchanged: 0,
            remote_version: None,
            deferred: None,
        };
        let body = serde_json::to_string(&Drifted::of(&change, monform_model::DriftPolicy::Notify)).unwrap();
        assert!(!body.contains("leaked"), "{body}");
    }
}
