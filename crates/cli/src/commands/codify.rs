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
    /// Output: human (the diff on standard output, the summary on standard error), or json: the files and
    /// their diffs, the fields written, the hand edits, conflicts and secrets (`monform schema --output codify`)
    #[arg(long, value_enum, default_value_t = super::export::ExportFormat::Human)]
    format: super::export::ExportFormat,
}

/// `codify --format json`: what it would write (`--check`, or no flag) or
/// wrote (`--write`, `--branch`), and what it leaves to a person. Values
/// are as the plan masks them: never a secret's.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Codify")]
pub struct CodifyJson {
    /// The files were written (`--write` or `--branch`, and a diff to write).
    written: bool,
    /// `--branch`: the branch committed on.
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
    /// Each file edited (or to edit), with its unified diff.
    files: Vec<FileJson>,
    /// The fields written into the files.
    fields: Vec<FieldJson>,
    /// Fields the files cannot take as they are: a person edits them.
    hand_edits: Vec<HandEditJson>,
    /// Fields changed in the files and in the service since the last apply: not written.
    conflicts: Vec<ConflictJson>,
    /// Secret fields changed in the service: to set, never written.
    secrets: Vec<FieldJson>,
    /// Objects written with an `import` entry (`--include-unmanaged`).
    adopted: Vec<AdoptedJson>,
    notes: Vec<String>,
    /// Resources the files change and the service did not (`monform plan` shows them).
    file_changes: usize,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct FileJson {
    /// Relative to the project folder.
    name: String,
    /// A new file (`--include-unmanaged`).
    new: bool,
    /// The unified diff (`a/NAME`, `b/NAME`).
    diff: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct FieldJson {
    address: String,
    /// The field's path in the resource, e.g. `request.url`.
    path: String,
    /// When it went elsewhere than its own line (a group, a definition, a variable).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct HandEditJson {
    address: String,
    /// Absent: the whole resource (deleted in the service).
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// The service's value (never a secret's).
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<serde_json::Value>,
    why: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ConflictJson {
    address: String,
    path: String,
    /// At the last apply; absent when the state keeps only a fingerprint of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    applied: Option<serde_json::Value>,
    /// The service's; absent for a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<serde_json::Value>,
    files: serde_json::Value,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AdoptedJson {
    address: String,
    remote_id: String,
}

fn codify_json(codified: &Codified, file_changes: usize, written: bool, branch: Option<String>) -> CodifyJson {
    let field = |f: &monform_codify::Field| FieldJson {
        address: f.address.to_string(),
        path: f.path.clone(),
        note: f.note.clone(),
    };
    CodifyJson {
        written,
        branch,
        files: codified
            .files
            .iter()
            .map(|file| FileJson {
                name: file.name.clone(),
                new: file.new,
                diff: Codified {
                    files: vec![file.clone()],
                    ..Default::default()
                }
                .diff(),
            })
            .collect(),
        fields: codified.fields.iter().map(field).collect(),
        hand_edits: codified
            .hand_edits
            .iter()
            .map(|h| HandEditJson {
                address: h.address.to_string(),
                path: h.path.clone(),
                service: h.service.clone(),
                why: h.why.clone(),
            })
            .collect(),
        conflicts: codified
            .conflicts
            .iter()
            .map(|c| ConflictJson {
                address: c.address.to_string(),
                path: c.path.clone(),
                applied: c.applied.clone(),
                service: c.service.clone(),
                files: c.files.clone(),
            })
            .collect(),
        secrets: codified.secrets.iter().map(field).collect(),
        adopted: codified
            .adopted
            .iter()
            .map(|(address, id)| AdoptedJson {
                address: address.to_string(),
                remote_id: id.clone(),
            })
            .collect(),
        notes: codified.notes.clone(),
        file_changes,
    }
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
    let human = args.format == super::export::ExportFormat::Human;
    if human {
        print!("{}", codified.diff());
        eprint!("{}", summary(&codified, file_changes));
    }
    let write = (args.write || args.branch.is_some()) && codified.has_changes();
    if write {
        if let Err(e) = monform_codify::write(&codified) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        if human {
            eprintln!("Wrote {} file{}.", codified.files.len(), plural(codified.files.len()));
        }
        if let Some(branch) = &args.branch {
            if let Err(e) = monform_codify::git::commit_on_branch(dir, branch, &codified) {
                eprintln!("error: {e}\n\nhint: the files are written; commit them by hand");
                return ExitCode::FAILURE;
            }
            if human {
                eprintln!("Committed on branch {branch}.");
            }
        }
    }
    if !human {
        let branch = args.branch.clone().filter(|_| write);
        crate::render::print_json(&codify_json(&codified, file_changes, write, branch));
    }
    if !codified.hand_edits.is_empty() || !codified.secrets.is_empty() || !codified.conflicts.is_empty() {
        crate::exit::code(EXIT_HAND_EDIT)
    } else if args.check && codified.has_changes() {
        crate::exit::code(EXIT_DIFF)
    } else {
        crate::exit::code(crate::exit::SUCCESS)
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
