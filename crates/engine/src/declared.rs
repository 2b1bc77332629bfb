//! The files' `moved` entries applied to the state: the same thing as
//! `monform state mv`, declared for review. Planning works on a copy of
//! the state with the entries moved (so the object is claimed at its new
//! address, as after `state mv`, and its tag rewritten by the tags-only
//! update); the apply records the moves first.

use std::collections::BTreeMap;

use monform_api::Remote;
use monform_config::{Desired, Import, Moved};
use monform_model::Kind;

use crate::actual::Actual;
use crate::identity::{remote_owner, uses_tags};
use monform_model::Address;

use crate::state::{Delta, State};

/// A state entry's move: `(from, to)` state keys.
pub type StateMove = (String, String);

/// A `moved` entry onto an address the state already has: the entry, the
/// address (an item's, for a whole-`forEach` move) and that object's remote id.
pub type MoveConflict<'d> = (&'d Moved, Address, String);

/// The files' `moved` entries resolved against the state.
#[derive(Debug, Default)]
pub struct StateMoves<'d> {
    pub moves: Vec<StateMove>,
    pub conflicts: Vec<MoveConflict<'d>>,
    /// Entries that match nothing in the state and whose `to` has no state
    /// either: most likely a typo, or a move written before anything was
    /// applied. Harmless (entries live forever), so warned about only.
    pub idle: Vec<&'d Moved>,
}

/// The files' moves, chains followed, with what a whole-`forEach` entry
/// (`checks.api -> checks.backend-api`, Terraform's habit for a `for_each`
/// resource) means for each item.
pub struct Moves<'d> {
    resolved: BTreeMap<&'d Address, (&'d Address, &'d Moved)>,
    desired: &'d Desired,
}

impl<'d> Moves<'d> {
    pub fn new(desired: &'d Desired) -> Moves<'d> {
        Moves {
            resolved: desired.declarations.moves(),
            desired,
        }
    }

    /// Where the object at `from` ends up: an entry naming it, or one
    /// naming its whole definition when `from` is an item `base[key]` and
    /// the entry's `to` is a `forEach` definition of the files (`to[key]`).
    pub fn destination(&self, from: &Address) -> Option<(Address, &'d Moved)> {
        if let Some((to, entry)) = self.resolved.get(from) {
            return Some(((*to).clone(), entry));
        }
        let (base, key) = item_parts(&from.id)?;
        let (to, entry) = self.resolved.get(&Address::new(from.kind, base))?;
        (item_parts(&to.id).is_none() && is_for_each(self.desired, to))
            .then(|| (Address::item(to.kind, &to.id, key), *entry))
    }
}

/// `base[key]` as `(base, key)`; `None` for a plain logical id.
fn item_parts(id: &str) -> Option<(&str, &str)> {
    id.strip_suffix(']')?.split_once('[')
}

/// Whether the files define `address` as a `forEach` (or `forEachFile`)
/// definition: some `address[key]` is desired.
fn is_for_each(desired: &Desired, address: &Address) -> bool {
    let prefix = format!("{}[", address.id);
    desired
        .resources
        .range(Address::new(address.kind, prefix.clone())..)
        .next()
        .is_some_and(|(a, _)| a.kind == address.kind && a.id.starts_with(&prefix))
}

/// The state keys of the items of definition `address` (`address[...]`).
fn state_items<'s>(state: &'s State, address: &Address) -> Vec<&'s String> {
    let prefix = format!("{address}[");
    state
        .resources
        .range(prefix.clone()..)
        .map(|(k, _)| k)
        .take_while(|k| k.starts_with(&prefix))
        .collect()
}

/// The state entries the declared moves rename, `(from, to)`, chains
/// followed; entries whose `from` is not in the state are no-ops. An entry
/// naming a whole `forEach` definition whose items are in the state moves
/// each item. A move onto an address the state already has is a conflict.
pub fn state_moves<'d>(state: &State, desired: &'d Desired) -> StateMoves<'d> {
    let mut found = StateMoves::default();
    let push = |found: &mut StateMoves<'d>, entry: &'d Moved, from_key: String, to: Address| {
        let to_key = to.to_string();
        match state.resources.get(&to_key) {
            // A chain's middle step already moved: nothing here.
            Some(existing) if existing.remote_id == state.resources[&from_key].remote_id => {}
            Some(existing) => found.conflicts.push((entry, to, existing.remote_id.clone())),
            None => found.moves.push((from_key, to_key)),
        }
    };
    for (from, (to, entry)) in desired.declarations.moves() {
        let from_key = from.to_string();
        if state.resources.contains_key(&from_key) {
            push(&mut found, entry, from_key, to.clone());
            continue;
        }
        let items = if item_parts(&from.id).is_none() && item_parts(&to.id).is_none() && is_for_each(desired, to) {
            state_items(state, from)
        } else {
            Vec::new()
        };
        if items.is_empty() {
            if !state.resources.contains_key(&to.to_string()) && state_items(state, to).is_empty() {
                found.idle.push(entry);
            }
            continue;
        }
        for item in items {
            let key = &item[from_key.len() + 1..item.len() - 1];
            push(&mut found, entry, item.clone(), Address::item(to.kind, &to.id, key));
        }
    }
    found
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

/// The address an object at `to` moved from, when the files declare it.
pub fn moved_from(moves: &Moves<'_>, to: &Address, tagged: &Address) -> Option<Address> {
    moves
        .destination(tagged)
        .filter(|(end, _)| end == to)
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
