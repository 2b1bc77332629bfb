//! The executor: applies a plan in dependency order, independent changes
//! concurrently, recording each change in the state as it completes (on the
//! `Recorder`'s thread: the executor never waits for a write). A create whose outcome is
//! unknown (dropped connection, timeout, 5xx) is looked up by its identity
//! before it is tried again, so nothing is ever created twice. A failure
//! stops the changes that depend on it, not the others. Deletes and secret
//! variables are read back before they count (`confirm.rs`): the service
//! may acknowledge a write it did not keep. A create answered with an id
//! the state holds for another address of the kind is not recorded
//! (`held.rs`): that change fails, as one the service refused.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use monform_api::{Client, Error, Remote};
use monform_config::{Desired, DesiredResource};
use monform_model::facts::{facts, natural_key, unique_values};
use monform_model::{Address, Kind};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::actual::Actual;
use crate::body::wire_body;
use crate::compare::differences;
use crate::forms::{Names, field_fingerprints, file_form, managed, secret_fingerprints};
use crate::identity::{ownership_tag, remote_owner, retag_body, uses_tags};
use crate::plan::{Action, Change, Plan};
use crate::state::{Delta, FieldSets, Recorder, ResourceState, State, StateBackend, StateError};
use monform_model::wire::{referenced_ids, to_wire};

mod confirm;
mod held;
mod housekeeping;
mod record;
#[cfg(test)]
mod tests;
use confirm::Unconfirmed;
use held::{HeldIds, IdHeld};
use housekeeping::{record_moves, refresh_noops, retag_moved};
use record::{Ids, Made, entry, forget, record, remote_ref};

#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Changes in flight at once.
    pub parallelism: usize,
    /// Set to stop starting new changes (SIGINT); those in flight finish.
    pub stop: Arc<AtomicBool>,
    /// The service and account applied to, recorded in the state when it
    /// is another than the state's (`State::target`); `None` leaves it.
    pub target: Option<crate::state::Target>,
}

impl Default for ApplyOptions {
    fn default() -> ApplyOptions {
        ApplyOptions {
            parallelism: 8,
            stop: Arc::new(AtomicBool::new(false)),
            target: None,
        }
    }
}

/// Progress, for the CLI to render.
#[derive(Debug, Clone)]
pub enum Event {
    Started {
        address: Address,
        action: Action,
    },
    Done {
        address: Address,
        action: Action,
    },
    Failed {
        address: Address,
        action: Action,
        error: String,
    },
    Skipped {
        address: Address,
        action: Action,
        because: String,
    },
    /// The API did not keep what was sent for these fields.
    NotKept {
        address: Address,
        fields: Vec<String>,
    },
    /// A create's outcome was unknown and the object was found and adopted.
    Adopted {
        address: Address,
    },
    /// The ownership tag was rewritten after `state mv` (`from`: the
    /// logical id the tag named).
    Moved {
        address: Address,
        from: Option<String>,
    },
}

#[derive(Debug, Default)]
pub struct Report {
    pub done: Vec<(Address, Action)>,
    pub failed: Vec<(Address, Action, String)>,
    pub skipped: Vec<(Address, Action, String)>,
    pub interrupted: bool,
    /// The run stopped because the service stopped answering (the client's
    /// circuit breaker opened): what was not started is in `skipped`.
    pub unreachable: bool,
}

impl Report {
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty() && !self.interrupted
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    State(#[from] StateError),
}

struct Shared<'a> {
    client: &'a Client,
    project: &'a str,
    desired: &'a Desired,
    state: Mutex<State>,
    /// Remote ids (or slugs for private locations) by address, as known now.
    ids: Mutex<Ids>,
    on_event: &'a (dyn Fn(Event) + Sync),
    /// Where each change of `state` goes to be written.
    recorder: Recorder,
    /// Replaces made create-first: the old objects, deleted once every
    /// other change is done (dependents have moved to the new ones by then).
    retired: std::sync::Mutex<Vec<(Address, String)>>,
    /// The recorded entries' field names and paths, shared.
    field_sets: std::sync::Mutex<FieldSets>,
    /// The remote ids `state` holds, kept with it (`persist`).
    held: std::sync::Mutex<HeldIds>,
}

/// Applies `delta` to `state` (with the next serial) and queues it to be written.
fn persist(shared: &Shared<'_>, state: &mut State, mut delta: Delta) -> Result<(), StateError> {
    state.serial += 1;
    delta.serial = state.serial;
    shared
        .held
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .follow(state, &delta);
    state.apply(&delta);
    shared.recorder.record(delta)
}

/// What an apply works on.
pub struct ApplyInput<'a> {
    pub client: &'a Client,
    pub plan: &'a Plan,
    pub desired: &'a Desired,
    pub actual: &'a Actual,
    pub backend: &'a dyn StateBackend,
}

/// Applies the plan, recording every change in the state as it completes.
pub async fn apply(
    input: ApplyInput<'_>,
    state: State,
    options: &ApplyOptions,
    on_event: &(dyn Fn(Event) + Sync),
) -> Result<(Report, State), ApplyError> {
    let ApplyInput {
        client,
        plan,
        desired,
        actual,
        backend,
    } = input;
    let mut ids = Ids::default();
    for (address, remote) in &actual.owned {
        ids.insert(address.clone(), remote_ref(address.kind, remote));
    }
    // Objects a partial refresh trusted: their ids as the state has them.
    for (address, unrefreshed) in &actual.unrefreshed {
        ids.insert(address.clone(), unrefreshed.id_value(address.kind));
    }
    let recorder = Recorder::start(backend.writer(&state)?);
    let mut state = state;
    if let Some(target) = options.target.as_ref().filter(|t| state.target.as_ref() != Some(*t)) {
        // First, so that a plan made while this apply runs, or after it
        // failed half-way, already compares with where it went.
        state.serial += 1;
        let delta = Delta {
            serial: state.serial,
            target: Some(target.clone()),
            ..Delta::default()
        };
        state.apply(&delta);
        recorder.record(delta)?;
    }
    let held = std::sync::Mutex::new(HeldIds::of(&state));
    let shared = Shared {
        client,
        project: &plan.project,
        desired,
        held,
        state: Mutex::new(state),
        ids: Mutex::new(ids),
        on_event,
        recorder,
        retired: std::sync::Mutex::new(Vec::new()),
        field_sets: std::sync::Mutex::default(),
    };
    let create_first: HashSet<usize> = (0..plan.changes.len())
        .filter(|&i| creates_first(&plan.changes[i], desired, actual))
        .collect();
    record_moves(&shared, desired).await?;
    refresh_noops(&shared, plan, actual).await?;
    let mut report = Report::default();
    retag_moved(&shared, plan, actual, &mut report).await?;
    // A move alone is done once its state entry (and its tag) moved: the
    // summary counts it with the rest.
    for change in plan.changes.iter().filter(|c| c.action == Action::Move) {
        if !report.failed.iter().any(|(address, ..)| *address == change.address) {
            report.done.push((change.address.clone(), Action::Move));
        }
    }
    // The plan's own order: the differ lists changes in dependency order
    // (`ops` refuses a plan with a cycle before it gets here).
    let order: Vec<usize> = (0..plan.changes.len())
        .filter(|&i| !plan.changes[i].action.is_noop())
        .collect();
    let mut finished: HashSet<usize> = HashSet::new();
    let mut failed: HashSet<usize> = HashSet::new();
    // A deque: changes start mostly from the front, and removing there
    // from a vector moved the whole rest every time (quadratic at 100,000).
    let mut pending: VecDeque<usize> = order.into();
    let mut running = futures_util::stream::FuturesUnordered::new();
    use futures_util::StreamExt;
    loop {
        // Start every change whose prerequisites are all finished.
        let mut i = 0;
        // Nothing new starts once the service stopped answering: it would
        // only fail, after its retries, one change after another.
        let halted = || options.stop.load(Ordering::SeqCst) || client.unreachable();
        while i < pending.len() && running.len() < options.parallelism.max(1) && !halted() {
            let index = pending[i];
            let prerequisites = plan.prerequisites(index);
            if let Some(blocker) = prerequisites.iter().find(|p| failed.contains(p)) {
                let change = &plan.changes[index];
                let because = format!("{} failed", plan.changes[*blocker].address);
                on_event(Event::Skipped {
                    address: change.address.clone(),
                    action: change.action,
                    because: because.clone(),
                });
                report.skipped.push((change.address.clone(), change.action, because));
                failed.insert(index);
                pending.remove(i);
                i = 0;
                continue;
            }
            if prerequisites
                .iter()
                .all(|p| finished.contains(p) || plan.changes[*p].action.is_noop())
            {
                pending.remove(i);
                let change = &plan.changes[index];
                on_event(Event::Started {
                    address: change.address.clone(),
                    action: change.action,
                });
                let shared = &shared;
                let create_first = create_first.contains(&index);
                running.push(async move { (index, run(shared, change, create_first).await) });
            } else {
                i += 1;
            }
        }
        let Some((index, result)) = running.next().await else {
            break;
        };
        let change = &plan.changes[index];
        match result {
            Ok(()) => {
                finished.insert(index);
                on_event(Event::Done {
                    address: change.address.clone(),
                    action: change.action,
                });
                report.done.push((change.address.clone(), change.action));
            }
            Err(RunError::State(error)) => return Err(error.into()),
            Err(failure) => {
                failed.insert(index);
                let text = failure.to_string();
                on_event(Event::Failed {
                    address: change.address.clone(),
                    action: change.action,
                    error: text.clone(),
                });
                report.failed.push((change.address.clone(), change.action, text));
            }
        }
    }
    drop(running);
    // Checked whether or not changes were left: the service may go away
    // while the last ones are in flight, and the user must hear why they
    // failed all the same.
    report.unreachable = client.unreachable() && !options.stop.load(Ordering::SeqCst);
    if pending.is_empty() && !report.unreachable {
        delete_retired(&shared, &mut report).await?;
    } else {
        report.interrupted = true;
        let because = if report.unreachable {
            "not started: the service is unreachable"
        } else {
            "interrupted"
        };
        for index in pending {
            let change = &plan.changes[index];
            report
                .skipped
                .push((change.address.clone(), change.action, because.into()));
        }
    }
    let Shared { state, recorder, .. } = shared;
    let state = state.into_inner();
    recorder.finish(&state)?;
    // The service learns which objects without tags are the project's, so
    // no other project adopts or changes them.
    let current = actual.owners.records.get(&state.project);
    if let Err(error) = crate::ownership::write_record(client, &state, current).await {
        let address = Address::new(Kind::Variable, crate::ownership::record_key(&state.project));
        let text = format!("writing the project's ownership record: {error}");
        on_event(Event::Failed {
            address: address.clone(),
            action: Action::Update,
            error: text.clone(),
        });
        report.failed.push((address, Action::Update, text));
    }
    Ok((report, state))
}

/// Why a change failed: the service (the change fails, the apply goes
/// on), the state's write (the apply stops), or an id the service
/// answered that the state holds for another address (the change fails).
enum RunError {
    Api(Unconfirmed),
    State(StateError),
    Held(IdHeld),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Api(error) => error.fmt(f),
            RunError::State(error) => error.fmt(f),
            RunError::Held(error) => error.fmt(f),
        }
    }
}

impl From<Error> for RunError {
    fn from(e: Error) -> RunError {
        RunError::Api(Unconfirmed::Api(e))
    }
}

impl From<Unconfirmed> for RunError {
    fn from(e: Unconfirmed) -> RunError {
        RunError::Api(e)
    }
}

impl From<StateError> for RunError {
    fn from(e: StateError) -> RunError {
        RunError::State(e)
    }
}

/// Whether a replace creates the new object before deleting the old one
/// (as Terraform's `create_before_destroy`): so checks keep running, and so
/// what uses the object (checks using a private location) can move to the
/// new one before the old is deleted, which the API requires. Not when the
/// two would hold the same unique value (the API refuses the create), nor
/// for variables, whose key is their id, nor when the old object references
/// others: deleting it last would hold up their deletes.
fn creates_first(change: &Change, desired: &Desired, actual: &Actual) -> bool {
    let kind = change.address.kind;
    if change.action != Action::Replace || kind == Kind::Variable {
        return false;
    }
    let (Some(resource), Some(old)) = (
        desired.resources.get(&change.address),
        actual.owned.get(&change.address),
    ) else {
        return false;
    };
    let wanted = unique_values(kind, &resource.resource.to_json());
    let old = old.body();
    let held = unique_values(kind, &old);
    referenced_ids(kind, &old).is_empty() && !wanted.iter().any(|u| held.contains(u))
}

/// Deletes the old objects of create-first replaces, each read back.
/// Failures are reported; an old object left behind stays in its entry's
/// `retired` (and, for kinds with tags, carries the project's tag), so the
/// next plan deletes it as a duplicate.
async fn delete_retired(shared: &Shared<'_>, report: &mut Report) -> Result<(), StateError> {
    let retired = std::mem::take(&mut *shared.retired.lock().unwrap_or_else(|e| e.into_inner()));
    for (address, id) in retired {
        match confirm::delete(shared.client, address.kind, &id).await {
            Ok(()) => record::deleted(shared, &address, &id).await?,
            Err(error) => {
                let text = format!("deleting the replaced object {id}: {error}");
                (shared.on_event)(Event::Failed {
                    address: address.clone(),
                    action: Action::Replace,
                    error: text.clone(),
                });
                report.failed.push((address, Action::Replace, text));
            }
        }
    }
    Ok(())
}

async fn run(shared: &Shared<'_>, change: &Change, create_first: bool) -> Result<(), RunError> {
    let address = &change.address;
    match change.action {
        Action::Noop | Action::Move => Ok(()),
        Action::Delete => {
            match &change.remote_id {
                Some(id) if confirm::reads_back(change) => confirm::delete(shared.client, address.kind, id).await?,
                Some(id) => shared.client.delete(address.kind, id).await?,
                None => {}
            }
            forget(shared, address, change).await
        }
        Action::Create => create(shared, resource(shared, address)?, None).await,
        Action::Replace if create_first => {
            let old = change.remote_id.as_deref();
            create(shared, resource(shared, address)?, old).await?;
            if let Some(old) = old {
                let mut retired = shared.retired.lock().unwrap_or_else(|e| e.into_inner());
                retired.push((address.clone(), old.to_owned()));
            }
            Ok(())
        }
        Action::Replace => {
            if let Some(id) = &change.remote_id {
                confirm::delete(shared.client, address.kind, id).await?;
            }
            create(shared, resource(shared, address)?, None).await
        }
        Action::Forget => {
            if let Some(id) = &change.remote_id
                && uses_tags(address.kind)
                && let Some(remote) = shared.client.get(address.kind, id).await?
            {
                let body = retag_body(address.kind, &remote.body(), shared.project, None);
                shared.client.update(address.kind, id, &body).await?;
            }
            // Kinds without tags: the ownership record is rewritten from the state.
            forget(shared, address, change).await
        }
        Action::Update | Action::Import => {
            let resource = resource(shared, address)?;
            let mut body = body_for(shared, resource).await;
            clear_removed_fields(shared, change, &mut body).await;
            let id = change.remote_id.clone().unwrap_or_default();
            let ignored = resource.resource.lifecycle().ignored_paths();
            if !ignored.is_empty() {
                // One GET, only when a nested field or `tags` is ignored.
                let remote = match crate::body::update_needs_remote(resource, &ignored) {
                    true => shared.client.get(address.kind, &id).await?.map(|r| r.body()),
                    false => None,
                };
                crate::body::drop_ignored(shared.project, resource, &ignored, &mut body, remote.as_ref());
            }
            let mut remote = shared.client.update(address.kind, &id, &body).await?;
            if confirm::secret_variable(address.kind, &body) {
                remote = confirm::secret(shared.client, &id, &body, remote).await?;
            }
            record(shared, resource, &remote, Made::Updated).await
        }
    }
}

/// Fields the files no longer set but monform did: sent empty so the API
/// clears them (updates keep the fields a body leaves out).
async fn clear_removed_fields(shared: &Shared<'_>, change: &Change, body: &mut Value) {
    let cleared: serde_json::Map<String, Value> = change
        .fields
        .iter()
        .filter(|f| f.cleared)
        .map(|f| {
            let empty = if f.before.as_ref().is_some_and(Value::is_array) {
                Value::Array(Vec::new())
            } else {
                Value::Null
            };
            (f.path.clone(), empty)
        })
        .collect();
    if cleared.is_empty() {
        return;
    }
    let ids = shared.ids.lock().await;
    let resolve = |kind: Kind, id: &str| ids.get(&Address::new(kind, id)).cloned();
    let mut file_form = Value::Object(cleared);
    if let Some(tag) = body.get("checkType") {
        // The facts of a check depend on its type.
        file_form["checkType"] = tag.clone();
    }
    if let (Some(target), Value::Object(wire)) =
        (body.as_object_mut(), to_wire(change.address.kind, &file_form, &resolve))
    {
        // What the body already sets wins: `tags` always carries the ownership tag.
        for (key, value) in wire {
            target.entry(key).or_insert(value);
        }
    }
}

fn resource<'d>(shared: &Shared<'d>, address: &Address) -> Result<&'d DesiredResource, RunError> {
    shared.desired.resources.get(address).ok_or_else(|| {
        RunError::from(Error::Config(format!(
            "{address} is planned for creation but is not in the files"
        )))
    })
}

async fn body_for(shared: &Shared<'_>, resource: &DesiredResource) -> Value {
    let ids = shared.ids.lock().await;
    let resolve = |kind: Kind, id: &str| ids.get(&Address::new(kind, id)).cloned();
    wire_body(shared.project, resource, &resolve)
}

/// Creates, adopting the object instead when an earlier attempt whose
/// answer was lost did create it.
/// Creates `resource`; `replacing` is the object it replaces when that still
/// exists (create-first), which is never taken for the new one.
async fn create(shared: &Shared<'_>, resource: &DesiredResource, replacing: Option<&str>) -> Result<(), RunError> {
    let body = body_for(shared, resource).await;
    let address = &resource.address;
    let mut attempts = 0;
    let remote = loop {
        attempts += 1;
        match shared.client.create(address.kind, &body).await {
            Ok(remote) => break remote,
            Err(error) if error.is_transient() && !error.certainly_not_applied() && attempts < 6 => {
                if let Some(existing) = find_existing(shared, resource, replacing).await? {
                    (shared.on_event)(Event::Adopted {
                        address: address.clone(),
                    });
                    // Bring the adopted object to the desired state.
                    let remote = shared.client.update(address.kind, &existing.id, &body).await?;
                    break remote;
                }
            }
            Err(error) if address.kind == Kind::Variable && error.status() == Some(409) => {
                // Created by an earlier attempt whose answer was lost.
                let remote = shared.client.update(address.kind, &address.id, &body).await?;
                break remote;
            }
            Err(error) => return Err(error.into()),
        }
    };
    let remote = match confirm::secret_variable(address.kind, &body) {
        true => confirm::secret(shared.client, &address.id, &body, remote).await?,
        false => remote,
    };
    record(shared, resource, &remote, Made::Created { retiring: replacing }).await
}

/// The object of `resource` in the account, found by its identity.
async fn find_existing(
    shared: &Shared<'_>,
    resource: &DesiredResource,
    replacing: Option<&str>,
) -> Result<Option<Remote>, Error> {
    let kind = resource.address.kind;
    let objects = shared.client.list_all(kind).await?;
    let wanted_key = natural_key(kind, &resource.resource.to_json());
    Ok(objects.into_iter().find(|remote| {
        if Some(remote.id.as_str()) == replacing {
            false
        } else if uses_tags(kind) {
            remote_owner(remote).is_some_and(|(p, id)| p == shared.project && id == resource.address.id)
        } else if kind == Kind::Variable {
            remote.id == resource.address.id
        } else {
            wanted_key.is_some() && natural_key(kind, &remote.body()) == wanted_key
        }
    }))
}
