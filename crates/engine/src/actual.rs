//! What the account holds, split into the project's objects, duplicates
//! and the rest: the fetcher's result (`fetch.rs`), which the differ,
//! declared entries and verification read.

use std::collections::{BTreeMap, HashMap};

use monform_api::Remote;
use monform_model::wire::IdType;
use monform_model::{Address, Kind};
use serde_json::Value;

use crate::identity::{remote_owner, uses_tags};
use crate::ownership::{Owner, Owners, RECORD_PREFIX, is_record};

/// What the account holds, and which of it is the project's.
#[derive(Debug, Default)]
pub struct Actual {
    /// The project's objects by address.
    pub owned: BTreeMap<Address, Remote>,
    /// Further objects claiming an address already taken (left by an
    /// interrupted apply); the next apply deletes them.
    pub duplicates: Vec<(Address, Remote)>,
    /// The account's other objects (made by hand or by other projects), by
    /// kind. Each listed object is in exactly one of `owned`, `duplicates`
    /// and `others`: nothing is held twice.
    pub others: HashMap<Kind, Vec<Remote>>,
    /// Who owns the objects of kinds without tags (`ownership`).
    pub owners: Owners,
    /// Objects the files would claim (by natural key or the state's id) that
    /// another project owns: the plan is refused.
    pub clashes: Vec<Clash>,
    /// The state's objects a partial refresh did not read (`refresh.rs`):
    /// believed to be as last applied, their drift unchecked. Never also
    /// in `owned`.
    pub unrefreshed: BTreeMap<Address, Unrefreshed>,
    /// Every kind was listed whole (`fetch`): an object not here is gone.
    pub complete: bool,
}

/// An object the project's files claim but another project owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    pub address: Address,
    pub remote_id: String,
    pub owner: Owner,
}

impl std::fmt::Display for Clash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if is_record(self.address.kind, &self.address.id) {
            return write!(
                f,
                "{}: variables named {RECORD_PREFIX}* are monform's ownership records; rename it",
                self.address
            );
        }
        write!(
            f,
            "{}: matches {} object {}, which {}; rename it in the files, or remove it from that project first",
            self.address,
            self.address.kind.section(),
            self.remote_id,
            self.owner.describe()
        )
    }
}

impl Actual {
    /// How many objects of `kind` the account holds, the project's or not
    /// (projects' ownership records are bookkeeping, not counted).
    pub fn count(&self, kind: Kind) -> usize {
        self.owned.keys().filter(|a| a.kind == kind).count()
            + self.unrefreshed.keys().filter(|a| a.kind == kind).count()
            + self.duplicates.iter().filter(|(a, _)| a.kind == kind).count()
            + self
                .others
                .get(&kind)
                .map_or(0, |others| others.iter().filter(|r| !is_record(kind, &r.id)).count())
    }

    /// The address owning a remote object, by kind and remote id.
    pub fn address_of(&self, kind: Kind, remote_id: &str) -> Option<&Address> {
        self.owned
            .iter()
            .find(|(a, r)| a.kind == kind && r.id == remote_id)
            .map(|(a, _)| a)
            .or_else(|| {
                self.unrefreshed
                    .iter()
                    .find(|(a, u)| a.kind == kind && u.remote_id == remote_id)
                    .map(|(a, _)| a)
            })
    }
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
                let tag = remote_owner(remote);
                let named = tag.as_ref().is_some_and(|(p, id)| p == project && *id == address.id);
                (!named).then(|| Moved {
                    address: address.clone(),
                    from: tag.map(|(_, id)| id),
                })
            })
            .collect()
    }
}

/// An object of the state the plan did not read: believed to be as last
/// applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrefreshed {
    pub remote_id: String,
    /// `updated_at` as the state recorded it.
    pub version: Option<String>,
    /// The files changed it since it was applied (only with
    /// `--refresh=none`: `changed` reads those).
    pub edited: bool,
}

impl Unrefreshed {
    /// The id as the service's bodies hold it: a number for kinds with
    /// integer ids, as references in a request body must be.
    pub fn id_value(&self, kind: Kind) -> Value {
        match (kind.id_type(), self.remote_id.parse::<serde_json::Number>()) {
            (IdType::Integer, Ok(number)) => Value::Number(number),
            _ => Value::String(self.remote_id.clone()),
        }
    }
}
