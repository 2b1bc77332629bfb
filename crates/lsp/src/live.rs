//! Live facts for hover: what the service holds of each resource (its
//! remote id, the fields that drifted, its last result), kept in a cache
//! that a background thread refreshes through the engine's front door
//! (`ops::plan`, `ops::status`). Hover reads the cache and never waits on
//! the network. Only ids, field names, statuses and times are kept: never
//! a value, so no secret can reach the editor.
//!
//! Enabled when the API is known and a key is set (`MONFORM_API_KEY`, the
//! URL from `MONFORM_API_URL` or `[api] url`, the account from
//! `MONFORM_ACCOUNT_ID`), as for `monform plan`; `url = "local"` (an
//! emulator started in-process) is not started by the editor. Opening a
//! file must not hand the key to whatever URL a cloned repository names:
//! the engine's rule (`ops::choose_api`) decides, as for the CLI, and when
//! it refuses, no request is made and the editor is told why, once
//! (`window/showMessage`; hover says it too).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification};
use lsp_types::notification::{Notification as _, ShowMessage};
use lsp_types::{MessageType, ShowMessageParams};
use monform_api::{Client, ClientConfig, Secret};
use monform_engine::ops::{self, AccessRefusal, AccessRequest, PlanRequest, ProjectUrl, Session, StatusRequest};
use monform_engine::{Action, Actor, LocalState, PostgresState, StateBackend};
use monform_model::Address;
use monform_model::reports::QuickRange;

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

/// How to reach the service, from the environment.
#[derive(Clone)]
struct Access {
    /// `MONFORM_API_URL`.
    url: Option<String>,
    key: String,
    account: Option<String>,
    /// The user's monform folder (their config.toml and trusted projects).
    user_dir: Option<PathBuf>,
}

impl Live {
    /// Live facts when `MONFORM_API_KEY` is set; none otherwise. `editor`
    /// is where the reason goes when a project's API is refused.
    pub fn from_environment(editor: Sender<Message>) -> Live {
        let cache: Cache = Arc::default();
        let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let requests = env("MONFORM_API_KEY").map(|key| {
            let access = Access {
                url: env("MONFORM_API_URL"),
                key,
                account: env("MONFORM_ACCOUNT_ID"),
                user_dir: ops::user_config_dir(&env),
            };
            let (sender, receiver) = crossbeam_channel::unbounded();
            let filled = cache.clone();
            std::thread::spawn(move || refresher(receiver, access, filled, editor));
            sender
        });
        Live { requests, cache }
    }

    /// Asks for the facts of a freshly loaded project (files without
    /// errors only: a plan refuses the others).
    pub fn watch(&self, analysis: &Arc<Analysis>) {
        if let Some(requests) = &self.requests
            && analysis.loaded.is_ok()
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

fn refresher(requests: Receiver<Arc<Analysis>>, access: Access, cache: Cache, editor: Sender<Message>) {
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
            let facts = match api_url(&analysis, &access) {
                Ok(url) => {
                    told.remove(&root);
                    runtime.block_on(read(&analysis, &access, url))
                }
                Err(Off::Unset(reason)) => Err(reason),
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

/// The URL the key may go to for this project (`ops::choose_api`), or
/// why live facts are off, in one line (hover shows it too).
fn api_url(analysis: &Analysis, access: &Access) -> Result<String, Off> {
    let project_url = analysis.loaded.project.as_ref().and_then(ProjectUrl::of);
    let request = AccessRequest {
        root: &analysis.root,
        flag: None,
        env_url: access.url.as_deref(),
        project_url: project_url.as_ref(),
        user_dir: access.user_dir.as_deref(),
    };
    match ops::choose_api(&request) {
        Ok(chosen) if chosen.is_local() => Err(Off::Unset(
            "the editor does not start the bundled emulator (url = \"local\"); run `monform serve` and set MONFORM_API_URL"
                .into(),
        )),
        Ok(chosen) => Ok(chosen.url),
        Err(AccessRefusal::NoUrl) => Err(Off::Unset("no API URL (MONFORM_API_URL or [api] url)".into())),
        Err(refusal @ AccessRefusal::Untrusted { .. }) => Err(Off::Refused(format!(
            "{refusal} (run `monform trust` in the project, or set MONFORM_API_URL)"
        ))),
        Err(refusal) => Err(Off::Refused(refusal.to_string())),
    }
}

/// Why a project has no live facts: nothing set up (said in hover only),
/// or a URL refused (the editor is told as well: the user may expect them).
enum Off {
    Unset(String),
    Refused(String),
}

/// Shows `reason` in the editor (a closed connection has nobody to tell).
fn tell(editor: &Sender<Message>, reason: &str) {
    let params = ShowMessageParams {
        typ: MessageType::WARNING,
        message: format!("monform: live facts off: {reason}"),
    };
    let _ = editor.send(Notification::new(ShowMessage::METHOD.into(), params).into());
}

/// One refresh: a plan (remote ids, drift) and the applied checks' last results.
async fn read(analysis: &Analysis, access: &Access, url: String) -> Result<Facts, String> {
    let Some(project) = &analysis.loaded.project else {
        return Err("monform.toml has no project".into());
    };
    let mut config = ClientConfig::new(url, Secret::new(access.key.clone()));
    config.account_id = access.account.clone();
    let client = Client::new(config).map_err(|e| e.to_string())?;
    let backend: Box<dyn StateBackend> = match project.state_backend {
        monform_config::StateBackend::Local => Box::new(match &project.environment {
            Some(environment) => LocalState::for_environment(&analysis.root, environment),
            None => LocalState::new(&analysis.root),
        }),
        monform_config::StateBackend::Postgres => {
            let url = std::env::var("MONFORM_STATE_URL")
                .ok()
                .filter(|u| !u.is_empty())
                .ok_or("MONFORM_STATE_URL is not set: the PostgreSQL state backend needs it")?;
            // Its error may name the URL, whose password the editor must not show.
            let state = PostgresState::open(&url, &project.name, Actor::current("monform lsp"))
                .map_err(|_| "cannot open the PostgreSQL state at MONFORM_STATE_URL")?;
            Box::new(state)
        }
    };
    let session = Session {
        project,
        desired: &analysis.loaded.desired,
        client: &client,
        backend: backend.as_ref(),
    };
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
        sparklines: false,
    };
    if let Ok(statuses) = ops::status(&client, &analysis.loaded.desired, &planned.state, request).await {
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
