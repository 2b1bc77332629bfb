//! `monform export --out DIR`: every object of the account as a monform
//! project (monform.toml, YAML files, scripts, ENVIRONMENT.md). The engine
//! reads the account and writes the files (`ops::export_account`,
//! `ops::write_project`); this module chooses the names and says what it did.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use monform_config::{Loaded, Project};
use monform_engine::ops;

use super::context::{FoldArg, Split, Stop, block_on, current_project, finish, new_project};
use crate::connect::connect;
use crate::render::Output;
use crate::render::export::report;

#[derive(Args)]
pub struct ExportArgs {
    /// The folder to write the project to (created; must not hold a monform.toml)
    #[arg(long, value_name = "DIR")]
    pub out: std::path::PathBuf,
    /// How to split the resource files
    #[arg(long, value_enum, default_value_t = Split::Kind)]
    pub split_by: Split,
    /// The name of the written project (default: the current project's)
    #[arg(long)]
    pub project: Option<String>,
    /// Fold look-alike objects into forEach definitions (see guide/migrating.md)
    #[arg(long, value_enum, default_value_t = FoldArg::Safe)]
    pub fold: FoldArg,
    /// Output: human (on standard error), or json on standard output: the files written, the objects, the
    /// variables to set (`monform schema --output export`)
    #[arg(long, value_enum, default_value_t = ExportFormat::Human)]
    pub format: ExportFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Human,
    Json,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ExportArgs, _output: &Output) -> ExitCode {
    finish(block_on(async {
        let current = current_project(dir);
        let (project, settings) = new_project(current.as_ref(), args.project.as_deref())?;
        let words = |refusal: ops::Refusal| Stop::Message(refusal.to_string());
        ops::check_out(&args.out).map_err(words)?;
        let connection = connect(dir, api_url, &settings).await?;
        let known = known_secrets(dir, current.as_ref());
        let account = ops::export_account(
            &connection.client,
            &project,
            args.split_by.into(),
            args.fold.into(),
            &known,
        )
        .await;
        connection.close().await;
        let account = account.map_err(words)?;
        if account.project_owns_objects {
            eprintln!(
                "warning: project `{project}` owns objects in this account: applying the export here would take them over (and delete those it does not name); pass --project with a new name to apply it beside them"
            );
        }
        ops::write_project(&args.out, &project, settings.api_url.as_deref(), &account.exported).map_err(words)?;
        match args.format {
            ExportFormat::Human => report(&args.out, &account.exported, "Exported"),
            ExportFormat::Json => {
                crate::render::print_json(&crate::render::export::report_json(&args.out, &account.exported))
            }
        }
        Ok(ExitCode::SUCCESS)
    }))
}

/// What the current project's state recorded as secrets (a header marked
/// `secret: true`, which the service cannot tell): written as `${env:}` too.
/// Without a project or a readable state, nothing.
fn known_secrets(dir: &Path, current: Option<&(Loaded, Project)>) -> ops::KnownSecrets {
    let Some((_, project)) = current else {
        return Default::default();
    };
    super::context::open_backend(dir, project, "monform export")
        .ok()
        .and_then(|backend| backend.load(&project.name).ok())
        .map(|state| ops::known_secrets(&state))
        .unwrap_or_default()
}
