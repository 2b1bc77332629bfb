//! The plan: an action per address with the fields that change and why,
//! ordered as a DAG so creates follow what they reference and deletes
//! precede the deletion of what they reference. These are the plan's value
//! types; `differ.rs` computes a plan, `forms.rs` holds the views of
//! desired and actual values both use.

use std::collections::BTreeMap;

use monform_api::ReportEntry;
use monform_model::{Address, Kind};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    Update,
    Delete,
    Replace,
    /// Only the address changes (`moved` in the files): its ownership tag is rewritten.
    Move,
    /// An existing object adopted (`import` in the files), brought to the files' form.
    Import,
    /// Dropped from the state and its ownership mark, not deleted (`removed` with `destroy: false`).
    Forget,
    Noop,
}

impl Action {
    /// Nothing for the change loop: a noop, or a move alone (its tag is
    /// rewritten before the changes start).
    pub fn is_noop(self) -> bool {
        matches!(self, Action::Noop | Action::Move)
    }
}

/// Why an action is planned.
// Deserialize too: `monform show` reads a saved plan's changes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Reason {
    #[serde(rename = "new in configuration")]
    New,
    #[serde(rename = "config changed")]
    ConfigChanged,
    #[serde(rename = "changed outside monform (drift)")]
    Drift,
    #[serde(rename = "deleted outside monform (drift)")]
    DeletedRemotely,
    #[serde(rename = "removed from configuration")]
    Removed,
    /// Deleted by `destroy`, whose purpose that is (the files still have it).
    #[serde(rename = "destroy")]
    Destroyed,
    #[serde(rename = "duplicate left by an interrupted apply")]
    Duplicate,
    #[serde(rename = "a dependency is replaced")]
    DependencyReplaced,
    #[serde(rename = "up to date")]
    UpToDate,
    #[serde(rename = "import declared in configuration")]
    Imported,
    #[serde(rename = "removed from configuration, kept in the service")]
    Forgotten,
    /// A field changed both in the files and in the service since the
    /// last apply: applying overwrites the service's change.
    #[serde(rename = "changed in the files and outside monform (conflict)")]
    Conflict,
}

impl Reason {
    pub fn text(self) -> &'static str {
        match self {
            Reason::New => "new in configuration",
            Reason::ConfigChanged => "config changed",
            Reason::Drift => "changed outside monform (drift)",
            Reason::DeletedRemotely => "deleted outside monform (drift)",
            Reason::Removed => "removed from configuration",
            Reason::Destroyed => "destroy",
            Reason::Duplicate => "duplicate left by an interrupted apply",
            Reason::DependencyReplaced => "a dependency is replaced",
            Reason::UpToDate => "up to date",
            Reason::Imported => "import declared in configuration",
            Reason::Forgotten => "removed from configuration, kept in the service",
            Reason::Conflict => "changed in the files and outside monform (conflict)",
        }
    }

    /// The service changed outside monform (a conflict too: the files changed as well).
    pub fn is_drift(self) -> bool {
        matches!(self, Reason::Drift | Reason::DeletedRemotely | Reason::Conflict)
    }
}

/// One field that an action sets or changes. Secret values are never here:
/// `sensitive` fields carry no `before`/`after`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub sensitive: bool,
    /// The account's value differs from what monform last applied while the
    /// files still say the same: changed outside monform. False for a change
    /// made in the files.
    pub drift: bool,
    /// The field references a resource this plan creates: its id is known after apply.
    #[serde(skip)]
    pub known_after_apply: bool,
    /// The files no longer set this field, which monform set before: it is cleared.
    #[serde(skip)]
    pub cleared: bool,
    /// Changed both in the files and in the service since the last apply
    /// (`drift` is false: the files changed it too): the three values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
}

/// A field changed both in the files and in the service since the last
/// apply: what was applied, what the service holds, what the files say.
/// Masked as the plan masks `before` and `after`; a secret's values are
/// [`Conflict::secret`] fingerprints, never the value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conflict {
    /// `None` when the state keeps only a fingerprint of it: it records
    /// numbers, booleans and short plain text as they are; secrets, long
    /// text and lists as fingerprints.
    pub applied: Option<Value>,
    /// `None` when the service never returns it (a secret variable's value).
    pub service: Option<Value>,
    /// Null when the files leave the field out and it has no default.
    pub files: Value,
    /// The files leave the field out (taken out since the last apply):
    /// `files` is the model's default, shown as `(default)`.
    // Saved plans from before it have none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub files_default: bool,
}

impl Conflict {
    /// How a secret's value shows in a conflict: `(sensitive, fingerprint
    /// 1a2b3c4d)`, the first digits of its salted fingerprint, enough to
    /// tell two values apart without telling either.
    pub fn secret(fingerprint: &str) -> Value {
        Value::String(format!(
            "{}{})",
            monform_model::sensitive::MASK_FINGERPRINT,
            fingerprint.get(..8).unwrap_or(fingerprint)
        ))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub address: Address,
    pub action: Action,
    pub remote_id: Option<String>,
    /// The address the object had, when the files declare it moved here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Address>,
    pub reason: Reason,
    pub fields: Vec<FieldChange>,
    /// Managed fields that do not change.
    #[serde(skip)]
    pub unchanged: usize,
    /// The remote object's `updated_at` when planned, to refuse stale plans.
    #[serde(skip)]
    pub remote_version: Option<String>,
    /// A create's fields are built when asked ([`Change::fields_in`]), not
    /// kept: they are the whole object again (500 MB of a cold apply of
    /// 100,000 checks). Holds the paths of its references to objects also
    /// being created (known after apply).
    #[serde(skip)]
    pub deferred: Option<Box<[String]>>,
}

/// How many changes of each action a plan holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub create: usize,
    pub update: usize,
    pub delete: usize,
    pub replace: usize,
    pub import: usize,
    pub moved: usize,
    pub forget: usize,
    pub noop: usize,
    /// Fields changed both in the files and in the service (not an action:
    /// counted across the changes). Left out of the JSON when none, so a
    /// plan without conflicts reads as before.
    // `default`: its schema does not require it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conflict: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl Summary {
    pub fn has_changes(&self) -> bool {
        self.create + self.update + self.delete + self.replace + self.import + self.moved + self.forget > 0
    }
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub project: String,
    /// Every address, noops included, sorted by address.
    pub changes: Vec<Change>,
    /// `a -> b`: change `a` must finish before change `b` starts.
    pub order: DiGraph<usize, ()>,
    pub state_serial: u64,
    /// Deletes and creates that look like renames (`renames.rs`).
    pub suggested_moves: Vec<SuggestedMove>,
    /// The results its deletes of checks discard (`discards.rs`), filled
    /// in by whoever can ask the service.
    pub discarded: Discarded,
    /// Changes whose order cannot be settled: they wait on each other. A
    /// plan with any is refused (`ops::Refusal::Cycle`), never applied in
    /// some other order.
    pub cycle: Vec<Address>,
    /// How much of the account it read (`--refresh`).
    pub refreshed: Refreshed,
    /// Changes `--exclude` left out, each with why (issue 30).
    pub excluded: Vec<Excluded>,
    /// The account's objects the changes' lists of references name that
    /// are no object of the project: what each is and whose (`foreign.rs`).
    pub foreign: ForeignObjects,
}

/// A change `--exclude` left out of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Excluded {
    pub address: Address,
    pub action: Action,
    pub by: ExcludedBy,
}

/// Why a change is excluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ExcludedBy {
    /// Its address matches this `--exclude` pattern.
    Pattern(String),
    /// It references this excluded resource (directly).
    DependsOn(Address),
    /// Destroying: an excluded resource references it, so it stays.
    KeptBy(Address),
}

impl ExcludedBy {
    /// In words, for every output format.
    pub fn text(&self) -> String {
        match self {
            ExcludedBy::Pattern(pattern) => format!("--exclude {pattern}"),
            ExcludedBy::DependsOn(address) => format!("depends on {address}, which is excluded"),
            ExcludedBy::KeptBy(address) => format!("{address} uses it and is excluded"),
        }
    }
}

/// How much of the account a plan read, and what it therefore did not check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refreshed {
    pub mode: crate::refresh::Refresh,
    /// The state's objects it did not read: trusted to be as last applied,
    /// their drift not checked.
    pub not_refreshed: usize,
}

impl Plan {
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        for change in &self.changes {
            match change.action {
                Action::Create => summary.create += 1,
                Action::Update => summary.update += 1,
                Action::Delete => summary.delete += 1,
                Action::Replace => summary.replace += 1,
                Action::Move => {}
                Action::Import => summary.import += 1,
                Action::Forget => summary.forget += 1,
                Action::Noop => summary.noop += 1,
            }
            if change.from.is_some() {
                summary.moved += 1;
            }
            summary.conflict += change.fields.iter().filter(|f| f.conflict.is_some()).count();
        }
        summary
    }

    /// The changes that do something, in the plan's order (the differ
    /// lists changes in dependency order).
    pub fn ordered(&self) -> Vec<&Change> {
        self.changes.iter().filter(|c| !c.action.is_noop()).collect()
    }

    /// The addresses a change waits for.
    pub fn prerequisites(&self, index: usize) -> Vec<usize> {
        let node = NodeIndex::new(index);
        self.order
            .neighbors_directed(node, petgraph::Direction::Incoming)
            .map(|n| self.order[n])
            .collect()
    }
}

/// A delete and a create that look like one object renamed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuggestedMove {
    pub from: Address,
    pub to: Address,
    pub reason: String,
}

/// The results the plan's check deletes discard.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Discarded {
    /// The plan deletes no check (or was not asked).
    #[default]
    Nothing,
    /// The report could not be read: what it discards is unknown.
    Unknown(String),
    /// Per deleted check, what it has.
    Known(Vec<Discard>),
}

/// One deleted check's results of the range.
#[derive(Debug, Clone, PartialEq)]
pub struct Discard {
    pub address: Address,
    /// Its line of the report, when it has results in the range.
    pub report: Option<ReportEntry>,
    /// About how many results that is (0 without results): an estimate.
    pub estimated: u64,
}

/// An object of the account a change's list of references names that is
/// no object of the project (found by `foreign.rs`): what it is and whose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Foreign {
    /// Its name, or an alert channel's type and address; `None` when it
    /// has nothing a person names it by.
    pub label: Option<String>,
    pub owner: Whose,
}

/// Whose an object of the account is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Whose {
    /// Another project's (or this project's, left out of its files).
    Project(String),
    /// Made by hand: no project claims it.
    Nobody,
    /// Its owner cannot be told (a project without an ownership record).
    Unknown,
}

/// `(kind, remote id)` of each such object to what it is.
pub type ForeignObjects = BTreeMap<(Kind, String), Foreign>;
