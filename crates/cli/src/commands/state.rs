//! `monform state list | show | rm | mv | history | migrate`: look at and
//! change the state (the cache of remote ids and fingerprints) without
//! planning. Commands that write take the project's apply lock.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use monform_config::{Loaded, Project};
use monform_engine::StateBackend;
use monform_engine::ops::{self, Migrated, Refusal};
use monform_model::Address;

use super::context::{Stop, block_on, open_backend, open_postgres};
use crate::connect::connect;
use crate::render::Output;

#[derive(Args)]
pub struct StateArgs {
    #[command(subcommand)]
    command: StateCommand,
}

#[derive(Subcommand)]
enum StateCommand {
    /// List the addresses in the state with their remote ids
    List {
        /// Output: for people, or json (`monform schema --output state-list`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Show one entry of the state (fingerprints only: the state never holds a secret)
    Show {
        /// e.g. checks.homepage-ping
        address: String,
        /// Output: for people, or json (`monform schema --output state-show`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Stop managing an object without deleting it (its ownership tag is removed)
    Rm {
        /// e.g. checks.homepage-ping
        address: String,
        /// Output: for people, or json (`monform schema --output state-rm`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Rename a logical id without recreating the object (the next apply rewrites its tag)
    Mv {
        /// The address now, e.g. checks.old-name
        old: String,
        /// The address to move it to, e.g. checks.new-name
        new: String,
        /// Output: for people, or json (`monform schema --output state-mv`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Who wrote which serial, when, with which command (PostgreSQL backend); agents' MCP calls
    History {
        /// How many of the latest writes to show
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Output: for people, or json (`monform schema --output state-history`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Copy the state to another backend
    Migrate {
        /// The backend to copy to (from the other one)
        #[arg(long, value_enum)]
        to: BackendName,
        /// Overwrite a target whose state is newer (or as new) as the one copied
        #[arg(long)]
        force: bool,
        /// Output: for people, or json (`monform schema --output state-migrate`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
}

use crate::format::HumanOrJson as Format;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendName {
    Postgres,
    Local,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: StateArgs, output: &Output) -> ExitCode {
    let result = block_on(async {
        let (loaded, project) = load_project(dir, output)?;
        match args.command {
            StateCommand::List { format } => list(dir, &project, format),
            StateCommand::Show { address, format } => show(dir, &loaded, &project, &address, format),
            StateCommand::Rm { address, format } => rm(dir, api_url, &loaded, &project, &address, format).await,
            StateCommand::Mv { old, new, format } => mv(dir, &loaded, &project, (&old, &new), format),
            StateCommand::History { limit, format } => history(dir, &project, limit, format),
            StateCommand::Migrate { to, force, format } => migrate(dir, &loaded, &project, (to, force), format),
        }
    });
    super::context::finish(result)
}

/// The project settings; the resource files need not be valid (nor their
/// environment variables set) to work on the state.
fn load_project(dir: &Path, output: &Output) -> Result<(Loaded, Project), Stop> {
    let loaded = super::context::load_files(dir);
    match loaded.project.clone() {
        Some(project) => {
            super::context::require_environment(&project)?;
            Ok((loaded, project))
        }
        None => {
            output.diagnostics(&loaded.diagnostics, &loaded.sources);
            Err(Stop::Message("monform.toml is not valid".into()))
        }
    }
}

fn parse(text: &str) -> Result<Address, Stop> {
    text.parse::<Address>()
        .map_err(|e| Stop::Message(format!("`{text}` is not an address: {e}")))
}

fn failed(error: impl std::fmt::Display) -> Stop {
    Stop::Message(error.to_string())
}

/// A refusal of the state operations in words.
fn refused(refusal: Refusal, loaded: &Loaded) -> Stop {
    match refusal {
        Refusal::NotInState { address, suggestion } => {
            let hint = suggestion
                .map(|s| format!("\n\nhint: did you mean `{s}`?"))
                .unwrap_or_default();
            Stop::Message(format!("{address} is not in the state{hint}"))
        }
        Refusal::NewerTarget { .. } => Stop::Message(format!(
            "{refusal}\n\nhint: compare them with `monform state list`, then pass --force to overwrite"
        )),
        other => super::context::refused(&other, loaded),
    }
}

/// `state list --format json`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "StateList")]
pub struct ListJson {
    /// The state's serial: each write adds one.
    serial: u64,
    /// Where the state is kept (a file, or PostgreSQL).
    backend: String,
    resources: Vec<ListedJson>,
}

/// One address of the state.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ListedJson {
    address: String,
    remote_id: String,
}

fn list(dir: &Path, project: &Project, format: Format) -> Result<ExitCode, Stop> {
    let backend = open_backend(dir, project, "monform state list")?;
    let state = backend.load(&project.name).map_err(failed)?;
    if format == Format::Json {
        crate::render::print_json(&ListJson {
            serial: state.serial,
            backend: backend.describe(),
            resources: state
                .resources
                .iter()
                .map(|(address, entry)| ListedJson {
                    address: address.clone(),
                    remote_id: entry.remote_id.clone(),
                })
                .collect(),
        });
        return Ok(ExitCode::SUCCESS);
    }
    let width = state.resources.keys().map(String::len).max().unwrap_or(0);
    for (address, entry) in &state.resources {
        println!("{address:width$}  {}", entry.remote_id);
    }
    eprintln!(
        "{} in the state (serial {}) at {}",
        count(state.resources.len(), "address", "addresses"),
        state.serial,
        backend.describe()
    );
    Ok(ExitCode::SUCCESS)
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `state show ADDRESS --format json`: fingerprints only, never a secret.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StateEntry")]
pub struct EntryJson {
    address: String,
    remote_id: String,
    /// The object's version (`updated_at`) when last read; null when unknown.
    version: Option<String>,
    /// Fingerprint of the managed fields as last applied.
    applied: String,
    /// The sensitive fields' paths (the state keeps a salted fingerprint of each).
    secrets: Vec<String>,
    prevent_destroy: bool,
}

fn show(dir: &Path, loaded: &Loaded, project: &Project, text: &str, format: Format) -> Result<ExitCode, Stop> {
    let address = parse(text)?;
    let backend = open_backend(dir, project, "monform state show")?;
    let state = backend.load(&project.name).map_err(failed)?;
    let entry = state
        .resources
        .get(&address.to_string())
        .ok_or_else(|| refused(ops::not_in_state(&address, &state), loaded))?;
    if format == Format::Json {
        crate::render::print_json(&EntryJson {
            address: address.to_string(),
            remote_id: entry.remote_id.clone(),
            version: entry.version.clone(),
            applied: entry.applied.clone(),
            secrets: entry.secrets.keys().cloned().collect(),
            prevent_destroy: entry.prevent_destroy,
        });
        return Ok(ExitCode::SUCCESS);
    }
    println!("address:        {address}");
    println!("remote id:      {}", entry.remote_id);
    println!("version:        {}", entry.version.as_deref().unwrap_or("(unknown)"));
    println!("applied:        {} (fingerprint of the managed fields)", entry.applied);
    if entry.secrets.is_empty() {
        println!("secrets:        (none)");
    }
    for (i, path) in entry.secrets.keys().enumerate() {
        let label = if i == 0 { "secrets:" } else { "" };
        println!("{label:16}{path} (sensitive: only a salted fingerprint is kept)");
    }
    println!("preventDestroy: {}", entry.prevent_destroy);
    Ok(ExitCode::SUCCESS)
}

/// `state rm ADDRESS --format json`: what left the state. The object is
/// never deleted.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StateRemoved")]
pub struct RemovedJson {
    address: String,
    /// The object's id in the service (kept: only the state forgets it).
    remote_id: String,
    /// The object's ownership tag: `removed` from the object, `notFound`
    /// (no object in the account carried it), or `none` (the kind carries
    /// none: it is known by its identity).
    tag: TagJson,
    /// The files still declare the address: the next plan would create
    /// the object again (or adopt it by its identity).
    still_in_files: bool,
}

/// The ownership tag of an object `state rm` let go.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum TagJson {
    Removed,
    NotFound,
    None,
}

async fn rm(
    dir: &Path,
    api_url: Option<&str>,
    loaded: &Loaded,
    project: &Project,
    text: &str,
    format: Format,
) -> Result<ExitCode, Stop> {
    let address = parse(text)?;
    let backend = open_backend(dir, project, &format!("monform state rm {address}"))?;
    // Only kinds with ownership tags need the service (the tag goes first).
    let connection = match ops::state_rm_needs_service(&address) {
        true => Some(connect(dir, api_url, project).await?),
        false => None,
    };
    let client = connection.as_ref().map(|c| &c.client);
    let result = ops::state_rm(&project.name, &loaded.desired, backend.as_ref(), client, &address).await;
    if let Some(connection) = connection {
        connection.close().await;
    }
    let removed = result.map_err(|r| refused(r, loaded))?;
    let id = &removed.remote_id;
    let kind = address.kind;
    let tag = match removed.untagged {
        true => TagJson::Removed,
        false if ops::uses_tags(kind) => TagJson::NotFound,
        false => TagJson::None,
    };
    if format == Format::Json {
        crate::render::print_json(&RemovedJson {
            address: address.to_string(),
            remote_id: id.clone(),
            tag,
            still_in_files: removed.still_in_files,
        });
        return Ok(ExitCode::SUCCESS);
    }
    match tag {
        TagJson::Removed => eprintln!(
            "Removed {address} (remote id {id}) from the state and its ownership tag from the object; the object was not deleted."
        ),
        TagJson::NotFound => eprintln!(
            "Removed {address} (remote id {id}) from the state; no object in the account carried its ownership tag."
        ),
        TagJson::None => eprintln!("Removed {address} (remote id {id}) from the state; the object was not deleted."),
    }
    if removed.still_in_files {
        let next = if ops::uses_tags(kind) {
            "create a new one"
        } else {
            "adopt the object again by its identity"
        };
        eprintln!(
            "warning: {address} is still in the files: the next plan would {next}; remove it from the files to stop managing it"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `state mv OLD NEW --format json`: the entry renamed, the object kept.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StateMoved")]
pub struct MovedJson {
    /// The address the state held.
    from: String,
    /// The address it holds now, for the same object.
    to: String,
    remote_id: String,
    /// The kind carries an ownership tag naming the address: the next
    /// apply rewrites it (and nothing else).
    tag_rewritten_on_apply: bool,
    /// The files still name `from`, not `to`: unless they are renamed, the
    /// next plan deletes the object and creates `from` again.
    files_name_old: bool,
}

fn mv(
    dir: &Path,
    loaded: &Loaded,
    project: &Project,
    (old_text, new_text): (&str, &str),
    format: Format,
) -> Result<ExitCode, Stop> {
    let old = parse(old_text)?;
    let new = parse(new_text)?;
    let backend = open_backend(dir, project, &format!("monform state mv {old} {new}"))?;
    let moved =
        ops::state_mv(&project.name, &loaded.desired, backend.as_ref(), &old, &new).map_err(|r| refused(r, loaded))?;
    if format == Format::Json {
        crate::render::print_json(&MovedJson {
            from: old.to_string(),
            to: new.to_string(),
            remote_id: moved.remote_id,
            tag_rewritten_on_apply: ops::uses_tags(old.kind),
            files_name_old: moved.files_name_old,
        });
        return Ok(ExitCode::SUCCESS);
    }
    let tag = if ops::uses_tags(old.kind) {
        "; the next apply rewrites its ownership tag (and nothing else)"
    } else {
        ""
    };
    eprintln!("Moved {old} to {new} (remote id {}){tag}.", moved.remote_id);
    if moved.files_name_old {
        eprintln!(
            "warning: the files still name {old}, not {new}: rename it in the files (and every reference to it), or the next plan deletes the object and creates {old} again"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `state history --format json`: the state's writes and agents' calls.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "StateHistory")]
pub struct HistoryJson {
    /// The latest writes, newest first; null when the backend keeps none (the local file).
    writes: Option<Vec<WriteJson>>,
    /// Agents' calls through `monform mcp` (kept by both backends).
    calls: Vec<monform_engine::CallRecord>,
}

/// One write of the state.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WriteJson {
    serial: u64,
    /// UTC, ISO 8601.
    applied_at: String,
    /// `user@host`.
    applied_by: String,
    /// The monform command that wrote it.
    command: String,
    /// The addresses added (`+`), changed (`~`) and removed (`-`).
    changes: String,
}

fn history(dir: &Path, project: &Project, limit: usize, format: Format) -> Result<ExitCode, Stop> {
    let backend = open_backend(dir, project, "monform state history")?;
    let entries = backend.history(&project.name, limit).map_err(failed)?;
    // Agents' calls (`monform mcp`) are kept by both backends.
    let calls = backend.calls(&project.name, limit).map_err(failed)?;
    if format == Format::Json {
        let writes = entries.map(|entries| {
            entries
                .into_iter()
                .map(|e| WriteJson {
                    serial: e.serial,
                    applied_at: e.applied_at,
                    applied_by: e.applied_by,
                    command: e.command,
                    changes: e.changes,
                })
                .collect()
        });
        crate::render::print_json(&HistoryJson { writes, calls });
        return Ok(ExitCode::SUCCESS);
    }
    match &entries {
        None if calls.is_empty() => {
            return Err(Stop::Message(format!(
                "the local state ({}) keeps no history, only its current serial (and agents' calls, none yet)\n\nhint: [state] backend = \"postgres\" keeps every serial with who wrote it, when and with which command",
                backend.describe()
            )));
        }
        None => {}
        Some(entries) if entries.is_empty() && calls.is_empty() => {
            eprintln!("No history yet at {}.", backend.describe());
        }
        Some(entries) if entries.is_empty() => {}
        Some(entries) => print_writes(entries),
    }
    if !calls.is_empty() {
        if entries.as_ref().is_some_and(|e| !e.is_empty()) {
            println!();
        }
        print_calls(&calls);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_writes(entries: &[monform_engine::HistoryEntry]) {
    let by = entries.iter().map(|e| e.applied_by.len()).max().unwrap_or(0).max(2);
    let command = entries.iter().map(|e| e.command.len()).max().unwrap_or(0).max(7);
    println!(
        "{:>6}  {:20}  {:by$}  {:command$}  CHANGES",
        "SERIAL", "WHEN (UTC)", "BY", "COMMAND"
    );
    for e in entries {
        println!(
            "{:>6}  {:20}  {:by$}  {:command$}  {}",
            e.serial,
            e.applied_at,
            e.applied_by,
            e.command,
            if e.changes.is_empty() {
                "(no change)"
            } else {
                &e.changes
            }
        );
    }
}

/// The calls agents made through `monform mcp`: what, by which client,
/// on which plan (its hash's first 12 digits, as `monform approve` takes it).
fn print_calls(calls: &[monform_engine::CallRecord]) {
    let width =
        |f: &dyn Fn(&monform_engine::CallRecord) -> usize, min: usize| calls.iter().map(f).max().unwrap_or(0).max(min);
    let by = width(&|c| c.by.len(), 2);
    let client = width(&|c| c.client.len(), 6);
    let tool = width(&|c| c.tool.len(), 4);
    println!(
        "{:20}  {:by$}  {:client$}  {:tool$}  {:12}  OUTCOME",
        "MCP CALL (UTC)", "BY", "CLIENT", "TOOL", "PLAN"
    );
    for c in calls {
        let plan = c.plan_hash.as_deref().map(|h| h.get(..12).unwrap_or(h)).unwrap_or("-");
        println!(
            "{:20}  {:by$}  {:client$}  {:tool$}  {plan:12}  {}",
            c.at, c.by, c.client, c.tool, c.outcome
        );
    }
}

/// `state migrate --to BACKEND --format json`: the state copied, or
/// already there. Never the database's password (its URL is not shown).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StateMigrated")]
pub struct MigratedJson {
    /// The backend copied from, in words (a file, or PostgreSQL and the project).
    from: String,
    /// The backend copied to.
    to: String,
    /// False: the target already held this state, nothing was copied.
    copied: bool,
    /// The addresses copied; null when nothing was.
    addresses: Option<usize>,
    /// The state's serial in the target.
    serial: u64,
    /// monform.toml's `[state] backend` is the target's: false means set
    /// it to use the copy.
    configured: bool,
}

fn migrate(
    dir: &Path,
    loaded: &Loaded,
    project: &Project,
    (to, force): (BackendName, bool),
    format: Format,
) -> Result<ExitCode, Stop> {
    let name = if to == BackendName::Postgres {
        "postgres"
    } else {
        "local"
    };
    let command = format!("monform state migrate --to {name}");
    let local: Box<dyn StateBackend> = Box::new(super::context::local_state(dir, project));
    let postgres: Box<dyn StateBackend> = Box::new(open_postgres(&project.name, &command)?);
    let (source, target) = match to {
        BackendName::Postgres => (local, postgres),
        BackendName::Local => (postgres, local),
    };
    let describe = (source.describe(), target.describe());
    let migrated = ops::state_migrate(&project.name, source.as_ref(), target.as_ref(), &command, force)
        .map_err(|r| refused(r, loaded))?;
    let configured = match project.state_backend {
        monform_config::StateBackend::Local => BackendName::Local,
        monform_config::StateBackend::Postgres => BackendName::Postgres,
    } == to;
    if format == Format::Json {
        let (copied, addresses, serial) = match migrated {
            Migrated::AlreadyThere { serial } => (false, None, serial),
            Migrated::Copied { addresses, serial } => (true, Some(addresses), serial),
        };
        crate::render::print_json(&MigratedJson {
            from: describe.0,
            to: describe.1,
            copied,
            addresses,
            serial,
            configured,
        });
        return Ok(ExitCode::SUCCESS);
    }
    match migrated {
        Migrated::AlreadyThere { serial } => {
            eprintln!(
                "{} already holds this state (serial {serial}): nothing to copy.",
                describe.1
            );
            return Ok(ExitCode::SUCCESS);
        }
        Migrated::Copied { addresses, serial } => eprintln!(
            "Copied the state ({}, serial {serial}) from {} to {}.",
            count(addresses, "address", "addresses"),
            describe.0,
            describe.1
        ),
    }
    if !configured {
        eprintln!("hint: set `[state] backend = \"{name}\"` in monform.toml to use it");
    }
    Ok(ExitCode::SUCCESS)
}
