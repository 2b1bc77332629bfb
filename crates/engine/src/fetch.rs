//! The actual state: every kind listed once (limit 100, all pages, all
//! kinds at once), never one GET per object; the project's objects picked
//! out by the state's remote ids, then ownership tag or natural key.

use std::collections::{BTreeMap, HashMap};

use monform_api::{Client, Error, Remote};
use monform_config::Desired;
use monform_model::facts::natural_key;
use monform_model::{Address, Kind};

use crate::identity::{owner, uses_tags};
use crate::state::State;

/// What the account holds, and which of it is the project's.
#[derive(Debug, Default)]
pub struct Actual {
    /// The project's objects by address.
    pub owned: BTreeMap<Address, Remote>,
    /// Further objects claiming an address already taken (left by an
    /// interrupted apply); the next apply deletes them.
    pub duplicates: Vec<(Address, Remote)>,
    /// Every object of every kind, the project's or not.
    pub all: HashMap<Kind, Vec<Remote>>,
}

impl Actual {
    /// The address owning a remote object, by kind and remote id.
    pub fn address_of(&self, kind: Kind, remote_id: &str) -> Option<&Address> {
        self.owned
            .iter()
            .find(|(a, r)| a.kind == kind && r.id == remote_id)
            .map(|(a, _)| a)
    }
}

/// Lists every kind and picks out the project's objects.
pub async fn fetch(client: &Client, project: &str, desired: &Desired, state: &State) -> Result<Actual, Error> {
    let lists = futures_util::future::try_join_all(
        Kind::ALL
            .iter()
            .map(|&kind| async move { client.list_all(kind).await.map(|objects| (kind, objects)) }),
    )
    .await?;
    let mut actual = Actual::default();
    for (kind, objects) in lists {
        let mut claimed: Vec<(Address, bool, &Remote)> = objects
            .iter()
            .filter_map(|remote| {
                claim(kind, remote, project, desired, state).map(|(address, by_state)| (address, by_state, remote))
            })
            .collect();
        // The state's claim wins over a tag naming the same address: after
        // `state mv`, the moved object keeps the address.
        claimed.sort_by_key(|(_, by_state, _)| !*by_state);
        for (address, _, remote) in claimed {
            match actual.owned.entry(address) {
                std::collections::btree_map::Entry::Occupied(taken) => {
                    actual.duplicates.push((taken.key().clone(), remote.clone()));
                }
                std::collections::btree_map::Entry::Vacant(free) => {
                    free.insert(remote.clone());
                }
            }
        }
        actual.all.insert(kind, objects);
    }
    Ok(actual)
}

/// The project's address of a remote object, if it is the project's, and
/// whether the state's remote id said so. The state comes first: an object
/// whose entry `state mv` moved is the new address although its ownership
/// tag still names the old one (the next apply rewrites the tag). For kinds
/// with tags the state is believed only for an object tagged as this
/// project's, so a stale id can never claim an object made by hand.
fn claim(kind: Kind, remote: &Remote, project: &str, desired: &Desired, state: &State) -> Option<(Address, bool)> {
    let tag = uses_tags(kind).then(|| owner(&remote.body));
    if let Some(tag) = tag
        && tag.is_none_or(|(owner_project, _)| owner_project != project)
    {
        return None;
    }
    let recorded = state
        .resources
        .iter()
        .find(|(address, entry)| {
            entry.remote_id == remote.id && address.split_once('.').is_some_and(|(s, _)| s == kind.section())
        })
        .and_then(|(address, _)| address.parse::<Address>().ok());
    if let Some(address) = recorded {
        return Some((address, true));
    }
    if let Some(Some((_, id))) = tag {
        return Some((Address::new(kind, id), false));
    }
    if kind == Kind::Variable {
        let address = Address::new(kind, remote.id.clone());
        return desired.resources.contains_key(&address).then_some((address, false));
    }
    let key = natural_key(kind, &remote.body)?;
    desired
        .resources
        .values()
        .filter(|r| r.address.kind == kind)
        .find(|r| natural_key(kind, &r.resource.to_json()).as_deref() == Some(key.as_str()))
        .map(|r| (r.address.clone(), false))
}

/// An object claimed by the state whose ownership tag names another
/// logical id (or none): its entry was moved by `state mv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub address: Address,
    /// The logical id its tag names now.
    pub from: Option<String>,
}

impl Actual {
    /// The project's objects whose ownership tag does not name their
    /// address: the next apply rewrites their tag.
    pub fn moved(&self, project: &str) -> Vec<Moved> {
        self.owned
            .iter()
            .filter(|(address, _)| uses_tags(address.kind))
            .filter_map(|(address, remote)| {
                let tag = owner(&remote.body);
                (tag != Some((project, address.id.as_str()))).then(|| Moved {
                    address: address.clone(),
                    from: tag.map(|(_, id)| id.to_owned()),
                })
            })
            .collect()
    }
}
