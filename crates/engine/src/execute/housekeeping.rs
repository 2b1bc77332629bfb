//! What an apply records besides the plan's changes: objects it needs no
//! change to but the state does not know yet, declared moves, and the
//! ownership tags of moved entries.

use super::*;
use std::collections::BTreeMap;

/// Records in the state the objects that need no change but that it does
/// not know yet (adopted after a crash, or after the state was lost), and
/// drops the entries of objects that no longer exist and are not wanted,
/// and the retired objects a whole listing no longer has.
pub(super) async fn refresh_noops(shared: &Shared<'_>, plan: &Plan, actual: &Actual) -> Result<(), ApplyError> {
    let mut state = shared.state.lock().await;
    // Entries of objects that are gone and no longer wanted are stale (an
    // apply killed between a delete and its state save leaves them).
    let remove = state
        .resources
        .keys()
        .filter(|key| {
            key.parse::<Address>().is_ok_and(|address| {
                !actual.owned.contains_key(&address) && !shared.desired.resources.contains_key(&address)
            })
        })
        .cloned()
        .collect();
    let mut delta = Delta {
        target: None,
        remove,
        set: gone_retired(&state, actual),
        ..Delta::default()
    };
    for change in plan.changes.iter().filter(|c| c.action.is_noop()) {
        let (Some(resource), Some(remote)) = (
            shared.desired.resources.get(&change.address),
            actual.owned.get(&change.address),
        ) else {
            continue;
        };
        let key = change.address.to_string();
        let known = state
            .resources
            .get(&key)
            // The version as planned: read again, every object's body would be scanned.
            .is_some_and(|r| r.remote_id == remote.id && r.version == change.remote_version && !r.fields.is_empty());
        if known {
            continue;
        }
        let desired = managed(change.address.kind, resource.resource.to_json());
        let secrets = secret_fingerprints(change.address.kind, &desired, &resource.sensitive, &state);
        let mut entry = entry(shared, resource, &desired, remote, &state, secrets, Default::default());
        entry.retired = match delta.set.get(&key).or(state.resources.get(&key)) {
            Some(before) => before.retired.clone(),
            None => Vec::new(),
        };
        delta.set.insert(key, entry);
    }
    if !delta.remove.is_empty() || !delta.set.is_empty() {
        persist(shared, &mut state, delta)?;
    }
    Ok(())
}

/// The entries whose retired objects (`ResourceState::retired`) are not
/// all in the account any more, without those: only after a whole listing
/// (a partial refresh reads no duplicates). Those still there are the
/// plan's duplicates, which this apply deletes.
fn gone_retired(state: &State, actual: &Actual) -> BTreeMap<String, ResourceState> {
    if !actual.complete {
        return BTreeMap::new();
    }
    let held: HashSet<(&Address, &str)> = actual.duplicates.iter().map(|(a, r)| (a, r.id.as_str())).collect();
    let mut set = BTreeMap::new();
    for (key, entry) in state.resources.iter().filter(|(_, e)| !e.retired.is_empty()) {
        let Ok(address) = key.parse::<Address>() else {
            continue;
        };
        let mut kept = entry.clone();
        kept.retired.retain(|id| held.contains(&(&address, id.as_str())));
        if kept.retired.len() < entry.retired.len() {
            set.insert(key.clone(), kept);
        }
    }
    set
}

/// Moves the state entries of the files' `moved` entries (planning saw
/// them moved already), before anything else is written.
pub(super) async fn record_moves(shared: &Shared<'_>, desired: &Desired) -> Result<(), ApplyError> {
    let mut state = shared.state.lock().await;
    let moves = crate::declared::state_moves(&state, desired).moves;
    if let Some(delta) = crate::declared::moves_delta(&state, &moves) {
        persist(shared, &mut state, delta)?;
    }
    Ok(())
}

/// Rewrites the ownership tag of the objects whose state entry `state mv`
/// moved and that need no other change (an update or a create writes the
/// tag anyway): a tags-only update, nothing else.
pub(super) async fn retag_moved(
    shared: &Shared<'_>,
    plan: &Plan,
    actual: &Actual,
    report: &mut Report,
) -> Result<(), ApplyError> {
    for moved in actual.moved(shared.project) {
        let address = &moved.address;
        let unchanged = plan.changes.iter().any(|c| &c.address == address && c.action.is_noop());
        let Some(remote) = actual.owned.get(address).filter(|_| unchanged) else {
            continue;
        };
        let tag = ownership_tag(shared.project, &address.id);
        let body = retag_body(address.kind, &remote.body(), shared.project, Some(&tag));
        match shared.client.update(address.kind, &remote.id, &body).await {
            Ok(updated) => {
                let mut state = shared.state.lock().await;
                let key = address.to_string();
                if let Some(entry) = state.resources.get(&key) {
                    let entry = ResourceState {
                        version: updated.version(),
                        ..entry.clone()
                    };
                    let delta = Delta {
                        target: None,
                        set: [(key, entry)].into(),
                        ..Delta::default()
                    };
                    persist(shared, &mut state, delta)?;
                }
                drop(state);
                (shared.on_event)(Event::Moved {
                    address: address.clone(),
                    from: moved.from.clone(),
                });
            }
            Err(error) => {
                let text = format!("cannot rewrite the ownership tag: {error}");
                (shared.on_event)(Event::Failed {
                    address: address.clone(),
                    action: Action::Update,
                    error: text.clone(),
                });
                report.failed.push((address.clone(), Action::Update, text));
            }
        }
    }
    Ok(())
}
