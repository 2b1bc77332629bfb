//! What plan, apply and destroy share: load the files, connect, read the
//! state, fetch the account, plan.

use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::ValueEnum;

use monform_config::{Diagnostic, Loaded, Project, Severity};
use monform_engine::ops::Refusal;
use monform_engine::{Actor, LocalState, PostgresState, StateBackend};
use monform_model::Address;

use crate::render::Output;

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
    load_files_for(dir, environment())
}

/// Loads the project's files for `environment`, with the parse cache in
/// `.monform/cache/` (a file unchanged since the last load is not parsed).
pub fn load_files_for(dir: &Path, environment: Option<&str>) -> Loaded {
    let env = |name: &str| std::env::var(name).ok();
    let cache = dir.join(monform_config::CACHE_DIR);
    monform_config::load_with_cache(dir, &env, environment, Some(&cache))
}

/// A connection made before the files load, with every listing a plan
/// that refreshes everything reads already under way (`ops::prefetch`): at
/// 100,000 checks the service is read in the seconds the files take to
/// load. Only for a plan: an apply plans under its lock, so it never plans
/// from a listing read before the lock was taken. `None` when monform.toml
/// does not load alone or the connection cannot be made: the caller then
/// connects after the load, as without it, so problems come in the usual
/// order; its retry lines are held until `crate::connect::release_lines`
/// (dropped if the load fails: no plan is made).
pub async fn connect_ahead(dir: &Path, api_url: Option<&str>) -> Option<crate::connect::Connection> {
    let env = |name: &str| std::env::var(name).ok();
    let project = monform_config::load_project(dir, &env, environment())?;
    let connection = crate::connect::connect(dir, api_url, &project).await.ok()?;
    crate::connect::hold_lines();
    monform_engine::ops::prefetch(&connection.client);
    Some(connection)
}

/// The engine's rule (`ops::environment_chosen`), checked as soon as the
/// files are loaded, in this command line's words.
pub fn require_environment(project: &Project) -> Result<(), Stop> {
    monform_engine::ops::environment_chosen(project)
        .map_err(|refusal| Stop::Message(format!("{refusal} with --env NAME or MONFORM_ENV")))
}

/// The line that opens a plan of an environment: which project and which
/// environment it is for.
pub fn plan_header(project: &Project) -> String {
    match &project.environment {
        Some(environment) => format!("Project {}, environment {environment}\n\n", project.name),
        None => String::new(),
    }
}

/// Whether a command reports the linter's findings and notes: only the
/// commands about the files (validate, plan, apply) do; status, test,
/// location-keys and the others neither show them nor fail on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Findings {
    Show,
    Hide,
}

/// Leaves `value` to the end of the process instead of freeing it: the
/// command is about to exit, and freeing a large project's resources and
/// the account's objects one allocation at a time was a tenth of a
/// 100,000-check `validate` (the system takes the memory back whole).
pub fn exit_without_freeing<T>(value: T) {
    std::mem::forget(value);
}

/// Loads and validates the project, or reports why not.
pub fn load(dir: &Path, output: &Output, findings: Findings) -> Result<(Loaded, Project), Stop> {
    let mut loaded = load_files(dir);
    if findings == Findings::Hide {
        loaded.warnings.retain(|d| !d.finding);
        loaded.diagnostics.retain(|d| !d.finding);
    }
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

/// The project's policies and the input of its files.
pub struct ProjectPolicies {
    pub policies: monform_policy::Policies,
    pub files: monform_policy::input::Input,
}

/// Loads the policies into `loaded`'s sources; a policy that does not
/// parse (or a `[policy] paths` entry outside the project) is reported and
/// stops the command: a rule the team wrote is never silently skipped.
pub fn load_policies(
    dir: &Path,
    loaded: &mut Loaded,
    project: &Project,
    output: &Output,
) -> Result<ProjectPolicies, Stop> {
    let (policies, problems) = monform_policy::load(dir, project, &mut loaded.sources);
    if !problems.is_empty() {
        output.diagnostics(&problems, &loaded.sources);
        let count = match problems.len() {
            1 => "1 problem".to_owned(),
            n => format!("{n} problems"),
        };
        eprintln!("error: {count} in the policies; nothing was checked");
        return Err(Stop::Reported);
    }
    let files = if policies.is_empty() {
        monform_policy::input::Input::from_json(serde_json::Value::Null)
    } else {
        monform_policy::input::files(&loaded.desired, project, &loaded.sources)
    };
    Ok(ProjectPolicies { policies, files })
}

/// How `export` and `import --all-unmanaged` split the resource files.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Split {
    /// One file per kind
    #[default]
    Kind,
    /// Each check group with its checks in `groups/<group>.yaml`
    Group,
}

impl From<Split> for monform_engine::ops::SplitBy {
    fn from(split: Split) -> monform_engine::ops::SplitBy {
        match split {
            Split::Kind => monform_engine::ops::SplitBy::Kind,
            Split::Group => monform_engine::ops::SplitBy::Group,
        }
    }
}

/// The project of `--dir`, when there is a valid monform.toml (its
/// resource files need not be valid).
pub fn current_project(dir: &Path) -> Option<(Loaded, Project)> {
    if !dir.join(monform_config::project::PROJECT_FILE).exists() {
        return None;
    }
    let loaded = load_files(dir);
    let project = loaded.project.clone()?;
    Some((loaded, project))
}

/// The name of a project `export` or `import --all-unmanaged` writes
/// (`--project`, else the current one's) and the settings to connect with
/// (the current project's, else the defaults).
pub fn new_project(current: Option<&(Loaded, Project)>, name: Option<&str>) -> Result<(String, Project), Stop> {
    let name = monform_engine::ops::new_project_name(name, current.map(|(_, p)| p.name.as_str()))
        .map_err(|refusal| Stop::Message(refusal.to_string()))?;
    let settings = current
        .map(|(_, p)| p.clone())
        .unwrap_or_else(|| Project::new(name.clone()));
    Ok((name, settings))
}

/// Writes `text` to `path` whole or not at all (`monform_engine::durable`):
/// reports, JUnit files.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), Stop> {
    monform_engine::durable::write(path, text.as_bytes())
        .map_err(|e| Stop::Message(format!("cannot write {}: {e}", path.display())))
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

/// `--exclude` patterns: addresses where `*` stands for any characters.
pub fn parse_excludes(excludes: &[String]) -> Result<Vec<monform_model::AddressPattern>, Stop> {
    excludes
        .iter()
        .map(|t| t.parse().map_err(|e| Stop::Message(format!("--exclude {t}: {e}"))))
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

/// An engine refusal in words, `file:line:column` where it has a span.
pub fn refused(refusal: &Refusal, loaded: &Loaded) -> Stop {
    refused_to("apply", refusal, loaded)
}

/// [`refused`], naming what was refused (`destroy` says destroy).
pub fn refused_to(verb: &str, refusal: &Refusal, loaded: &Loaded) -> Stop {
    let list = |lines: Vec<String>| lines.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
    Stop::Message(match refusal {
        Refusal::Clashes(problems) => format!("the files claim objects of other projects:\n{}", list(problems.clone())),
        Refusal::Entries { problems, help } => {
            let lines = problems
                .iter()
                .map(|(span, problem)| {
                    let at = Diagnostic::new("monform::declared", "")
                        .at(*span, "")
                        .location(&loaded.sources)
                        .unwrap_or_default();
                    format!("{at}: {problem}")
                })
                .collect();
            format!("cannot plan:\n{}{help}", list(lines))
        }
        Refusal::Stale(stale) => {
            format!("the saved plan is stale: {stale}\n\nhint: run `monform plan --out FILE` again and review it")
        }
        Refusal::OverBudget(over) => format!("refusing to {verb}: {}", crate::render::budget::over(over)),
        Refusal::Policy(outcome) => {
            let blocking: Vec<String> = outcome
                .findings
                .iter()
                .filter(|f| f.blocks())
                .map(|f| f.rule.to_owned())
                .chain(outcome.errors.iter().map(|e| format!("a policy that cannot run: {e}")))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            format!(
                "refusing to {verb}: the project's policies deny the plan (shown above); nothing was changed\n{}\n\nhint: fix what they find, or override a rule for this run with --policy-override RULE",
                list(blocking)
            )
        }
        Refusal::NoEnvironment { .. } => format!("{refusal} with --env NAME or MONFORM_ENV"),
        Refusal::Unsafe(problems) => format!(
            "refusing to {verb}:\n{}",
            list(problems.iter().map(ToString::to_string).collect())
        ),
        other => other.to_string(),
    })
}

/// Warns on standard error, `file:line:column`, about the `moved` entries
/// the plan found idle: worth a look, never a reason to stop.
pub fn warn_idle_moves(planned: &monform_engine::ops::Planned, loaded: &Loaded) {
    for (span, warning) in &planned.idle_moves {
        let at = Diagnostic::new("monform::moved", "")
            .at(*span, "")
            .location(&loaded.sources)
            .unwrap_or_default();
        eprintln!("warning: {at}: {warning}");
    }
}

/// Warns on standard error, before the plan, when it is against another
/// service or account than the state was applied to and would create the
/// state's objects again (`Planned::other_target`).
pub fn warn_other_target(planned: &monform_engine::ops::Planned, now: &monform_engine::Target) {
    let Some(other) = planned.other_target(now) else {
        return;
    };
    let retry = match other.recorded.api_url.as_str() {
        "local" => "--api-url local".to_owned(),
        url => format!("--api-url {url} with that account's MONFORM_API_KEY and MONFORM_ACCOUNT_ID"),
    };
    eprintln!(
        "warning: the state was applied to {}, this plan is against {}: {} of the state's {} objects are not here, so the plan creates them again\n\nhint: to plan against the service of the state pass {retry}; applying here makes this service the state's\n",
        other.recorded, other.now, other.recreated, other.in_state
    );
}

/// A command body's outcome as its value, or the exit code after saying
/// why it stopped: the one place a `Stop` becomes an exit code.
pub fn settle<T>(result: Result<Result<T, Stop>, String>) -> Result<T, ExitCode> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(Stop::Reported)) => Err(ExitCode::FAILURE),
        Ok(Err(Stop::Message(message))) | Err(message) => {
            eprintln!("error: {message}");
            if let Some(hint) = crate::connect::unanswered_hint().filter(|_| !message.contains("\nhint:")) {
                eprintln!("\n{hint}");
            }
            Err(ExitCode::FAILURE)
        }
    }
}

/// The exit code of a command body that returns one.
pub fn finish(result: Result<Result<ExitCode, Stop>, String>) -> ExitCode {
    settle(result).unwrap_or_else(|code| code)
}

/// Runs an async command body on a fresh runtime.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    Ok(runtime.block_on(future))
}

/// How `plan` and `show` print a plan.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    Human,
    Json,
    Markdown,
}

/// Completes at SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => return interrupt.await.unwrap_or(()),
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    interrupt.await.unwrap_or(());
}
