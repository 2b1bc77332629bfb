//! The actual state: every kind listed once (limit 100, all pages, all
//! kinds at once), never one GET per object; the project's objects picked
//! out by the state's remote ids, then ownership tag or natural key.

use std::collections::{BTreeMap, HashMap};

use monform_api::{Client, Error, Remote};
use monform_config::Desired;
use monform_model::facts::natural_key;
use monform_model::{Address, Kind};
use rayon::prelude::*;

use crate::actual::{Actual, Clash};
use crate::identity::{remote_owner, uses_tags};
use crate::ownership::{Owner, Owners, is_record};
use crate::state::State;

/// Starts the listings [`fetch`] reads (`ops::prefetch`).
pub fn prefetch(client: &Client) {
    client.prefetch(Kind::ALL);
}

/// Lists every kind and picks out the project's objects.
pub async fn fetch(client: &Client, project: &str, desired: &Desired, state: &State) -> Result<Actual, Error> {
    let lists = futures_util::future::try_join_all(
        Kind::ALL
            .iter()
            .map(|&kind| async move { client.list_all(kind).await.map(|objects| (kind, objects)) }),
    )
    .await?;
    let recorded = Recorded::new(state);
    let moves = crate::declared::Moves::new(desired);
    let mut actual = Actual {
        owners: Owners::new(lists.iter().flat_map(|(_, objects)| objects.iter())),
        complete: true,
        ..Actual::default()
    };
    // Every kind's claimed objects, in claim order: the map of them is
    // built at once at the end, its nodes full (inserted one by one, a
    // third of 100,000 objects' map was slack).
    let mut owned: Vec<(Address, Remote)> = Vec::new();
    for (kind, objects) in lists {
        // In parallel: each claim reads the object's tags.
        let mut claimed: Vec<(Address, Claim, usize)> = objects
            .par_iter()
            .enumerate()
            .filter_map(|(i, remote)| {
                claim(kind, remote, project, desired, &recorded, &moves).map(|(address, by)| (address, by, i))
            })
            .collect();
        // The state's claim wins over a tag naming the same address: after
        // `state mv`, the moved object keeps the address. An object a
        // replace retired comes last: a duplicate of its replacement.
        claimed.sort_by_key(|(_, by, _)| *by);
        // Never another project's object, nor an ownership record.
        claimed.retain(|(address, _, i)| {
            let remote = &objects[*i];
            let owner = if uses_tags(kind) {
                return true;
            } else if is_record(kind, &remote.id) {
                Owner::Unknown("an ownership record".into())
            } else {
                actual.owners.owner(kind, &remote.id)
            };
            let theirs = match owner.project() {
                Some(p) => p != project,
                None => is_record(kind, &remote.id),
            };
            if theirs {
                actual.clashes.push(Clash {
                    address: address.clone(),
                    remote_id: remote.id.clone(),
                    owner,
                });
            }
            !theirs
        });
        // Objects move into `owned`, `duplicates` or `others`, never copied:
        // a large account's bodies are most of a plan's memory.
        let mut objects: Vec<Option<Remote>> = objects.into_iter().map(Some).collect();
        owned.reserve(claimed.len());
        owned.extend(
            claimed
                .into_iter()
                .filter_map(|(address, _, i)| objects[i].take().map(|remote| (address, remote))),
        );
        let others: Vec<Remote> = objects.into_iter().flatten().collect();
        if !others.is_empty() {
            actual.others.insert(kind, others);
        }
    }
    (actual.owned, actual.duplicates) = first_claims(owned);
    Ok(actual)
}

/// The first claim of each address (claims in claim order) and the later
/// ones, duplicates an interrupted apply left, in that order. Moved out in
/// place: a second list of 100,000 claims is about 10 MB.
fn first_claims(mut owned: Vec<(Address, Remote)>) -> (BTreeMap<Address, Remote>, Vec<(Address, Remote)>) {
    // Stable: equal addresses keep their claim order.
    owned.sort_by(|a, b| a.0.cmp(&b.0));
    let later: Vec<bool> = (0..owned.len())
        .map(|i| i > 0 && owned[i - 1].0 == owned[i].0)
        .collect();
    let mut index = 0;
    let duplicates = owned
        .extract_if(.., |_| {
            index += 1;
            later[index - 1]
        })
        .collect();
    (owned.into_iter().collect(), duplicates)
}

/// The state's addresses by (section, remote id), built once per fetch so
/// claiming stays linear in the number of objects.
pub(crate) struct Recorded<'s> {
    by_id: HashMap<(&'s str, &'s str), Option<Address>>,
    /// The objects replaces retired whose delete is not confirmed.
    retired: HashMap<(&'s str, &'s str), Address>,
}

/// What claimed an object for an address, in the order claims win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Claim {
    /// The state's remote id of the address.
    State,
    /// Its ownership tag, its natural key or (variables) its key.
    Identity,
    /// A replace retired it ([`crate::state::ResourceState::retired`]).
    Retired,
}

impl<'s> Recorded<'s> {
    pub(crate) fn new(state: &'s State) -> Recorded<'s> {
        let mut by_id = HashMap::with_capacity(state.resources.len());
        let mut retired = HashMap::new();
        for (address, entry) in &state.resources {
            let Some((section, _)) = address.split_once('.') else {
                continue;
            };
            // The first entry (in address order) with the id wins.
            by_id
                .entry((section, entry.remote_id.as_str()))
                .or_insert_with(|| address.parse::<Address>().ok());
            for id in &entry.retired {
                if let Ok(address) = address.parse::<Address>() {
                    retired.insert((section, id.as_str()), address);
                }
            }
        }
        Recorded { by_id, retired }
    }

    /// The address the state records for a remote object of `kind`.
    fn address(&self, kind: Kind, remote_id: &str) -> Option<Address> {
        self.by_id.get(&(kind.section(), remote_id)).cloned().flatten()
    }
}

/// The project's address of a remote object, if it is the project's, and
/// what claimed it. The state comes first: an object
/// whose entry `state mv` moved is the new address although its ownership
/// tag still names the old one (the next apply rewrites the tag). For kinds
/// with tags the state is believed only for an object tagged as this
/// project's, so a stale id can never claim an object made by hand.
pub(crate) fn claim(
    kind: Kind,
    remote: &Remote,
    project: &str,
    desired: &Desired,
    recorded: &Recorded<'_>,
    moves: &crate::declared::Moves<'_>,
) -> Option<(Address, Claim)> {
    let tag = uses_tags(kind).then(|| remote_owner(remote));
    if let Some(tag) = &tag
        && tag.as_ref().is_none_or(|(owner_project, _)| owner_project != project)
    {
        return None;
    }
    if let Some(address) = recorded.address(kind, &remote.id) {
        return Some((address, Claim::State));
    }
    if let Some(address) = recorded.retired.get(&(kind.section(), remote.id.as_str())) {
        return Some((address.clone(), Claim::Retired));
    }
    if let Some(Some((_, id))) = tag {
        // A tag naming an address the files declare moved: the new address.
        let tagged = Address::new(kind, id);
        return Some((moves.destination(&tagged).map_or(tagged, |(to, _)| to), Claim::Identity));
    }
    if kind == Kind::Variable {
        let address = Address::new(kind, remote.id.clone());
        return desired
            .resources
            .contains_key(&address)
            .then_some((address, Claim::Identity));
    }
    let key = natural_key(kind, &remote.body())?;
    desired
        .resources
        .values()
        .filter(|r| r.address.kind == kind)
        .find(|r| natural_key(kind, &r.resource.to_json()).as_deref() == Some(key.as_str()))
        .map(|r| (r.address.clone(), Claim::Identity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_claim_of_an_address_wins_and_later_ones_are_duplicates() {
        let remote = |id: &str| Remote::new(Kind::Check, &serde_json::json!({ "id": id }));
        let address = |id: &str| Address::new(Kind::Check, id);
        let claims = vec![
            (address("b"), remote("1")),
            (address("a"), remote("2")),
            (address("b"), remote("3")),
            (address("c"), remote("4")),
            (address("b"), remote("5")),
        ];
        let (owned, duplicates) = first_claims(claims);
        let owned: Vec<(String, String)> = owned.iter().map(|(a, r)| (a.id.clone(), r.id.clone())).collect();
        assert_eq!(
            owned,
            [("a", "2"), ("b", "1"), ("c", "4")].map(|(a, r)| (a.to_owned(), r.to_owned()))
        );
        let duplicates: Vec<(String, String)> = duplicates.iter().map(|(a, r)| (a.id.clone(), r.id.clone())).collect();
        assert_eq!(
            duplicates,
            [("b", "3"), ("b", "5")].map(|(a, r)| (a.to_owned(), r.to_owned()))
        );
    }
}
