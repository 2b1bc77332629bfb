//! `monform reconcile` (issue 30): arguments, the first load, connecting
//! and the state backend; the loop itself is `monform-reconcile`'s.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Args, ValueEnum};
use monform_config::source::Sources;
use monform_config::{Desired, Project};
use monform_engine::Plan;
use monform_reconcile::{Host, HostPolicies, LogFormat, Settings};

use super::context::{Stop, block_on, finish, load_files, open_backend, parse_excludes, require_environment};
use crate::connect::connect;

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

/// Loads the files each interval, as `plan` would (without the linter's
/// findings: a reconciler acts on what loads), and their policies.
struct CliHost<'a> {
    dir: &'a Path,
    /// The sources of the last load: the policies' input and findings point into them.
    sources: Mutex<Option<Sources>>,
}

impl Host for CliHost<'_> {
    fn load(&self) -> Result<(Desired, Project), String> {
        let loaded = load_files(self.dir);
        let problems: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| !d.finding)
            .map(|d| match d.location(&loaded.sources) {
                Some(at) => format!("{at}: {}", d.message),
                None => d.message.clone(),
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let project = loaded.project.ok_or("monform.toml has no project")?;
        *self.sources.lock().unwrap_or_else(|e| e.into_inner()) = Some(loaded.sources);
        Ok((loaded.desired, project))
    }

    fn policies(&self, desired: &Desired, project: &Project) -> Result<Option<HostPolicies>, String> {
        let Some(mut sources) = self.sources.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Err("the files were not loaded".into());
        };
        let (policies, problems) = monform_policy::load(self.dir, project, &mut sources);
        if !problems.is_empty() {
            let problems: Vec<String> = problems
                .iter()
                .map(|d| match d.location(&sources) {
                    Some(at) => format!("{at}: {}", d.message),
                    None => d.message.clone(),
                })
                .collect();
            return Err(problems.join("; "));
        }
        if policies.is_empty() {
            return Ok(None);
        }
        let input = monform_policy::input::files(desired, project, &sources);
        Ok(Some(HostPolicies {
            policies,
            input,
            sources,
        }))
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
        let branch = format!(
            "monform/codify-{project}-{}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S")
        );
        monform_codify::git::commit_to_branch(self.dir, &branch, &codified).map_err(|e| e.to_string())?;
        Ok(Some(branch))
    }
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ReconcileArgs) -> ExitCode {
    finish(block_on(reconcile(dir, api_url, args)))
}

async fn reconcile(dir: &Path, api_url: Option<&str>, args: ReconcileArgs) -> Result<ExitCode, Stop> {
    let excludes = parse_excludes(&args.excludes)?;
    let host = CliHost {
        dir,
        sources: Mutex::new(None),
    };
    let (_, project) = host
        .load()
        .map_err(|why| Stop::Message(format!("the files do not load: {why}")))?;
    require_environment(&project)?;
    let backend = open_backend(dir, &project, "monform reconcile")?;
    let connection = connect(dir, api_url, &project).await?;
    let postgres_url = match project.state_backend {
        monform_config::StateBackend::Postgres => std::env::var(super::context::STATE_URL_VARIABLE).ok(),
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
    };
    let code = monform_reconcile::run(&host, &connection.client, backend.as_ref(), &project, settings).await;
    connection.close().await;
    Ok(ExitCode::from(code))
}
