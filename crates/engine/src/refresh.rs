//! How much of the account a plan reads (`--refresh`): everything (the
//! fetcher, `fetch.rs`), only what the files changed since the last apply
//! (one GET by remote id each), or nothing (offline, from the state).
//!
//! The state records each resource's fingerprint as applied (`applied`,
//! and the salted fingerprints of its secrets). A resource whose files say
//! the same today is trusted to be as applied: it is neither read nor
//! compared, and its drift goes unseen. What the files changed, created
//! or removed is read, so a pull request's plan costs a request per object
//! it touches rather than a listing of the whole account. So is every
//! object a replace retired and whose delete is not confirmed
//! (`ResourceState::retired`): still there, it is a duplicate the plan
//! deletes, as a full plan's listing finds it.

use std::collections::{BTreeMap, BTreeSet};

use futures_util::StreamExt;
use monform_api::{Client, Error, Remote};
use monform_config::{Desired, Target};
use monform_model::{Address, Kind};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::actual::Actual;
pub use crate::actual::Unrefreshed;
use crate::forms::{managed, secret_fingerprints};
use crate::identity::{remote_owner, uses_tags};
use crate::ownership::{Owners, record_key};
use crate::state::State;

mod rolling;
pub use rolling::{Sweep, SweepRead, fetch_rolling};

/// How much of the account a plan reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Refresh {
    /// Every kind listed (today's behaviour): every drift is seen.
    #[default]
    All,
    /// Only the objects the files changed, created or removed since the
    /// last apply, one GET each; the rest is trusted to be as applied.
    Changed,
    /// Nothing: the plan is made from the state alone (offline).
    None,
    /// A rolling refresh within a request budget (`monform reconcile`,
    /// issue 48; `rolling.rs`): what the files changed and the sweep's
    /// priorities, then the next pages of the listings; the rest trusted.
    /// Without a sweep on the session, as `All`.
    Rolling,
}

impl Refresh {
    pub fn as_str(self) -> &'static str {
        match self {
            Refresh::All => "all",
            Refresh::Changed => "changed",
            Refresh::None => "none",
            Refresh::Rolling => "rolling",
        }
    }
}

/// The addresses a partial refresh reads, and those it trusts.
#[derive(Debug, Default)]
struct Selection {
    /// (address, remote id) to GET.
    read: Vec<(Address, String)>,
    trusted: BTreeMap<Address, Unrefreshed>,
    /// (address, remote id) of the objects replaces retired, to GET: those
    /// still there are the address's duplicates (`Actual::duplicates`).
    retired: Vec<(Address, String)>,
}

/// Whether the files changed a resource since it was applied: its
/// fingerprint, or any secret's, differs from the state's.
fn edited(desired: &Desired, address: &Address, state: &State, key: &str) -> bool {
    let (Some(resource), Some(entry)) = (desired.resources.get(address), state.resources.get(key)) else {
        return true;
    };
    let json = managed(address.kind, resource.resource.to_json());
    if state.fingerprint(&json) != entry.applied {
        return true;
    }
    secret_fingerprints(address.kind, &json, &resource.sensitive, state) != entry.secrets
}

/// Splits the state's objects into those to read and those to trust.
fn select(desired: &Desired, state: &State, mode: Refresh) -> Selection {
    let moved_to: BTreeSet<Address> = desired.declarations.moved.iter().map(|m| m.to.clone()).collect();
    let entries: Vec<(&String, &crate::state::ResourceState)> = state.resources.iter().collect();
    // Fingerprinting every resource is most of a partial refresh's own
    // work at 100,000: in parallel.
    let judged: Vec<(Address, Unrefreshed)> = entries
        .par_iter()
        .filter_map(|(key, entry)| {
            let address = key.parse::<Address>().ok()?;
            // A moved resource's tag still names its old address: read, so
            // the apply rewrites it.
            let changed = !desired.resources.contains_key(&address)
                || moved_to.contains(&address)
                || edited(desired, &address, state, key);
            let unrefreshed = Unrefreshed {
                remote_id: entry.remote_id.clone(),
                version: entry.version.clone(),
                edited: changed,
            };
            Some((address, unrefreshed))
        })
        .collect();
    let mut selection = Selection::default();
    for (address, unrefreshed) in judged {
        // A local kind has nothing to read: `trust_local` holds it.
        if unrefreshed.edited && mode == Refresh::Changed && !address.kind.is_local() {
            selection.read.push((address, unrefreshed.remote_id));
        } else {
            selection.trusted.insert(address, unrefreshed);
        }
    }
    if mode == Refresh::Changed {
        read_private_locations(desired, &mut selection);
        selection.retired = retired(state);
    }
    selection
}

/// Every object a replace retired and whose delete the service has not
/// confirmed, by its address (few: a lost or failed delete leaves them).
fn retired(state: &State) -> Vec<(Address, String)> {
    let mut retired = Vec::new();
    for (key, entry) in state.resources.iter().filter(|(_, e)| !e.retired.is_empty()) {
        let Ok(address) = key.parse::<Address>() else { continue };
        if address.kind.is_local() {
            continue;
        }
        for id in entry.retired.iter().filter(|id| **id != entry.remote_id) {
            retired.push((address.clone(), id.clone()));
        }
    }
    retired
}

/// The state's objects of local kinds (`Kind::is_local`: SLOs, which the
/// service has no API for) as unread objects, whatever the refresh: the
/// state is all there is of them, so a plan compares the files with what
/// the state recorded as applied (`differ/offline.rs`), an unchanged one is
/// a no-op and one gone from the files a delete (which sends nothing).
pub(crate) fn trust_local(desired: &Desired, state: &State, actual: &mut Actual) {
    let moved_to: BTreeSet<&Address> = desired.declarations.moved.iter().map(|m| &m.to).collect();
    for (key, entry) in &state.resources {
        let Ok(address) = key.parse::<Address>() else { continue };
        if !address.kind.is_local() || actual.unrefreshed.contains_key(&address) {
            continue;
        }
        let edited = !desired.resources.contains_key(&address)
            || moved_to.contains(&address)
            || edited(desired, &address, state, key);
        actual.owned.remove(&address);
        actual.unrefreshed.insert(
            address,
            Unrefreshed {
                remote_id: entry.remote_id.clone(),
                version: entry.version.clone(),
                edited,
            },
        );
    }
}

/// References to private locations are written with their slug, which the
/// state does not hold: a private location that a read or created resource
/// references is read too (there are few).
fn read_private_locations(desired: &Desired, selection: &mut Selection) {
    let reading: BTreeSet<Address> = selection.read.iter().map(|(a, _)| a.clone()).collect();
    let mut wanted = BTreeSet::new();
    for (address, resource) in &desired.resources {
        if selection.trusted.contains_key(address) {
            continue;
        }
        for reference in &resource.references {
            if let Target::Managed(target) = &reference.target
                && target.kind == Kind::PrivateLocation
                && !reading.contains(target)
            {
                wanted.insert(target.clone());
            }
        }
    }
    for address in wanted {
        if let Some(trusted) = selection.trusted.remove(&address) {
            selection.read.push((address, trusted.remote_id));
        }
    }
}

/// The actual state from a partial refresh: the selected objects read one
/// by one (with the project's ownership record, which an apply rewrites),
/// the others trusted from the state. `Refresh::None` reads nothing.
pub async fn fetch_partial(
    client: &Client,
    project: &str,
    desired: &Desired,
    state: &State,
    mode: Refresh,
) -> Result<Actual, Error> {
    let Selection { read, trusted, retired } = select(desired, state, mode);
    let mut actual = Actual {
        unrefreshed: trusted,
        ..Actual::default()
    };
    if mode == Refresh::None {
        return Ok(actual);
    }
    read_by_id(client, project, desired, ById { read, retired }, &mut actual, true).await?;
    Ok(actual)
}

/// What a partial refresh reads by id: (address, remote id) each.
struct ById {
    /// The address's own object, into `Actual::owned`.
    read: Vec<(Address, String)>,
    /// Objects a replace retired, into `Actual::duplicates`.
    retired: Vec<(Address, String)>,
}

/// Where an object read by id goes.
enum ReadInto {
    Owned(Address),
    Duplicate(Address),
    /// A declared import or the ownership record.
    Others,
}

/// Reads `by_id` one GET each, a few at a time, into `actual.owned` and
/// `actual.duplicates`; with `bookkeeping`, also the declared imports and
/// the project's ownership record (which an apply rewrites), into `others`
/// and `owners`. Not found: left out.
async fn read_by_id(
    client: &Client,
    project: &str,
    desired: &Desired,
    by_id: ById,
    actual: &mut Actual,
    bookkeeping: bool,
) -> Result<(), Error> {
    let owned = by_id.read.into_iter().map(|(a, id)| (a.kind, id, ReadInto::Owned(a)));
    let retired = by_id
        .retired
        .into_iter()
        .map(|(a, id)| (a.kind, id, ReadInto::Duplicate(a)));
    let mut wanted: Vec<(Kind, String, ReadInto)> = owned.chain(retired).collect();
    if bookkeeping {
        for import in &desired.declarations.imports {
            wanted.push((import.to.kind, import.id.clone(), ReadInto::Others));
        }
        wanted.push((Kind::Variable, record_key(project), ReadInto::Others));
    }
    // A few at a time, as the executor sends its changes.
    let read: Vec<(ReadInto, Option<Remote>)> = futures_util::stream::iter(wanted)
        .map(|(kind, id, into)| async move { client.get(kind, &id).await.map(|remote| (into, remote)) })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    // An object tagged as another project's (or none) is not this
    // project's, as the full fetch has it: its address is created.
    let tagged_ours = |address: &Address, remote: &Remote| {
        !uses_tags(address.kind) || remote_owner(remote).is_some_and(|(owner, _)| owner == project)
    };
    let mut others: Vec<Remote> = Vec::new();
    for (into, remote) in read {
        let Some(remote) = remote else { continue };
        match into {
            ReadInto::Owned(address) if tagged_ours(&address, &remote) => {
                actual.owned.insert(address, remote);
            }
            // The state's: this project made it (a kind without tags has
            // only the state's word, as `Recorded` gives it a full fetch).
            ReadInto::Duplicate(address) if tagged_ours(&address, &remote) => {
                actual.duplicates.push((address, remote));
            }
            ReadInto::Owned(_) | ReadInto::Duplicate(_) => {}
            ReadInto::Others => others.push(remote),
        }
    }
    if bookkeeping {
        actual.owners = Owners::new(others.iter());
        for remote in others {
            actual.others.entry(remote.kind).or_default().push(remote);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
