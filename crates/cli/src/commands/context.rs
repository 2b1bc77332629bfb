//! What plan, apply and destroy share: load the files, connect, read the
//! state, fetch the account, plan.

use std::path::Path;

use monform_config::{Loaded, Project};
use monform_engine::{Actual, LocalState, Plan, PlanOptions, State, StateBackend};
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

/// Everything after loading, up to and including the plan.
pub async fn prepare(
    dir: &Path,
    api_url: Option<&str>,
    (loaded, project): (Loaded, Project),
    targets: &[Address],
    destroy: bool,
) -> Result<Prepared, Stop> {
    if project.state_backend != monform_config::StateBackend::Local {
        return Err(Stop::Message(
            "state backend \"postgres\" is not available yet; use \"local\"".into(),
        ));
    }
    let connection = connect(dir, api_url, &project).await?;
    let backend: Box<dyn StateBackend> = Box::new(LocalState::new(dir));
    let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
    let actual = monform_engine::fetch(&connection.client, &project.name, &loaded.desired, &state)
        .await
        .map_err(|e| Stop::Message(format!("cannot read the account: {e}")))?;
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
