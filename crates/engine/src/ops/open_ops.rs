//! Opening a project (issue 44): **the one way** a front end gets from a
//! folder to a [`Session`]: monform.toml read once, the environment
//! chosen, the files loaded (the parse cache, an editor's unsaved text),
//! the Rego policies, the state backend and the API connection
//! (`connect.rs`). The CLI, the reconciler, the language server and the
//! bench open through [`open`], so a rule about any of these is written
//! once.
//!
//! Nothing here reads the process environment: the front end reads what
//! it needs into an [`OpenEnv`] and passes it, so an engine opening
//! projects for several callers (a language server, an agent's server)
//! decides for each with its own inputs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use monform_config::{Diagnostic, Loaded, Project, Unsaved};
use monform_policy::Policies;
use monform_policy::input::{Input, Places};

use super::{Refusal, Session};
use crate::state::postgres::Actor;
use crate::state::{LocalState, PostgresState, StateBackend};

mod connect;

pub use connect::{
    Api, ApiRequest, ApiUnopened, Connect, LocalService, ObserveClient, RateLimitSource, StartedLocal, connect_api,
    parse_rate_limit,
};

/// The variables a front end reads for opening a project.
pub const API_URL_VARIABLE: &str = "MONFORM_API_URL";
pub const API_KEY_VARIABLE: &str = "MONFORM_API_KEY";
pub const ACCOUNT_VARIABLE: &str = "MONFORM_ACCOUNT_ID";
pub const RATE_LIMIT_VARIABLE: &str = "MONFORM_RATE_LIMIT";
/// Where the URL of the PostgreSQL state comes from (never from files).
pub const STATE_URL_VARIABLE: &str = "MONFORM_STATE_URL";

/// A variable of the caller's environment, by name.
pub type EnvVars = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What the front end read of its environment (an empty value counts as
/// unset). Built by [`OpenEnv::read`] from a lookup, or field by field.
#[derive(Clone)]
pub struct OpenEnv {
    /// `MONFORM_API_URL`.
    pub api_url: Option<String>,
    /// `MONFORM_API_KEY`: never in files.
    pub api_key: Option<String>,
    /// `MONFORM_ACCOUNT_ID`.
    pub account_id: Option<String>,
    /// `MONFORM_RATE_LIMIT` (`N/SECS` or `off`).
    pub rate_limit: Option<String>,
    /// `MONFORM_STATE_URL`: the PostgreSQL state's connection URL.
    pub state_url: Option<String>,
    /// The user's monform folder (`ops::user_config_dir`): their
    /// config.toml and trusted projects.
    pub user_dir: Option<PathBuf>,
    /// Who runs (`USER`, `LOGNAME`, `USERNAME`), for the PostgreSQL
    /// state's history and lock.
    pub user: Option<String>,
    /// Every other variable: what the files' `${env:NAME}` read (under the
    /// project's `secret-env` / `public-env` / `pass-env` rules).
    pub vars: EnvVars,
}

impl OpenEnv {
    /// Reads every value through `lookup` (the caller's environment).
    pub fn read(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> OpenEnv {
        let set = |name: &str| lookup(name).filter(|value| !value.is_empty());
        OpenEnv {
            api_url: set(API_URL_VARIABLE),
            api_key: set(API_KEY_VARIABLE),
            account_id: set(ACCOUNT_VARIABLE),
            rate_limit: set(RATE_LIMIT_VARIABLE),
            state_url: set(STATE_URL_VARIABLE),
            user_dir: super::user_config_dir(&lookup),
            user: ["USER", "LOGNAME", "USERNAME"].iter().find_map(|name| set(name)),
            vars: Arc::new(lookup),
        }
    }

    /// No variable set: a project opened as if the environment were empty.
    pub fn empty() -> OpenEnv {
        OpenEnv::read(|_| None)
    }
}

impl std::fmt::Debug for OpenEnv {
    // Never the key nor the state's URL (it may hold a password).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenEnv")
            .field("api_url", &self.api_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "(set)"))
            .field("account_id", &self.account_id)
            .field("rate_limit", &self.rate_limit)
            .field("state_url", &self.state_url.as_ref().map(|_| "(set)"))
            .field("user_dir", &self.user_dir)
            .finish_non_exhaustive()
    }
}

/// Whether and how the project's Rego policies are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolicyLoad {
    /// Not loaded (commands that neither plan nor apply).
    #[default]
    Skip,
    /// Loaded; a policy that does not parse (or a `[policy] paths` entry
    /// outside the project) stops the open: a rule the team wrote is
    /// never silently skipped by a plan or an apply.
    Require,
    /// Loaded; problems are kept in [`Opened::policy_problems`] (`validate`,
    /// an editor: they are diagnostics like the files').
    Report,
}

/// What to open.
pub struct OpenRequest<'a> {
    /// The project's folder (where monform.toml is), as the user named it:
    /// messages name files under it.
    pub dir: &'a Path,
    /// `--env` (or `MONFORM_ENV`, read by the front end).
    pub environment: Option<&'a str>,
    pub env: &'a OpenEnv,
    /// An editor's text not yet saved, by file name relative to `dir`.
    pub unsaved: Option<&'a Unsaved>,
    /// Use the parse cache in `dir/.monform/cache/`.
    pub cache: bool,
    /// Keep the linter's findings: only the commands about the files
    /// (validate, plan, apply) show them or fail on them.
    pub findings: bool,
    pub policies: PolicyLoad,
    /// Open the state backend, recording this command with its PostgreSQL
    /// writes and lock (`monform apply`); `None`: no state. A project that
    /// declares environments has a state only for one of them.
    pub state: Option<&'a str>,
    pub api: ApiRequest<'a>,
}

impl<'a> OpenRequest<'a> {
    /// The files of `dir` alone: the parse cache and the findings, no
    /// environment, no policies, state or API.
    pub fn new(dir: &'a Path, env: &'a OpenEnv) -> OpenRequest<'a> {
        OpenRequest {
            dir,
            environment: None,
            env,
            unsaved: None,
            cache: true,
            findings: true,
            policies: PolicyLoad::Skip,
            state: None,
            api: ApiRequest::None,
        }
    }
}

/// The project's policies, and what the input of its files needs besides
/// the resources ([`Places`], taken only when there are policies): the
/// input itself is built when it is evaluated ([`ProjectPolicies::files`]).
pub struct ProjectPolicies {
    pub policies: Policies,
    pub places: Places,
}

impl ProjectPolicies {
    fn none() -> ProjectPolicies {
        ProjectPolicies {
            policies: Policies::default(),
            places: Places::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// `input` without `plan` (`monform_policy::input::files_at`), of the
    /// `desired` these policies were loaded with. A fifth of a GB at
    /// 100,000 checks: built just before it is evaluated, dropped after.
    pub fn files(&self, desired: &monform_config::Desired) -> Input {
        monform_policy::input::files_at(desired, &self.places)
    }
}

/// An opened project.
pub struct Opened {
    pub root: PathBuf,
    /// The files as loaded, valid (the policies' sources appended to its
    /// sources); its `warnings` are the front end's to show.
    pub loaded: Loaded,
    /// `loaded`'s project, the environment selected.
    pub project: Project,
    /// Empty unless asked for ([`PolicyLoad`]).
    pub policies: ProjectPolicies,
    /// Policies that do not load, with [`PolicyLoad::Report`].
    pub policy_problems: Vec<Diagnostic>,
    pub backend: Option<Box<dyn StateBackend>>,
    pub api: Option<Api>,
}

/// Why a project did not open, with the files when they were loaded (a
/// front end shows their warnings, or their problems, first).
#[derive(Debug, thiserror::Error)]
#[error("{why}")]
pub struct OpenError {
    pub why: Unopened,
    pub loaded: Option<Box<Loaded>>,
}

/// Why a project did not open.
#[derive(Debug, thiserror::Error)]
pub enum Unopened {
    /// The files have problems (in [`OpenError::loaded`]).
    #[error("the files have {0} problems")]
    Files(usize),
    #[error("monform.toml has no project")]
    NoProject,
    /// The project declares environments and none is chosen, so it has no state.
    #[error("{0}")]
    NoEnvironment(Refusal),
    /// Policies that do not load (their sources are in the files' sources).
    #[error("{} in the policies", problems(.0.len()))]
    Policies(Vec<Diagnostic>),
    #[error("{0}")]
    State(#[from] StateUnopened),
    #[error("{0}")]
    Api(#[from] ApiUnopened),
    /// [`Opened::session`] without a state or an API asked for.
    #[error("the project was opened without {0}")]
    Without(&'static str),
}

fn problems(n: usize) -> String {
    match n {
        1 => "1 problem".to_owned(),
        n => format!("{n} problems"),
    }
}

/// Why the state backend did not open.
#[derive(Debug, thiserror::Error)]
pub enum StateUnopened {
    /// `[state] backend = "postgres"` without `MONFORM_STATE_URL`.
    #[error("{STATE_URL_VARIABLE} is not set: the PostgreSQL state backend needs it")]
    NoUrl,
    /// Its message has no password (the backend scrubs it).
    #[error("{0}")]
    Postgres(crate::state::StateError),
}

/// Opens the project of `request.dir`: monform.toml read once, then (when
/// a plan reads everything) the connection made and the account's listings
/// started while the resource files load, then the policies, the state and
/// the API. Problems come in that order: the files', the environment's,
/// the policies', the state's, the API's.
pub async fn open(request: OpenRequest<'_>) -> Result<Opened, OpenError> {
    let env = request.env;
    let no_text = Unsaved::default();
    let unsaved = request.unsaved.unwrap_or(&no_text);
    let vars = |name: &str| (env.vars)(name);
    let opening = monform_config::open(request.dir, &vars, request.environment, unsaved);
    // Every object is read whatever the files say: reading starts now, and
    // its problems wait their turn (below) so they come in the usual order.
    let ahead = match (&request.api, opening.project()) {
        (ApiRequest::Connect(connect), Some(project)) if connect.prefetch => {
            let text = opening.project_text();
            let api = connect_api(request.dir, project, env, connect, text).await;
            if let Ok(api) = &api {
                super::prefetch(&api.client);
            }
            Some(api)
        }
        _ => None,
    };
    let mut opened = match open_rest(opening, &request) {
        Ok(opened) => opened,
        Err(error) => {
            if let Some(Ok(api)) = ahead {
                api.close().await;
            }
            return Err(error);
        }
    };
    let api = match (ahead, &request.api) {
        (Some(ahead), _) => Some(ahead),
        (None, ApiRequest::None) => None,
        (None, ApiRequest::Offline) => Some(connect::offline()),
        (None, ApiRequest::Connect(connect)) => {
            let text = opened.loaded.sources.iter().next().map(|file| file.text.as_ref());
            Some(connect_api(request.dir, &opened.project, env, connect, text).await)
        }
    };
    match api.transpose() {
        Ok(api) => opened.api = api,
        Err(why) => {
            return Err(OpenError {
                why: why.into(),
                loaded: Some(Box::new(opened.loaded)),
            });
        }
    }
    Ok(opened)
}

/// [`open`] without the API (`request.api` is not read): what a front
/// end that is not async opens (a reconciler's interval reloading the
/// files, an editor's diagnostics).
pub fn open_files(request: OpenRequest<'_>) -> Result<Opened, OpenError> {
    let env = request.env;
    let no_text = Unsaved::default();
    let unsaved = request.unsaved.unwrap_or(&no_text);
    let vars = |name: &str| (env.vars)(name);
    let opening = monform_config::open(request.dir, &vars, request.environment, unsaved);
    open_rest(opening, &request)
}

/// The files, the environment, the policies and the state, after monform.toml.
fn open_rest(opening: monform_config::Opening<'_>, request: &OpenRequest<'_>) -> Result<Opened, OpenError> {
    // The local state is read on a thread of its own while the files load
    // (at 100,000 checks each takes most of a second of a core); its
    // problems wait for the load that takes it, as before.
    let ahead = match (request.state, opening.project()) {
        (Some(_), Some(project)) => state_ahead(request.dir, project),
        _ => None,
    };
    let cache = request.cache.then(|| request.dir.join(monform_config::CACHE_DIR));
    let mut loaded = opening.load(cache.as_deref());
    // An opened project serves one command: nothing reloads one file of
    // it (the editor's revalidation loads on its own).
    loaded.forget_reload_index();
    if !request.findings {
        loaded.warnings.retain(|d| !d.finding);
        loaded.diagnostics.retain(|d| !d.finding);
    }
    let fail = |why: Unopened, loaded: Loaded| OpenError {
        why,
        loaded: Some(Box::new(loaded)),
    };
    if !loaded.is_ok() {
        return Err(fail(Unopened::Files(loaded.diagnostics.len()), loaded));
    }
    let Some(project) = loaded.project.clone() else {
        return Err(fail(Unopened::NoProject, loaded));
    };
    if request.state.is_some()
        && let Err(refusal) = super::environment_chosen(&project)
    {
        return Err(fail(Unopened::NoEnvironment(refusal), loaded));
    }
    let (policies, policy_problems) = match request.policies {
        PolicyLoad::Skip => (ProjectPolicies::none(), Vec::new()),
        mode => {
            let (policies, problems) = load_policies(request.dir, &mut loaded, &project);
            if mode == PolicyLoad::Require && !problems.is_empty() {
                return Err(fail(Unopened::Policies(problems), loaded));
            }
            (policies, problems)
        }
    };
    let backend = match (request.state, ahead) {
        (Some(_), Some(ahead)) => Some(Box::new(ahead) as Box<dyn StateBackend>),
        (Some(command), None) => match open_state(request.dir, &project, command, request.env) {
            Ok(backend) => Some(backend),
            Err(why) => return Err(fail(why.into(), loaded)),
        },
        (None, _) => None,
    };
    Ok(Opened {
        root: request.dir.to_path_buf(),
        loaded,
        project,
        policies,
        policy_problems,
        backend,
        api: None,
    })
}

/// Loads the project's Rego policies into `loaded`'s sources, with the
/// input of its files, and their problems: **the one place** policies are
/// read ([`open`] for a plan or an apply; `monform policy test`, which
/// needs no valid resource files; the bench).
pub fn load_policies(dir: &Path, loaded: &mut Loaded, project: &Project) -> (ProjectPolicies, Vec<Diagnostic>) {
    let (policies, problems) = monform_policy::load(dir, project, &mut loaded.sources);
    // Where each resource is written (the input needs its line): only for
    // policies to read.
    let places = if policies.is_empty() {
        Places::default()
    } else {
        Places::of(&loaded.desired, project, &loaded.sources)
    };
    (ProjectPolicies { policies, places }, problems)
}

/// The project's state backend: `.monform/state.json`
/// (`state.<env>.json` for an environment), or PostgreSQL at
/// `MONFORM_STATE_URL` when monform.toml says `[state] backend =
/// "postgres"` (a row per project name, so per environment). `command` is
/// recorded with every PostgreSQL write and lock.
pub fn open_state(
    dir: &Path,
    project: &Project,
    command: &str,
    env: &OpenEnv,
) -> Result<Box<dyn StateBackend>, StateUnopened> {
    match project.state_backend {
        monform_config::StateBackend::Local => Ok(Box::new(local_state(dir, project))),
        monform_config::StateBackend::Postgres => Ok(Box::new(open_postgres(&project.name, command, env)?)),
    }
}

/// The local state of `project`, its reading started
/// ([`LocalState::read_ahead`]), when that is its backend and it has one
/// (an environment chosen where it declares some).
fn state_ahead(dir: &Path, project: &Project) -> Option<LocalState> {
    let local = project.state_backend == monform_config::StateBackend::Local;
    if !local || super::environment_chosen(project).is_err() {
        return None;
    }
    let state = local_state(dir, project);
    state.read_ahead(&project.name);
    Some(state)
}

/// The local state of `project` (of its environment when one is selected).
pub fn local_state(dir: &Path, project: &Project) -> LocalState {
    match &project.environment {
        Some(environment) => LocalState::for_environment(dir, environment),
        None => LocalState::new(dir),
    }
}

/// The PostgreSQL state of the project `name`, at `MONFORM_STATE_URL`.
pub fn open_postgres(name: &str, command: &str, env: &OpenEnv) -> Result<PostgresState, StateUnopened> {
    let url = env.state_url.as_deref().ok_or(StateUnopened::NoUrl)?;
    PostgresState::open(url, name, Actor::of_user(command, env.user.clone())).map_err(StateUnopened::Postgres)
}

impl Opened {
    /// The session to plan and apply with: the one place a [`Session`] is
    /// made. Needs the state and an API (or the offline one) opened.
    pub fn session(&self) -> Result<Session<'_>, Unopened> {
        self.session_over(self)
    }

    /// A session over `files` (the same project opened again: a
    /// reconciler reloads its files each interval) with this one's state
    /// and API connection.
    pub fn session_over<'a>(&'a self, files: &'a Opened) -> Result<Session<'a>, Unopened> {
        let backend = self.backend.as_deref().ok_or(Unopened::Without("a state"))?;
        let api = self.api.as_ref().ok_or(Unopened::Without("an API connection"))?;
        Ok(Session {
            project: &files.project,
            desired: &files.loaded.desired,
            client: &api.client,
            backend,
            policies: Some(&files.policies),
            sweep: None,
        })
    }

    /// Connects afterwards (an editor opens without the API, then asks for
    /// live facts); replaces a connection made before.
    pub async fn connect(&mut self, request: &ApiRequest<'_>, env: &OpenEnv) -> Result<(), ApiUnopened> {
        let api = match request {
            ApiRequest::None => None,
            ApiRequest::Offline => Some(connect::offline()?),
            ApiRequest::Connect(connect) => {
                let text = self.loaded.sources.iter().next().map(|file| file.text.as_ref());
                Some(connect_api(&self.root, &self.project, env, connect, text).await?)
            }
        };
        if let Some(old) = std::mem::replace(&mut self.api, api) {
            old.close().await;
        }
        Ok(())
    }

    /// Closes the API connection (stops a local service); the files,
    /// policies and state stay.
    pub async fn close(&self) {
        if let Some(api) = &self.api {
            api.close().await;
        }
    }
}

/// The folder holding monform.toml, from a path (a file or a folder) up:
/// where an editor's file belongs.
pub fn find_project(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|folder| folder.join(monform_config::project::PROJECT_FILE).is_file())
        .map(Path::to_path_buf)
}
