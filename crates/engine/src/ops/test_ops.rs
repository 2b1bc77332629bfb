//! `monform test`: which checks run where, and their results. In the
//! service (`test_selection`, then `run_test_sessions`: the applied checks
//! in test sessions) or on this machine (`local_checks`: the files' checks
//! in the form the service runs them, for a runner).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use monform_api::{Client, MAX_WAIT_SECONDS, TestSession, TestSessionRequest};
use monform_config::Desired;
use monform_model::effective::{effective_wire, inline_snippets};
use monform_model::{Address, Kind, RunStatus};
use serde_json::{Value, json};

use super::Refusal;
use super::local_env::{EnvRead, check_reads, project_variable_reads};
use crate::state::State;

/// Where a test session runs when the files name no location for a check
/// (the model's [`monform_model::resources::Location::DEFAULT`]).
pub const DEFAULT_LOCATION: &str = monform_model::resources::Location::DEFAULT.as_str();

/// Why checks cannot be tested.
#[derive(Debug, thiserror::Error)]
pub enum TestRefusal {
    #[error("{0}: only checks can be tested")]
    NotACheck(Address),
    #[error("{0}: not an applied check of this project")]
    NotApplied(Address),
    #[error("{0}: no such check in the files")]
    NotInFiles(Address),
    #[error("the project has no applied checks: run `monform apply` first")]
    NoneApplied,
    #[error("no check of the files matches --target/--tags")]
    NoneMatch,
    /// No location had a check to run (`tags` as asked, `why`: the service's answer).
    #[error("no applied check{} can be tested: {why}", if tags.is_empty() { String::new() } else { format!(" with tags {}", tags.join(", ")) })]
    NoneTestable { tags: Vec<String>, why: String },
    #[error("cannot start a test session: {0}")]
    Start(monform_api::Error),
    #[error("cannot await test session {id}: {error}")]
    Await { id: String, error: monform_api::Error },
    #[error("test session {id} is still running after {seconds} s (--timeout)")]
    StillRunning { id: String, seconds: u64 },
}

fn refuse<T>(refusal: TestRefusal) -> Result<T, Refusal> {
    Err(Refusal::Test(refusal))
}

/// Which checks to test.
#[derive(Debug, Clone, Default)]
pub struct TestRequest {
    /// Only these checks; empty: every one.
    pub targets: Vec<Address>,
    /// Only checks carrying every one of these tags.
    pub tags: Vec<String>,
    /// Every check in each of these locations; empty: each check in its own.
    pub locations: Vec<String>,
}

/// The applied checks of a state: remote id to address.
pub fn applied_checks(state: &State) -> BTreeMap<String, Address> {
    state
        .resources
        .iter()
        .filter_map(|(key, resource)| {
            let address = key.parse::<Address>().ok()?;
            (address.kind == Kind::Check).then(|| (resource.remote_id.clone(), address))
        })
        .collect()
}

fn only_checks(targets: &[Address]) -> Result<(), Refusal> {
    match targets.iter().find(|t| t.kind != Kind::Check) {
        Some(other) => refuse(TestRefusal::NotACheck(other.clone())),
        None => Ok(()),
    }
}

/// The applied checks to test and the locations each runs in.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Remote id to address.
    pub checks: BTreeMap<String, Address>,
    /// Location to the remote ids run there.
    pub by_location: BTreeMap<String, Vec<String>>,
}

/// Chooses the applied checks of `state` the request names and where each
/// runs: every requested location, else the check's own in the files.
pub fn test_selection(desired: &Desired, state: &State, request: &TestRequest) -> Result<Selection, Refusal> {
    only_checks(&request.targets)?;
    let mut checks = applied_checks(state);
    if checks.is_empty() {
        return refuse(TestRefusal::NoneApplied);
    }
    if !request.targets.is_empty() {
        if let Some(missing) = request.targets.iter().find(|t| !checks.values().any(|a| a == *t)) {
            return refuse(TestRefusal::NotApplied(missing.clone()));
        }
        checks.retain(|_, address| request.targets.contains(address));
    }
    let mut by_location: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, address) in &checks {
        let own = if request.locations.is_empty() {
            own_locations(desired, address)
        } else {
            request.locations.clone()
        };
        for location in own {
            by_location.entry(location).or_default().push(id.clone());
        }
    }
    Ok(Selection { checks, by_location })
}

/// Where a check runs in the files (defaults applied): its public
/// locations and its private locations (by slug: a managed location's
/// `slugName`, else the name as written, the slug of a remote one), or
/// [`DEFAULT_LOCATION`] when it names none (or is no longer in the files).
/// A check of a private location runs there only, so a test of it is too.
fn own_locations(desired: &Desired, address: &Address) -> Vec<String> {
    let resources = &desired.resources;
    let check = resources.get(address).map(|d| d.resource.to_json());
    let names = |field: &str| -> Vec<String> {
        check
            .as_ref()
            .and_then(|v| v.get(field)?.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect()
    };
    let mut locations = names("locations");
    for name in names("privateLocations") {
        let managed = Address::new(Kind::PrivateLocation, name.clone());
        let slug = resources
            .get(&managed)
            .and_then(|d| d.resource.to_json().get("slugName")?.as_str().map(str::to_owned));
        locations.push(slug.unwrap_or(name));
    }
    if locations.is_empty() {
        vec![DEFAULT_LOCATION.to_owned()]
    } else {
        locations
    }
}

/// Why each failed run of the sessions failed: the error its result names,
/// else the message of its error group (one error-group read per failing
/// check; without it the run still says FAILED).
async fn explain_failures(client: &Client, sessions: &mut [Result<Result<TestSession, String>, Refusal>]) {
    let mut messages: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for session in sessions.iter_mut() {
        let Ok(Ok(session)) = session else { continue };
        for result in session.results.iter_mut() {
            if !result.status.is_failure() || result.error.is_some() || result.error_group_ids.is_empty() {
                continue;
            }
            if !messages.contains_key(&result.check_id) {
                let groups = client.error_messages(&result.check_id).await.unwrap_or_default();
                messages.insert(result.check_id.clone(), groups);
            }
            result.error = messages[&result.check_id]
                .iter()
                .find(|(id, _)| result.error_group_ids.contains(id))
                .map(|(_, message)| message.clone());
        }
    }
}

/// One run of one check in one location: of a test session, or of
/// `test --local`.
#[derive(Debug, Clone, PartialEq)]
pub struct TestRun {
    /// The check's address (its remote id when the state does not know it).
    pub address: String,
    pub name: String,
    pub location: String,
    pub status: RunStatus,
    /// Milliseconds.
    pub response_time: Option<f64>,
    /// Why a failed run failed, when the service (or the local runner) says.
    pub error: Option<String>,
    /// Files a failed browser run left (`test --local --artifacts DIR`):
    /// its screenshot and Playwright trace. None from the service.
    pub artifacts: Vec<String>,
}

/// What the test sessions gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Tested {
    /// By address, then location.
    pub runs: Vec<TestRun>,
    /// The longest session, in milliseconds.
    pub elapsed_ms: Option<f64>,
    /// Checks the service left out (heartbeats, deactivated); empty with tags.
    pub not_run: Vec<Address>,
}

/// Runs one test session per location of `selection` (named after
/// `project`) and waits for each, up to `timeout`.
pub async fn run_test_sessions(
    client: &Client,
    project: &str,
    selection: &Selection,
    tags: &[String],
    timeout: Duration,
) -> Result<Tested, Refusal> {
    let sessions = futures_util::future::join_all(selection.by_location.iter().map(|(location, ids)| async {
        let request = TestSessionRequest {
            name: format!("monform test: {project}"),
            run_location: location.clone(),
            check_ids: ids.clone(),
            tags: tags.to_vec(),
        };
        // A location where no check matches (other tags, heartbeats,
        // deactivated) is not an error unless no location has any.
        let started = match client.trigger_test_session(&request).await {
            Ok(started) => started,
            Err(e) if e.status() == Some(404) => return Ok(Err(e.to_string())),
            Err(e) => return refuse(TestRefusal::Start(e)),
        };
        await_session(client, &started.id, timeout).await.map(Ok)
    }))
    .await;
    let mut sessions = sessions;
    explain_failures(client, &mut sessions).await;
    let mut runs = Vec::new();
    let mut elapsed: Option<f64> = None;
    let mut ran = BTreeSet::new();
    let mut unmatched = None;
    for session in sessions {
        let session = match session? {
            Ok(session) => session,
            Err(message) => {
                unmatched.get_or_insert(message);
                continue;
            }
        };
        elapsed = Some(elapsed.unwrap_or(0.0).max(session.time_elapsed.unwrap_or(0.0)));
        for result in session.results {
            ran.insert(result.check_id.clone());
            let address = selection
                .checks
                .get(&result.check_id)
                .map_or_else(|| result.check_id.clone(), ToString::to_string);
            runs.push(TestRun {
                address,
                name: result.name,
                location: result.run_location,
                status: result.status,
                response_time: result.response_time,
                error: result.error,
                artifacts: Vec::new(),
            });
        }
    }
    if let (true, Some(why)) = (runs.is_empty(), unmatched) {
        return refuse(TestRefusal::NoneTestable {
            tags: tags.to_vec(),
            why,
        });
    }
    runs.sort_by(|a, b| (&a.address, &a.location).cmp(&(&b.address, &b.location)));
    let not_run = if tags.is_empty() {
        selection
            .checks
            .iter()
            .filter(|(id, _)| !ran.contains(*id))
            .map(|(_, a)| a.clone())
            .collect()
    } else {
        Vec::new()
    };
    Ok(Tested {
        runs,
        elapsed_ms: elapsed,
        not_run,
    })
}

/// Waits for a session with repeated completion calls (each at most 30 s;
/// a 408 means "not yet"), up to `timeout` in all.
async fn await_session(client: &Client, id: &str, timeout: Duration) -> Result<TestSession, Refusal> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return refuse(TestRefusal::StillRunning {
                id: id.to_owned(),
                seconds: timeout.as_secs(),
            });
        }
        let wait = (left.as_secs_f64().ceil() as u32).clamp(1, MAX_WAIT_SECONDS);
        match client.await_test_session(id, wait).await {
            Ok(Some(session)) => return Ok(session),
            Ok(None) => tracing::debug!("test session {id} still running"),
            Err(error) => {
                return refuse(TestRefusal::Await {
                    id: id.to_owned(),
                    error,
                });
            }
        }
    }
}

/// A check of the files to run on this machine, as the service would run it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalCheck {
    pub address: Address,
    pub name: String,
    /// The API form: references as logical ids, its group applied
    /// (`monform_model::effective`), snippet scripts inlined, a relative
    /// `codeBundlePath` made absolute under the project folder.
    pub wire: Value,
    /// The values it carries read from `${env:}` (its effective definition
    /// and the project's variables): [`super::unpassed_env`] judges them.
    pub env_reads: Vec<EnvRead>,
}

/// The checks of the files the request names, ready for a runner; `dir`:
/// the project folder, absolute. The project's variables (API form) go
/// with them: [`project_variables`].
pub fn local_checks(desired: &Desired, dir: &Path, request: &TestRequest) -> Result<Vec<LocalCheck>, Refusal> {
    let targets = &request.targets;
    only_checks(targets)?;
    if let Some(missing) = targets.iter().find(|t| !desired.resources.contains_key(*t)) {
        return refuse(TestRefusal::NotInFiles(missing.clone()));
    }
    let snippet_script = |id: &Value| -> Option<String> {
        let resource = desired.resources.get(&Address::new(Kind::Snippet, id.as_str()?))?;
        resource.resource.to_json()["script"].as_str().map(str::to_owned)
    };
    let shared_reads = project_variable_reads(desired);
    let mut out = Vec::new();
    for resource in desired.resources.values().filter(|r| r.address.kind == Kind::Check) {
        if !targets.is_empty() && !targets.contains(&resource.address) {
            continue;
        }
        let file = resource.resource.to_json();
        let tags: Vec<&str> = file["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !request.tags.iter().all(|t| tags.contains(&t.as_str())) {
            continue;
        }
        let group = file["group"]
            .as_str()
            .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id)))
            .map(|g| (g, g.resource.to_json()));
        let mut wire = effective_wire(&file, group.as_ref().map(|(_, json)| json));
        let mut env_reads = check_reads(
            desired,
            resource,
            &file,
            group.as_ref().map(|(g, json)| (*g, json)),
            &wire,
        );
        env_reads.extend(shared_reads.iter().cloned());
        inline_snippets(&mut wire, &snippet_script);
        if let Some(bundle) = wire["codeBundlePath"].as_str().filter(|p| Path::new(p).is_relative()) {
            wire["codeBundlePath"] = Value::String(dir.join(bundle).to_string_lossy().into_owned());
        }
        // A name read from the environment is not shown: the address is.
        let name = file["name"]
            .as_str()
            .filter(|_| !resource.sensitive.iter().any(|p| p.to_string() == "name"))
            .unwrap_or(&resource.address.id);
        out.push(LocalCheck {
            address: resource.address.clone(),
            name: name.to_owned(),
            wire,
            env_reads,
        });
    }
    if out.is_empty() {
        return refuse(TestRefusal::NoneMatch);
    }
    Ok(out)
}

/// The project's variables in the API's form (`key`, `value`, `secret`),
/// which every check run sees before its own `environmentVariables`.
pub fn project_variables(desired: &Desired) -> Vec<Value> {
    desired
        .resources
        .values()
        .filter(|r| r.address.kind == Kind::Variable)
        .map(|r| {
            let file = r.resource.to_json();
            json!({ "key": r.address.id, "value": file["value"], "secret": file["secret"] })
        })
        .collect()
}
