//! `--exclude` (issue 30): the opposite of `--target`. A change whose
//! address matches a pattern is left out, and so is every change of what
//! depends on it (references it, directly or through others): applying a
//! dependent without what it references could point it at nothing.

use std::collections::BTreeMap;

use monform_config::Desired;
use monform_model::{Address, AddressPattern};

use crate::plan::{Change, Excluded, ExcludedBy};

/// What else an excluded resource keeps out of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keep {
    /// Plan and apply: what references it (it would point at nothing new).
    Dependents,
    /// Destroy: what it references (the service refuses to delete an
    /// object in use, and the kept one would point at nothing).
    References,
}

/// Removes the excluded changes from `changes`; returns those that would
/// have done something, each with why it is excluded. `desired` is the
/// files (their reference graph).
pub(super) fn exclude(
    changes: &mut Vec<Change>,
    desired: &Desired,
    patterns: &[AddressPattern],
    keep: Keep,
) -> Vec<Excluded> {
    if patterns.is_empty() {
        return Vec::new();
    }
    let mut why: BTreeMap<Address, ExcludedBy> = BTreeMap::new();
    let addresses = changes.iter().map(|c| &c.address).chain(desired.resources.keys());
    for address in addresses {
        if let Some(pattern) = patterns.iter().find(|p| p.matches(address)) {
            why.entry(address.clone())
                .or_insert_with(|| ExcludedBy::Pattern(pattern.to_string()));
        }
    }
    // What references an excluded resource, transitively (edges a -> b:
    // `a` references `b`).
    let mut queue: Vec<Address> = why.keys().cloned().collect();
    while let Some(address) = queue.pop() {
        let linked = match keep {
            Keep::Dependents => desired.dependents(&address),
            Keep::References => desired.dependencies(&address),
        };
        for dependent in linked {
            if !why.contains_key(dependent) {
                let by = match keep {
                    Keep::Dependents => ExcludedBy::DependsOn(address.clone()),
                    Keep::References => ExcludedBy::KeptBy(address.clone()),
                };
                why.insert(dependent.clone(), by);
                queue.push(dependent.clone());
            }
        }
    }
    let mut excluded = Vec::new();
    changes.retain(|change| match why.get(&change.address) {
        Some(by) => {
            if !change.action.is_noop() {
                excluded.push(Excluded {
                    address: change.address.clone(),
                    action: change.action,
                    by: by.clone(),
                });
            }
            false
        }
        None => true,
    });
    excluded
}
