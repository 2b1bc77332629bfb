//! The plumbing every phase shares: the in-process emulator and its
//! client, loading the generated project, planning as `monform plan` does,
//! and the sanity problems that make a run fail. Below the phases and
//! `run`, so a phase never calls back into the module that runs it.

use std::path::Path;

use monform_api::{Client, ClientConfig, Secret};
use monform_config::{Loaded, Project};
use monform_engine::LocalState;
use monform_engine::ops::{self, PlanRequest, Planned, Session};

use crate::measure::{Cost, Probe, Requests};

/// The hidden child phases' environment: where the parent's emulator is
/// and its key.
pub const ENV_URL: &str = "MONFORM_BENCH_URL";

pub const ENV_KEY: &str = "MONFORM_BENCH_API_KEY";

pub const ENV_ACCOUNT: &str = "MONFORM_BENCH_ACCOUNT";

fn no_env(_: &str) -> Option<String> {
    None
}

pub(crate) fn client_for(url: &str, key: &str, account: &str) -> Client {
    let mut config = ClientConfig::new(url, Secret::new(key));
    config.rate_limit = None;
    config.account_id = Some(account.to_owned());
    Client::new(config).expect("a valid client configuration")
}

/// Loads the project; a generated project must load without diagnostics.
pub(crate) fn load(dir: &Path) -> Loaded {
    let loaded = monform_config::load(dir, &no_env);
    if !loaded.is_ok() {
        for diagnostic in loaded.diagnostics.iter().take(10) {
            eprintln!(
                "{}: {} [{}]",
                diagnostic.location(&loaded.sources).unwrap_or_default(),
                diagnostic.message,
                diagnostic.code
            );
        }
        panic!("the generated project has {} diagnostics", loaded.diagnostics.len());
    }
    loaded
}

pub(crate) struct Bench {
    pub(crate) server: monform_emulator::Server,
    pub(crate) client: Client,
}

impl Bench {
    pub(crate) fn requests(&self) -> Requests {
        let metrics = &self.server.app.metrics;
        Requests {
            served: metrics.total(None),
            sent: self.client.requests_sent(),
            writes: ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .map(|m| metrics.total(Some(m)))
                .sum(),
        }
    }

    pub(crate) fn probe(&self) -> Probe {
        Probe::start(self.requests())
    }

    pub(crate) fn finish(&self, probe: Probe) -> Cost {
        probe.finish(self.requests())
    }
}

/// Problems that make the figures meaningless (an apply that failed, a
/// no-op plan with changes); reported, and the run fails.
#[derive(Default)]
pub struct Sanity(pub Vec<String>);

impl Sanity {
    pub(crate) fn expect(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            let what = what.into();
            eprintln!("warning: {what}");
            self.0.push(what);
        }
    }
}

/// The session of the bench's project against its emulator.
pub(crate) fn session<'a>(
    bench: &'a Bench,
    project: &'a Project,
    loaded: &'a Loaded,
    backend: &'a LocalState,
) -> Session<'a> {
    Session {
        project,
        desired: &loaded.desired,
        client: &bench.client,
        backend,
    }
}

/// Plans as `monform plan` does.
pub(crate) async fn fetch_and_plan(bench: &Bench, dir: &Path, loaded: &Loaded) -> Planned {
    let project = project_of(loaded);
    let backend = LocalState::new(dir);
    ops::plan(&session(bench, &project, loaded, &backend), &PlanRequest::default())
        .await
        .expect("the plan is made")
}

pub(crate) fn project_of(loaded: &Loaded) -> Project {
    loaded.project.clone().expect("the project has a monform.toml")
}
