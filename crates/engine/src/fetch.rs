//! The actual state: every kind listed once (limit 100, all pages, all
//! kinds at once), never one GET per object; the project's objects picked
//! out by ownership tag, natural key or the state's remote ids.

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
        for remote in &objects {
            if let Some(address) = claim(kind, remote, project, desired, state) {
                match actual.owned.entry(address) {
                    std::collections::btree_map::Entry::Occupied(taken) => {
                        actual.duplicates.push((taken.key().clone(), remote.clone()));
                    }
                    std::collections::btree_map::Entry::Vacant(free) => {
                        free.insert(remote.clone());
                    }
                }
            }
        }
        actual.all.insert(kind, objects);
    }
    Ok(actual)
}

/// The project's address of a remote object, if it is the project's.
fn claim(kind: Kind, remote: &Remote, project: &str, desired: &Desired, state: &State) -> Option<Address> {
    if uses_tags(kind) {
        let (owner_project, id) = owner(&remote.body)?;
        return (owner_project == project).then(|| Address::new(kind, id));
    }
    let recorded = state
        .resources
        .iter()
        .find(|(address, entry)| {
            entry.remote_id == remote.id && address.split_once('.').is_some_and(|(s, _)| s == kind.section())
        })
        .and_then(|(address, _)| address.parse::<Address>().ok());
    if recorded.is_some() {
        return recorded;
    }
    if kind == Kind::Variable {
        let address = Address::new(kind, remote.id.clone());
        return desired.resources.contains_key(&address).then_some(address);
    }
    let key = natural_key(kind, &remote.body)?;
    desired
        .resources
        .values()
        .filter(|r| r.address.kind == kind)
        .find(|r| natural_key(kind, &r.resource.to_json()).as_deref() == Some(key.as_str()))
        .map(|r| r.address.clone())
}
