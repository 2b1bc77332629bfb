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
    /// Output: human, or json: the files written, the import entries, what was not translated as written, the
    /// variables to set (`monform schema --output migrate`)
    #[arg(long, value_enum, default_value_t = super::export::ExportFormat::Human)]
    format: super::export::ExportFormat,
}

/// `migrate --format json`: what was written (never a secret: only the
/// environment variables to set).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Migrate")]
pub struct MigrateJson {
    /// The project folder written.
    out: String,
    /// Its name (monform.toml's `[project] name`).
    project: String,
    /// Every file written, relative to `out`.
    files: Vec<String>,
    /// Definitions written (a `forEach` counts once).
    definitions: usize,
    /// `[vars]` written from Terraform variables.
    vars: usize,
    /// The `import` entries: the first plan adopts these objects.
    imports: Vec<ImportEntryJson>,
    /// What was not translated as written (also in MIGRATION.md).
    notes: Vec<NoteJson>,
    /// The environment variables the files name (secrets), with what each holds.
    env: Vec<EnvNeedJson>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ImportEntryJson {
    /// The address in the written files.
    address: String,
    /// The service's id of the object.
    remote_id: String,
}

/// A note, at a place of the Terraform files (none: from the state).
#[derive(serde::Serialize, schemars::JsonSchema)]
struct NoteJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    message: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct EnvNeedJson {
    name: String,
    /// What it holds: a resource's field or a Terraform variable.
    what: String,
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
        project: project.clone(),
        api_url: api_url.map(str::to_owned),
    };
    let migration = monform_migrate::migrate(&options).map_err(failed)?;
    monform_migrate::write(&args.out, &migration).map_err(failed)?;
    if args.format == super::export::ExportFormat::Human {
        print!("{}", monform_migrate::report(&migration, &args.out));
        return Ok(ExitCode::SUCCESS);
    }
    let mut files: Vec<String> = migration.files.keys().cloned().collect();
    // `write` adds the editors' schemas.
    files.extend([
        "schema/resource-file.schema.json".to_owned(),
        "schema/monform.schema.json".to_owned(),
    ]);
    files.sort();
    crate::render::print_json(&MigrateJson {
        out: args.out.display().to_string(),
        project,
        files,
        definitions: migration.definitions,
        vars: migration.vars,
        imports: migration
            .imports
            .iter()
            .map(|i| ImportEntryJson {
                address: i.to.clone(),
                remote_id: i.id.clone(),
            })
            .collect(),
        notes: migration
            .notes
            .iter()
            .map(|n| NoteJson {
                file: n.place.as_ref().map(|p| p.file.clone()),
                line: n.place.as_ref().map(|p| p.line),
                message: n.message.clone(),
            })
            .collect(),
        env: migration
            .env
            .iter()
            .map(|e| EnvNeedJson {
                name: e.name.clone(),
                what: e.what.clone(),
            })
            .collect(),
    });
    Ok(ExitCode::SUCCESS)
}
