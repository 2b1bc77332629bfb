//! The files' `moved` entries applied to the state: the same thing as
//! `monform state mv`, declared for review. Planning works on a copy of
//! the state with the entries moved (so the object is claimed at its new
//! address, as after `state mv`, and its tag rewritten by the tags-only
//! update); the apply records the moves first.

use std::collections::BTreeMap;

use monform_config::Declarations;
use monform_model::Address;

use crate::state::{Delta, State};

/// The state entries the declared moves rename, `(from, to)`, chains
/// followed; entries whose `from` is not in the state are no-ops.
/// A move onto an address the state already has is a conflict.
pub fn state_moves<'d>(
    state: &State,
    declarations: &'d Declarations,
) -> (Vec<(String, String)>, Vec<(&'d monform_config::Moved, String)>) {
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
pub fn moved_state(state: &State, moves: &[(String, String)]) -> State {
    let mut moved = state.clone();
    for (from, to) in moves {
        if let Some(entry) = moved.resources.remove(from) {
            moved.resources.insert(to.clone(), entry);
        }
    }
    moved
}

/// The delta that records the moves (the apply's first write).
pub fn moves_delta(state: &State, moves: &[(String, String)]) -> Option<Delta> {
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
