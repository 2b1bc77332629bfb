//! `monform init`: a new project in a folder, ready for `validate` and
//! `plan` (monform.toml against the bundled emulator, an example check, the
//! schemas its files name for editors, `.monform/` kept out of git); or,
//! `--from-account`, the account's unmanaged objects adopted into it
//! (`adopt_unmanaged`, as `import --all-unmanaged`), with the same
//! `.gitignore`. Nothing is overwritten.

use std::path::{Path, PathBuf};

use monform_config::project::PROJECT_FILE;

use super::Refusal;
use crate::export::{PROJECT_SCHEMA_FILE, RESOURCE_SCHEMA_FILE};

/// Where the example check goes.
pub const EXAMPLE_FILE: &str = "monitors/example.yaml";

/// What `.gitignore` gets: the state, its journal and lock, the parse cache.
pub const IGNORED: &str = ".monform/";

/// Why a project is not started.
#[derive(Debug, thiserror::Error)]
pub enum InitRefusal {
    #[error("{} already has a {PROJECT_FILE}: not overwritten", .0.display())]
    Exists(PathBuf),
    /// The folder's name has nothing a project name can be made of.
    #[error("cannot make a project name of the folder name `{0}`")]
    NoName(String),
    #[error(
        "`{0}` cannot be a project name (letters, digits, - and _, starting with a letter or digit, at most 64 characters)"
    )]
    BadName(String),
    /// A file the new project would write is there already.
    #[error("{} already exists: not overwritten", .0.display())]
    FileExists(PathBuf),
    #[error("cannot write {}: {error}", path.display())]
    Write { path: PathBuf, error: std::io::Error },
}

fn refuse<T>(refusal: InitRefusal) -> Result<T, Refusal> {
    Err(Refusal::Init(refusal))
}

/// What `.gitignore` was made to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitIgnore {
    Created,
    /// `.monform/` added to the file there.
    Added,
    /// It already kept `.monform/` out.
    AlreadyIgnored,
}

/// A project started by [`init_project`].
#[derive(Debug)]
pub struct Initialised {
    pub name: String,
    /// The files written, relative to the folder, in the order written.
    pub written: Vec<String>,
    pub gitignore: GitIgnore,
}

/// The project name for `dir`: `name` when given (it must be valid), else
/// the folder's name with what a name cannot hold made `-`
/// (`My Shop` is `My-Shop`).
pub fn init_name(dir: &Path, name: Option<&str>) -> Result<String, Refusal> {
    if let Some(name) = name {
        return match monform_model::is_valid_logical_id(name) {
            true => Ok(name.to_owned()),
            false => refuse(InitRefusal::BadName(name.to_owned())),
        };
    }
    // `--dir .` names the folder by its full path.
    let folder = std::path::absolute(dir)
        .ok()
        .and_then(|path| {
            path.components()
                .next_back()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let mut made = String::new();
    for c in folder.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if !(c == '-' && (made.is_empty() || made.ends_with('-'))) {
            made.push(c);
        }
    }
    let made: String = made.trim_start_matches(['-', '_']).chars().take(64).collect();
    let made = made.trim_end_matches('-').to_owned();
    match monform_model::is_valid_logical_id(&made) {
        true => Ok(made),
        false => refuse(InitRefusal::NoName(folder)),
    }
}

/// Refuses to start a project where there is one.
pub fn check_init(dir: &Path) -> Result<(), Refusal> {
    match dir.join(PROJECT_FILE).exists() {
        true => refuse(InitRefusal::Exists(dir.to_owned())),
        false => Ok(()),
    }
}

/// Writes a new project `name` in `dir` (created if need be): monform.toml
/// with `[api] url = "local"`, [`EXAMPLE_FILE`], the two JSON Schemas the
/// files' first lines name, and `.monform/` in `.gitignore`. Refuses, before
/// writing anything, when monform.toml or one of the files is there.
pub fn init_project(dir: &Path, name: &str) -> Result<Initialised, Refusal> {
    check_init(dir)?;
    let files = [
        (PROJECT_FILE, project_toml(name)),
        (EXAMPLE_FILE, EXAMPLE.to_owned()),
        (RESOURCE_SCHEMA_FILE, monform_model::schema::document_text()),
        (
            PROJECT_SCHEMA_FILE,
            monform_config::project_schema::project_schema_text(),
        ),
    ];
    if let Some((existing, _)) = files.iter().find(|(relative, _)| dir.join(relative).exists()) {
        return refuse(InitRefusal::FileExists(dir.join(existing)));
    }
    let mut written = Vec::new();
    // monform.toml last: a folder left half written is not yet a project,
    // and `init` can run again once the cause is fixed.
    for (relative, text) in files.iter().skip(1).chain(files.iter().take(1)) {
        write(&dir.join(relative), text)?;
        written.push((*relative).to_owned());
    }
    let gitignore = ignore_state(dir)?;
    Ok(Initialised {
        name: name.to_owned(),
        written,
        gitignore,
    })
}

/// Keeps `.monform/` (the state, its lock, the parse cache) out of git:
/// `.gitignore` is created, or the line added to it.
pub fn ignore_state(dir: &Path) -> Result<GitIgnore, Refusal> {
    let path = dir.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return refuse(InitRefusal::Write { path, error }),
    };
    let ignored = |line: &str| matches!(line.trim(), ".monform" | ".monform/" | "/.monform" | "/.monform/");
    match text {
        Some(text) if text.lines().any(ignored) => Ok(GitIgnore::AlreadyIgnored),
        Some(text) => {
            let separator = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            write(&path, &format!("{text}{separator}{IGNORED}\n"))?;
            Ok(GitIgnore::Added)
        }
        None => {
            write(&path, &format!("# monform's state, lock and cache\n{IGNORED}\n"))?;
            Ok(GitIgnore::Created)
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), Refusal> {
    let failed = |error| {
        Refusal::Init(InitRefusal::Write {
            path: path.to_owned(),
            error,
        })
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    crate::durable::write(path, text.as_bytes()).map_err(failed)
}

/// monform.toml of a new project (`name` is a valid logical id: nothing
/// to escape).
fn project_toml(name: &str) -> String {
    format!(
        r#"#:schema {PROJECT_SCHEMA_FILE}
# A monform project: every .yaml and .toml file below this folder is read.
# `monform validate` checks the files, `monform plan` shows what would change.
[project]
name = "{name}"

[api]
# "local" runs the bundled emulator in-process: no account needed. For the
# service, set its URL here and MONFORM_API_KEY and MONFORM_ACCOUNT_ID in
# the environment (never in a file).
url = "local"

[defaults]
# Every check runs from these locations unless it says otherwise.
locations = ["eu-west-1", "us-east-1"]
"#
    )
}

/// The example check, with the channel its failures go to.
const EXAMPLE: &str = r#"# yaml-language-server: $schema=../schema/resource-file.schema.json
# An example to edit or replace: the home page checked every 10 minutes,
# its failures sent by e-mail.
checks:
  homepage:
    checkType: URL
    name: Homepage
    frequency: 10
    request:
      url: https://example.com/
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
    alertChannels: [oncall]

alertChannels:
  oncall:
    type: EMAIL
    config: { address: oncall@example.com }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_comes_from_the_folder() {
        let base = tempfile::tempdir().unwrap();
        for (folder, name) in [("shop", "shop"), ("My Shop!", "My-Shop"), ("_x", "x"), ("a..b", "a-b")] {
            let dir = base.path().join(folder);
            assert_eq!(init_name(&dir, None).unwrap(), name, "{folder}");
        }
        assert!(matches!(
            init_name(&base.path().join("..."), None),
            Err(Refusal::Init(InitRefusal::NoName(_)))
        ));
        assert!(matches!(
            init_name(base.path(), Some("no spaces")),
            Err(Refusal::Init(InitRefusal::BadName(_)))
        ));
    }

    #[test]
    fn a_project_is_written_once_and_gitignore_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target").unwrap();
        let done = init_project(dir.path(), "shop").unwrap();
        assert_eq!(done.gitignore, GitIgnore::Added);
        assert_eq!(done.written.last().map(String::as_str), Some(PROJECT_FILE));
        let ignore = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
        assert_eq!(ignore, "target\n.monform/\n");
        assert!(matches!(
            init_project(dir.path(), "shop"),
            Err(Refusal::Init(InitRefusal::Exists(_)))
        ));
        assert_eq!(ignore_state(dir.path()).unwrap(), GitIgnore::AlreadyIgnored);
    }
}
