//! The files' `moved` entries applied to the state: the same thing as
//! `monform state mv`, declared for review. Planning works on a copy of
//! the state with the entries moved (so the object is claimed at its new
//! address, as after `state mv`, and its tag rewritten by the tags-only
//! update); the apply records the moves first.

use std::collections::BTreeMap;

use monform_api::Remote;
use monform_config::{Declarations, Desired, Import};
use monform_model::Kind;

use crate::fetch::Actual;
use crate::identity::{remote_owner, uses_tags};
use monform_model::Address;

use crate::state::{Delta, State};

/// A state entry's move: `(from, to)` state keys.
pub type StateMove = (String, String);

/// A `moved` entry onto an address the state already has, with that object's remote id.
pub type MoveConflict<'d> = (&'d monform_config::Moved, String);

/// The state entries the declared moves rename, `(from, to)`, chains
/// followed; entries whose `from` is not in the state are no-ops.
/// A move onto an address the state already has is a conflict.
pub fn state_moves<'d>(state: &State, declarations: &'d Declarations) -> (Vec<StateMove>, Vec<MoveConflict<'d>>) {
    let mut moves = Vec::new();
    let mut conflicts = Vec::new();
    for (from, (to, entry)) in declarations.moves() {
        let (from_key, to_key) = (from.to_string(), to.to_string());
        if !state.resources.contains_key(&from_key) {
            continue;
        }
        match state.resources.get(&to_key) {
            // A chain's middle step already moved: nothing here.
            Some(existing) if existing.remote_id == state.resources[&from_key].remote_id => {}
            Some(existing) => conflicts.push((entry, existing.remote_id.clone())),
            None => moves.push((from_key, to_key)),
        }
    }
    (moves, conflicts)
}

/// `state` with the moves made, for planning.
pub fn moved_state(state: &State, moves: &[StateMove]) -> State {
    let mut moved = state.clone();
    for (from, to) in moves {
        if let Some(entry) = moved.resources.remove(from) {
            moved.resources.insert(to.clone(), entry);
        }
    }
    moved
}

/// The delta that records the moves (the apply's first write).
pub fn moves_delta(state: &State, moves: &[StateMove]) -> Option<Delta> {
    let mut delta = Delta::default();
    for (from, to) in moves {
        if let Some(entry) = state.resources.get(from) {
            delta.remove.push(from.clone());
            delta.set.insert(to.clone(), entry.clone());
        }
    }
    (!delta.remove.is_empty()).then_some(delta)
}

/// Where the object of each moved address ends up, keyed by the address
/// its ownership tag names: for claiming by tag when the state has no entry.
pub fn tag_moves(declarations: &Declarations) -> BTreeMap<Address, Address> {
    declarations
        .moves()
        .into_iter()
        .map(|(from, (to, _))| (from.clone(), to.clone()))
        .collect()
}

/// The address an object at `to` moved from, when the files declare it.
pub fn moved_from(declarations: &Declarations, to: &Address, tagged: &Address) -> Option<Address> {
    declarations
        .moves()
        .get(tagged)
        .filter(|(end, _)| *end == to)
        .map(|_| tagged.clone())
}

/// The object an `import` entry adopts as `address`, when it is there to
/// adopt (neither the project's already nor another's).
pub fn import_target<'a>(desired: &Desired, actual: &'a Actual, address: &Address) -> Option<&'a Remote> {
    let import = desired.declarations.imports.iter().find(|i| &i.to == address)?;
    actual.others.get(&address.kind)?.iter().find(|r| r.id == import.id)
}

/// What is wrong with each `import` entry that cannot be planned: an id
/// the account does not have, an object of another kind, another
/// project's object, or one this project manages as another address.
pub fn import_problems<'d>(desired: &'d Desired, actual: &Actual, project: &str) -> Vec<(&'d Import, String)> {
    let mut problems = Vec::new();
    for import in &desired.declarations.imports {
        let kind = import.to.kind;
        let id = import.id.as_str();
        if actual.owned.get(&import.to).is_some_and(|r| r.id == id) {
            continue; // applied already: a no-op
        }
        if let Some((address, _)) = actual.owned.iter().find(|(a, r)| a.kind == kind && r.id == id) {
            problems.push((import, format!("the object {id} is already managed as {address}")));
            continue;
        }
        if let Some(remote) = actual.owned.get(&import.to) {
            problems.push((
                import,
                format!("{} already has an object (remote id {})", import.to, remote.id),
            ));
            continue;
        }
        let Some(remote) = actual.others.get(&kind).and_then(|o| o.iter().find(|r| r.id == id)) else {
            let elsewhere = Kind::ALL.iter().find(|&&k| {
                k != kind
                    && (actual.others.get(&k).is_some_and(|o| o.iter().any(|r| r.id == id))
                        || actual.owned.iter().any(|(a, r)| a.kind == k && r.id == id))
            });
            problems.push((
                import,
                match elsewhere {
                    Some(other) => format!("{id} is an object of {}, not of {}", other.section(), kind.section()),
                    None => format!("the account has no {} object with id {id}", kind.section()),
                },
            ));
            continue;
        };
        let theirs = if uses_tags(kind) {
            remote_owner(remote)
                .map(|(p, _)| p)
                .filter(|p| p != project)
                .map(|p| format!("project {p}"))
        } else {
            let owner = actual.owners.owner(kind, id);
            owner.project().filter(|p| *p != project).map(|_| owner.describe())
        };
        if let Some(theirs) = theirs {
            problems.push((import, format!("the object {id} belongs to {theirs}")));
        }
    }
    problems
}
