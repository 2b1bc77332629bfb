//! Opening the project for a tool: `ops::open`, as every front end opens
//! it, with the server's own inputs (its folder, `--env`, its
//! environment read once at start); why it did not open, as a refusal
//! with the files' diagnostics.

use monform_engine::ops::{self, ApiRequest, Connect, OpenError, OpenRequest, Opened, PolicyLoad, Unopened};
use serde_json::{Value, json};

use crate::Config;
use crate::reply::{Reply, diagnostic};

/// What a tool needs opened besides the files.
#[derive(Clone, Copy)]
pub struct Needs {
    /// The state, recording this command with PostgreSQL writes and the lock.
    pub state: Option<&'static str>,
    /// The service (`Connect`), and whether to start listing it while the files load.
    pub api: bool,
    pub prefetch: bool,
    pub policies: PolicyLoad,
}

pub async fn open(config: &Config, needs: Needs) -> Result<Opened, Reply> {
    let api = match needs.api {
        true => ApiRequest::Connect(Connect {
            flag: config.api_url.as_deref(),
            rate_limit_flag: None,
            prefetch: needs.prefetch,
            local: config.local,
            observe: None,
        }),
        false => ApiRequest::None,
    };
    let request = OpenRequest {
        environment: config.environment.as_deref(),
        policies: needs.policies,
        state: needs.state,
        api,
        ..OpenRequest::new(&config.dir, &config.env)
    };
    ops::open(request).await.map_err(unopened)
}

/// Why the project did not open, with the problems of its files.
fn unopened(error: OpenError) -> Reply {
    let OpenError { why, loaded } = error;
    let mut diagnostics: Vec<Value> = Vec::new();
    if let Some(loaded) = &loaded {
        diagnostics.extend(loaded.diagnostics.iter().map(|d| diagnostic(d, &loaded.sources)));
    }
    if let (Unopened::Policies(problems), Some(loaded)) = (&why, &loaded) {
        diagnostics.extend(problems.iter().map(|d| diagnostic(d, &loaded.sources)));
    }
    let reason = match &why {
        Unopened::Files(_) => format!("{why}: fix them first (the validate tool lists them)"),
        // Its text may name the state's URL: the scrub would hide a
        // password, but the URL is none of the agent's business either.
        Unopened::State(ops::StateUnopened::Postgres(_)) => "cannot open the PostgreSQL state".to_owned(),
        _ => why.to_string(),
    };
    Reply::refused_with(reason, json!({"diagnostics": diagnostics}))
}
