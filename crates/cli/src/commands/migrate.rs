//! `monform migrate terraform DIR [--state FILE.json] [--out PROJECT]`: a
//! Terraform project of the service's provider as a monform project with
//! `import` entries, so the first plan adopts every object (no create,
//! delete or replace). The translation is `monform-migrate`'s; this module
//! parses the flags, writes the files and prints the report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::context::{Stop, finish};

#[derive(Args)]
pub struct MigrateArgs {
    #[command(subcommand)]
    from: Source,
}

#[derive(Subcommand)]
enum Source {
    /// A Terraform root module of the checkly/checkly provider (local modules followed), with its state
    Terraform(TerraformArgs),
}

#[derive(Args)]
struct TerraformArgs {
    /// The Terraform root module's folder (its `*.tf` files)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// `terraform show -json` output: the objects to import (without it, no import entries are written)
    #[arg(long, value_name = "FILE.json")]
    state: Option<PathBuf>,
    /// The folder to write the project to (created; must not hold a monform.toml)
    #[arg(long, value_name = "PROJECT", default_value = "monform")]
    out: PathBuf,
    /// The written project's name (default: the Terraform folder's name)
    #[arg(long)]
    project: Option<String>,
}

pub fn run(api_url: Option<&str>, args: MigrateArgs) -> ExitCode {
    let Source::Terraform(args) = args.from;
    finish(Ok(terraform(api_url, args)))
}

fn terraform(api_url: Option<&str>, args: TerraformArgs) -> Result<ExitCode, Stop> {
    let failed = |e: monform_migrate::MigrateError| Stop::Message(e.to_string());
    let project = args
        .project
        .clone()
        .unwrap_or_else(|| monform_migrate::default_project_name(&args.dir));
    if project.is_empty() || project.contains(['/', '"', '\\']) {
        return Err(Stop::Message(format!(
            "`{project}` cannot name a project (no `/`, `\"` or `\\`)"
        )));
    }
    let options = monform_migrate::Options {
        dir: args.dir.clone(),
        state: args.state.clone(),
        project,
        api_url: api_url.map(str::to_owned),
    };
    let migration = monform_migrate::migrate(&options).map_err(failed)?;
    monform_migrate::write(&args.out, &migration).map_err(failed)?;
    print!("{}", monform_migrate::report(&migration, &args.out));
    Ok(ExitCode::SUCCESS)
}
