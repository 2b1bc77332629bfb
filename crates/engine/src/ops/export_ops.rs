//! `monform export` and `monform import --all-unmanaged`: the account read
//! and turned into the files of a new project, and (import) the objects
//! no project owns adopted by it. The rules live here: which names a
//! project may have, never writing over a project, never adopting under a
//! name that already owns objects, and which objects are unmanaged.

use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use monform_api::{Client, Remote};
use monform_config::Loaded;
use monform_config::project::PROJECT_FILE;
use monform_model::Address;

use super::Refusal;
use super::import_ops::{list_everything, write_tag};
pub use crate::export::{EnvVar, Exported, Fold, Folded, KnownSecrets, SplitBy, include_name, known_secrets};
use crate::export::{
    PROJECT_SCHEMA_FILE, RESOURCE_SCHEMA_FILE, adopted_state, environment_markdown, export, project_toml, unmanaged,
};
use crate::identity::{owned_by, uses_tags};
pub use crate::ownership::Owner;
use crate::ownership::{Owners, write_record};
use crate::state::{LocalState, State, StateBackend};

/// Why an export or an import of the unmanaged objects does not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExportRefusal {
    #[error("no project name: pass --project NAME (or run in a project with a monform.toml)")]
    NoName,
    #[error("`{0}` cannot be a project name (no `/`, quotes or backslashes)")]
    BadName(String),
    #[error("{} already holds a monform.toml: choose an empty folder", .0.display())]
    OutHoldsProject(PathBuf),
    /// Adopting under a name that already owns objects would make the new
    /// project's plan delete them.
    #[error("project `{0}` already owns objects in the account: pass --project with a new name")]
    AlreadyOwns(String),
    #[error("cannot write {}: {error}", path.display())]
    Write { path: PathBuf, error: std::io::Error },
    /// The written files do not load (their diagnostics in `loaded`).
    #[error("the files written to {} have problems (above); no state was written", out.display())]
    FilesInvalid { out: PathBuf, loaded: Box<Loaded> },
    #[error("cannot write the new project's ownership record: {0}")]
    Record(monform_api::Error),
}

fn refuse<T>(refusal: ExportRefusal) -> Result<T, Refusal> {
    Err(Refusal::Export(refusal))
}

/// The written project's name: `name` if given, else the current
/// project's; it goes into ownership tags and monform.toml, so no `/`,
/// quotes or backslashes.
pub fn new_project_name(name: Option<&str>, current: Option<&str>) -> Result<String, Refusal> {
    let Some(name) = name.or(current) else {
        return refuse(ExportRefusal::NoName);
    };
    if name.is_empty() || name.contains(['/', '"', '\\']) {
        return refuse(ExportRefusal::BadName(name.to_owned()));
    }
    Ok(name.to_owned())
}

/// Refuses to write over a project.
pub fn check_out(out: &Path) -> Result<(), Refusal> {
    if out.join(PROJECT_FILE).exists() {
        return refuse(ExportRefusal::OutHoldsProject(out.to_owned()));
    }
    Ok(())
}

/// The account as the files of a project.
#[derive(Debug)]
pub struct ExportedAccount {
    pub exported: Exported,
    /// `project` already owns objects here: applying the export in this
    /// account would take them over (and delete those it does not name).
    pub project_owns_objects: bool,
}

/// Reads every object of the account into the files of project `project`;
/// `known`: the secrets a state recorded (written as `${env:}` too);
/// `fold`: how much look-alike objects are folded into `forEach`.
pub async fn export_account(
    client: &Client,
    project: &str,
    split: SplitBy,
    fold: Fold,
    known: &KnownSecrets,
) -> Result<ExportedAccount, Refusal> {
    let objects = list_everything(client).await.map_err(Refusal::Fetch)?;
    let project_owns_objects = objects.iter().any(|r| uses_tags(r.kind) && owned_by(r, project));
    Ok(ExportedAccount {
        exported: export(objects, split, fold, known),
        project_owns_objects,
    })
}

/// Writes monform.toml (with `api_url` unless it is `local`: that would
/// start another emulator in the new folder), the resource and script
/// files and ENVIRONMENT.md, each durably.
pub fn write_project(out: &Path, project: &str, api_url: Option<&str>, exported: &Exported) -> Result<(), Refusal> {
    let failed = |path: &Path, error: std::io::Error| {
        Refusal::Export(ExportRefusal::Write {
            path: path.to_owned(),
            error,
        })
    };
    std::fs::create_dir_all(out).map_err(|e| failed(out, e))?;
    let url = api_url.filter(|u| *u != "local");
    let toml = out.join(PROJECT_FILE);
    crate::durable::write(
        &toml,
        project_toml(project, url, &exported.defaults, &exported.vars).as_bytes(),
    )
    .map_err(|e| failed(&toml, e))?;
    for (relative, text) in &exported.files {
        let path = out.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(parent, e))?;
        }
        crate::durable::write(&path, text.as_bytes()).map_err(|e| failed(&path, e))?;
    }
    let schemas = [
        (RESOURCE_SCHEMA_FILE, monform_model::schema::document_text()),
        (
            PROJECT_SCHEMA_FILE,
            monform_config::project_schema::project_schema_text(),
        ),
    ];
    for (relative, text) in schemas {
        let path = out.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(parent, e))?;
        }
        crate::durable::write(&path, text.as_bytes()).map_err(|e| failed(&path, e))?;
    }
    if !exported.env.is_empty() {
        let path = out.join("ENVIRONMENT.md");
        crate::durable::write(&path, environment_markdown(&exported.env).as_bytes()).map_err(|e| failed(&path, e))?;
    }
    Ok(())
}

/// What `import --all-unmanaged` found to adopt.
#[derive(Debug)]
pub struct Unmanaged {
    /// The objects no project owns, as the new project's files.
    pub exported: Exported,
    /// Whose owner cannot be told: left out unless included by name.
    pub unknown: Vec<(Remote, Owner)>,
    /// Objects of kinds without tags that other projects own: left out.
    pub others: usize,
}

/// The objects of the account no project owns, as project `project`'s
/// files. `current`: the state of the project of the folder (its objects
/// are never unmanaged); `include`: objects whose owner cannot be told to
/// take anyway (`section:id`).
pub async fn find_unmanaged(
    client: &Client,
    project: &str,
    current: Option<&State>,
    include: &[String],
    split: SplitBy,
    fold: Fold,
) -> Result<Unmanaged, Refusal> {
    let everything = list_everything(client).await.map_err(Refusal::Fetch)?;
    let owners = Owners::new(everything.iter());
    if owners.records.contains_key(project) || everything.iter().any(|r| uses_tags(r.kind) && owned_by(r, project)) {
        return refuse(ExportRefusal::AlreadyOwns(project.to_owned()));
    }
    let found = unmanaged(everything, &owners, current, include);
    // Unmanaged objects: no state of this project knows their secrets.
    Ok(Unmanaged {
        exported: export(found.objects, split, fold, &Default::default()),
        unknown: found.unknown,
        others: found.others,
    })
}

/// The objects of the account no project owns, as files the current
/// project adopts with `import` entries (`codify --include-unmanaged`): the
/// ownership rules of [`find_unmanaged`], the project's own objects
/// (`current`) never among them. An object whose logical id the files
/// already use is left out (in `clashing`), so no file claims it twice.
pub async fn find_unmanaged_for(
    client: &Client,
    current: &State,
    desired: &monform_config::Desired,
) -> Result<(Unmanaged, Vec<(Address, Remote)>), Refusal> {
    let everything = list_everything(client).await.map_err(Refusal::Fetch)?;
    let owners = Owners::new(everything.iter());
    let mut found = unmanaged(everything, &owners, Some(current), &[]);
    let mut clashing = Vec::new();
    // Leaving one out may change the ids of the others (ids are made
    // unique among the exported): export again until none clashes.
    loop {
        // Not folded: the files go beside the project's own, which may
        // have `[defaults]` of their own.
        let exported = export(found.objects.clone(), SplitBy::Kind, Fold::None, &Default::default());
        let clash: Vec<(Address, Remote)> = exported
            .objects
            .iter()
            .filter(|(address, _)| desired.resources.contains_key(*address))
            .map(|(a, r)| (a.clone(), r.clone()))
            .collect();
        if clash.is_empty() {
            return Ok((
                Unmanaged {
                    exported,
                    unknown: found.unknown,
                    others: found.others,
                },
                clashing,
            ));
        }
        found
            .objects
            .retain(|r| !clash.iter().any(|(_, c)| c.kind == r.kind && c.id == r.id));
        clashing.extend(clash);
    }
}

/// What adopting the unmanaged objects did.
#[derive(Debug)]
pub struct Adopted {
    /// What was written and adopted (without the objects in `not_tagged`).
    pub exported: Exported,
    /// Objects whose ownership tag could not be written: in the files, not
    /// in the state (each can be imported later): address, remote id, why.
    pub not_tagged: Vec<(Address, String, String)>,
    /// Where the new project's state is, in words.
    pub state_at: String,
}

/// Writes the unmanaged objects as the project in `out` and adopts them:
/// ownership tags on kinds with tags, `out/.monform/state.json` as an
/// apply of the written files would record it, and the new project's
/// ownership record (so the next import elsewhere leaves them alone).
/// `env`: the environment, for the secrets the files name (set: their
/// fingerprints are recorded).
pub async fn adopt_unmanaged(
    client: &Client,
    project: &str,
    api_url: Option<&str>,
    out: &Path,
    mut exported: Exported,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Adopted, Refusal> {
    write_project(out, project, api_url, &exported)?;
    // Adopt: ownership tags on kinds with tags (the version changes).
    let tagged: Vec<(Address, Remote)> = exported
        .objects
        .iter()
        .filter(|(a, _)| uses_tags(a.kind))
        .map(|(a, r)| (a.clone(), r.clone()))
        .collect();
    let mut results = futures_util::stream::iter(tagged)
        .map(|(address, remote)| async move {
            let updated = write_tag(client, project, &address, &remote).await;
            (address, updated)
        })
        .buffer_unordered(8);
    let mut failures: Vec<(Address, String)> = Vec::new();
    while let Some((address, updated)) = results.next().await {
        match updated {
            Ok(remote) => {
                exported.objects.insert(address, remote);
            }
            Err(e) => failures.push((address, e.to_string())),
        }
    }
    drop(results);
    // Objects whose tag could not be written stay out of the state.
    let mut not_tagged = Vec::new();
    for (address, error) in failures {
        if let Some(remote) = exported.objects.remove(&address) {
            not_tagged.push((address, remote.id, error));
        }
    }
    not_tagged.sort_by(|a, b| a.0.cmp(&b.0));
    // The files load with every secret they name, set or not: loading
    // checks them, the fingerprints below take only the set ones.
    let names: Vec<String> = exported.env.iter().map(|v| v.name.clone()).collect();
    let load_env = |name: &str| env(name).or_else(|| names.iter().any(|n| n == name).then(|| "unset".to_owned()));
    let loaded = monform_config::load(out, &load_env);
    if !loaded.is_ok() {
        return refuse(ExportRefusal::FilesInvalid {
            out: out.to_owned(),
            loaded: Box::new(loaded),
        });
    }
    let state = adopted_state(project, &loaded.desired, &exported.objects, &exported.env, env);
    let backend = LocalState::new(out);
    backend.save(&state).map_err(Refusal::State)?;
    write_record(client, &state, None)
        .await
        .map_err(|e| Refusal::Export(ExportRefusal::Record(e)))?;
    Ok(Adopted {
        exported,
        not_tagged,
        state_at: backend.describe(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_name_is_the_given_one_or_the_current_one_and_a_safe_one() {
        assert_eq!(new_project_name(Some("new"), Some("cur")).ok(), Some("new".to_owned()));
        assert_eq!(new_project_name(None, Some("cur")).ok(), Some("cur".to_owned()));
        assert!(matches!(
            new_project_name(None, None),
            Err(Refusal::Export(ExportRefusal::NoName))
        ));
        for bad in ["", "a/b", "a\"b", "a\\b"] {
            assert!(matches!(
                new_project_name(Some(bad), None),
                Err(Refusal::Export(ExportRefusal::BadName(_)))
            ));
        }
    }

    #[test]
    fn a_folder_holding_a_project_is_not_written_over() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_out(dir.path()).is_ok());
        std::fs::write(dir.path().join(PROJECT_FILE), "").unwrap();
        assert!(matches!(
            check_out(dir.path()),
            Err(Refusal::Export(ExportRefusal::OutHoldsProject(_)))
        ));
    }
}
