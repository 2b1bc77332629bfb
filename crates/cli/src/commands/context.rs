//! What plan, apply and destroy share: load the files, connect, read the
//! state, fetch the account, plan.

use std::path::Path;
use std::sync::OnceLock;

use monform_config::{Diagnostic, Loaded, Project, Severity};
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

/// The environment chosen with `--env` or `MONFORM_ENV`, set once by `main`.
static ENVIRONMENT: OnceLock<Option<String>> = OnceLock::new();

pub fn set_environment(environment: Option<String>) {
    let _ = ENVIRONMENT.set(environment.filter(|e| !e.is_empty()));
}

pub fn environment() -> Option<&'static str> {
    ENVIRONMENT.get().and_then(Option::as_deref)
}

/// Loads the project's files for the chosen environment (if any).
pub fn load_files(dir: &Path) -> Loaded {
    let env = |name: &str| std::env::var(name).ok();
    monform_config::load_environment(dir, &env, environment())
}

/// A project that declares environments is planned, applied and given a
/// state only for one of them.
pub fn require_environment(project: &Project) -> Result<(), Stop> {
    if project.environment.is_some() || project.environments.is_empty() {
        return Ok(());
    }
    Err(Stop::Message(format!(
        "{} declares environments ({}): choose one with --env NAME or MONFORM_ENV",
        project.name,
        project.environment_names().join(", ")
    )))
}

/// The line that opens a plan of an environment: which project and which
/// environment it is for.
pub fn plan_header(project: &Project) -> String {
    match &project.environment {
        Some(environment) => format!("Project {}, environment {environment}\n\n", project.name),
        None => String::new(),
    }
}

/// Loads and validates the project, or reports why not.
pub fn load(dir: &Path, output: &Output) -> Result<(Loaded, Project), Stop> {
    let loaded = load_files(dir);
    // Notes (what monform cannot check) are `validate`'s: a plan stays quiet.
    let warnings: Vec<Diagnostic> = loaded
        .warnings
        .iter()
        .filter(|d| d.severity != Severity::Note)
        .cloned()
        .collect();
    output.diagnostics(&warnings, &loaded.sources);
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
    require_environment(&project)?;
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

/// The project's state backend: `.monform/state.json` (`state.<env>.json`
/// for an environment), or PostgreSQL at `MONFORM_STATE_URL` when
/// monform.toml says `[state] backend = "postgres"` (a row per project name,
/// so per environment). `command` is recorded with every PostgreSQL write and lock.
pub fn open_backend(dir: &Path, project: &Project, command: &str) -> Result<Box<dyn StateBackend>, Stop> {
    match project.state_backend {
        monform_config::StateBackend::Local => Ok(Box::new(local_state(dir, project))),
        monform_config::StateBackend::Postgres => Ok(Box::new(open_postgres(&project.name, command)?)),
    }
}

pub fn local_state(dir: &Path, project: &Project) -> LocalState {
    match &project.environment {
        Some(environment) => LocalState::for_environment(dir, environment),
        None => LocalState::new(dir),
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

/// Stops the plan when `moved` / `import` entries cannot be planned, each
/// problem at its entry's `file:line:column`.
fn refuse_entries(
    loaded: &Loaded,
    problems: impl Iterator<Item = (monform_config::source::Span, String)>,
    help: &str,
) -> Result<(), Stop> {
    let lines: Vec<String> = problems
        .map(|(span, problem)| {
            let at = monform_config::Diagnostic::new("monform::declared", "")
                .at(span, "")
                .location(&loaded.sources)
                .unwrap_or_default();
            format!("  {at}: {problem}")
        })
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    Err(Stop::Message(format!("cannot plan:\n{}{help}", lines.join("\n"))))
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
    // Plans see the files' `moved` entries made, as after `state mv`; the
    // apply records them first. `destroy` deletes objects where the state has them.
    let (moves, conflicts) = if destroy {
        Default::default()
    } else {
        monform_engine::declared::state_moves(&state, &loaded.desired.declarations)
    };
    refuse_entries(
        &loaded,
        conflicts.iter().map(|(entry, remote_id)| {
            (
                entry.span,
                format!(
                    "moved: {} already has an object (remote id {remote_id}), so {} cannot move there",
                    entry.to, entry.from
                ),
            )
        }),
        "\nremove the entry, or `monform state rm` one of the two",
    )?;
    let planning = monform_engine::declared::moved_state(&state, &moves);
    let actual = monform_engine::fetch(&connection.client, &project.name, &loaded.desired, &planning)
        .await
        .map_err(|e| Stop::Message(format!("cannot read the account: {e}")))?;
    refuse_clashes(&project.name, &loaded.desired, &actual)?;
    if !destroy {
        let problems = monform_engine::declared::import_problems(&loaded.desired, &actual, &project.name);
        refuse_entries(
            &loaded,
            problems
                .iter()
                .map(|(entry, problem)| (entry.span, format!("import of {} as {}: {problem}", entry.id, entry.to))),
            "",
        )?;
    }
    let empty = monform_config::Desired::default();
    let desired = if destroy { &empty } else { &loaded.desired };
    let mut plan = monform_engine::plan(
        &project.name,
        desired,
        &actual,
        &planning,
        &PlanOptions {
            targets: targets.to_vec(),
        },
    );
    plan.discarded = monform_engine::discards::discarded(&connection.client, &plan, &actual).await;
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
