//! Drift reports (issue 30): what drifted, remembered so each drift is
//! reported once (not every interval while it lasts) and its end once
//! ("back in sync"); what a `revert` policy reverted, each time (issue
//! 45); the JSON body sent to the project's WEBHOOK channels, the message
//! sent to its SLACK channels (Slack's incoming-webhook format).
//!
//! The WEBHOOK body (`formatVersion` 2):
//!
//! ```json
//! { "formatVersion": 2, "type": "drift",            // "reverted", or "in-sync"
//!   "project": "acme-web", "environment": null, "time": "2026-11-25T18:00:00Z",
//!   "drifted": [ { "address": "checks.homepage", "action": "update",
//!                  "reason": "changed outside monform (drift)", "policy": "notify",
//!                  "fields": [ { "path": "muted", "service": true, "files": false,
//!                                "sensitive": false } ] } ],
//!   "resolved": [],                                   // "in-sync": the addresses back in sync
//!   "markdown": "### monform plan for `acme-web` ..." }
//! ```
//!
//! Each field is one the service changed: `service` is what it holds (for
//! `reverted`: what it had), `files` what the files say (for `reverted`:
//! what was restored). A field changed in the files too since the last
//! apply has `"conflict": true` and `applied`, the value last applied
//! (absent when the state keeps only a fingerprint of it). A sensitive
//! field has `"sensitive": true` and no values: secrets never leave the
//! process. (`formatVersion` 1 said `before` and `after` for `service` and
//! `files`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use monform_engine::{Change, Plan};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One drifted resource as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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

/// A field the service changed: its value there and in the files.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Field {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Value>,
    /// Changed in the files too since the last apply; absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflict: bool,
    /// A conflict's value as last applied, when the state keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<Value>,
    pub sensitive: bool,
}

impl Drifted {
    /// The fields of `change` the service changed (an edit made in the
    /// files alone is no drift to report).
    pub fn of(change: &Change, policy: monform_model::DriftPolicy) -> Drifted {
        Drifted {
            address: change.address.to_string(),
            action: change.action,
            reason: change.reason.text().to_owned(),
            policy: policy.as_str().to_owned(),
            fields: change
                .fields
                .iter()
                .filter(|f| f.drift || f.conflict.is_some())
                .map(|f| {
                    // The plan carries no secret; masked again in case.
                    let shown = |value: &Option<Value>| if f.sensitive { None } else { value.clone() };
                    Field {
                        path: f.path.clone(),
                        service: shown(&f.before),
                        files: shown(&f.after),
                        conflict: f.conflict.is_some(),
                        applied: f.conflict.as_ref().and_then(|c| shown(&c.applied)),
                        sensitive: f.sensitive,
                    }
                })
                .collect(),
            codified_branch: None,
        }
    }

    /// How many of its fields changed in the files too.
    pub fn conflicts(&self) -> usize {
        self.fields.iter().filter(|f| f.conflict).count()
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
    /// The burn-rate pairs firing per SLO address, as reported
    /// (`slo_alerts.rs`): an episode is told when it starts and ends.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slo_alerts: BTreeMap<String, std::collections::BTreeSet<String>>,
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
        self.news_read(now, &|_| false)
    }

    /// [`Memory::news`] of a plan that did not read everything (a rolling
    /// refresh): a reported drift at an address `unread` says was not read
    /// is neither over nor forgotten.
    pub fn news_read(&mut self, now: Vec<Drifted>, unread: &dyn Fn(&str) -> bool) -> News {
        let mut news = News::default();
        let mut current: BTreeMap<String, String> = now.iter().map(|d| (d.address.clone(), d.fingerprint())).collect();
        for (address, fingerprint) in &self.reported {
            if !current.contains_key(address) && unread(address) {
                current.insert(address.clone(), fingerprint.clone());
            }
        }
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

/// The version of the WEBHOOK body (2: fields say `service` and `files`).
pub const FORMAT_VERSION: u32 = 2;

/// The WEBHOOK body of a drift report.
pub fn drift_body(subject: &Subject<'_>, drifted: &[Drifted], markdown: &str) -> Value {
    json!({
        "formatVersion": FORMAT_VERSION,
        "type": "drift",
        "project": subject.project,
        "environment": subject.environment,
        "time": now(),
        "drifted": drifted,
        "resolved": [],
        "markdown": markdown,
    })
}

/// The WEBHOOK body of a revert report: drift the `revert` policy undid,
/// each field with what the service had and what the files restored.
pub fn reverted_body(subject: &Subject<'_>, reverted: &[Drifted], markdown: &str) -> Value {
    json!({
        "formatVersion": FORMAT_VERSION,
        "type": "reverted",
        "project": subject.project,
        "environment": subject.environment,
        "time": now(),
        "drifted": reverted,
        "resolved": [],
        "markdown": markdown,
    })
}

/// The WEBHOOK body of a back-in-sync report.
pub fn in_sync_body(subject: &Subject<'_>, resolved: &[String]) -> Value {
    json!({
        "formatVersion": FORMAT_VERSION,
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
            ":warning: monform: {} changed outside monform in {scope}: {}{}",
            plural(drifted.len(), "resource"),
            addresses.join(", "),
            conflicts_said(drifted)
        )
    };
    json!({ "text": text })
}

/// The Slack message of a revert report.
pub fn slack_reverted(subject: &Subject<'_>, reverted: &[Drifted]) -> Value {
    let scope = match subject.environment {
        Some(environment) => format!("{} ({environment})", subject.project),
        None => subject.project.to_owned(),
    };
    let fields: Vec<String> = reverted
        .iter()
        .flat_map(|d| {
            d.fields.iter().map(move |f| match (&f.service, &f.files) {
                (Some(service), Some(files)) => format!("{}.{}: {service} -> {files}", d.address, f.path),
                _ => format!("{}.{} (sensitive)", d.address, f.path),
            })
        })
        .collect();
    let text = format!(
        ":leftwards_arrow_with_hook: monform: reverted {} changed outside monform in {scope} to the files' values: {}{}",
        plural(reverted.len(), "resource"),
        fields.join(", "),
        conflicts_said(reverted)
    );
    json!({ "text": text })
}

/// ` (2 conflicts: changed in the files too)`, or nothing.
fn conflicts_said(drifted: &[Drifted]) -> String {
    match drifted.iter().map(Drifted::conflicts).sum::<usize>() {
        0 => String::new(),
        n => format!(" ({}: changed in the files too)", plural(n, "conflict")),
    }
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
    // Every drift shown was read: what a rolling refresh left unread is
    // not this report's.
    if only.refreshed.mode == monform_engine::Refresh::Rolling {
        only.refreshed.not_refreshed = 0;
    }
    only
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
                service: Some(json!(5)),
                files: Some(json!(after)),
                conflict: false,
                applied: None,
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
    fn reports_say_service_and_files_for_the_fields_the_service_changed_and_mark_conflicts() {
        let field = |path: &str, drift: bool, conflict: bool| monform_engine::FieldChange {
            path: path.into(),
            before: Some(json!(9000)),
            after: Some(json!(7000)),
            sensitive: false,
            drift,
            known_after_apply: false,
            cleared: false,
            conflict: conflict.then(|| monform_engine::Conflict {
                applied: Some(json!(5000)),
                service: Some(json!(9000)),
                files: json!(7000),
                files_default: false,
            }),
        };
        let change = Change {
            address: "checks.api".parse().unwrap(),
            action: monform_engine::Action::Update,
            remote_id: None,
            from: None,
            reason: monform_engine::Reason::Conflict,
            fields: vec![
                field("maxResponseTime", false, true),
                field("frequency", true, false),
                field("name", false, false),
            ],
            unchanged: 0,
            remote_version: None,
            deferred: None,
        };
        let drifted = Drifted::of(&change, monform_model::DriftPolicy::Notify);
        let fields = serde_json::to_value(&drifted.fields).unwrap();
        assert_eq!(
            fields,
            json!([
                {"path": "maxResponseTime", "service": 9000, "files": 7000, "conflict": true, "applied": 5000, "sensitive": false},
                {"path": "frequency", "service": 9000, "files": 7000, "sensitive": false},
            ]),
            "the files' own edit (name) is no drift"
        );
        let subject = Subject {
            project: "shop",
            environment: Some("production"),
        };
        let text = slack_reverted(&subject, std::slice::from_ref(&drifted))["text"].clone();
        assert_eq!(
            text,
            ":leftwards_arrow_with_hook: monform: reverted 1 resource changed outside monform in shop (production) to the files' values: checks.api.maxResponseTime: 9000 -> 7000, checks.api.frequency: 9000 -> 7000 (1 conflict: changed in the files too)"
        );
        let body = reverted_body(&subject, &[drifted], "");
        assert_eq!(
            (body["type"].clone(), body["formatVersion"].clone()),
            (json!("reverted"), json!(2))
        );
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
