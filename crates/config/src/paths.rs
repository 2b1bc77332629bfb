//! Where the files of a project may read. A pull request's files are
//! untrusted input that CI loads: `{ file: }` scripts, `forEachFile` globs,
//! symbolic links among the resource files and monform.toml itself resolve
//! (symbolic links followed) inside the project root or a folder of
//! `[project] allow-paths`, never elsewhere (`/proc/self/environ`,
//! `../../../etc/passwd`, a link to the runner's home).

use std::io;
use std::path::{Component, Path, PathBuf};

/// The folders a project's files may read, canonical.
#[derive(Debug, Clone)]
pub struct Roots {
    root: PathBuf,
    allowed: Vec<PathBuf>,
}

/// Why a path may not be read.
#[derive(Debug)]
pub enum PathError {
    /// It resolves outside the root and every allowed folder.
    Outside,
    NotFound,
    Io(io::Error),
}

impl PathError {
    /// What is wrong with `shown` (the path as the files write it).
    pub fn message(&self, shown: &str) -> String {
        match self {
            PathError::Outside => format!("`{shown}` is outside the project"),
            PathError::NotFound => format!("`{shown}` not found"),
            PathError::Io(e) => format!("cannot read `{shown}`: {e}"),
        }
    }
}

pub const OUTSIDE_HELP: &str = "files may read only below the project root (symbolic links followed); \
     list a trusted folder in monform.toml's [project] allow-paths to widen this";

impl Roots {
    /// The project at `root` (made canonical).
    pub fn new(root: &Path) -> io::Result<Roots> {
        Ok(Roots {
            root: root.canonicalize()?,
            allowed: Vec::new(),
        })
    }

    /// The project at `root`, made canonical where it can be; as given
    /// where it cannot (it does not exist: nothing is read from it).
    pub fn of(root: &Path) -> Roots {
        Roots::new(root).unwrap_or_else(|_| Roots {
            root: root.to_owned(),
            allowed: Vec::new(),
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Allows `folder` (relative to the root, or absolute) too.
    pub fn allow(&mut self, folder: &str) -> io::Result<()> {
        let path = self.root.join(folder).canonicalize()?;
        if !path.is_dir() {
            return Err(io::Error::other("not a folder"));
        }
        self.allowed.push(path);
        Ok(())
    }

    /// Whether a canonical path is inside the root or an allowed folder.
    pub fn contains(&self, canonical: &Path) -> bool {
        canonical.starts_with(&self.root) || self.allowed.iter().any(|a| canonical.starts_with(a))
    }

    /// `path` made canonical, when it may be read. A path that does not
    /// exist is `NotFound` only when it would be inside (written with `..`
    /// and links to outside, it is `Outside`): the files cannot learn which
    /// files exist elsewhere.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf, PathError> {
        match path.canonicalize() {
            Ok(canonical) if self.contains(&canonical) => Ok(canonical),
            Ok(_) => Err(PathError::Outside),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // The nearest ancestor that exists decides.
                let mut ancestor = normalize(path);
                while !ancestor.exists() {
                    if !ancestor.pop() {
                        return Err(PathError::Outside);
                    }
                }
                match ancestor.canonicalize() {
                    Ok(canonical) if self.contains(&canonical) => Err(PathError::NotFound),
                    Ok(_) => Err(PathError::Outside),
                    Err(e) => Err(PathError::Io(e)),
                }
            }
            Err(e) => Err(PathError::Io(e)),
        }
    }
}

/// `path` with `.` and `a/..` removed, without reading the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_inside_the_root_or_an_allowed_folder() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(root.join("monitors")).unwrap();
        std::fs::create_dir_all(base.join("shared")).unwrap();
        std::fs::create_dir_all(base.join("private")).unwrap();
        std::fs::write(root.join("monitors/a.js"), "a").unwrap();
        std::fs::write(base.join("shared/s.js"), "s").unwrap();
        std::fs::write(base.join("private/p.js"), "p").unwrap();
        let mut roots = Roots::new(&root).unwrap();
        let monitors = root.join("monitors");
        assert!(roots.resolve(&monitors.join("a.js")).is_ok());
        assert!(roots.resolve(&monitors.join("../monitors/./a.js")).is_ok());
        assert!(matches!(
            roots.resolve(&monitors.join("b.js")),
            Err(PathError::NotFound)
        ));
        for outside in [
            "../../shared/s.js",
            "../../private/p.js",
            "/etc/passwd",
            "/proc/self/environ",
        ] {
            assert!(
                matches!(roots.resolve(&monitors.join(outside)), Err(PathError::Outside)),
                "{outside}"
            );
        }
        // Missing files outside say nothing about what exists there.
        assert!(matches!(
            roots.resolve(&monitors.join("../../private/nope.js")),
            Err(PathError::Outside)
        ));
        roots.allow("../shared").unwrap();
        assert!(roots.resolve(&monitors.join("../../shared/s.js")).is_ok());
        assert!(matches!(
            roots.resolve(&monitors.join("../../private/p.js")),
            Err(PathError::Outside)
        ));
        assert!(roots.allow("../nowhere").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_followed_before_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(base.join("secret"), "s").unwrap();
        std::fs::write(root.join("inside.js"), "i").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("out.js")).unwrap();
        std::os::unix::fs::symlink(root.join("inside.js"), root.join("in.js")).unwrap();
        let roots = Roots::new(&root).unwrap();
        assert!(matches!(roots.resolve(&root.join("out.js")), Err(PathError::Outside)));
        assert_eq!(roots.resolve(&root.join("in.js")).unwrap(), root.join("inside.js"));
    }
}
