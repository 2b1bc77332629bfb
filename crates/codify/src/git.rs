//! `--branch NAME`: the edits committed on a new branch with the git CLI,
//! ready for a pull request. The author is git's own configuration.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Codified;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Run(#[source] std::io::Error),
    #[error("git {command} failed: {message}")]
    Failed { command: String, message: String },
}

/// The commit message: a summary line, then each address and its fields.
pub fn message(codified: &Codified) -> String {
    let mut by_address: Vec<(String, Vec<String>)> = Vec::new();
    for field in &codified.fields {
        let address = field.address.to_string();
        match by_address.last_mut() {
            Some((last, paths)) if *last == address => paths.push(field.path.clone()),
            _ => by_address.push((address, vec![field.path.clone()])),
        }
    }
    let mut text = format!(
        "Codify changes made in the service ({} resource{})\n\n",
        by_address.len() + codified.adopted.len(),
        if by_address.len() + codified.adopted.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    for (address, paths) in by_address {
        text.push_str(&format!("- {address}: {}\n", paths.join(", ")));
    }
    for (address, id) in &codified.adopted {
        text.push_str(&format!("- {address}: new, imported (id {id})\n"));
    }
    text.push_str("\nWritten by `monform codify`.\n");
    text
}

/// Creates `branch` at the current commit, switches to it and commits the
/// edited files (and only them). The files must already be written.
pub fn commit_on_branch(root: &Path, branch: &str, codified: &Codified) -> Result<(), GitError> {
    let check = git(root, &["check-ref-format", "--branch", branch]);
    check?;
    git(root, &["switch", "--create", branch])?;
    let paths: Vec<PathBuf> = codified.files.iter().map(|f| f.path.clone()).collect();
    let mut add = vec!["add".to_owned(), "--".to_owned()];
    add.extend(paths.iter().map(|p| p.to_string_lossy().into_owned()));
    git(root, &add.iter().map(String::as_str).collect::<Vec<_>>())?;
    let message = message(codified);
    git(
        root,
        &["commit", "--quiet", "--message", &message, "--"]
            .iter()
            .copied()
            .chain(add[2..].iter().map(String::as_str))
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}

fn git(root: &Path, args: &[&str]) -> Result<String, GitError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(GitError::Run)?;
    if !output.status.success() {
        return Err(GitError::Failed {
            command: args.first().copied().unwrap_or_default().to_owned(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
