//! Which `.rego` files a project's policies are: every one below
//! `policies/`, or below each folder (or each file) of `[policy] paths`.
//! Like every path a project names, they must resolve inside the project
//! root: a pull request's `[policy] paths = ["/etc"]` reads nothing.

use std::path::{Path, PathBuf};

use monform_config::Diagnostic;
use monform_config::paths::{PathError, Roots};
use monform_config::project::Project;

/// Where policies are when monform.toml says nothing.
pub const DEFAULT_DIR: &str = "policies";

/// The project's policy files, sorted by path, and a diagnostic for each
/// `[policy] paths` entry that is missing or outside the project. No
/// `policies/` folder and no setting: no policies, and nothing wrong.
pub fn policy_files(root: &Path, project: &Project) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let roots = Roots::of(root);
    let named: Vec<(String, Option<_>)> = if project.policy_paths.is_empty() {
        if !root.join(DEFAULT_DIR).is_dir() {
            return (Vec::new(), diagnostics);
        }
        vec![(DEFAULT_DIR.to_owned(), None)]
    } else {
        project
            .policy_paths
            .iter()
            .map(|(path, span)| (path.clone(), Some(*span)))
            .collect()
    };
    let mut files = Vec::new();
    for (path, span) in named {
        let resolved = match roots.resolve(&root.join(&path)) {
            Ok(resolved) => resolved,
            Err(error) => {
                let mut diagnostic = Diagnostic::new(
                    "monform::policy-path",
                    format!("policy.paths: {}", error.message(&path)),
                );
                if let Some(span) = span {
                    diagnostic = diagnostic.at(span, "here");
                }
                if matches!(error, PathError::Outside) {
                    diagnostic = diagnostic.help("policies are read only from inside the project root");
                }
                diagnostics.push(diagnostic);
                continue;
            }
        };
        if resolved.is_file() {
            files.push(resolved);
            continue;
        }
        for entry in walkdir::WalkDir::new(&resolved).follow_links(false).sort_by_file_name() {
            let Ok(entry) = entry else { continue };
            let rego = entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "rego");
            // A link inside the folder could point anywhere: resolved again.
            if rego && let Ok(file) = roots.resolve(entry.path()) {
                files.push(file);
            }
        }
    }
    files.sort();
    files.dedup();
    (files, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_below_the_default_folder_are_found_and_paths_outside_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("policies/team")).unwrap();
        std::fs::write(root.join("policies/team/a.rego"), "package monform.a\n").unwrap();
        std::fs::write(root.join("policies/notes.md"), "").unwrap();
        let project = Project::new("p");
        let (files, problems) = policy_files(root, &project);
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].ends_with("policies/team/a.rego"));
        assert!(problems.is_empty());

        let mut project = Project::new("p");
        project.policy_paths = vec![
            ("/etc".to_owned(), monform_config::source::Span::new(0, 0, 0)),
            ("missing".to_owned(), monform_config::source::Span::new(0, 0, 0)),
        ];
        let (files, problems) = policy_files(root, &project);
        assert!(files.is_empty());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].message.contains("outside the project"),
            "{}",
            problems[0].message
        );
    }
}
