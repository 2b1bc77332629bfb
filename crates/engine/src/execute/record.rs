//! What a completed change leaves behind: its entry in the state (or the
//! entry's removal), the fields the service did not keep, and its remote
//! id for the changes that refer to it.

use super::*;
use std::collections::BTreeMap;

/// How the object recorded came to be.
#[derive(Debug, Clone, Copy)]
pub(super) enum Made<'a> {
    /// Created, its id the service's answer; `retiring` is the object a
    /// create-first replace is about to delete, remembered until its
    /// delete is confirmed.
    Created { retiring: Option<&'a str> },
    /// Updated (or imported) by its id.
    Updated,
}

/// Saves what was applied, and reports fields the API did not keep. A
/// created object's id that the state holds for another address of its
/// kind is refused ([`IdHeld`]): the state keeps what it had.
pub(super) async fn record(
    shared: &Shared<'_>,
    resource: &DesiredResource,
    remote: &Remote,
    made: Made<'_>,
) -> Result<(), RunError> {
    let address = &resource.address;
    let mut state = shared.state.lock().await;
    let retiring = match made {
        Made::Created { retiring } => {
            let held = shared.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(holder) = held.holder(&state, address, &remote.id) {
                return Err(RunError::Held(IdHeld {
                    address: address.clone(),
                    holder,
                    id: remote.id.clone(),
                }));
            }
            retiring
        }
        Made::Updated => None,
    };
    shared
        .ids
        .lock()
        .await
        .insert(address.clone(), remote_ref(address.kind, remote));
    let desired = managed(address.kind, resource.resource.to_json());
    let secrets = secret_fingerprints(address.kind, &desired, &resource.sensitive, &state);
    {
        let returned = file_form(address.kind, remote, shared.ids.lock().await.names());
        let secret_paths: Vec<monform_model::FieldPath> =
            secrets.keys().map(|p| monform_model::FieldPath::parse(p)).collect();
        let lost: Vec<String> = differences(
            &desired,
            &|field| returned.get(field),
            facts(address.kind, &desired),
            &secret_paths,
        )
        .into_iter()
        // A value the service rewrote (case, order) is kept: verification
        // records it as the service's normal form.
        .filter(|d| !crate::normal::equivalent(&d.after, &d.before))
        .map(|d| d.path.to_string())
        .collect();
        if !lost.is_empty() {
            (shared.on_event)(Event::NotKept {
                address: address.clone(),
                fields: lost,
            });
        }
    }
    // The service rewrites as before: verification records anew.
    let before = state.resources.get(&address.to_string());
    let normal = before.map(|e| e.normal.clone()).unwrap_or_default();
    let mut retired = before.map(|e| e.retired.clone()).unwrap_or_default();
    if let Some(id) = retiring.filter(|id| !retired.iter().any(|r| r == id) && *id != remote.id) {
        retired.push(id.to_owned());
    }
    let mut entry = entry(shared, resource, &desired, remote, &state, secrets, normal);
    entry.retired = retired;
    let delta = Delta {
        target: None,
        set: [(address.to_string(), entry)].into(),
        ..Delta::default()
    };
    persist(shared, &mut state, delta)?;
    Ok(())
}

pub(super) async fn forget(shared: &Shared<'_>, address: &Address, change: &Change) -> Result<(), RunError> {
    if let Some(id) = &change.remote_id {
        deleted(shared, address, id).await?;
    }
    if change.reason != crate::plan::Reason::Duplicate {
        shared.ids.lock().await.remove(address);
    }
    Ok(())
}

/// The state after the object `id` of `address` is gone: the entry
/// removed when it was the entry's object, else only `id` out of its
/// `retired`. A duplicate's delete never drops the state of the object
/// that stays; the object's delete never drops the retired objects still
/// there (the entry goes on, naming one of them, which the next plan deletes).
pub(super) async fn deleted(shared: &Shared<'_>, address: &Address, id: &str) -> Result<(), StateError> {
    let mut state = shared.state.lock().await;
    let key = address.to_string();
    let Some(entry) = state.resources.get(&key) else {
        return Ok(());
    };
    if entry.remote_id == id && entry.retired.is_empty() {
        let delta = Delta {
            remove: vec![key],
            ..Delta::default()
        };
        return persist(shared, &mut state, delta);
    }
    let mut left = entry.clone();
    let listed = left.retired.len();
    left.retired.retain(|r| r != id);
    let mut delta = Delta::default();
    if left.remote_id == id {
        match left.retired.pop() {
            Some(other) => {
                left.remote_id = other;
                delta.set.insert(key, left);
            }
            None => delta.remove.push(key),
        }
    } else if left.retired.len() < listed {
        delta.set.insert(key, left);
    } else {
        return Ok(());
    }
    persist(shared, &mut state, delta)
}

/// The state's entry of `resource` as applied: `desired` is its managed
/// form, `remote` the object the service returned.
pub(super) fn entry(
    shared: &Shared<'_>,
    resource: &DesiredResource,
    desired: &Value,
    remote: &Remote,
    state: &State,
    secrets: BTreeMap<String, String>,
    normal: BTreeMap<String, String>,
) -> ResourceState {
    let kind = resource.address.kind;
    let mut fields = field_fingerprints(kind, desired, &resource.sensitive, state);
    let managed = {
        let mut sets = shared
            .field_sets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        fields.share_paths(&mut sets);
        sets.share(managed_names(desired))
    };
    ResourceState {
        remote_id: remote.id.clone(),
        version: remote.version(),
        applied: state.fingerprint(desired),
        secrets,
        prevent_destroy: resource.resource.prevent_destroy(),
        managed,
        fields,
        normal,
        retired: Vec::new(),
    }
}

/// The top-level fields of a desired value.
fn managed_names(desired: &Value) -> Vec<String> {
    desired
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// How other objects refer to this one: its id, or a private location's slug.
pub(super) fn remote_ref(kind: Kind, remote: &Remote) -> Value {
    if kind == Kind::PrivateLocation
        && let Some(slug) = remote.field("slugName")
    {
        return slug;
    }
    remote.id_value()
}

/// Remote ids by address, and the reverse (logical ids by remote id), kept
/// together as changes finish: reading a returned object in the files' form
/// never rebuilds the reverse map (that made a large apply quadratic).
#[derive(Default)]
pub(super) struct Ids {
    by_address: HashMap<Address, Value>,
    names: Names<'static>,
}

impl Ids {
    pub(super) fn get(&self, address: &Address) -> Option<&Value> {
        self.by_address.get(address)
    }

    pub(super) fn insert(&mut self, address: Address, id: Value) {
        if let Some(old) = self.by_address.get(&address) {
            self.names.remove(address.kind, old, &address.id);
        }
        self.names.insert(address.kind, &id, address.id.clone());
        self.by_address.insert(address, id);
    }

    pub(super) fn remove(&mut self, address: &Address) -> Option<Value> {
        let old = self.by_address.remove(address)?;
        self.names.remove(address.kind, &old, &address.id);
        Some(old)
    }

    pub(super) fn names(&self) -> &Names<'static> {
        &self.names
    }
}
