//! Which files of the project are resource files.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSetBuilder};

use crate::project::PROJECT_FILE;
use crate::source::Format;

/// Folders never searched: hidden ones, build output, dependencies.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];

/// Every resource file below `root`, sorted: those matching `include`, or
/// by default every YAML and TOML file except `monform.toml`.
pub fn discover(root: &Path, include: &[String]) -> std::io::Result<Vec<PathBuf>> {
    let mut builder = GlobSetBuilder::new();
    for pattern in include {
        // Patterns were checked when monform.toml was read.
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
        }
    }
    let globs = builder.build().map_err(std::io::Error::other)?;
    let mut files = Vec::new();
    let walker = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            entry.depth() == 0
                || !(entry.file_type().is_dir() && (name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref())))
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
    Ok(files)
}
