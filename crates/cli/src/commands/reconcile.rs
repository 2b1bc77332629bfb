//! `monform reconcile` (issue 30): arguments, the first load, connecting
//! and the state backend; the loop itself is `monform-reconcile`'s.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use monform_config::source::Sources;
use monform_config::{Diagnostic, Project};
use monform_engine::Plan;
use monform_engine::ops::{self, ApiRequest, Connect, OpenEnv, OpenError, OpenRequest, Opened, PolicyLoad, Unopened};
use monform_reconcile::{Host, LogFormat, Settings, Unloaded};

use super::context::{Stop, block_on, finish, load_files, parse_excludes};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormatArg {
    Text,
    Json,
}

#[derive(Args)]
pub struct ReconcileArgs {
    /// One interval, then exit: 0 in sync, 2 changes found (acted on or reported), 1 error
    #[arg(long)]
    once: bool,
    /// Leave out this address and what depends on it (repeatable; `*` matches any characters)
    #[arg(long = "exclude")]
    excludes: Vec<String>,
    /// Append an event a line (JSON) to FILE, for log shippers
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Serve /metrics, /healthz and /readyz here (not with --once)
    #[arg(long, default_value = "127.0.0.1:9464")]
    listen: SocketAddr,
    /// Log lines on standard error as text or JSON
    #[arg(long, value_enum, default_value_t = LogFormatArg::Text)]
    log_format: LogFormatArg,
}

/// Opens the files each interval, as `apply` would (without the linter's
/// findings: a reconciler acts on what loads), with their policies.
struct CliHost<'a> {
    dir: &'a Path,
}

impl CliHost<'_> {
    fn request<'r>(&self, env: &'r OpenEnv) -> OpenRequest<'r>
    where
        Self: 'r,
    {
        OpenRequest {
            environment: super::context::environment(),
            findings: false,
            policies: PolicyLoad::Require,
            ..OpenRequest::new(self.dir, env)
        }
    }
}

/// Problems in one line each, `file:line:column: message`.
fn in_words(problems: &[Diagnostic], sources: &Sources) -> String {
    let problems: Vec<String> = problems
        .iter()
        .map(|d| match d.location(sources) {
            Some(at) => format!("{at}: {}", d.message),
            None => d.message.clone(),
        })
        .collect();
    problems.join("; ")
}

/// Why the files did not open, in words.
fn unloaded(error: OpenError) -> Unloaded {
    let OpenError { why, loaded } = error;
    match (why, loaded) {
        (Unopened::Policies(problems), Some(loaded)) => Unloaded::Policies(in_words(&problems, &loaded.sources)),
        (Unopened::Files(_), Some(loaded)) => Unloaded::Files(in_words(&loaded.diagnostics, &loaded.sources)),
        (why, _) => Unloaded::Files(why.to_string()),
    }
}

impl Host for CliHost<'_> {
    fn open(&self) -> Result<Opened, Unloaded> {
        let env = super::context::open_env();
        ops::open_files(self.request(&env)).map_err(unloaded)
    }

    fn markdown(&self, plan: &Plan) -> String {
        crate::render::plan::markdown(plan)
    }

    fn codify(&self, drifted: &[monform_engine::ops::Drifted]) -> Result<Option<String>, String> {
        let loaded = load_files(self.dir);
        if !loaded.is_ok() {
            return Err("the files do not load".into());
        }
        let codified = monform_codify::codify(&loaded, drifted, &monform_codify::Options::default());
        if !codified.has_changes() {
            return Ok(None);
        }
        let project = loaded.project.as_ref().map_or("project", |p| p.name.as_str());
        let base = format!(
            "monform/codify-{project}-{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        );
        let branch = monform_codify::git::free_branch(self.dir, &base).map_err(|e| e.to_string())?;
        monform_codify::git::commit_to_branch(self.dir, &branch, &codified).map_err(|e| e.to_string())?;
        Ok(Some(branch))
    }
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ReconcileArgs) -> ExitCode {
    finish(block_on(reconcile(dir, api_url, args)))
}

async fn reconcile(dir: &Path, api_url: Option<&str>, args: ReconcileArgs) -> Result<ExitCode, Stop> {
    let excludes = parse_excludes(&args.excludes)?;
    let host = CliHost { dir };
    let env = super::context::open_env();
    let rate_limit = crate::connect::RATE_LIMIT_FLAG.get().cloned().flatten();
    let observe = crate::connect::observe;
    // The first open: the files as each interval opens them, and the
    // state and connection every interval uses.
    let request = OpenRequest {
        state: Some("monform reconcile"),
        api: ApiRequest::Connect(Connect {
            flag: api_url,
            rate_limit_flag: rate_limit.as_deref(),
            local: Some(&crate::connect::Emulator),
            observe: Some(&observe),
            ..Connect::default()
        }),
        ..host.request(&env)
    };
    let opened = ops::open(request).await.map_err(|error| match error.why {
        Unopened::Files(_) | Unopened::Policies(_) => match unloaded(error) {
            Unloaded::Files(why) => Stop::Message(format!("the files do not load: {why}")),
            Unloaded::Policies(why) => Stop::Message(format!("the policies do not load: {why}")),
        },
        Unopened::NoEnvironment(refusal) => Stop::Message(format!("{refusal} with --env NAME or MONFORM_ENV")),
        Unopened::Api(why) => {
            let project = error
                .loaded
                .and_then(|l| l.project)
                .unwrap_or_else(|| Project::new(String::new()));
            Stop::Message(crate::connect::unconnected(dir, &project, &why))
        }
        why => Stop::Message(why.to_string()),
    })?;
    let postgres_url = match opened.project.state_backend {
        monform_config::StateBackend::Postgres => env.state_url.clone(),
        monform_config::StateBackend::Local => None,
    };
    let settings = Settings {
        dir: dir.to_owned(),
        once: args.once,
        excludes,
        events: args.events,
        listen: (!args.once).then_some(args.listen),
        log: match args.log_format {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        },
        postgres_url,
        // The same test hook as `slo status`: an emulator's simulated now.
        slo_now_ms: std::env::var("MONFORM_SLO_NOW_MS").ok().and_then(|t| t.parse().ok()),
    };
    let code = monform_reconcile::run(&host, &opened, settings).await;
    opened.close().await;
    // Outcome::code's numbers are exit.rs's (its test holds them so).
    Ok(crate::exit::code(code))
}
