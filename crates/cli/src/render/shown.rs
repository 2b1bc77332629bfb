//! What `monform show` needs of a plan, kept in the saved plan file
//! (`plan --out`) beside what `apply PLANFILE` checks: every change with its
//! fields before and after as the plan showed them (secrets already masked
//! by the engine, as in `plan --format json`), and the addresses that stay.

use monform_engine::Discarded;
use monform_engine::{Action, Change, Conflict, FieldChange, Plan, Reason, SuggestedMove};
use monform_model::Address;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key of the saved plan file that holds it.
pub const KEY: &str = "shown";

/// The key of the saved plan file that holds the policies' part of the
/// plan as `plan --format json` has it: the findings `show` prints and the
/// `--policy-override`s `apply PLANFILE` honours (and nothing given later).
pub const POLICY_KEY: &str = "policy";

/// The overrides a saved plan was planned with (none without policies).
pub fn saved_overrides(file: &Value) -> Vec<String> {
    file[POLICY_KEY]["overrides"]
        .as_array()
        .map(|list| list.iter().filter_map(|o| o.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    environment: Option<String>,
    changes: Vec<ShownChange>,
    /// Addresses without changes: counted as unchanged, and the names a
    /// list of references is checked against.
    unchanged: Vec<String>,
    suggested_moves: Vec<ShownMove>,
    /// After a partial refresh, what it did not read (shown again by `show`).
    #[serde(default, skip_serializing_if = "is_full")]
    refreshed: monform_engine::Refreshed,
    /// The account's objects its lists of references name that are no
    /// object of the project: which and whose, as `plan` named them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    foreign: Vec<ShownForeign>,
}

#[derive(Serialize, Deserialize)]
struct ShownForeign {
    /// The kind's section (`alertChannels`).
    kind: String,
    id: String,
    #[serde(flatten)]
    foreign: monform_engine::Foreign,
}

fn is_full(refreshed: &monform_engine::Refreshed) -> bool {
    refreshed.mode == monform_engine::Refresh::All
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShownChange {
    address: String,
    action: Action,
    remote_id: Option<String>,
    from: Option<String>,
    reason: Reason,
    fields: Vec<ShownField>,
    unchanged_fields: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShownField {
    path: String,
    before: Option<Value>,
    after: Option<Value>,
    sensitive: bool,
    drift: bool,
    known_after_apply: bool,
    cleared: bool,
    /// Saved plans from before conflicts were told have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    conflict: Option<Conflict>,
}

#[derive(Serialize, Deserialize)]
struct ShownMove {
    from: String,
    to: String,
    reason: String,
}

impl Shown {
    pub fn of(plan: &Plan, environment: Option<String>) -> Shown {
        let field = |f: &FieldChange| ShownField {
            path: f.path.clone(),
            // The engine masks; a sensitive field keeps no value at all.
            before: f.before.clone().filter(|_| !f.sensitive),
            after: f.after.clone().filter(|_| !f.sensitive),
            sensitive: f.sensitive,
            drift: f.drift,
            known_after_apply: f.known_after_apply,
            cleared: f.cleared,
            conflict: f.conflict.clone(),
        };
        Shown {
            environment,
            refreshed: plan.refreshed,
            foreign: plan
                .foreign
                .iter()
                .map(|((kind, id), foreign)| ShownForeign {
                    kind: kind.section().to_owned(),
                    id: id.clone(),
                    foreign: foreign.clone(),
                })
                .collect(),
            changes: plan
                .changes
                .iter()
                .filter(|c| c.action != Action::Noop)
                .map(|c| ShownChange {
                    address: c.address.to_string(),
                    action: c.action,
                    remote_id: c.remote_id.clone(),
                    from: c.from.as_ref().map(Address::to_string),
                    reason: c.reason,
                    fields: c.fields.iter().map(field).collect(),
                    unchanged_fields: c.unchanged,
                })
                .collect(),
            unchanged: plan
                .changes
                .iter()
                .filter(|c| c.action == Action::Noop)
                .map(|c| c.address.to_string())
                .collect(),
            suggested_moves: plan
                .suggested_moves
                .iter()
                .map(|s| ShownMove {
                    from: s.from.to_string(),
                    to: s.to.to_string(),
                    reason: s.reason.clone(),
                })
                .collect(),
        }
    }

    pub fn environment(&self) -> Option<&str> {
        self.environment.as_deref()
    }

    /// The plan again, for the renderers `plan` uses. What it does not keep:
    /// the order (the renderers group by action) and the results deletes
    /// would discard (asked of the service when planning).
    pub fn plan(self, project: String, state_serial: u64) -> Result<Plan, String> {
        let address = |text: &str| {
            text.parse::<Address>()
                .map_err(|_| format!("`{text}` is not an address"))
        };
        let mut changes = Vec::with_capacity(self.changes.len() + self.unchanged.len());
        for c in self.changes {
            changes.push(Change {
                address: address(&c.address)?,
                action: c.action,
                remote_id: c.remote_id,
                from: c.from.as_deref().map(address).transpose()?,
                reason: c.reason,
                fields: c
                    .fields
                    .into_iter()
                    .map(|f| FieldChange {
                        path: f.path,
                        before: f.before,
                        after: f.after,
                        sensitive: f.sensitive,
                        drift: f.drift,
                        known_after_apply: f.known_after_apply,
                        cleared: f.cleared,
                        conflict: f.conflict,
                    })
                    .collect(),
                unchanged: c.unchanged_fields,
                remote_version: None,
                deferred: None,
            });
        }
        for a in &self.unchanged {
            changes.push(Change {
                address: address(a)?,
                action: Action::Noop,
                remote_id: None,
                from: None,
                reason: Reason::UpToDate,
                fields: Vec::new(),
                unchanged: 0,
                remote_version: None,
                deferred: None,
            });
        }
        let suggested_moves = self
            .suggested_moves
            .into_iter()
            .map(|m| {
                Ok(SuggestedMove {
                    from: address(&m.from)?,
                    to: address(&m.to)?,
                    reason: m.reason,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Plan {
            project,
            changes,
            order: Default::default(),
            state_serial,
            suggested_moves,
            discarded: Discarded::Nothing,
            cycle: Vec::new(),
            refreshed: self.refreshed,
            excluded: Vec::new(),
            // A kind this version does not know names nothing it shows.
            foreign: self
                .foreign
                .into_iter()
                .filter_map(|f| Some(((monform_model::Kind::from_section(&f.kind)?, f.id), f.foreign)))
                .collect(),
        })
    }
}
