//! `monform import ADDRESS REMOTE_ID`: adopt one existing object under a
//! logical id of the files. `monform import --all-unmanaged --out DIR`:
//! write every object no project owns as a new project and adopt them
//! (ownership tags written, `DIR/.monform/state.json` recorded), so that
//! `monform plan --dir DIR` shows no changes.
//!
//! "No project owns it": no `monform:` tag for kinds with tags; for the
//! other kinds, in no project's ownership record and used by no single
//! project (`monform_engine::ownership`). Objects whose owner cannot be told
//! are listed and left out unless `--include`d.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use futures_util::StreamExt;
use monform_api::Remote;
use monform_engine::export::{adopted_state, export, include_name, unmanaged};
use monform_engine::identity::{owned_by, uses_tags};
use monform_engine::ops::{self, Session};
use monform_engine::ownership::{Owners, write_record};
use monform_engine::{LocalState, StateBackend};
use monform_model::Address;

use super::context::{Stop, block_on, finish, open_backend, refused, require_environment};
use super::export::{Split, check_out, current_project, list_everything, project_for, report, write};
use crate::connect::connect;
use crate::render::Output;

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
    /// Also adopt this object whose owner cannot be told, as SECTION:ID (e.g. snippets:12; repeatable)
    #[arg(long, value_name = "SECTION:ID", requires = "all_unmanaged")]
    include: Vec<String>,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ImportArgs, output: &Output) -> ExitCode {
    finish(block_on(async {
        match (&args.address, &args.remote_id, &args.out) {
            (Some(address), Some(id), _) => import_one(dir, api_url, address, id, output).await,
            (_, _, Some(out)) if args.all_unmanaged => {
                let options = AllOptions {
                    split: args.split_by,
                    name: args.project.as_deref(),
                    include: &args.include,
                };
                import_all(dir, api_url, out, options, output).await
            }
            _ => Err(Stop::Message(
                "pass ADDRESS REMOTE_ID, or --all-unmanaged --out DIR".into(),
            )),
        }
    }))
}

struct AllOptions<'a> {
    split: Split,
    name: Option<&'a str>,
    include: &'a [String],
}

async fn import_all(
    dir: &Path,
    api_url: Option<&str>,
    out: &Path,
    AllOptions { split, name, include }: AllOptions<'_>,
    output: &Output,
) -> Result<ExitCode, Stop> {
    let current = current_project(dir, output);
    let (project, settings) = project_for(current.as_ref(), name)?;
    check_out(out)?;
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
    let result = async {
        let everything = list_everything(&connection.client).await?;
        // Adopting under a name that already owns objects would make the
        // new project's plan delete them.
        let owners = Owners::new(everything.iter());
        if owners.records.contains_key(&project)
            || everything
                .iter()
                .any(|r| uses_tags(r.kind) && owned_by(r, &project))
        {
            return Err(Stop::Message(format!(
                "project `{project}` already owns objects in the account: pass --project with a new name"
            )));
        }
        let found = unmanaged(everything, &owners, current_state.as_ref(), include);
        if found.others > 0 {
            eprintln!(
                "note: {} objects of kinds without tags belong to other projects (their ownership records, or used by them alone): left out",
                found.others
            );
        }
        if !found.unknown.is_empty() {
            eprintln!(
                "warning: {} objects whose owner cannot be told are left out:",
                found.unknown.len()
            );
            for (remote, owner) in &found.unknown {
                let name = remote.field("name");
                let name = name.as_ref().and_then(|n| n.as_str()).unwrap_or(&remote.id);
                eprintln!("  {} ({name:?}) {}", include_name(remote), owner.describe());
            }
            let flags: Vec<String> = found
                .unknown
                .iter()
                .map(|(r, _)| format!("--include {}", include_name(r)))
                .collect();
            eprintln!(
                "  to adopt them anyway (only if no other project manages them), run the import again with {}",
                flags.join(" ")
            );
        }
        // Unmanaged objects: no state of this project knows their secrets.
        let mut exported = export(found.objects, split.into(), &Default::default());
        write(out, &project, &settings, &exported)?;
        // Adopt: ownership tags on kinds with tags (the version changes).
        let tagged: Vec<(Address, Remote)> = exported
            .objects
            .iter()
            .filter(|(a, _)| uses_tags(a.kind))
            .map(|(a, r)| (a.clone(), r.clone()))
            .collect();
        let client = &connection.client;
        let project_name = project.as_str();
        let mut results = futures_util::stream::iter(tagged)
            .map(|(address, remote)| async move {
                let updated = ops::write_tag(client, project_name, &address, &remote)
                    .await
                    .map_err(|e| e.to_string());
                (address, updated)
            })
            .buffer_unordered(8);
        let mut failures: Vec<(Address, String)> = Vec::new();
        while let Some((address, updated)) = results.next().await {
            match updated {
                Ok(remote) => {
                    exported.objects.insert(address, remote);
                }
                Err(e) => failures.push((address, e)),
            }
        }
        drop(results);
        Ok((exported, failures))
    }
    .await;
    let (mut exported, failures) = match result {
        Ok(found) => found,
        Err(e) => {
            connection.close().await;
            return Err(e);
        }
    };
    // Objects whose tag could not be written stay out of the state: each
    // can be adopted later with `monform import ADDRESS ID` in the new project.
    let mut retry = Vec::new();
    for (address, error) in &failures {
        if let Some(remote) = exported.objects.remove(address) {
            retry.push(format!(
                "{address}: {error}\n    retry: monform --dir {} import {address} {}",
                out.display(),
                remote.id
            ));
        }
    }
    // The state, as an apply of the written files would record it.
    let names: Vec<String> = exported.env.iter().map(|v| v.name.clone()).collect();
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| names.iter().any(|n| n == name).then(|| "unset".to_owned()))
    };
    let loaded = monform_config::load(out, &env);
    if !loaded.is_ok() {
        connection.close().await;
        output.diagnostics(&loaded.diagnostics, &loaded.sources);
        return Err(Stop::Message(format!(
            "the files written to {} have problems (above); no state was written",
            out.display()
        )));
    }
    let real_env = |name: &str| std::env::var(name).ok();
    let state = adopted_state(&project, &loaded.desired, &exported.objects, &exported.env, &real_env);
    let backend = LocalState::new(out);
    backend.save(&state).map_err(|e| Stop::Message(e.to_string()))?;
    // The adopted objects without tags are the new project's from now on.
    let recorded = write_record(&connection.client, &state, None).await;
    connection.close().await;
    recorded.map_err(|e| Stop::Message(format!("cannot write the new project's ownership record: {e}")))?;
    report(out, &exported, "Imported");
    eprintln!("Adopted them as project `{project}` (state in {}).", backend.describe());
    if !retry.is_empty() {
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
    output: &Output,
) -> Result<ExitCode, Stop> {
    let address: Address = text
        .parse()
        .map_err(|e| Stop::Message(format!("`{text}` is not an address: {e}")))?;
    let (loaded, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
    let backend = open_backend(dir, &project, &format!("monform import {address} {remote_id}"))?;
    let connection = connect(dir, api_url, &project).await?;
    let session = Session {
        project: &project,
        desired: &loaded.desired,
        client: &connection.client,
        backend: backend.as_ref(),
    };
    let result = ops::import_one(&session, &address, remote_id).await;
    connection.close().await;
    let imported = result.map_err(|refusal| refused(&refusal, &loaded))?;
    if let Some(error) = imported.record_error {
        return Err(Stop::Message(format!(
            "cannot write the project's ownership record: {error}"
        )));
    }
    eprintln!(
        "Imported {} {remote_id} as {address}; `monform plan` shows how it differs from the files.",
        address.kind.section()
    );
    Ok(ExitCode::SUCCESS)
}
