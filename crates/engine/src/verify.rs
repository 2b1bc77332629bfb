//! Verified applies (issue 20, item 5): after an apply, every object it
//! changed is read back (one list per kind changed) and compared with the
//! files the way a plan compares, so a write the service acknowledged but
//! did not keep fails the apply, naming the address and the field.

use std::collections::{BTreeMap, HashMap};

use monform_api::{Client, Error, Remote};
use monform_config::Desired;
use monform_model::facts::facts;
use monform_model::sensitive::mask_at;
use monform_model::{Address, FieldPath, Kind};
use serde_json::Value;

use crate::compare::differences;
use crate::forms::{ActualView, Names, managed, sensitive_paths};
use crate::normal::{self, NormalForm};
use crate::plan::{Action, Plan};
use crate::state::State;

/// What reading back found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Objects compared.
    pub checked: usize,
    /// Those that do not hold what was written: (address, what differs).
    pub failures: Vec<(Address, String)>,
    /// Values the service holds in its own form (case, order): they landed,
    /// and are recorded with `normal::save` so plans stop showing them.
    pub normal_forms: Vec<NormalForm>,
}

impl Verification {
    pub fn verified(&self) -> usize {
        self.checked - self.failures.len()
    }
}

/// Reads back the objects of `done` (what the apply changed) and compares
/// them with `desired`; `state` is the state after the apply (remote ids),
/// `plan` the one applied (the ids of what it deleted). Each object is
/// compared as its page arrives and dropped: a cold apply of 100,000
/// checks reads all of them back, and holding the listing beside the
/// files and the new state made the read-back the apply's peak.
pub async fn verify(
    client: &Client,
    plan: &Plan,
    done: &[(Address, Action)],
    desired: &Desired,
    state: &State,
) -> Result<Verification, Error> {
    let changed: Vec<&(Address, Action)> = done
        .iter()
        .filter(|(_, action)| !matches!(action, Action::Noop | Action::Move | Action::Forget))
        // A local kind (SLOs) has nothing in the service to read back.
        .filter(|(address, _)| !address.kind.is_local())
        .collect();
    // Each changed object's remote id: a delete's from the plan, the
    // rest's from the state after the apply.
    let deleted: HashMap<&Address, &str> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .filter_map(|c| Some((&c.address, c.remote_id.as_deref()?)))
        .collect();
    let id_of = |address: &Address, action: Action| -> Option<&str> {
        if action == Action::Delete {
            deleted.get(address).copied()
        } else {
            state.resources.get(&address.to_string()).map(|r| r.remote_id.as_str())
        }
    };
    let mut verification = Verification::default();
    // What to read back: kind -> remote id -> the changes with that id.
    let mut wanted: BTreeMap<Kind, Wanted> = BTreeMap::new();
    for (address, action) in changed.iter().map(|(a, action)| (a, *action)) {
        verification.checked += 1;
        match id_of(address, action) {
            Some(id) => wanted
                .entry(address.kind)
                .or_default()
                .entry(id)
                .or_default()
                .push((address, action)),
            None if action == Action::Delete => {}
            None => verification.failures.push((address.clone(), NOT_FOUND.to_owned())),
        }
    }
    // Checks and groups name private locations by slug: their list maps
    // slugs to ids, read when a location changed, or when the state
    // records one and a changed object names one (else it is a request
    // per apply for nothing).
    let section = format!("{}.", Kind::PrivateLocation.section());
    let names_locations = || {
        state.resources.keys().any(|k| k.starts_with(&section))
            && changed.iter().any(|(address, _)| {
                desired.resources.get(address).is_some_and(|r| {
                    r.resource.to_json()["privateLocations"]
                        .as_array()
                        .is_some_and(|l| !l.is_empty())
                })
            })
    };
    let mut locations = if wanted.contains_key(&Kind::PrivateLocation) || names_locations() {
        client.list_all(Kind::PrivateLocation).await?
    } else {
        Vec::new()
    };
    let recorded: Vec<(Address, &str)> = state
        .resources
        .iter()
        .filter_map(|(address, entry)| Some((address.parse().ok()?, entry.remote_id.as_str())))
        .collect();
    let slugs = recorded
        .iter()
        .filter(|(address, _)| address.kind == Kind::PrivateLocation)
        .filter_map(|(address, id)| {
            let slug = locations.iter().find(|l| l.id == *id)?.field("slugName")?;
            Some((address.kind, slug, address.id.clone()))
        });
    let ids = recorded
        .iter()
        .map(|(address, id)| (address.kind, Value::String((*id).to_owned()), address.id.clone()));
    let names = Names::from_pairs(ids.chain(slugs));
    drop(recorded);
    let compare = |verification: &mut Verification, wanted: &mut Wanted, objects: Vec<Remote>| {
        for remote in objects {
            for (address, action) in wanted.remove(remote.id.as_str()).unwrap_or_default() {
                compare_held(verification, address, action, &remote, desired, state, &names);
            }
        }
    };
    for (kind, mut ids) in wanted {
        if kind == Kind::PrivateLocation {
            compare(&mut verification, &mut ids, std::mem::take(&mut locations));
        } else {
            let pages = kind_pages(kind, state);
            // Each by its own GET when that takes no more requests than
            // listing the kind: a small change to a large project reads
            // back only what it changed.
            if ids.len() <= pages {
                let found = futures_util::future::try_join_all(ids.keys().map(|id| client.get(kind, id))).await?;
                compare(&mut verification, &mut ids, found.into_iter().flatten().collect());
            } else {
                client
                    .list_each(kind, |page| compare(&mut verification, &mut ids, page))
                    .await?;
            }
        }
        // What the service did not return.
        for (address, action) in ids.into_values().flatten() {
            if action != Action::Delete {
                verification.failures.push((address.clone(), NOT_FOUND.to_owned()));
            }
        }
    }
    // In the order of the changes, whatever order the pages came in.
    if verification.failures.len() > 1 {
        let order: HashMap<&Address, usize> = changed.iter().enumerate().map(|(i, (a, _))| (a, i)).collect();
        verification.failures.sort_by_key(|(a, _)| order.get(a).copied());
    }
    Ok(verification)
}

const NOT_FOUND: &str = "not found in the service after the write";

/// The changes to read back of one kind, by remote id.
type Wanted<'a> = HashMap<&'a str, Vec<(&'a Address, Action)>>;

/// Compares one changed object with what the service holds of it.
fn compare_held(
    verification: &mut Verification,
    address: &Address,
    action: Action,
    remote: &Remote,
    desired: &Desired,
    state: &State,
    names: &Names,
) {
    let problem = match (action, desired.resources.get(address)) {
        (Action::Delete, _) => Some("still exists after its delete".to_owned()),
        (_, None) => None,
        (_, Some(resource)) => {
            let (problem, rewritten) = mismatch(
                address.kind,
                &resource.resource.to_json(),
                &resource.sensitive,
                remote,
                names,
            );
            verification
                .normal_forms
                .extend(rewritten.into_iter().map(|(path, written, held)| NormalForm {
                    address: address.clone(),
                    path,
                    record: normal::record(state, &written, &held),
                }));
            problem
        }
    };
    if let Some(problem) = problem {
        verification.failures.push((address.clone(), problem));
    }
}

/// Pages of 100 a listing of `kind` takes, by the state's count of it.
fn kind_pages(kind: Kind, state: &State) -> usize {
    let section = format!("{}.", kind.section());
    state
        .resources
        .keys()
        .filter(|k| k.starts_with(&section))
        .count()
        .div_ceil(100)
}

/// The fields the service does not hold as the files say, or `None`; and
/// those it holds in its own form: (path, written, held).
fn mismatch(
    kind: Kind,
    desired: &Value,
    marked: &[FieldPath],
    remote: &Remote,
    names: &Names,
) -> (Option<String>, Vec<Rewritten>) {
    // Ignored fields are not the files' business after a create.
    let ignored = monform_model::lifecycle::of(desired).ignored_paths();
    let want = managed(kind, desired.clone());
    let view = ActualView::new(kind, remote, names);
    // Secrets the service may not return are not compared; values the
    // loader marked are compared, and masked when named.
    let mut sensitive = sensitive_paths(kind, &want, &[]);
    sensitive.extend(ignored.iter().cloned());
    let shown = sensitive_paths(kind, &want, marked);
    let show = |path: &FieldPath, value: &Value| mask_at(kind, &want, path, value, &shown);
    let (rewritten, lost): (Vec<_>, Vec<_>) = differences(&want, &|f| view.get(f), facts(kind, &want), &sensitive)
        .into_iter()
        .filter(|d| !monform_model::lifecycle::is_ignored(&d.path, &ignored))
        .partition(|d| normal::equivalent(&d.after, &d.before));
    let fields: Vec<String> = lost
        .iter()
        .map(|d| {
            let (held, written) = (show(&d.path, &d.before), show(&d.path, &d.after));
            format!("`{}` is {held} (written: {written})", d.path)
        })
        .collect();
    let problem = (!fields.is_empty()).then(|| format!("the change did not land: {}", fields.join(", ")));
    let rewritten = rewritten
        .into_iter()
        .map(|d| (d.path.to_string(), d.after, d.before))
        .collect();
    (problem, rewritten)
}

/// A field the service holds in its own form: (path, written, held).
type Rewritten = (String, Value, Value);
