//! Which remote ids the state holds, so that a create's answered id is
//! never recorded for a second address of its kind. A service that hands
//! out an id twice (a lost write that rolled its counter back did) would
//! otherwise leave two addresses claiming one object, and a later plan
//! would update, replace or delete the wrong one.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use monform_model::Address;

use crate::state::{Delta, ResourceState, State};

/// How many state entries hold each remote id (as their object or a
/// retired one), counted by a hash of the section and the id: one lookup
/// a create, where reading the state each time made a cold apply of
/// 100,000 objects quadratic. Only a hit (a clash, or two hashes alike)
/// reads the state, to name the holder. Kept by `persist` as the state
/// changes.
#[derive(Debug, Default)]
pub(super) struct HeldIds(HashMap<u64, u32>);

/// An id the service answered for a create that the state already holds
/// for another address of the same kind: not recorded.
#[derive(Debug, thiserror::Error)]
#[error(
    "the service answered the create of {address} with id {id}, which the state already holds for {holder}: \
     not recorded, so that the two do not claim one object (a service that hands out an id twice; \
     look the object up in the service before the next apply)"
)]
pub(super) struct IdHeld {
    pub address: Address,
    pub holder: String,
    pub id: String,
}

impl HeldIds {
    pub(super) fn of(state: &State) -> HeldIds {
        let mut held = HeldIds::default();
        for (address, entry) in &state.resources {
            held.add(address, entry);
        }
        held
    }

    /// Before `delta` is applied to `state`: the ids of the entries it
    /// replaces or removes go, those of the entries it writes come.
    pub(super) fn follow(&mut self, state: &State, delta: &Delta) {
        for address in delta.remove.iter().chain(delta.set.keys()) {
            if let Some(entry) = state.resources.get(address) {
                self.take(address, entry);
            }
        }
        for (address, entry) in &delta.set {
            self.add(address, entry);
        }
    }

    /// The other address of `address`'s kind whose state entry holds `id`.
    pub(super) fn holder(&self, state: &State, address: &Address, id: &str) -> Option<String> {
        if id.is_empty() {
            return None;
        }
        let section = address.kind.section();
        let key = address.to_string();
        let own = state
            .resources
            .get(&key)
            .map_or(0, |e| held(e).filter(|i| *i == id).count());
        let all = self.0.get(&hash(section, id)).copied().unwrap_or(0);
        if all as usize <= own {
            return None;
        }
        let prefix = format!("{section}.");
        state
            .resources
            .range(prefix.clone()..)
            .take_while(|(other, _)| other.starts_with(&prefix))
            .find(|(other, entry)| **other != key && held(entry).any(|i| i == id))
            .map(|(other, _)| other.clone())
    }

    /// How many ids are counted (for tests: none once every entry went).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    fn add(&mut self, address: &str, entry: &ResourceState) {
        for id in held(entry) {
            *self.0.entry(hash(section_of(address), id)).or_default() += 1;
        }
    }

    fn take(&mut self, address: &str, entry: &ResourceState) {
        for id in held(entry) {
            let key = hash(section_of(address), id);
            if let Some(n) = self.0.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.0.remove(&key);
                }
            }
        }
    }
}

/// The section of a state entry's address (`checks` of `checks.home`).
fn section_of(address: &str) -> &str {
    address.split_once('.').map_or(address, |(section, _)| section)
}

/// The ids an entry holds: its object's and its retired ones'.
fn held(entry: &ResourceState) -> impl Iterator<Item = &str> {
    std::iter::once(entry.remote_id.as_str()).chain(entry.retired.iter().map(String::as_str))
}

fn hash(section: &str, id: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    (section, id).hash(&mut hasher);
    hasher.finish()
}
