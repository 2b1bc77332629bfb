//! Live facts for hover: what the service holds of each resource (its
//! remote id, the fields that drifted, its last result), kept in a cache
//! that a background thread refreshes through the engine's front door
//! (`ops::plan`, `ops::status`). Hover reads the cache and never waits on
//! the network. Only ids, field names, statuses and times are kept: never
//! a value, so no secret can reach the editor.
//!
//! Enabled when `MONFORM_API_KEY` is set (the front end reads the
//! variables into [`Config::env`]). Each refresh opens the project as
//! every front end does, through `ops::open` over the same unsaved text:
//! the state monform.toml names (PostgreSQL at `MONFORM_STATE_URL`), the
//! URL by the engine's rule (`--api-url` aside: `MONFORM_API_URL`, or
//! `[api] url` once trusted), `MONFORM_ACCOUNT_ID`, `MONFORM_RATE_LIMIT`;
//! `url = "local"` (an emulator started in-process) is not started by the
//! editor. Opening a file must not hand the key to whatever URL a cloned
//! repository names: when the engine refuses the URL, no request is made
//! and the editor is told why, once (`window/showMessage`; hover says it
//! too).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification};
use lsp_types::notification::{Notification as _, ShowMessage};
use lsp_types::{MessageType, ShowMessageParams};
use monform_engine::Action;
use monform_engine::ops::{
    self, AccessRefusal, ApiRequest, ApiUnopened, Connect, OpenRequest, Opened, PlanRequest, StateUnopened,
    StatusRequest, Unopened,
};
use monform_model::Address;
use monform_model::reports::QuickRange;

use crate::Config;
use crate::analysis::Analysis;

/// How often a project's facts are read at most: each load after a change
/// asks, and typing should not become a stream of plans.
pub const MIN_INTERVAL: Duration = Duration::from_secs(5);

/// What the service holds of one resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fact {
    pub remote_id: Option<String>,
    /// What a plan would do (`Noop` when in sync).
    pub action: Option<Action>,
    /// Fields changed outside monform, by path.
    pub drifted: Vec<String>,
    /// The latest result's status and start time.
    pub last_status: Option<String>,
    pub last_time: Option<String>,
    /// The plan takes this new resource for a rename of that one (a delete
    /// and a create of near-equal objects): a `moved` entry would keep it.
    pub renamed_from: Option<Address>,
}

/// The facts of one project, from one refresh.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub resources: HashMap<Address, Fact>,
    /// When they were read (for the hover's "as of").
    pub read_at: Option<std::time::SystemTime>,
    /// Why the last refresh failed, in words without secrets.
    pub error: Option<String>,
}

type Cache = Arc<Mutex<HashMap<PathBuf, Facts>>>;

/// The cache and the thread that fills it.
pub struct Live {
    requests: Option<Sender<Arc<Analysis>>>,
    cache: Cache,
}

impl Live {
    /// Live facts when the front end read an API key; none otherwise.
    /// `editor` is where the reason goes when a project's API is refused.
    pub fn new(editor: Sender<Message>, config: &Config) -> Live {
        let cache: Cache = Arc::default();
        let requests = config.env.api_key.is_some().then(|| {
            let (sender, receiver) = crossbeam_channel::unbounded();
            let filled = cache.clone();
            let config = config.clone();
            std::thread::spawn(move || refresher(receiver, config, filled, editor));
            sender
        });
        Live { requests, cache }
    }

    /// Asks for the facts of a freshly loaded project (files without
    /// errors only: a plan refuses the others).
    pub fn watch(&self, analysis: &Arc<Analysis>) {
        if let Some(requests) = &self.requests
            && analysis.files_ok
        {
            let _ = requests.send(analysis.clone());
        }
    }

    /// The facts of a resource as last read, without waiting.
    pub fn fact(&self, analysis: &Analysis, address: &Address) -> Option<(Fact, Facts)> {
        let cache = self.cache.lock().ok()?;
        let facts = cache.get(&analysis.root)?;
        let fact = facts.resources.get(address).cloned().unwrap_or_default();
        Some((
            fact,
            Facts {
                resources: HashMap::new(),
                read_at: facts.read_at,
                error: facts.error.clone(),
            },
        ))
    }
}

fn refresher(requests: Receiver<Arc<Analysis>>, config: Config, cache: Cache, editor: Sender<Message>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return;
    };
    let mut last: HashMap<PathBuf, Instant> = HashMap::new();
    // The last refusal told of each project: told once, again when it changes.
    let mut told: HashMap<PathBuf, String> = HashMap::new();
    while let Ok(first) = requests.recv() {
        let mut latest: HashMap<PathBuf, Arc<Analysis>> = HashMap::new();
        latest.insert(first.root.clone(), first);
        for analysis in requests.try_iter() {
            latest.insert(analysis.root.clone(), analysis);
        }
        for (root, analysis) in latest {
            if last.get(&root).is_some_and(|at| at.elapsed() < MIN_INTERVAL) {
                continue;
            }
            last.insert(root.clone(), Instant::now());
            let facts = match runtime.block_on(read(&analysis, &config)) {
                Ok(facts) => {
                    told.remove(&root);
                    Ok(facts)
                }
                Err(Off::Quiet(reason)) => {
                    told.remove(&root);
                    Err(reason)
                }
                Err(Off::Refused(reason)) => {
                    if told.get(&root) != Some(&reason) {
                        tell(&editor, &reason);
                        told.insert(root.clone(), reason.clone());
                    }
                    Err(reason)
                }
            }
            .unwrap_or_else(|error| Facts {
                error: Some(error),
                ..Facts::default()
            });
            if let Ok(mut cache) = cache.lock() {
                cache.insert(root, facts);
            }
        }
    }
}

/// Why a project has no live facts: nothing set up or a failure (said
/// in hover only), or a URL refused (the editor is told as well: the user
/// may expect them).
enum Off {
    Quiet(String),
    Refused(String),
}

/// Why the project did not open for live facts, in one line without
/// secrets (hover shows it).
fn off(why: Unopened) -> Off {
    match why {
        Unopened::Api(ApiUnopened::NoLocal) => Off::Quiet(
            "the editor does not start the bundled emulator (url = \"local\"); run `monform serve` and set MONFORM_API_URL"
                .into(),
        ),
        Unopened::Api(ApiUnopened::Access(AccessRefusal::NoUrl)) => {
            Off::Quiet("no API URL (MONFORM_API_URL or [api] url)".into())
        }
        Unopened::Api(ApiUnopened::Access(refusal @ AccessRefusal::Untrusted { .. })) => Off::Refused(format!(
            "{refusal} (run `monform trust` in the project, or set MONFORM_API_URL)"
        )),
        Unopened::Api(ApiUnopened::Access(refusal)) => Off::Refused(refusal.to_string()),
        // Its error may name the URL, whose password the editor must not show.
        Unopened::State(StateUnopened::Postgres(_)) => {
            Off::Quiet("cannot open the PostgreSQL state at MONFORM_STATE_URL".into())
        }
        other => Off::Quiet(other.to_string()),
    }
}

/// Shows `reason` in the editor (a closed connection has nobody to tell).
fn tell(editor: &Sender<Message>, reason: &str) {
    let params = ShowMessageParams {
        typ: MessageType::WARNING,
        message: format!("monform: live facts off: {reason}"),
    };
    let _ = editor.send(Notification::new(ShowMessage::METHOD.into(), params).into());
}

/// One refresh: the project opened over the analysis's text (its state
/// and API), then a plan (remote ids, drift) and the applied checks' last
/// results.
async fn read(analysis: &Analysis, config: &Config) -> Result<Facts, Off> {
    let request = OpenRequest {
        environment: config.environment.as_deref(),
        unsaved: Some(&analysis.unsaved),
        state: Some("monform lsp"),
        api: ApiRequest::Connect(Connect::default()),
        ..OpenRequest::new(&analysis.root, &config.env)
    };
    let opened = ops::open(request).await.map_err(|error| off(error.why))?;
    let facts = facts_of(&opened).await.map_err(Off::Quiet);
    opened.close().await;
    facts
}

async fn facts_of(opened: &Opened) -> Result<Facts, String> {
    let session = opened.session().map_err(|why| why.to_string())?;
    let client = session.client;
    let planned = ops::plan(&session, &PlanRequest::default())
        .await
        .map_err(|refusal| refusal.to_string())?;
    let mut facts = Facts {
        read_at: Some(std::time::SystemTime::now()),
        ..Facts::default()
    };
    for change in &planned.plan.changes {
        let fact = facts.resources.entry(change.address.clone()).or_default();
        fact.remote_id = change.remote_id.clone();
        fact.action = Some(change.action);
        fact.drifted = change
            .fields
            .iter()
            .filter(|f| f.drift)
            .map(|f| f.path.clone())
            .collect();
    }
    for suggested in &planned.plan.suggested_moves {
        facts.resources.entry(suggested.to.clone()).or_default().renamed_from = Some(suggested.from.clone());
    }
    let request = StatusRequest {
        range: QuickRange::Last24Hours,
        ..Default::default()
    };
    if let Ok(statuses) = ops::status(client, session.desired, &planned.state, &request).await {
        for status in statuses {
            facts.resources.entry(status.address.clone()).or_default().last_status =
                status.last_status.map(|s| s.as_str().to_owned());
        }
    }
    // The time of the latest result, for the checks that have one.
    for (id, address) in ops::applied_checks(&planned.state) {
        if let Ok(results) = client.recent_results(&id, 1).await
            && let Some(time) = results.first().and_then(|r| r["startedAt"].as_str())
        {
            facts.resources.entry(address).or_default().last_time = Some(time.to_owned());
        }
    }
    Ok(facts)
}
