//! `monform export --out DIR`: every object of the account as a monform
//! project (monform.toml, YAML files, scripts, ENVIRONMENT.md). The files'
//! form is built by `monform_engine::export`; this module reads the
//! account and writes the files.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use monform_api::{Client, Remote};
use monform_config::Project;
use monform_engine::export::{Exported, KnownSecrets, SplitBy, environment_markdown, export, project_toml};

use super::context::{Stop, block_on, finish};
use crate::connect::connect;
use crate::render::Output;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Split {
    /// One file per kind
    #[default]
    Kind,
    /// Each check group with its checks in `groups/<group>.yaml`
    Group,
}

impl From<Split> for SplitBy {
    fn from(split: Split) -> SplitBy {
        match split {
            Split::Kind => SplitBy::Kind,
            Split::Group => SplitBy::Group,
        }
    }
}

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
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ExportArgs, output: &Output) -> ExitCode {
    finish(block_on(async {
        let current = current_project(dir, output);
        let (project, settings) = project_for(current.as_ref(), args.project.as_deref())?;
        check_out(&args.out)?;
        let connection = connect(dir, api_url, &settings).await?;
        let objects = list_everything(&connection.client).await;
        connection.close().await;
        let objects = objects?;
        if objects
            .iter()
            .any(|r| monform_engine::identity::uses_tags(r.kind) && monform_engine::identity::owned_by(r, &project))
        {
            eprintln!(
                "warning: project `{project}` owns objects in this account: applying the export here would take them over (and delete those it does not name); pass --project with a new name to apply it beside them"
            );
        }
        let known = known_secrets(dir, current.as_ref());
        let exported = export(objects, args.split_by.into(), &known);
        write(&args.out, &project, &settings, &exported)?;
        report(&args.out, &exported, "Exported");
        Ok(ExitCode::SUCCESS)
    }))
}

/// The project of `--dir`, when there is a valid monform.toml (its
/// resource files need not be valid).
pub fn current_project(dir: &Path, _output: &Output) -> Option<(monform_config::Loaded, Project)> {
    if !dir.join(monform_config::project::PROJECT_FILE).exists() {
        return None;
    }
    let loaded = super::context::load_files(dir);
    let project = loaded.project.clone()?;
    Some((loaded, project))
}

/// What the current project's state recorded as secrets (a header marked
/// `secret: true`, which the service cannot tell): written as `${env:}` too.
/// Without a project or a readable state, nothing.
fn known_secrets(dir: &Path, current: Option<&(monform_config::Loaded, Project)>) -> KnownSecrets {
    let Some((_, project)) = current else {
        return KnownSecrets::default();
    };
    super::context::open_backend(dir, project, "monform export")
        .ok()
        .and_then(|backend| backend.load(&project.name).ok())
        .map(|state| monform_engine::export::known_secrets(&state))
        .unwrap_or_default()
}

/// The new project's name and the settings to connect with.
pub fn project_for(
    current: Option<&(monform_config::Loaded, Project)>,
    name: Option<&str>,
) -> Result<(String, Project), Stop> {
    let name = name
        .map(str::to_owned)
        .or_else(|| current.map(|(_, p)| p.name.clone()))
        .ok_or_else(|| {
            Stop::Message("no project name: pass --project NAME (or run in a project with a monform.toml)".into())
        })?;
    if name.is_empty() || name.contains(['/', '"', '\\']) {
        return Err(Stop::Message(format!(
            "`{name}` cannot be a project name (no `/`, quotes or backslashes)"
        )));
    }
    let settings = current
        .map(|(_, p)| p.clone())
        .unwrap_or_else(|| Project::new(name.clone()));
    Ok((name, settings))
}

/// Refuses to write over a project.
pub fn check_out(out: &Path) -> Result<(), Stop> {
    if out.join(monform_config::project::PROJECT_FILE).exists() {
        return Err(Stop::Message(format!(
            "{} already holds a monform.toml: choose an empty folder",
            out.display()
        )));
    }
    Ok(())
}

/// Every object of every kind.
pub async fn list_everything(client: &Client) -> Result<Vec<Remote>, Stop> {
    monform_engine::ops::list_everything(client)
        .await
        .map_err(|e| Stop::Message(format!("cannot read the account: {e}")))
}

/// Writes monform.toml, the resource and script files and ENVIRONMENT.md.
pub fn write(out: &Path, project: &str, settings: &Project, exported: &Exported) -> Result<(), Stop> {
    let failed = |path: &Path, e: std::io::Error| Stop::Message(format!("cannot write {}: {e}", path.display()));
    std::fs::create_dir_all(out).map_err(|e| failed(out, e))?;
    // A URL of `local` would start another emulator in the new folder.
    let url = settings.api_url.as_deref().filter(|u| *u != "local");
    let toml = out.join(monform_config::project::PROJECT_FILE);
    monform_engine::durable::write(&toml, project_toml(project, url).as_bytes()).map_err(|e| failed(&toml, e))?;
    for (relative, text) in &exported.files {
        let path = out.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(parent, e))?;
        }
        monform_engine::durable::write(&path, text.as_bytes()).map_err(|e| failed(&path, e))?;
    }
    if !exported.env.is_empty() {
        let path = out.join("ENVIRONMENT.md");
        monform_engine::durable::write(&path, environment_markdown(&exported.env).as_bytes())
            .map_err(|e| failed(&path, e))?;
    }
    Ok(())
}

pub fn report(out: &Path, exported: &Exported, verb: &str) {
    for warning in &exported.warnings {
        eprintln!("warning: {warning}");
    }
    let files = exported.files.keys().filter(|f| f.ends_with(".yaml")).count();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    eprintln!(
        "{verb} {} into {} in {}",
        plural(exported.objects.len(), "object", "objects"),
        plural(files, "resource file", "resource files"),
        out.display()
    );
    if !exported.env.is_empty() {
        eprintln!(
            "Set these environment variables (secrets; listed in {}):",
            out.join("ENVIRONMENT.md").display()
        );
        for var in &exported.env {
            eprintln!("  {}  ({} {})", var.name, var.address, var.field);
        }
    }
}
