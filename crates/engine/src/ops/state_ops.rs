//! Changes to the state itself (`state rm`, `state mv`, `state migrate`):
//! the rules of what they may do, each under the project's lock.

use monform_api::Client;
use monform_config::Desired;
use monform_model::{Address, Kind};

use super::Refusal;
use crate::identity::{owned_by, remote_owner, retag_body, uses_tags};
use crate::state::{ResourceState, State, StateBackend};

/// What `state rm` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    /// The object's remote id (from the state, or the tagged object).
    pub remote_id: String,
    /// The project's ownership tag was removed from the object.
    pub untagged: bool,
    /// The address is still in the files.
    pub still_in_files: bool,
}

/// What `state mv` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub remote_id: String,
    /// The files name the old address and not the new one.
    pub files_name_old: bool,
}

/// What `state migrate` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Migrated {
    /// The target already holds this state.
    AlreadyThere {
        serial: u64,
    },
    Copied {
        addresses: usize,
        serial: u64,
    },
}

/// The refusal for an address `state` has no entry for, with a close one.
pub fn not_in_state(address: &Address, state: &State) -> Refusal {
    let known: Vec<&str> = state.resources.keys().map(String::as_str).collect();
    Refusal::NotInState {
        address: address.clone(),
        suggestion: monform_model::suggest(&address.to_string(), known.iter().copied()).map(str::to_owned),
    }
}

/// Whether `state rm` of `address` talks to the service (to remove the
/// object's ownership tag): only for kinds with tags.
pub fn state_rm_needs_service(address: &Address) -> bool {
    uses_tags(address.kind)
}

/// Stops managing the object at `address` without deleting it: its state
/// entry goes, and its ownership tag first (an object still tagged would
/// be claimed again). `client` is needed when [`state_rm_needs_service`].
pub async fn state_rm(
    project: &str,
    desired: &Desired,
    backend: &dyn StateBackend,
    client: Option<&Client>,
    address: &Address,
) -> Result<Removed, Refusal> {
    let command = format!("monform state rm {address}");
    let _lock = backend.lock(&command).map_err(Refusal::Lock)?;
    let mut state = backend.load(project).map_err(Refusal::State)?;
    let key = address.to_string();
    let entry = state.resources.get(&key).cloned();
    let mut untagged = None;
    if let Some(client) = client.filter(|_| state_rm_needs_service(address)) {
        untagged = untag(client, project, address, entry.as_ref()).await?;
    }
    if entry.is_none() && untagged.is_none() {
        return Err(not_in_state(address, &state));
    }
    if entry.is_some() {
        state.resources.remove(&key);
        state.serial += 1;
        backend.save(&state).map_err(Refusal::State)?;
    }
    Ok(Removed {
        remote_id: entry
            .map(|e| e.remote_id)
            .or_else(|| untagged.clone())
            .unwrap_or_default(),
        untagged: untagged.is_some(),
        still_in_files: desired.resources.contains_key(address),
    })
}

/// Removes the project's ownership tag from the object of `address`: its
/// remote id, or `None` when no object carries the tag.
async fn untag(
    client: &Client,
    project: &str,
    address: &Address,
    entry: Option<&ResourceState>,
) -> Result<Option<String>, Refusal> {
    let unreachable = |e| Refusal::Object {
        address: address.clone(),
        doing: "reach the object of",
        error: Box::new(e),
    };
    let remote = match entry {
        Some(entry) => client.get(address.kind, &entry.remote_id).await.map_err(unreachable)?,
        None => client
            .list_all(address.kind)
            .await
            .map_err(unreachable)?
            .into_iter()
            .find(|r| remote_owner(r).is_some_and(|(p, id)| p == project && id == address.id)),
    };
    let Some(remote) = remote.filter(|r| owned_by(r, project)) else {
        return Ok(None);
    };
    let body = retag_body(address.kind, &remote.body(), project, None);
    client
        .update(address.kind, &remote.id, &body)
        .await
        .map_err(|e| Refusal::Object {
            address: address.clone(),
            doing: "remove the ownership tag of",
            error: Box::new(e),
        })?;
    Ok(Some(remote.id))
}

/// Gives the state entry at `old` the address `new` (the next apply
/// rewrites the object's ownership tag, and nothing else). Offline: no
/// session's client is needed.
pub fn state_mv(
    project: &str,
    desired: &Desired,
    backend: &dyn StateBackend,
    old: &Address,
    new: &Address,
) -> Result<Moved, Refusal> {
    let invalid = |reason: String| Err(Refusal::InvalidMove(reason));
    if old.kind != new.kind {
        return invalid(format!(
            "{old} and {new} are of different kinds: an object cannot change kind"
        ));
    }
    if old.kind == Kind::Variable {
        return invalid(format!(
            "{old}: a variable's logical id is its key, which the API cannot rename; change the key in the files and apply (it is replaced)"
        ));
    }
    if old == new {
        return invalid(format!("{old} and {new} are the same address"));
    }
    let command = format!("monform state mv {old} {new}");
    let _lock = backend.lock(&command).map_err(Refusal::Lock)?;
    let mut state = backend.load(project).map_err(Refusal::State)?;
    if state.resources.contains_key(&new.to_string()) {
        return invalid(format!(
            "{new} is already in the state: `monform state rm {new}` first if it should go"
        ));
    }
    let entry = state
        .resources
        .remove(&old.to_string())
        .ok_or_else(|| not_in_state(old, &state))?;
    let remote_id = entry.remote_id.clone();
    state.resources.insert(new.to_string(), entry);
    state.serial += 1;
    backend.save(&state).map_err(Refusal::State)?;
    let files = &desired.resources;
    Ok(Moved {
        remote_id,
        files_name_old: files.contains_key(old) && !files.contains_key(new),
    })
}

/// Copies the project's state from `source` to `target`, both locked.
/// A serial never goes down: a target holding a state at the same serial
/// or a newer one is refused unless `force`, and then the copy gets the
/// next serial, so saved plans made against either are refused.
pub fn state_migrate(
    project: &str,
    source: &dyn StateBackend,
    target: &dyn StateBackend,
    command: &str,
    force: bool,
) -> Result<Migrated, Refusal> {
    let _source_lock = source.lock(command).map_err(Refusal::Lock)?;
    let _target_lock = target.lock(command).map_err(Refusal::Lock)?;
    let from = source.load(project).map_err(Refusal::State)?;
    if from.serial == 0 && from.resources.is_empty() {
        return Err(Refusal::NoState(source.describe()));
    }
    let existing = target.load(project).map_err(Refusal::State)?;
    let target_has_state = existing.serial > 0 || !existing.resources.is_empty();
    if target_has_state && existing.resources == from.resources && existing.salt == from.salt {
        return Ok(Migrated::AlreadyThere {
            serial: existing.serial,
        });
    }
    if target_has_state && existing.serial >= from.serial && !force {
        return Err(Refusal::NewerTarget {
            target: target.describe(),
            target_serial: existing.serial,
            serial: from.serial,
        });
    }
    let mut copy = from;
    copy.serial = if target_has_state && existing.serial >= copy.serial {
        existing.serial + 1
    } else {
        copy.serial
    };
    target.save(&copy).map_err(Refusal::State)?;
    Ok(Migrated::Copied {
        addresses: copy.resources.len(),
        serial: copy.serial,
    })
}
