//! Which files of the project are resource files.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSetBuilder};

use crate::project::PROJECT_FILE;
use crate::source::Format;

/// Folders never searched: hidden ones, build output, dependencies.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];

/// Hidden folders, build output and dependencies.
pub(crate) fn is_skipped_dir(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref())
}

/// What discovery found below a project root.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Resource files, sorted.
    pub files: Vec<PathBuf>,
    /// Folders holding a `monform.toml` of their own: separate projects,
    /// skipped like a nested git repository.
    pub nested: Vec<PathBuf>,
}

/// Every resource file below `root`, sorted: those matching `include`, or
/// by default every YAML and TOML file except `monform.toml`. A folder
/// with its own `monform.toml` is another project and is not entered.
pub fn discover(root: &Path, include: &[String]) -> std::io::Result<Discovered> {
    let mut builder = GlobSetBuilder::new();
    for pattern in include {
        // Patterns were checked when monform.toml was read.
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
        }
    }
    let globs = builder.build().map_err(std::io::Error::other)?;
    let mut files = Vec::new();
    let mut nested = Vec::new();
    let walker = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            if entry.depth() == 0 || !entry.file_type().is_dir() {
                return true;
            }
            if is_skipped_dir(entry.file_name()) {
                return false;
            }
            if entry.path().join(PROJECT_FILE).is_file() {
                nested.push(entry.path().to_owned());
                return false;
            }
            true
        });
    for entry in walker {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_file() || Format::of(entry.path()).is_none() {
            continue;
        }
        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if relative == Path::new(PROJECT_FILE) {
            continue;
        }
        if include.is_empty() || globs.is_match(relative) {
            files.push(entry.path().to_owned());
        }
    }
    Ok(Discovered { files, nested })
}
