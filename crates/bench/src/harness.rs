//! The plumbing every phase shares: the in-process emulator and its
//! client, loading the generated project, planning as `monform plan` does,
//! and the sanity problems that make a run fail. Below the phases and
//! `run`, so a phase never calls back into the module that runs it.

use std::path::Path;

use monform_api::{Client, ClientConfig, Secret};
use monform_config::Loaded;
use monform_engine::Target;
use monform_engine::ops::{self, Api, OpenEnv, OpenError, OpenRequest, Opened, PlanRequest, Planned};

use crate::measure::{Cost, Probe, Requests};

/// The hidden child phases' environment: where the parent's emulator is
/// and its key.
pub const ENV_URL: &str = "MONFORM_BENCH_URL";

pub const ENV_KEY: &str = "MONFORM_BENCH_API_KEY";

pub const ENV_ACCOUNT: &str = "MONFORM_BENCH_ACCOUNT";

pub(crate) fn client_for(url: &str, key: &str, account: &str) -> Client {
    let mut config = ClientConfig::new(url, Secret::new(key));
    config.rate_limit = None;
    config.account_id = Some(account.to_owned());
    Client::new(config).expect("a valid client configuration")
}

/// Opens the project as `monform` does (`ops::open_files`: the files, the
/// parse cache when `cache`, the local state), planning with `client` (the
/// bench's own, of its emulator) when given; a generated project must
/// load without diagnostics.
pub(crate) fn open(dir: &Path, client: Option<&Client>, cache: bool) -> Opened {
    let env = OpenEnv::empty();
    let request = OpenRequest {
        cache,
        state: Some("monform-bench"),
        ..OpenRequest::new(dir, &env)
    };
    let mut opened = match ops::open_files(request) {
        Ok(opened) => opened,
        Err(OpenError { why, loaded }) => {
            for diagnostic in loaded.iter().flat_map(|l| l.diagnostics.iter().take(10)) {
                let at = loaded.as_ref().and_then(|l| diagnostic.location(&l.sources));
                eprintln!(
                    "{}: {} [{}]",
                    at.unwrap_or_default(),
                    diagnostic.message,
                    diagnostic.code
                );
            }
            panic!("the generated project does not open: {why}");
        }
    };
    if let Some(client) = client {
        let target = Target {
            api_url: client.base_url().to_owned(),
            account: None,
        };
        opened.api = Some(Api::of_client(client.clone(), target));
    }
    opened
}

/// Loads the project's files (`open`, without the state's use).
pub(crate) fn load(dir: &Path) -> Loaded {
    open(dir, None, false).loaded
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

/// Plans as `monform plan` does.
pub(crate) async fn fetch_and_plan(opened: &Opened) -> Planned {
    let session = opened.session().expect("opened with the bench's client");
    ops::plan(&session, &PlanRequest::default())
        .await
        .expect("the plan is made")
}
