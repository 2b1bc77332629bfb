//! Verified applies (issue 20, item 5): after an apply, every object it
//! changed is read back (one list per kind changed) and compared with the
//! files the way a plan compares, so a write the service acknowledged but
//! did not keep fails the apply, naming the address and the field.

use std::collections::{BTreeMap, BTreeSet};

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
/// `plan` the one applied (the ids of what it deleted).
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
        .collect();
    let mut kinds: BTreeSet<Kind> = changed.iter().map(|(a, _)| a.kind).collect();
    // Checks and groups name private locations by slug: their list maps
    // slugs to ids, read only when a changed object names one the state
    // records (else it is a request per apply for nothing).
    let names_locations = changed.iter().any(|(address, _)| {
        desired.resources.get(address).is_some_and(|r| {
            r.resource.to_json()["privateLocations"]
                .as_array()
                .is_some_and(|l| !l.is_empty())
        })
    });
    let section = format!("{}.", Kind::PrivateLocation.section());
    if names_locations && state.resources.keys().any(|k| k.starts_with(&section)) {
        kinds.insert(Kind::PrivateLocation);
    }
    // Each changed object's remote id: a delete's from the plan, the
    // rest's from the state after the apply.
    let id_of = |address: &Address, action: Action| -> Option<String> {
        if action == Action::Delete {
            plan.changes
                .iter()
                .find(|c| c.address == *address && c.action == Action::Delete)
                .and_then(|c| c.remote_id.clone())
        } else {
            state.resources.get(&address.to_string()).map(|r| r.remote_id.clone())
        }
    };
    let lists = futures_util::future::try_join_all(kinds.iter().map(|&kind| {
        let ids: Vec<String> = changed
            .iter()
            .filter(|(a, _)| a.kind == kind)
            .filter_map(|(a, action)| id_of(a, *action))
            .collect();
        read_back(client, kind, ids, state)
    }))
    .await?;
    let by_id: BTreeMap<(Kind, &str), &Remote> = lists
        .iter()
        .flat_map(|(kind, objects)| objects.iter().map(move |o| ((*kind, o.id.as_str()), o)))
        .collect();
    let recorded: Vec<(Address, &str)> = state
        .resources
        .iter()
        .filter_map(|(address, entry)| Some((address.parse().ok()?, entry.remote_id.as_str())))
        .collect();
    let slugs = recorded.iter().filter_map(|(address, id)| {
        let slug = by_id.get(&(address.kind, *id))?.field("slugName")?;
        Some((address.kind, slug, address.id.clone()))
    });
    let ids = recorded
        .iter()
        .map(|(address, id)| (address.kind, Value::String((*id).to_owned()), address.id.clone()));
    let names = Names::from_pairs(ids.chain(slugs));
    let mut verification = Verification::default();
    for (address, action) in changed {
        verification.checked += 1;
        let id = id_of(address, *action);
        let held = id.as_deref().and_then(|id| by_id.get(&(address.kind, id)).copied());
        let problem = match (action, held, desired.resources.get(address)) {
            (Action::Delete, None, _) => None,
            (Action::Delete, Some(_), _) => Some("still exists after its delete".to_owned()),
            (_, None, _) => Some("not found in the service after the write".to_owned()),
            (_, Some(_), None) => None,
            (_, Some(remote), Some(resource)) => {
                let (problem, rewritten) = mismatch(
                    address.kind,
                    &resource.resource.to_json(),
                    &resource.sensitive,
                    remote,
                    &names,
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
    Ok(verification)
}

/// The objects of `kind` to compare: each of `ids` by its own GET when
/// that takes no more requests than listing the kind (pages of 100, the
/// state's count of the kind), else the whole listing. A small change to a
/// large project reads back only what it changed.
async fn read_back(client: &Client, kind: Kind, ids: Vec<String>, state: &State) -> Result<(Kind, Vec<Remote>), Error> {
    let section = format!("{}.", kind.section());
    let pages = state
        .resources
        .keys()
        .filter(|k| k.starts_with(&section))
        .count()
        .div_ceil(100);
    // Private locations map checks' slugs to ids: always listed whole.
    if kind == Kind::PrivateLocation || ids.len() > pages {
        return Ok((kind, client.list_all(kind).await?));
    }
    let found = futures_util::future::try_join_all(ids.iter().map(|id| client.get(kind, id))).await?;
    Ok((kind, found.into_iter().flatten().collect()))
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
