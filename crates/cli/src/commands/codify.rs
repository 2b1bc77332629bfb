//! `monform codify`: the service's changes (drift) written back into the
//! files (issue 33). Parses flags and renders; `monform-codify` decides
//! where each value goes and writes.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use monform_codify::{Codified, Options};
use monform_engine::Refresh;
use monform_engine::ops::{self, PlanRequest};

use super::context::{Findings, Open, Reach, Stop, block_on, parse_excludes, parse_targets, refused};

/// Exit code when the diff is not empty under `--check`.
const EXIT_DIFF: u8 = crate::exit::CHANGES;
/// Exit code when a drifted field needs a person (a hand edit or a secret).
const EXIT_HAND_EDIT: u8 = crate::exit::HAND_EDIT;

#[derive(Args)]
pub struct CodifyArgs {
    /// Only print the diff; exit 2 when there is one (3 when a field needs a hand edit)
    #[arg(long, conflicts_with_all = ["write", "branch"])]
    check: bool,
    /// Write the edited files (each whole or not at all)
    #[arg(long)]
    write: bool,
    /// Codify only this address and what it depends on (repeatable)
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Leave out this address and what depends on it (repeatable; `*` matches any characters)
    #[arg(long = "exclude")]
    excludes: Vec<String>,
    /// A `${var:NAME}` used by this one resource only: change the variable in monform.toml, not the resource
    #[arg(long)]
    edit_vars: bool,
    /// With --env: write a value changed in this environment into a definition every environment reads (each changes at its next apply), rather than refuse it
    #[arg(long)]
    all_environments: bool,
    /// Also write the service's value of a field changed in the files and in the service since the last apply (a conflict), replacing the files' change
    #[arg(long)]
    take_service: bool,
    /// Write the edits on a new git branch NAME, in one commit listing the addresses and fields (implies --write)
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// Also write objects made in the service that no project owns, as new files under unmanaged/ with `import` entries (the rules of `import --all-unmanaged`)
    #[arg(long)]
    include_unmanaged: bool,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: CodifyArgs, output: &crate::render::Output) -> ExitCode {
    let result = block_on(async {
        let targets = parse_targets(&args.targets)?;
        let excludes = parse_excludes(&args.excludes)?;
        let open = Open {
            findings: Findings::Hide,
            policies: false,
            state: Some("monform codify"),
            reach: Reach::Service {
                api_url,
                prefetch: false,
            },
        };
        let opened = super::context::open(dir, output, open).await?;
        let session = opened.session().map_err(|why| Stop::Message(why.to_string()))?;
        let loaded = &opened.loaded;
        let request = PlanRequest {
            targets,
            excludes,
            destroy: false,
            // Drift is only seen in what is read.
            refresh: Refresh::All,
        };
        let planned = ops::plan(&session, &request)
            .await
            .map_err(|refusal| refused(&refusal, loaded))?;
        let unmanaged = if args.include_unmanaged {
            Some(
                ops::find_unmanaged_for(session.client, &planned.state, &loaded.desired)
                    .await
                    .map_err(|refusal| refused(&refusal, loaded))?,
            )
        } else {
            None
        };
        opened.close().await;
        let drifted = ops::drifted(&planned.plan);
        let options = Options {
            edit_vars: args.edit_vars,
            all_environments: args.all_environments,
            take_service: args.take_service,
        };
        let mut codified = monform_codify::codify(loaded, &drifted, &options);
        // What the files change that the service did not: not codify's,
        // and why "no drift" is not "the files say what the service has".
        let file_changes = planned
            .plan
            .changes
            .iter()
            .filter(|c| c.action != monform_engine::Action::Noop)
            .filter(|c| !drifted.iter().any(|d| d.address == c.address))
            .count();
        if let Some((found, clashing)) = unmanaged {
            let include = loaded.project.as_ref().map_or(&[][..], |p| p.include.as_slice());
            monform_codify::unmanaged::add(&mut codified, dir, include, &found.exported).map_err(Stop::Message)?;
            for (remote, owner) in &found.unknown {
                codified.notes.push(format!(
                    "{} left out: it {} (adopt it with an import entry by hand if it is this project's)",
                    ops::include_name(remote),
                    owner.describe()
                ));
            }
            for (address, remote) in &clashing {
                codified.notes.push(format!(
                    "{} (id {}) left out: the files already use the logical id {address}",
                    ops::include_name(remote),
                    remote.id
                ));
            }
        }
        Ok::<_, Stop>((codified, file_changes))
    });
    let (codified, file_changes) = match super::context::settle(result) {
        Ok(settled) => settled,
        Err(code) => return code,
    };
    print!("{}", codified.diff());
    eprint!("{}", summary(&codified, file_changes));
    let write = args.write || args.branch.is_some();
    if write && codified.has_changes() {
        if let Err(e) = monform_codify::write(&codified) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("Wrote {} file{}.", codified.files.len(), plural(codified.files.len()));
        if let Some(branch) = &args.branch {
            if let Err(e) = monform_codify::git::commit_on_branch(dir, branch, &codified) {
                eprintln!("error: {e}\n\nhint: the files are written; commit them by hand");
                return ExitCode::FAILURE;
            }
            eprintln!("Committed on branch {branch}.");
        }
    }
    if !codified.hand_edits.is_empty() || !codified.secrets.is_empty() || !codified.conflicts.is_empty() {
        ExitCode::from(EXIT_HAND_EDIT)
    } else if args.check && codified.has_changes() {
        ExitCode::from(EXIT_DIFF)
    } else {
        ExitCode::SUCCESS
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What was codified, with notes, and what was not: for standard error.
/// `file_changes`: resources the files change and the service did not.
fn summary(codified: &Codified, file_changes: usize) -> String {
    let mut text = String::new();
    if codified.fields.is_empty()
        && codified.hand_edits.is_empty()
        && codified.secrets.is_empty()
        && codified.conflicts.is_empty()
        && codified.adopted.is_empty()
        && codified.notes.is_empty()
    {
        return match file_changes {
            0 => "No drift: the files say what the service has.\n".into(),
            n => format!(
                "No drift: the service has what was last applied. The files change {n} resource{} (monform plan shows them).\n",
                plural(n)
            ),
        };
    }
    if !codified.fields.is_empty() {
        text.push_str(&format!(
            "Codified {} field{}:\n",
            codified.fields.len(),
            plural(codified.fields.len())
        ));
        for field in &codified.fields {
            text.push_str(&format!("  {}.{}\n", field.address, field.path));
            if let Some(note) = &field.note {
                text.push_str(&format!("    note: {note}\n"));
            }
        }
    }
    if !codified.hand_edits.is_empty() {
        text.push_str(&format!("Needs a hand edit ({}):\n", codified.hand_edits.len()));
        for hand in &codified.hand_edits {
            let at = match &hand.path {
                Some(path) => format!("{}.{path}", hand.address),
                None => hand.address.to_string(),
            };
            let value = hand
                .service
                .as_ref()
                .map(|v| format!(" = {}", serde_json::to_string(v).unwrap_or_default()))
                .unwrap_or_default();
            text.push_str(&format!("  {at}{value}\n    {}\n", hand.why));
        }
    }
    if !codified.conflicts.is_empty() {
        text.push_str(&format!(
            "Conflicts: changed in the files and in the service since the last apply ({}), not written (--take-service writes the service's value):\n",
            codified.conflicts.len()
        ));
        let shown = |value: Option<&serde_json::Value>, unknown: &str| {
            value.map_or_else(|| unknown.to_owned(), |v| serde_json::to_string(v).unwrap_or_default())
        };
        for conflict in &codified.conflicts {
            text.push_str(&format!(
                "  {}.{}: applied {}, service {}, files {}\n",
                conflict.address,
                conflict.path,
                shown(conflict.applied.as_ref(), "(not recorded)"),
                shown(conflict.service.as_ref(), "(sensitive)"),
                shown(Some(&conflict.files), ""),
            ));
        }
    }
    if !codified.adopted.is_empty() {
        text.push_str(&format!(
            "New in {}/, imported by the next apply ({}):\n",
            monform_codify::unmanaged::FOLDER,
            codified.adopted.len()
        ));
        for (address, id) in &codified.adopted {
            text.push_str(&format!("  {address} (id {id})\n"));
        }
    }
    for note in &codified.notes {
        text.push_str(&format!("note: {note}\n"));
    }
    if !codified.secrets.is_empty() {
        text.push_str(&format!(
            "Secrets to set: changed in the service, their values not readable ({}):\n",
            codified.secrets.len()
        ));
        for secret in &codified.secrets {
            let from = secret.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
            text.push_str(&format!("  {}.{}{from}\n", secret.address, secret.path));
        }
    }
    text
}
