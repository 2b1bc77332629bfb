//! `monform state list | show | rm | mv | history | migrate`: look at and
//! change the state (the cache of remote ids and fingerprints) without
//! planning. Commands that write take the project's apply lock.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use monform_config::{Loaded, Project};
use monform_engine::identity::{owned_by, remote_owner, retag_body, uses_tags};
use monform_engine::{State, StateBackend};
use monform_model::{Address, Kind};

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
    List,
    /// Show one entry of the state (fingerprints only: the state never holds a secret)
    Show {
        /// e.g. checks.homepage-ping
        address: String,
    },
    /// Stop managing an object without deleting it (its ownership tag is removed)
    Rm {
        /// e.g. checks.homepage-ping
        address: String,
    },
    /// Rename a logical id without recreating the object (the next apply rewrites its tag)
    Mv {
        /// The address now, e.g. checks.old-name
        old: String,
        /// The address to move it to, e.g. checks.new-name
        new: String,
    },
    /// Who wrote which serial, when, with which command (PostgreSQL backend)
    History {
        /// How many of the latest writes to show
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Copy the state to another backend
    Migrate {
        /// The backend to copy to (from the other one)
        #[arg(long, value_enum)]
        to: BackendName,
        /// Overwrite a target whose state is newer (or as new) as the one copied
        #[arg(long)]
        force: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendName {
    Postgres,
    Local,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: StateArgs, output: &Output) -> ExitCode {
    let result = block_on(async {
        let (loaded, project) = load_project(dir, output)?;
        match args.command {
            StateCommand::List => list(dir, &project),
            StateCommand::Show { address } => show(dir, &project, &address),
            StateCommand::Rm { address } => rm(dir, api_url, &loaded, &project, &address).await,
            StateCommand::Mv { old, new } => mv(dir, &loaded, &project, &old, &new),
            StateCommand::History { limit } => history(dir, &project, limit),
            StateCommand::Migrate { to, force } => migrate(dir, &project, to, force),
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

fn not_in_state(address: &Address, state: &State) -> Stop {
    let known: Vec<&str> = state.resources.keys().map(String::as_str).collect();
    let hint = monform_model::suggest(&address.to_string(), known.iter().copied())
        .map(|s| format!("\n\nhint: did you mean `{s}`?"))
        .unwrap_or_default();
    Stop::Message(format!("{address} is not in the state{hint}"))
}

fn list(dir: &Path, project: &Project) -> Result<ExitCode, Stop> {
    let backend = open_backend(dir, project, "monform state list")?;
    let state = backend.load(&project.name).map_err(failed)?;
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

fn show(dir: &Path, project: &Project, text: &str) -> Result<ExitCode, Stop> {
    let address = parse(text)?;
    let backend = open_backend(dir, project, "monform state show")?;
    let state = backend.load(&project.name).map_err(failed)?;
    let entry = state
        .resources
        .get(&address.to_string())
        .ok_or_else(|| not_in_state(&address, &state))?;
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

async fn rm(
    dir: &Path,
    api_url: Option<&str>,
    loaded: &Loaded,
    project: &Project,
    text: &str,
) -> Result<ExitCode, Stop> {
    let address = parse(text)?;
    let command = format!("monform state rm {address}");
    let backend = open_backend(dir, project, &command)?;
    let _lock = backend.lock(&command).map_err(failed)?;
    let mut state = backend.load(&project.name).map_err(failed)?;
    let key = address.to_string();
    let entry = state.resources.get(&key).cloned();
    let kind = address.kind;
    let mut untagged = None;
    if uses_tags(kind) {
        // The tag goes first: an object still tagged would be claimed again.
        let connection = connect(dir, api_url, project).await?;
        let result = untag(&connection.client, project, &address, entry.as_ref()).await;
        connection.close().await;
        untagged = result?;
        if entry.is_none() && untagged.is_none() {
            return Err(not_in_state(&address, &state));
        }
    } else if entry.is_none() {
        return Err(not_in_state(&address, &state));
    }
    if entry.is_some() {
        state.resources.remove(&key);
        state.serial += 1;
        backend.save(&state).map_err(failed)?;
    }
    let id = entry
        .map(|e| e.remote_id)
        .or_else(|| untagged.clone())
        .unwrap_or_default();
    match &untagged {
        Some(_) => eprintln!(
            "Removed {address} (remote id {id}) from the state and its ownership tag from the object; the object was not deleted."
        ),
        None if uses_tags(kind) => {
            eprintln!(
                "Removed {address} (remote id {id}) from the state; no object in the account carried its ownership tag."
            )
        }
        None => eprintln!("Removed {address} (remote id {id}) from the state; the object was not deleted."),
    }
    if loaded.desired.resources.contains_key(&address) {
        let next = if uses_tags(kind) {
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

/// Removes the project's ownership tag from the object of `address`: its
/// remote id, or `None` when no object carries the tag.
async fn untag(
    client: &monform_api::Client,
    project: &Project,
    address: &Address,
    entry: Option<&monform_engine::state::ResourceState>,
) -> Result<Option<String>, Stop> {
    let api = |e: monform_api::Error| Stop::Message(format!("cannot reach the object of {address}: {e}"));
    let remote = match entry {
        Some(entry) => client.get(address.kind, &entry.remote_id).await.map_err(api)?,
        None => client
            .list_all(address.kind)
            .await
            .map_err(api)?
            .into_iter()
            .find(|r| remote_owner(r).is_some_and(|(p, id)| p == project.name && id == address.id)),
    };
    let Some(remote) = remote else {
        return Ok(None);
    };
    if !owned_by(&remote, &project.name) {
        return Ok(None);
    }
    let body = retag_body(address.kind, &remote.body(), &project.name, None);
    client
        .update(address.kind, &remote.id, &body)
        .await
        .map_err(|e| Stop::Message(format!("cannot remove the ownership tag of {address}: {e}")))?;
    Ok(Some(remote.id))
}

fn mv(dir: &Path, loaded: &Loaded, project: &Project, old_text: &str, new_text: &str) -> Result<ExitCode, Stop> {
    let old = parse(old_text)?;
    let new = parse(new_text)?;
    if old.kind != new.kind {
        return Err(Stop::Message(format!(
            "{old} and {new} are of different kinds: an object cannot change kind"
        )));
    }
    if old.kind == Kind::Variable {
        return Err(Stop::Message(format!(
            "{old}: a variable's logical id is its key, which the API cannot rename; change the key in the files and apply (it is replaced)"
        )));
    }
    if old == new {
        return Err(Stop::Message(format!("{old} and {new} are the same address")));
    }
    let command = format!("monform state mv {old} {new}");
    let backend = open_backend(dir, project, &command)?;
    let _lock = backend.lock(&command).map_err(failed)?;
    let mut state = backend.load(&project.name).map_err(failed)?;
    if state.resources.contains_key(&new.to_string()) {
        return Err(Stop::Message(format!(
            "{new} is already in the state: `monform state rm {new}` first if it should go"
        )));
    }
    let entry = state
        .resources
        .remove(&old.to_string())
        .ok_or_else(|| not_in_state(&old, &state))?;
    let id = entry.remote_id.clone();
    state.resources.insert(new.to_string(), entry);
    state.serial += 1;
    backend.save(&state).map_err(failed)?;
    let tag = if uses_tags(old.kind) {
        "; the next apply rewrites its ownership tag (and nothing else)"
    } else {
        ""
    };
    eprintln!("Moved {old} to {new} (remote id {id}){tag}.");
    let files = &loaded.desired.resources;
    if files.contains_key(&old) && !files.contains_key(&new) {
        eprintln!(
            "warning: the files still name {old}, not {new}: rename it in the files (and every reference to it), or the next plan deletes the object and creates {old} again"
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn history(dir: &Path, project: &Project, limit: usize) -> Result<ExitCode, Stop> {
    let backend = open_backend(dir, project, "monform state history")?;
    let Some(entries) = backend.history(&project.name, limit).map_err(failed)? else {
        return Err(Stop::Message(format!(
            "the local state ({}) keeps no history, only its current serial\n\nhint: [state] backend = \"postgres\" keeps every serial with who wrote it, when and with which command",
            backend.describe()
        )));
    };
    if entries.is_empty() {
        eprintln!("No history yet at {}.", backend.describe());
        return Ok(ExitCode::SUCCESS);
    }
    let by = entries.iter().map(|e| e.applied_by.len()).max().unwrap_or(0).max(2);
    let command = entries.iter().map(|e| e.command.len()).max().unwrap_or(0).max(7);
    println!(
        "{:>6}  {:20}  {:by$}  {:command$}  CHANGES",
        "SERIAL", "WHEN (UTC)", "BY", "COMMAND"
    );
    for e in &entries {
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
    Ok(ExitCode::SUCCESS)
}

fn migrate(dir: &Path, project: &Project, to: BackendName, force: bool) -> Result<ExitCode, Stop> {
    let command = format!(
        "monform state migrate --to {}",
        if to == BackendName::Postgres {
            "postgres"
        } else {
            "local"
        }
    );
    let local: Box<dyn StateBackend> = Box::new(super::context::local_state(dir, project));
    let postgres: Box<dyn StateBackend> = Box::new(open_postgres(&project.name, &command)?);
    let (source, target) = match to {
        BackendName::Postgres => (local, postgres),
        BackendName::Local => (postgres, local),
    };
    let _source_lock = source.lock(&command).map_err(failed)?;
    let _target_lock = target.lock(&command).map_err(failed)?;
    let from = source.load(&project.name).map_err(failed)?;
    if from.serial == 0 && from.resources.is_empty() {
        return Err(Stop::Message(format!(
            "there is no state to copy at {}",
            source.describe()
        )));
    }
    let existing = target.load(&project.name).map_err(failed)?;
    let target_has_state = existing.serial > 0 || !existing.resources.is_empty();
    if target_has_state && existing.resources == from.resources && existing.salt == from.salt {
        eprintln!(
            "{} already holds this state (serial {}): nothing to copy.",
            target.describe(),
            existing.serial
        );
        return Ok(ExitCode::SUCCESS);
    }
    if target_has_state && existing.serial >= from.serial && !force {
        return Err(Stop::Message(format!(
            "{} holds a state at serial {}, not older than the one to copy (serial {}): refusing to overwrite it\n\nhint: compare them with `monform state list`, then pass --force to overwrite",
            target.describe(),
            existing.serial,
            from.serial
        )));
    }
    let mut copy = from.clone();
    // Serials only grow, so saved plans made against either are refused.
    copy.serial = if target_has_state && existing.serial >= from.serial {
        existing.serial + 1
    } else {
        from.serial
    };
    target.save(&copy).map_err(failed)?;
    eprintln!(
        "Copied the state ({}, serial {}) from {} to {}.",
        count(copy.resources.len(), "address", "addresses"),
        copy.serial,
        source.describe(),
        target.describe()
    );
    let configured = match project.state_backend {
        monform_config::StateBackend::Local => BackendName::Local,
        monform_config::StateBackend::Postgres => BackendName::Postgres,
    };
    if configured != to {
        let name = if to == BackendName::Postgres {
            "postgres"
        } else {
            "local"
        };
        eprintln!("hint: set `[state] backend = \"{name}\"` in monform.toml to use it");
    }
    Ok(ExitCode::SUCCESS)
}
