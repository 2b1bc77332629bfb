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

/// Commits the edited files on a new branch `branch` made from HEAD, with
/// git's plumbing and an index of its own: the working tree, the index and
/// HEAD stay as they are (the reconciler's policy `codify`, which keeps
/// reading the files as they are). Refuses a branch that exists.
pub fn commit_to_branch(root: &Path, branch: &str, codified: &Codified) -> Result<(), GitError> {
    git(root, &["check-ref-format", "--branch", branch])?;
    let prefix = git(root, &["rev-parse", "--show-prefix"])?.trim().to_owned();
    let parent = git(root, &["rev-parse", "--verify", "HEAD"])?.trim().to_owned();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let index = std::env::temp_dir().join(format!("monform-codify-{}-{nanos}.index", std::process::id()));
    let result = (|| {
        let with_index = Some(index.as_path());
        run(root, &["read-tree", &parent], with_index, None)?;
        for file in &codified.files {
            let blob = run(root, &["hash-object", "-w", "--stdin"], None, Some(&file.after))?;
            let entry = format!("100644,{},{prefix}{}", blob.trim(), file.name);
            run(
                root,
                &["update-index", "--add", "--cacheinfo", &entry],
                with_index,
                None,
            )?;
        }
        let tree = run(root, &["write-tree"], with_index, None)?;
        let message = message(codified);
        let commit = run(
            root,
            &["commit-tree", tree.trim(), "-p", &parent, "-m", &message],
            None,
            None,
        )?;
        let reference = format!("refs/heads/{branch}");
        // The empty old value: the branch must not exist yet.
        run(root, &["update-ref", &reference, commit.trim(), ""], None, None)
    })();
    let _ = std::fs::remove_file(&index);
    result.map(|_| ())
}

/// `base`, or `base-2`, `base-3`... the first name no branch has yet: two
/// codified drifts within the same second (names carry the time) each get
/// their branch instead of the second failing.
pub fn free_branch(root: &Path, base: &str) -> Result<String, GitError> {
    for n in 1..1000 {
        let name = if n == 1 { base.to_owned() } else { format!("{base}-{n}") };
        let reference = format!("refs/heads/{name}");
        if git(root, &["rev-parse", "--verify", "--quiet", &reference]).is_err() {
            return Ok(name);
        }
    }
    Err(GitError::Failed {
        command: "rev-parse".into(),
        message: format!("every name from {base} to {base}-999 is taken"),
    })
}

fn git(root: &Path, args: &[&str]) -> Result<String, GitError> {
    run(root, args, None, None)
}

fn run(root: &Path, args: &[&str], index: Option<&Path>, stdin: Option<&str>) -> Result<String, GitError> {
    use std::io::Write;
    let mut command = Command::new("git");
    command.arg("-C").arg(root).args(args);
    if let Some(index) = index {
        command.env("GIT_INDEX_FILE", index);
    }
    command
        .stdin(if stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().map_err(GitError::Run)?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).map_err(GitError::Run)?;
    }
    let output = child.wait_with_output().map_err(GitError::Run)?;
    if !output.status.success() {
        return Err(GitError::Failed {
            command: args.first().copied().unwrap_or_default().to_owned(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileChange;

    fn git_ok(dir: &Path, args: &[&str]) -> String {
        let output = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    #[test]
    fn a_branch_commit_leaves_the_working_tree_index_and_head_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git_ok(root, &["init", "--quiet", "--initial-branch", "main"]);
        git_ok(root, &["config", "user.name", "T"]);
        git_ok(root, &["config", "user.email", "t@example.com"]);
        std::fs::create_dir(root.join("project")).unwrap();
        std::fs::write(root.join("project/checks.yaml"), "a: 1\n").unwrap();
        git_ok(root, &["add", "."]);
        git_ok(root, &["commit", "--quiet", "-m", "start"]);
        let codified = Codified {
            files: vec![FileChange {
                name: "checks.yaml".into(),
                path: root.join("project/checks.yaml"),
                before: "a: 1\n".into(),
                after: "a: 2\n".into(),
                new: false,
            }],
            ..Codified::default()
        };
        let project = root.join("project");
        commit_to_branch(&project, "codify/x", &codified).unwrap();
        assert_eq!(git_ok(root, &["show", "codify/x:project/checks.yaml"]), "a: 2\n");
        assert_eq!(git_ok(root, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "main");
        assert_eq!(std::fs::read_to_string(project.join("checks.yaml")).unwrap(), "a: 1\n");
        assert_eq!(git_ok(root, &["status", "--porcelain"]), "");
        assert_eq!(git_ok(root, &["rev-list", "--count", "main..codify/x"]).trim(), "1");
        // A branch that exists is not moved; the next free name is found.
        assert!(commit_to_branch(&project, "codify/x", &codified).is_err());
        assert_eq!(free_branch(&project, "codify/x").unwrap(), "codify/x-2");
        assert_eq!(free_branch(&project, "codify/y").unwrap(), "codify/y");
    }
}
