//! The order changes apply in: a DAG over the plan's changes.

use std::collections::{BTreeSet, HashMap};

use monform_api::Remote;
use monform_config::{Desired, Target};
use monform_model::facts::{expand, facts, unique_values};
use monform_model::{Address, Kind};
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;
use serde_json::Value;

use crate::actual::Actual;
use crate::forms::{Names, file_form, lookup};
use crate::plan::{Action, Change};
/// The targets and everything they depend on, transitively.
pub(super) fn targeted(desired: &Desired, targets: &[Address]) -> BTreeSet<Address> {
    let mut keep: BTreeSet<Address> = BTreeSet::new();
    let mut queue: Vec<Address> = targets.to_vec();
    while let Some(address) = queue.pop() {
        if keep.insert(address.clone()) {
            queue.extend(desired.dependencies(&address).into_iter().cloned());
        }
    }
    keep
}

/// Kahn's algorithm, always taking the smallest ready index: a
/// deterministic dependency order. Nodes left in a cycle come last.
pub(super) fn stable_topological(graph: &DiGraph<usize, ()>, count: usize) -> (Vec<usize>, Vec<usize>) {
    let mut incoming = vec![0usize; count];
    for edge in graph.raw_edges() {
        incoming[graph[edge.target()]] += 1;
    }
    let mut ready: BTreeSet<usize> = (0..count).filter(|&i| incoming[i] == 0).collect();
    let mut sequence = Vec::with_capacity(count);
    while let Some(next) = ready.pop_first() {
        sequence.push(next);
        for neighbour in graph.neighbors(NodeIndex::new(next)) {
            let target = graph[neighbour];
            incoming[target] -= 1;
            if incoming[target] == 0 {
                ready.insert(target);
            }
        }
    }
    // What never became ready waits on a cycle: placed last, and named.
    let mut placed = vec![false; count];
    for &i in &sequence {
        placed[i] = true;
    }
    let stuck: Vec<usize> = (0..count).filter(|&i| !placed[i]).collect();
    sequence.extend(&stuck);
    (sequence, stuck)
}

/// A unique field's path and value (`unique_values`).
type UniqueValues = Vec<(String, Value)>;

/// The DAG over `changes`.
///
/// Linear in the changes and the account's objects: what the rules compare
/// (the deleted objects by kind and id, their unique values, which objects
/// reference what) is gathered once, not searched again for every change
/// (a cold apply of 100,000 checks spent minutes here).
pub(super) fn order(changes: &[Change], desired: &Desired, actual: &Actual, names: &Names) -> DiGraph<usize, ()> {
    let mut graph = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..changes.len()).map(|i| graph.add_node(i)).collect();
    let index: HashMap<(&Address, Action), usize> = changes
        .iter()
        .enumerate()
        .map(|(i, c)| ((&c.address, c.action), i))
        .collect();
    let find = |address: &Address, actions: &[Action]| actions.iter().find_map(|a| index.get(&(address, *a)).copied());
    let deletes: Vec<usize> = (0..changes.len())
        .filter(|&j| changes[j].action == Action::Delete)
        .collect();
    // The deletes of each kind with the unique values their objects hold, in
    // change order.
    let mut freed: HashMap<Kind, Vec<(usize, UniqueValues)>> = HashMap::new();
    if !deletes.is_empty() {
        let removed = Removed::new(actual);
        for &j in &deletes {
            let other = &changes[j];
            if let Some(remote) = removed.object(other) {
                let values = unique_values(other.address.kind, &remote.body());
                freed.entry(other.address.kind).or_default().push((j, values));
            }
        }
    }
    // Which owned objects reference each address, in the account's order:
    // only needed when something is deleted.
    let referrers = if deletes.is_empty() {
        HashMap::new()
    } else {
        referrers(actual, names)
    };
    for (i, change) in changes.iter().enumerate() {
        // Creates and updates come after the creation of what they reference.
        if matches!(
            change.action,
            Action::Create | Action::Update | Action::Replace | Action::Import
        ) && let Some(resource) = desired.resources.get(&change.address)
        {
            for reference in &resource.references {
                if let Target::Managed(target) = &reference.target
                    && let Some(j) = find(target, &[Action::Create, Action::Replace, Action::Import])
                    && j != i
                {
                    graph.update_edge(nodes[j], nodes[i], ());
                }
            }
        }
        // A create waits for the delete of an object holding a unique value it needs.
        if change.action == Action::Create
            && let Some(deleted) = freed.get(&change.address.kind)
            && let Some(resource) = desired.resources.get(&change.address)
        {
            let wanted = unique_values(change.address.kind, &resource.resource.to_json());
            for (j, values) in deleted {
                if values.iter().any(|u| wanted.contains(u)) {
                    graph.update_edge(nodes[*j], nodes[i], ());
                }
            }
        }
        // A delete comes after every change that stops referencing the deleted object.
        if change.action == Action::Delete {
            for other in referrers.get(&change.address).into_iter().flatten() {
                if let Some(j) = find(other, &[Action::Delete, Action::Update, Action::Replace])
                    && j != i
                {
                    graph.update_edge(nodes[j], nodes[i], ());
                }
            }
        }
    }
    graph
}

/// The owned objects that reference each address (each once, in the
/// account's order).
fn referrers<'a>(actual: &'a Actual, names: &Names) -> HashMap<Address, Vec<&'a Address>> {
    let found: Vec<(&Address, Vec<Address>)> = actual
        .owned
        .par_iter()
        .map(|(other, remote)| (other, actual_references(other.kind, remote, names)))
        .collect();
    let mut referrers: HashMap<Address, Vec<&Address>> = HashMap::new();
    for (other, refs) in found {
        for target in refs {
            let list = referrers.entry(target).or_default();
            if list.last() != Some(&other) {
                list.push(other);
            }
        }
    }
    referrers
}

/// The objects deletes may remove, by kind and remote id: the first owned
/// object (in address order), then the duplicates.
struct Removed<'a> {
    by_id: HashMap<(Kind, &'a str), &'a Remote>,
}

impl<'a> Removed<'a> {
    fn new(actual: &'a Actual) -> Removed<'a> {
        let mut by_id = HashMap::new();
        for remote in actual.owned.values().chain(actual.duplicates.iter().map(|(_, r)| r)) {
            by_id.entry((remote.kind, remote.id.as_str())).or_insert(remote);
        }
        Removed { by_id }
    }

    /// The remote object a delete removes.
    fn object(&self, change: &Change) -> Option<&'a Remote> {
        let id = change.remote_id.as_deref()?;
        self.by_id.get(&(change.address.kind, id)).copied()
    }
}

/// The project resources an actual object references.
pub(super) fn actual_references(kind: Kind, remote: &Remote, names: &Names) -> Vec<Address> {
    let value = file_form(kind, remote, names);
    let mut found = Vec::new();
    for field in &facts(kind, &value).refs {
        for parent in expand(&field.parent, &value) {
            let Some(v) = lookup(&value, &parent.key(&field.name)) else {
                continue;
            };
            let ids: Vec<&Value> = match v {
                Value::Array(items) => items.iter().collect(),
                single => vec![single],
            };
            found.extend(
                ids.into_iter()
                    .filter_map(Value::as_str)
                    .map(|id| Address::new(field.target, id)),
            );
        }
    }
    found
}

#[cfg(test)]
mod cycle_tests {
    use super::*;

    /// Changes that wait on each other are named, not slipped in some order.
    #[test]
    fn a_cycle_is_named_and_the_rest_is_ordered() {
        let mut graph = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..4).map(|i| graph.add_node(i)).collect();
        graph.add_edge(nodes[3], nodes[0], ());
        graph.add_edge(nodes[1], nodes[2], ());
        graph.add_edge(nodes[2], nodes[1], ());
        let (sequence, stuck) = stable_topological(&graph, 4);
        assert_eq!(stuck, vec![1, 2]);
        assert_eq!(sequence, vec![3, 0, 1, 2]);
        let (_, none) = stable_topological(&DiGraph::new(), 0);
        assert!(none.is_empty());
    }
}
