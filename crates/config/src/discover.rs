//! Which files of the project are resource files.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::paths::Roots;
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
    /// Resource files, sorted; a file reached twice (through a symbolic
    /// link inside the project) once, at its first path.
    pub files: Vec<PathBuf>,
    /// Folders holding a `monform.toml` of their own: separate projects,
    /// skipped like a nested git repository.
    pub nested: Vec<PathBuf>,
    /// Symbolic links not followed (they leave the project, are broken or
    /// loop), and folders that could not be read: each a diagnostic.
    pub unreadable: Vec<(PathBuf, Unreadable)>,
}

/// Why discovery did not follow a path.
#[derive(Debug)]
pub enum Unreadable {
    /// A symbolic link to a file or folder outside the project.
    Outside,
    /// A symbolic link to nothing.
    Broken,
    /// A symbolic link to a folder above it.
    Loop,
    Io(String),
}

/// `[project] include` as one matcher of paths relative to the root.
fn include_set(include: &[String]) -> Result<GlobSet, globset::Error> {
    let mut builder = GlobSetBuilder::new();
    for pattern in include {
        // Patterns were checked when monform.toml was read.
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
        }
    }
    builder.build()
}

/// Whether discovery reads the resource file at `relative` (to the root,
/// `/` separators) under `[project] include`: every one when it is empty.
pub fn included(include: &[String], relative: &str) -> bool {
    include.is_empty() || include_set(include).is_ok_and(|globs| globs.is_match(relative))
}

/// Every resource file below `root`, sorted: those matching `include`, or
/// by default every YAML and TOML file except `monform.toml`. A folder
/// with its own `monform.toml` is another project and is not entered.
/// Symbolic links are followed when they stay inside `roots`: a resource
/// file skipped without a word would make `plan` delete what it defines.
pub fn discover(root: &Path, include: &[String], roots: &Roots) -> std::io::Result<Discovered> {
    let globs = include_set(include).map_err(std::io::Error::other)?;
    let mut files = Vec::new();
    let mut nested = Vec::new();
    let mut unreadable = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            if entry.depth() == 0 {
                return true;
            }
            let is_dir = entry.file_type().is_dir();
            if is_dir && is_skipped_dir(entry.file_name()) {
                return false;
            }
            if !is_dir && Format::of(entry.path()).is_none() {
                return false;
            }
            if entry.path_is_symlink() && !entry.path().canonicalize().is_ok_and(|c| roots.contains(&c)) {
                // A file `include` leaves out would not be read anyway; a
                // folder may hold files it takes.
                let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                if is_dir || include.is_empty() || globs.is_match(relative) {
                    unreadable.push((entry.path().to_owned(), Unreadable::Outside));
                }
                return false;
            }
            if is_dir && entry.path().join(PROJECT_FILE).is_file() {
                nested.push(entry.path().to_owned());
                return false;
            }
            true
        });
    let mut problems = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                problems.push(error);
                continue;
            }
        };
        if !entry.file_type().is_file() || Format::of(entry.path()).is_none() {
            continue;
        }
        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if relative == Path::new(PROJECT_FILE) {
            continue;
        }
        if !include.is_empty() && !globs.is_match(relative) {
            continue;
        }
        let canonical = entry.path().canonicalize().unwrap_or_else(|_| entry.path().to_owned());
        if seen.insert(canonical) {
            files.push(entry.path().to_owned());
        }
    }
    for error in problems {
        let Some(path) = error.path().map(Path::to_owned) else {
            continue;
        };
        let why = if error.loop_ancestor().is_some() {
            Unreadable::Loop
        } else if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) && !path.exists() {
            // Only a resource file's or a folder's link is worth a word.
            if Format::of(&path).is_none() && path.extension().is_some() {
                continue;
            }
            Unreadable::Broken
        } else {
            Unreadable::Io(error.io_error().map_or_else(|| error.to_string(), ToString::to_string))
        };
        unreadable.push((path, why));
    }
    unreadable.sort_by(|a, b| a.0.cmp(&b.0));
    // A link met through two paths (a linked folder and its target) once.
    let mut links = std::collections::HashSet::new();
    unreadable.retain(|(path, _)| {
        let folder = path.parent().and_then(|p| p.canonicalize().ok());
        links.insert(folder.map(|f| f.join(path.file_name().unwrap_or_default())))
    });
    Ok(Discovered {
        files,
        nested,
        unreadable,
    })
}
