//! `validate` and `write_file`: the project's files as `monform validate`
//! reads them (`ops::validate`), and a write that is reviewed as code: only
//! a resource file the project reads, inside its root, validated before
//! it is written (`ops::revalidate`, the language server's per-file
//! check), refused with the diagnostics when it would add an error, and
//! answered with its diff. `add_check` writes through the same path
//! ([`write_checked`]).

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use monform_config::{Severity, Unsaved};
use monform_engine::ops::{self, Findings, OpenRequest, PolicyLoad};
use serde_json::{Value, json};

use crate::Config;
use crate::history::{self, Call};
use crate::reply::{Reply, diagnostic};

/// The request `validate` and the writes read the files with.
pub fn request<'a>(config: &'a Config, unsaved: Option<&'a Unsaved>) -> OpenRequest<'a> {
    OpenRequest {
        environment: config.environment.as_deref(),
        policies: PolicyLoad::Report,
        unsaved,
        ..OpenRequest::new(&config.dir, &config.env)
    }
}

/// Every finding as JSON, errors first counted.
fn findings_json(findings: &Findings) -> Value {
    let diagnostics: Vec<Value> = findings.all().map(|(d, sources)| diagnostic(d, sources)).collect();
    let count = |severity: Severity| findings.all().filter(|(d, _)| d.severity == severity).count();
    json!({
        "ok": findings.is_ok(),
        "resources": findings.loaded.desired.len(),
        "files": findings.files(),
        "counts": {"errors": findings.errors.len(), "warnings": count(Severity::Warning), "notes": count(Severity::Note)},
        "diagnostics": diagnostics,
    })
}

pub fn validate(config: &Config) -> Reply {
    let findings = ops::validate(&request(config, None));
    Reply::Done(findings_json(&findings))
}

/// Why a path may not be written, or its name relative to the root.
fn checked_path(root: &Path, path: &str) -> Result<(String, PathBuf), String> {
    let given = Path::new(path);
    if path.is_empty() || given.is_absolute() {
        return Err(format!("`{path}`: give a path relative to the project root"));
    }
    let mut parts = Vec::new();
    for component in given.components() {
        match component {
            Component::Normal(part) => {
                let part = part.to_str().ok_or_else(|| format!("`{path}` is not UTF-8"))?;
                // `.monform/` (state, plans), `.git/`, hidden files: never the agent's.
                if part.starts_with('.') {
                    return Err(format!(
                        "`{path}`: hidden files and folders (.monform, .git) are not monform files"
                    ));
                }
                parts.push(part);
            }
            Component::CurDir => {}
            _ => return Err(format!("`{path}` leaves the project root")),
        }
    }
    let name = parts.join("/");
    if name == monform_config::project::PROJECT_FILE {
        return Err(
            "monform.toml holds the project's settings (its API, state, policies): a person edits it".to_owned(),
        );
    }
    let lower = name.to_ascii_lowercase();
    if ![".yaml", ".yml", ".toml"].iter().any(|ext| lower.ends_with(ext)) {
        return Err(format!(
            "`{name}` is not a monform resource file (.yaml, .yml or .toml)"
        ));
    }
    let full = root.join(&name);
    // A link could point outside the root: the folder that exists is resolved.
    if std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!("`{name}` is a symbolic link: not written"));
    }
    let real_root = std::fs::canonicalize(root).map_err(|e| format!("the project root: {e}"))?;
    let mut folder = full
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.to_path_buf());
    while !folder.exists() {
        match folder.parent() {
            Some(parent) => folder = parent.to_path_buf(),
            None => break,
        }
    }
    let real = std::fs::canonicalize(&folder).map_err(|e| format!("`{name}`: {e}"))?;
    if !real.starts_with(&real_root) {
        return Err(format!("`{name}` leaves the project root (through a link)"));
    }
    Ok((name, full))
}

/// An error's identity across two validations (its line may move).
fn key(d: &monform_config::Diagnostic, sources: &monform_config::source::Sources) -> (String, &'static str, String) {
    let file = d
        .span
        .filter(|s| (s.file as usize) < sources.len())
        .map(|s| sources.get(s.file).name.clone())
        .unwrap_or_default();
    (file, d.code, d.message.clone())
}

pub fn write_file(config: &Config, client: &str, path: &str, content: &str) -> Reply {
    let prior = ops::validate(&request(config, None));
    let write = Write {
        tool: "write_file",
        client,
        path,
        prior,
    };
    write_checked(config, write, |_| Ok(content.to_owned()))
}

/// A write a tool asks for.
pub struct Write<'a> {
    /// The tool, for the history.
    pub tool: &'a str,
    pub client: &'a str,
    /// As the agent gave it, relative to the root.
    pub path: &'a str,
    /// The project validated as it is on disk.
    pub prior: Findings,
}

/// A file checked and validated, ready to be written.
struct Checked {
    name: String,
    full: PathBuf,
    before: Option<String>,
    content: String,
    /// An empty file put there for the loader to find (a new file).
    placeholder: bool,
    after: Findings,
}

impl Checked {
    fn remove_placeholder(&self) {
        if self.placeholder {
            let _ = std::fs::remove_file(&self.full);
        }
    }
}

/// The one path of every tool that changes the project (`write_file`,
/// `add_check`): the file's name checked (inside the root, a resource
/// file the project reads), its new text made from its old one by `make`,
/// the project validated with it before anything is written, refused
/// with the diagnostics when it adds an error; the call in the state's
/// history; then written, answered with the diff.
pub fn write_checked(
    config: &Config,
    write: Write<'_>,
    make: impl FnOnce(Option<&str>) -> Result<String, Reply>,
) -> Reply {
    let project = write.prior.loaded.project.clone();
    let (tool, client) = (write.tool, write.client);
    let call = |outcome: String| Call {
        client,
        tool,
        plan_hash: None,
        outcome,
    };
    let checked = match check(config, write, make) {
        Ok(checked) => checked,
        Err(refused) => {
            // Best effort: the refusal is the answer either way.
            if let (Some(project), Some(reason)) = (&project, refused.reason()) {
                let _ = history::record_in(config, project, call(format!("refused: {reason}")));
            }
            return refused;
        }
    };
    let name = &checked.name;
    let Some(project) = &project else {
        checked.remove_placeholder();
        return Reply::refused("monform.toml could not be read (the validate tool says why): not written");
    };
    if let Err(why) = history::record_in(config, project, call(format!("written {name}"))) {
        checked.remove_placeholder();
        return Reply::refused(format!("{why}: {name} not written"));
    }
    if let Err(e) = monform_engine::durable::write(&checked.full, checked.content.as_bytes()) {
        checked.remove_placeholder();
        let _ = history::record_in(config, project, call(format!("failed: cannot write {name}")));
        return Reply::refused(format!("cannot write {name}: {e}"));
    }
    let old = checked.before.as_deref().unwrap_or("");
    let diff = similar::TextDiff::from_lines(old, checked.content.as_str())
        .unified_diff()
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string();
    let warnings: Vec<Value> = checked
        .after
        .all()
        .filter(|(d, sources)| d.severity != Severity::Error && key(d, sources).0 == *name)
        .map(|(d, sources)| diagnostic(d, sources))
        .collect();
    Reply::Done(json!({
        "path": name,
        "written": true,
        "created": checked.before.is_none(),
        "diff": diff,
        "projectOk": checked.after.is_ok(),
        "warnings": warnings,
    }))
}

/// The path checked and the new text validated with the project: a
/// refusal when either fails (a new file's placeholder removed).
fn check(
    config: &Config,
    write: Write<'_>,
    make: impl FnOnce(Option<&str>) -> Result<String, Reply>,
) -> Result<Checked, Reply> {
    let root = &config.dir;
    let (name, full) = checked_path(root, write.path).map_err(Reply::refused)?;
    let before = match std::fs::read_to_string(&full) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Reply::refused(format!("cannot read {name}: {e}"))),
    };
    let content = make(before.as_deref())?;
    let prior = write.prior;
    let known: HashSet<_> = prior.errors.iter().map(|d| key(d, prior.sources())).collect();
    // The loader finds files on disk: a new one is there, empty (valid),
    // while its text is checked, and gone again if the write is refused.
    let placeholder = before.is_none();
    if placeholder {
        if let Some(parent) = full.parent()
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            return Err(Reply::refused(format!("cannot create the folder of {name}: {e}")));
        }
        if let Err(e) = std::fs::write(&full, "") {
            return Err(Reply::refused(format!("cannot create {name}: {e}")));
        }
    }
    let mut unsaved = Unsaved::default();
    unsaved.insert(name.clone(), Arc::from(content.as_str()));
    let (after, _) = ops::revalidate(&request(config, Some(&unsaved)), prior, std::slice::from_ref(&name));
    let checked = Checked {
        name,
        full,
        before,
        content,
        placeholder,
        after,
    };
    let name = &checked.name;
    let sources = checked.after.sources();
    let read = sources.iter().any(|file| file.name == *name);
    let added: Vec<Value> = checked
        .after
        .errors
        .iter()
        .filter(|d| {
            let key = key(d, sources);
            key.0 == *name || !known.contains(&key)
        })
        .map(|d| diagnostic(d, sources))
        .collect();
    if !read {
        checked.remove_placeholder();
        return Err(Reply::refused(format!(
            "`{name}` is not one of the project's resource files (monform.toml's [project] include): not written"
        )));
    }
    if !added.is_empty() {
        checked.remove_placeholder();
        return Err(Reply::refused_with(
            format!(
                "{name} would not validate ({} error{}): not written",
                added.len(),
                if added.len() == 1 { "" } else { "s" }
            ),
            json!({"diagnostics": added}),
        ));
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_resource_files_inside_the_root_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(checked_path(root, "checks/web.yaml").is_ok());
        for bad in [
            "../x.yaml",
            "/etc/x.yaml",
            ".monform/state.json",
            "a/.git/x.yaml",
            "monform.toml",
            "x.rego",
            "",
        ] {
            assert!(checked_path(root, bad).is_err(), "{bad}");
        }
    }
}
