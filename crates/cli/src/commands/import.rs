//! `monform import ADDRESS REMOTE_ID`: adopt one existing object under a
//! logical id of the files. `monform import --all-unmanaged --out DIR`:
//! write every object no project owns as a new project and adopt them
//! (ownership tags written, `DIR/.monform/state.json` recorded), so that
//! `monform plan --dir DIR` shows no changes.
//!
//! "No project owns it": no `monform:` tag for kinds with tags; for the
//! other kinds, in no project's ownership record and used by no single
//! project (`ops::find_unmanaged`). Objects whose owner cannot be told are
//! listed and left out unless `--include`d; `ops::adopt_unmanaged` writes
//! and adopts the rest.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use monform_engine::ops;
use monform_model::Address;

use super::context::{
    Findings, FoldArg, Open, Reach, Split, Stop, block_on, current_project, finish, new_project, open_backend, refused,
    require_environment,
};
use super::export::ExportFormat;
use crate::connect::connect;
use crate::render::Output;
use crate::render::export::{AdoptedJson, ImportJson, NotAdoptedJson, left_out, left_out_json, report, report_json};

#[derive(Args)]
pub struct ImportArgs {
    /// The address in the files to adopt the object under, e.g. checks.homepage
    #[arg(required_unless_present = "all_unmanaged", requires = "remote_id")]
    address: Option<String>,
    /// The object's remote id (a variable's key)
    #[arg(requires = "address")]
    remote_id: Option<String>,
    /// Write every object no project owns to a new project in --out, and adopt them
    #[arg(long, requires = "out", conflicts_with = "address")]
    all_unmanaged: bool,
    /// The folder of the new project (with --all-unmanaged)
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
    /// How to split the resource files (with --all-unmanaged)
    #[arg(long, value_enum, default_value_t = Split::Kind)]
    split_by: Split,
    /// The name of the new project (default: the current project's)
    #[arg(long)]
    project: Option<String>,
    /// Fold look-alike objects into forEach definitions (with --all-unmanaged; see guide/migrating.md)
    #[arg(long, value_enum, default_value_t = FoldArg::Safe)]
    fold: FoldArg,
    /// Also adopt this object whose owner cannot be told, as SECTION:ID (e.g. snippets:12; repeatable)
    #[arg(long, value_name = "SECTION:ID", requires = "all_unmanaged")]
    include: Vec<String>,
    /// Output: human (on standard error), or json on standard output: the objects adopted and, with
    /// --all-unmanaged, the files written and what was left out (`monform schema --output import`)
    #[arg(long, value_enum, default_value_t = ExportFormat::Human)]
    format: ExportFormat,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ImportArgs, output: &Output) -> ExitCode {
    finish(block_on(async {
        let json = args.format == ExportFormat::Json;
        match (&args.address, &args.remote_id, &args.out) {
            (Some(address), Some(id), _) => import_one(dir, api_url, address, id, json, output).await,
            (_, _, Some(out)) if args.all_unmanaged => {
                let options = AllOptions {
                    split: args.split_by,
                    fold: args.fold,
                    name: args.project.as_deref(),
                    include: &args.include,
                    report: if json { Report::Json } else { Report::Words },
                };
                import_all(dir, api_url, out, options, output).await
            }
            _ => Err(Stop::Message(
                "pass ADDRESS REMOTE_ID, or --all-unmanaged --out DIR".into(),
            )),
        }
    }))
}

/// `import --all-unmanaged`'s choices (also `init --from-account`'s).
pub(super) struct AllOptions<'a> {
    pub split: Split,
    pub fold: FoldArg,
    pub name: Option<&'a str>,
    pub include: &'a [String],
    pub report: Report<'a>,
}

/// How `import --all-unmanaged` reports what it did.
pub(super) enum Report<'a> {
    /// In words, on standard error.
    Words,
    /// As `import --format json`, on standard output.
    Json,
    /// As `import --format json`, handed to the caller (`init --from-account
    /// --format json` prints it inside its own report).
    Into(&'a mut Option<ImportJson>),
}

pub(super) async fn import_all(
    dir: &Path,
    api_url: Option<&str>,
    out: &Path,
    AllOptions {
        split,
        fold,
        name,
        include,
        report: reporting,
    }: AllOptions<'_>,
    output: &Output,
) -> Result<ExitCode, Stop> {
    let json = !matches!(reporting, Report::Words);
    let current = current_project(dir);
    let (project, settings) = new_project(current.as_ref(), name)?;
    let words = |refusal: ops::Refusal| Stop::Message(refusal.to_string());
    ops::check_out(out).map_err(words)?;
    // The current project's objects are never unmanaged: its state must be
    // the one of an environment when it declares them.
    let current_state = match &current {
        Some((_, p)) => Some(
            require_environment(p)
                .and_then(|()| open_backend(dir, p, "monform import"))?
                .load(&p.name)
                .map_err(|e| Stop::Message(e.to_string()))?,
        ),
        None => None,
    };
    let connection = connect(dir, api_url, &settings).await?;
    let client = &connection.client;
    let mut report_json_out = ImportJson {
        project: Some(project.clone()),
        ..Default::default()
    };
    let adopted = async {
        let found = ops::find_unmanaged(
            client,
            &project,
            current_state.as_ref(),
            include,
            split.into(),
            fold.into(),
        )
        .await?;
        if json {
            left_out_json(&found, &mut report_json_out);
        } else {
            left_out(&found);
        }
        let env = |name: &str| std::env::var(name).ok();
        ops::adopt_unmanaged(client, &project, settings.api_url.as_deref(), out, found.exported, &env).await
    }
    .await;
    connection.close().await;
    let adopted = match adopted {
        Ok(adopted) => adopted,
        Err(refusal) => {
            if let ops::Refusal::Export(ops::ExportRefusal::FilesInvalid { loaded, .. }) = &refusal {
                output.diagnostics(&loaded.diagnostics, &loaded.sources);
            }
            return Err(words(refusal));
        }
    };
    if json {
        let mut json = report_json_out;
        json.adopted = adopted
            .exported
            .objects
            .iter()
            .map(|(address, remote)| AdoptedJson {
                address: address.to_string(),
                remote_id: remote.id.clone(),
            })
            .collect();
        json.written = Some(report_json(out, &adopted.exported));
        json.state_at = Some(adopted.state_at.clone());
        json.not_adopted = adopted
            .not_tagged
            .iter()
            .map(|(address, remote_id, error)| NotAdoptedJson {
                address: address.to_string(),
                remote_id: remote_id.clone(),
                error: error.clone(),
            })
            .collect();
        match reporting {
            Report::Into(slot) => *slot = Some(json),
            _ => crate::render::print_json(&json),
        }
    } else {
        report(out, &adopted.exported, "Imported");
        eprintln!("Adopted them as project `{project}` (state in {}).", adopted.state_at);
    }
    if !adopted.not_tagged.is_empty() {
        // Each can be adopted later with `monform import ADDRESS ID` in the new project.
        let retry: Vec<String> = adopted
            .not_tagged
            .iter()
            .map(|(address, remote_id, error)| {
                format!(
                    "{address}: {error}\n    retry: monform --dir {} import {address} {remote_id}",
                    out.display()
                )
            })
            .collect();
        return Err(Stop::Message(format!(
            "cannot write the ownership tag of {} objects (written to the files, not adopted):\n  {}",
            retry.len(),
            retry.join("\n  ")
        )));
    }
    Ok(ExitCode::SUCCESS)
}

async fn import_one(
    dir: &Path,
    api_url: Option<&str>,
    text: &str,
    remote_id: &str,
    json: bool,
    output: &Output,
) -> Result<ExitCode, Stop> {
    let address: Address = text
        .parse()
        .map_err(|e| Stop::Message(format!("`{text}` is not an address: {e}")))?;
    let command = format!("monform import {address} {remote_id}");
    let open = Open {
        findings: Findings::Hide,
        policies: false,
        state: Some(&command),
        reach: Reach::Service {
            api_url,
            prefetch: false,
        },
    };
    let opened = super::context::open(dir, output, open).await?;
    let session = opened.session().map_err(|why| Stop::Message(why.to_string()))?;
    let result = ops::import_one(&session, &address, remote_id).await;
    opened.close().await;
    let imported = result.map_err(|refusal| refused(&refusal, &opened.loaded))?;
    if let Some(error) = imported.record_error {
        return Err(Stop::Message(format!(
            "cannot write the project's ownership record: {error}"
        )));
    }
    if json {
        crate::render::print_json(&ImportJson {
            adopted: vec![AdoptedJson {
                address: address.to_string(),
                remote_id: remote_id.to_owned(),
            }],
            ..Default::default()
        });
    } else {
        eprintln!(
            "Imported {} {remote_id} as {address}; `monform plan` shows how it differs from the files.",
            address.kind.section()
        );
    }
    Ok(ExitCode::SUCCESS)
}
