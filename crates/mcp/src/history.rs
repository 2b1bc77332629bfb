//! Each call that changes something (`plan`, `apply`, `write_file`,
//! `add_check`) in the state's history (`StateBackend::record_call`):
//! what, by which client, on which plan, how it ended. `monform state
//! history` lists them. The tools that only read are not recorded.

use monform_config::Project;
use monform_engine::{CallRecord, StateBackend, ops};

use crate::Config;

/// One call, as the history keeps it.
pub struct Call<'a> {
    pub client: &'a str,
    pub tool: &'a str,
    pub plan_hash: Option<&'a str>,
    pub outcome: String,
}

/// Records `call` in `backend`; a failure to record is the caller's answer.
pub fn record(backend: &dyn StateBackend, project: &str, config: &Config, call: Call<'_>) -> Result<(), String> {
    let record = CallRecord {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        by: config.user.clone(),
        client: call.client.to_owned(),
        tool: call.tool.to_owned(),
        plan_hash: call.plan_hash.map(str::to_owned),
        outcome: call.outcome,
    };
    backend
        .record_call(project, &record)
        .map_err(|e| format!("the call could not be recorded in the state's history: {e}"))
}

/// Records `call` in the project's state, opened for it (a tool that did
/// not open the state: the writes).
pub fn record_in(config: &Config, project: &Project, call: Call<'_>) -> Result<(), String> {
    let command = format!("monform mcp {}", call.tool);
    let backend = ops::open_state(&config.dir, project, &command, &config.env).map_err(|why| match why {
        // Its text may name the state's URL: none of the agent's business.
        ops::StateUnopened::Postgres(_) => "cannot open the PostgreSQL state to record the call".to_owned(),
        other => format!("cannot open the state to record the call: {other}"),
    })?;
    record(backend.as_ref(), &project.name, config, call)
}
