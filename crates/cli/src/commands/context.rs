//! What plan, apply and destroy share: load the files, connect, read the
//! state, fetch the account, plan.

use std::path::Path;

use monform_config::{Loaded, Project};
use monform_engine::state::postgres::Actor;
use monform_engine::{Actual, LocalState, Plan, PlanOptions, PostgresState, State, StateBackend};
use monform_model::Address;

use crate::connect::{Connection, connect};
use crate::render::Output;

pub struct Prepared {
    pub loaded: Loaded,
    pub connection: Connection,
    pub backend: Box<dyn StateBackend>,
    pub state: State,
    pub actual: Actual,
    pub plan: Plan,
}

/// Why a command stops early: already reported diagnostics, or a message.
pub enum Stop {
    Reported,
    Message(String),
}

impl From<String> for Stop {
    fn from(message: String) -> Stop {
        Stop::Message(message)
    }
}

/// Loads and validates the project, or reports why not.
pub fn load(dir: &Path, output: &Output) -> Result<(Loaded, Project), Stop> {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = monform_config::load(dir, &env);
    if !loaded.is_ok() {
        output.diagnostics(&loaded.diagnostics, &loaded.sources);
        eprintln!(
            "error: the files have {} problems; run `monform validate` for details",
            loaded.diagnostics.len()
        );
        return Err(Stop::Reported);
    }
    let project = loaded
        .project
        .clone()
        .ok_or_else(|| Stop::Message("monform.toml has no project".into()))?;
    Ok((loaded, project))
}

pub fn parse_targets(targets: &[String]) -> Result<Vec<Address>, Stop> {
    targets
        .iter()
        .map(|t| {
            t.parse::<Address>()
                .map_err(|e| Stop::Message(format!("--target {t}: {e}")))
        })
        .collect()
}

/// Where the URL of the PostgreSQL state comes from (never from files).
pub const STATE_URL_VARIABLE: &str = "MONFORM_STATE_URL";

/// The project's state backend: `.monform/state.json`, or PostgreSQL at
/// `MONFORM_STATE_URL` when monform.toml says `[state] backend = "postgres"`.
/// `command` is recorded with every PostgreSQL write and lock.
pub fn open_backend(dir: &Path, project: &Project, command: &str) -> Result<Box<dyn StateBackend>, Stop> {
    match project.state_backend {
        monform_config::StateBackend::Local => Ok(Box::new(LocalState::new(dir))),
        monform_config::StateBackend::Postgres => Ok(Box::new(open_postgres(&project.name, command)?)),
    }
}

/// The PostgreSQL state of `project`, at `MONFORM_STATE_URL`.
pub fn open_postgres(project: &str, command: &str) -> Result<PostgresState, Stop> {
    let url = std::env::var(STATE_URL_VARIABLE)
        .ok()
        .filter(|u| !u.is_empty())
        .ok_or_else(|| {
            Stop::Message(format!(
                "{STATE_URL_VARIABLE} is not set: the PostgreSQL state backend needs it\n\nhint: export {STATE_URL_VARIABLE}=postgres://USER:PASSWORD@HOST:5432/DATABASE (connection URLs never live in files)"
            ))
        })?;
    PostgresState::open(&url, project, Actor::current(command)).map_err(|e| Stop::Message(e.to_string()))
}

/// Objects another project owns are never adopted, changed or deleted:
/// files claiming one (by natural key, or a state entry) stop the plan.
fn refuse_clashes(project: &str, desired: &monform_config::Desired, actual: &Actual) -> Result<(), Stop> {
    use monform_engine::ownership::{RECORD_PREFIX, is_record};
    let key = monform_engine::ownership::record_key(project);
    let mut problems: Vec<String> = actual.clashes.iter().map(|c| format!("  {c}")).collect();
    for address in desired.resources.keys() {
        let claimed = actual.clashes.iter().any(|c| &c.address == address);
        if is_record(address.kind, &address.id) && !claimed {
            problems.push(format!(
                "  {address}: variables named {RECORD_PREFIX}* are monform's ownership records; rename it"
            ));
        }
    }
    if let Some(other) = actual
        .owners
        .records
        .values()
        .find(|r| r.project != project && monform_engine::ownership::record_key(&r.project) == key)
    {
        problems.push(format!(
            "  projects `{project}` and `{}` would keep one ownership record ({key}): rename one of them",
            other.project
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Stop::Message(format!(
        "the files claim objects of other projects:\n{}",
        problems.join("\n")
    )))
}

/// Everything after loading, up to and including the plan.
pub async fn prepare(
    dir: &Path,
    api_url: Option<&str>,
    (loaded, project): (Loaded, Project),
    backend: Box<dyn StateBackend>,
    targets: &[Address],
    destroy: bool,
) -> Result<Prepared, Stop> {
    let connection = connect(dir, api_url, &project).await?;
    let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
    let actual = monform_engine::fetch(&connection.client, &project.name, &loaded.desired, &state)
        .await
        .map_err(|e| Stop::Message(format!("cannot read the account: {e}")))?;
    refuse_clashes(&project.name, &loaded.desired, &actual)?;
    let empty = monform_config::Desired::default();
    let desired = if destroy { &empty } else { &loaded.desired };
    let plan = monform_engine::plan(
        &project.name,
        desired,
        &actual,
        &state,
        &PlanOptions {
            targets: targets.to_vec(),
        },
    );
    Ok(Prepared {
        loaded,
        connection,
        backend,
        state,
        actual,
        plan,
    })
}

/// Runs an async command body on a fresh runtime.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    Ok(runtime.block_on(future))
}
