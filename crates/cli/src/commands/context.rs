//! What plan, apply and destroy share: load the files, connect, read the
//! state, fetch the account, plan.

use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::ValueEnum;

use monform_config::{Diagnostic, Loaded, Project, Severity};
use monform_engine::ops::{
    self, ApiRequest, Connect, OpenError, OpenRequest, Opened, PolicyLoad, Refusal, STATE_URL_VARIABLE, StateUnopened,
    Unopened,
};
use monform_engine::{LocalState, PostgresState, StateBackend};
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

/// The environment of the saved plan `apply PLANFILE` applies, when none
/// was chosen: the plan is applied where it was planned.
static SAVED_PLAN_ENVIRONMENT: OnceLock<String> = OnceLock::new();

pub fn set_saved_plan_environment(environment: &str) {
    let _ = SAVED_PLAN_ENVIRONMENT.set(environment.to_owned());
}

pub fn environment() -> Option<&'static str> {
    ENVIRONMENT
        .get()
        .and_then(Option::as_deref)
        .or_else(|| SAVED_PLAN_ENVIRONMENT.get().map(String::as_str))
}

/// The environment chosen with `--env` or `MONFORM_ENV` alone.
pub fn chosen_environment() -> Option<&'static str> {
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
    show_load(&loaded, output)?;
    let project = loaded
        .project
        .clone()
        .ok_or_else(|| Stop::Message("monform.toml has no project".into()))?;
    require_environment(&project)?;
    Ok((loaded, project))
}

/// Shows a load's warnings and, when it failed, its problems.
fn show_load(loaded: &Loaded, output: &Output) -> Result<(), Stop> {
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
        // Each was just printed: no need to send the user to `validate`.
        eprintln!(
            "error: the files have {}, shown above",
            crate::render::findings::plural(loaded.diagnostics.len(), "problem")
        );
        return Err(Stop::Reported);
    }
    Ok(())
}

pub use crate::connect::open_env;

/// How a command reaches the service.
pub enum Reach<'a> {
    /// `plan --refresh=none`: a client that is never used.
    Offline,
    /// `--api-url` (else the engine's rule); `prefetch`: every listing a
    /// plan that refreshes everything reads starts while the files load
    /// (at 100,000 checks the service is read in the seconds the files
    /// take to load). Only for a plan: an apply plans under its lock.
    Service { api_url: Option<&'a str>, prefetch: bool },
}

/// What a command opens besides the files.
pub struct Open<'a> {
    pub findings: Findings,
    /// The policies, for a plan or an apply (a policy that does not load
    /// stops the command: a rule the team wrote is never silently skipped).
    pub policies: bool,
    /// The state, recording this command (`monform apply`) with its
    /// PostgreSQL writes and lock; it needs an environment chosen when the
    /// project declares some.
    pub state: Option<&'a str>,
    pub reach: Reach<'a>,
}

/// Opens the project of `dir` through the engine (`ops::open`), saying
/// why not in this command line's words: the files' warnings first, then
/// the first problem (the files', the environment's, the policies', the
/// state's, the API's).
pub async fn open(dir: &Path, output: &Output, open: Open<'_>) -> Result<Opened, Stop> {
    let env = open_env();
    let rate_limit = crate::connect::RATE_LIMIT_FLAG.get().cloned().flatten();
    let observe = crate::connect::observe;
    let api = match open.reach {
        Reach::Offline => ApiRequest::Offline,
        Reach::Service { api_url, prefetch } => ApiRequest::Connect(Connect {
            flag: api_url,
            rate_limit_flag: rate_limit.as_deref(),
            prefetch,
            local: Some(&crate::connect::Emulator),
            observe: Some(&observe),
        }),
    };
    let prefetch = matches!(&api, ApiRequest::Connect(connect) if connect.prefetch);
    if prefetch {
        // Its retry lines wait until the load's own output is out, as
        // those of a connection made after the load.
        crate::connect::hold_lines();
    }
    let request = OpenRequest {
        environment: environment(),
        findings: open.findings == Findings::Show,
        policies: if open.policies {
            PolicyLoad::Require
        } else {
            PolicyLoad::Skip
        },
        state: open.state,
        api,
        ..OpenRequest::new(dir, &env)
    };
    match ops::open(request).await {
        Ok(opened) => {
            show_load(&opened.loaded, output)?;
            if prefetch {
                crate::connect::release_lines();
            }
            Ok(opened)
        }
        Err(OpenError { why, loaded }) => {
            if let Some(loaded) = &loaded {
                show_load(loaded, output)?;
            }
            Err(unopened(dir, why, loaded.as_deref(), output))
        }
    }
}

/// Why a project did not open, in words (the files' problems are shown by `open`).
fn unopened(dir: &Path, why: Unopened, loaded: Option<&Loaded>, output: &Output) -> Stop {
    match why {
        Unopened::NoEnvironment(refusal) => Stop::Message(format!("{refusal} with --env NAME or MONFORM_ENV")),
        Unopened::Policies(problems) => {
            if let Some(loaded) = loaded {
                output.diagnostics(&problems, &loaded.sources);
            }
            let count = match problems.len() {
                1 => "1 problem".to_owned(),
                n => format!("{n} problems"),
            };
            eprintln!("error: {count} in the policies; nothing was checked");
            Stop::Reported
        }
        Unopened::State(why) => state_unopened(why),
        Unopened::Api(why) => {
            let project = loaded.and_then(|l| l.project.clone());
            let project = project.unwrap_or_else(|| Project::new(String::new()));
            Stop::Message(crate::connect::unconnected(dir, &project, &why))
        }
        other => Stop::Message(other.to_string()),
    }
}

/// Why the state did not open, in words.
fn state_unopened(why: StateUnopened) -> Stop {
    Stop::Message(match why {
        StateUnopened::NoUrl => format!(
            "{STATE_URL_VARIABLE} is not set: the PostgreSQL state backend needs it\n\nhint: export {STATE_URL_VARIABLE}=postgres://USER:PASSWORD@HOST:5432/DATABASE (connection URLs never live in files)"
        ),
        StateUnopened::Postgres(error) => error.to_string(),
    })
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

/// How much `export` and `import --all-unmanaged` fold look-alike objects
/// into `forEach` definitions (issue 49).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum FoldArg {
    /// One entry per object, no [defaults]
    None,
    /// Fold objects differing in at most 3 simple fields (strings, numbers, a top-level list such as locations), 3+ a definition; the checks' shared values into [defaults]
    #[default]
    Safe,
    /// Also fold differing lists and nested values, up to 8 fields, 2+ a definition
    Aggressive,
}

impl From<FoldArg> for monform_engine::ops::Fold {
    fn from(fold: FoldArg) -> monform_engine::ops::Fold {
        match fold {
            FoldArg::None => monform_engine::ops::Fold::None,
            FoldArg::Safe => monform_engine::ops::Fold::Safe,
            FoldArg::Aggressive => monform_engine::ops::Fold::Aggressive,
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

/// The project's state backend (`ops::open_state`), recording `command`
/// with every PostgreSQL write and lock.
pub fn open_backend(dir: &Path, project: &Project, command: &str) -> Result<Box<dyn StateBackend>, Stop> {
    ops::open_state(dir, project, command, &open_env()).map_err(state_unopened)
}

pub fn local_state(dir: &Path, project: &Project) -> LocalState {
    ops::local_state(dir, project)
}

/// The PostgreSQL state of `project`, at `MONFORM_STATE_URL`.
pub fn open_postgres(project: &str, command: &str) -> Result<PostgresState, Stop> {
    ops::open_postgres(project, command, &open_env()).map_err(state_unopened)
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
