//! Adoption: the state entries of objects a project takes over (`import
//! --all-unmanaged`, `monform import ADDRESS ID`), as `apply` would have
//! recorded them.

use std::collections::{BTreeMap, HashMap};

use monform_api::Remote;
use monform_config::Desired;
use monform_model::Address;
use serde_json::Value;

use super::EnvVar;
use crate::forms::{field_fingerprints, managed};
use crate::state::{FieldSet, Fingerprints, ResourceState, State};

/// The state of a project that adopts `objects` (by address), given the
/// loaded files: each entry as `apply` would record it. A secret's
/// fingerprint is recorded when its value is known (the environment
/// variable is set, or the API returned it); otherwise the next plan shows
/// the secret as to be set.
pub fn adopted_state(
    project: &str,
    desired: &Desired,
    objects: &BTreeMap<Address, Remote>,
    env: &[EnvVar],
    lookup_env: &dyn Fn(&str) -> Option<String>,
) -> State {
    let mut state = State::new(project);
    let secrets_by_address: HashMap<&Address, Vec<&EnvVar>> = env.iter().fold(HashMap::new(), |mut map, var| {
        map.entry(&var.address).or_insert_with(Vec::new).push(var);
        map
    });
    for (address, remote) in objects {
        let Some(resource) = desired.resources.get(address) else {
            continue;
        };
        let desired_json = managed(address.kind, resource.resource.to_json());
        let mut secrets = BTreeMap::new();
        for var in secrets_by_address.get(address).into_iter().flatten() {
            let known = lookup_env(&var.name)
                .map(Value::String)
                .or_else(|| var.remote_value.clone());
            if let Some(value) = known {
                secrets.insert(var.field.clone(), state.fingerprint(&value));
            }
        }
        let applied = state.fingerprint(&desired_json);
        state.resources.insert(
            address.to_string(),
            ResourceState {
                remote_id: remote.id.clone(),
                version: remote.version(),
                applied,
                secrets,
                prevent_destroy: false,
                managed: desired_json
                    .as_object()
                    .map(|o| o.keys().cloned().collect())
                    .unwrap_or_default(),
                fields: field_fingerprints(address.kind, &desired_json, &[], &state),
                normal: BTreeMap::new(),
                retired: Vec::new(),
            },
        );
    }
    state.serial = 1;
    state
}

/// The state entry for one object adopted under `address` (`monform import ADDRESS ID`).
pub fn adopted_entry(state: &State, desired: &Desired, address: &Address, remote: &Remote) -> ResourceState {
    let desired_json = desired
        .resources
        .get(address)
        .map(|r| managed(address.kind, r.resource.to_json()))
        .unwrap_or(Value::Null);
    ResourceState {
        remote_id: remote.id.clone(),
        version: remote.version(),
        applied: state.fingerprint(&desired_json),
        // Unknown secrets: the next plan shows them as to be set.
        secrets: BTreeMap::new(),
        prevent_destroy: desired
            .resources
            .get(address)
            .is_some_and(|r| r.resource.prevent_destroy()),
        // Nothing was set by monform yet: no field is cleared by the next apply.
        managed: FieldSet::default(),
        // Nothing applied yet: no difference is drift until the first apply.
        fields: Fingerprints::default(),
        normal: BTreeMap::new(),
        retired: Vec::new(),
    }
}
