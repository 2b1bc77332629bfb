//! Files named from the repository's root (issue 46). GitHub attaches an
//! annotation (`::error file=...`), a code scanning alert (SARIF) or a JUnit
//! test case to a path of the repository, which for a project in a
//! subfolder (`shop/`) is not the path the loader knows
//! (`monitors/health.yaml`). The subfolder is found from the nearest folder
//! holding `.git` (no git binary needed), or given by `--path-prefix`.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// `--path-prefix` (or `MONFORM_PATH_PREFIX`), set once by `main`.
static PREFIX_FLAG: OnceLock<Option<String>> = OnceLock::new();

/// Records `--path-prefix` for [`RepoPaths::for_project`].
pub fn set_prefix_flag(prefix: Option<String>) {
    let _ = PREFIX_FLAG.set(prefix);
}

/// SARIF's name for the base the results' paths are relative to, as code
/// scanning and CodeQL write it.
pub const SRCROOT: &str = "%SRCROOT%";

/// Where a project's files are in its repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoPaths {
    /// The project folder from the repository's root, `/`-separated, with
    /// a trailing `/` (empty when the project is the root, or no
    /// repository was found).
    prefix: String,
    /// The repository's root, when known (for SARIF's base URI).
    root: Option<PathBuf>,
    /// In a GitHub Actions run, the URL of the files at the commit being
    /// checked (`https://github.com/OWNER/REPO/blob/SHA/`): Markdown links
    /// a pull request's comment can follow.
    blob_url: Option<String>,
}

impl RepoPaths {
    /// For the project in `dir`: `--path-prefix` when given, else its place
    /// below the nearest folder holding `.git` (a folder in a clone, a file
    /// in a worktree or submodule), else the project folder itself.
    pub fn for_project(dir: &Path) -> RepoPaths {
        let flag = PREFIX_FLAG.get().cloned().flatten();
        RepoPaths {
            blob_url: github_blob_url(|name| std::env::var(name).ok()),
            ..RepoPaths::find(dir, flag.as_deref())
        }
    }

    /// [`RepoPaths::for_project`] with the flag given.
    pub fn find(dir: &Path, flag: Option<&str>) -> RepoPaths {
        let dir = std::fs::canonicalize(dir).ok();
        if let Some(flag) = flag {
            let prefix = normalise(flag);
            // The root is the project folder less the prefix's folders,
            // when it ends with them.
            let root = dir.as_deref().and_then(|dir| {
                let depth = prefix.split('/').filter(|p| !p.is_empty()).count();
                let root = dir.ancestors().nth(depth)?;
                (relative(root, dir).as_deref() == Some(prefix.as_str())).then(|| root.to_path_buf())
            });
            return RepoPaths {
                prefix,
                root,
                blob_url: None,
            };
        }
        let Some(dir) = dir else {
            return RepoPaths::default();
        };
        match dir.ancestors().find(|folder| folder.join(".git").exists()) {
            Some(root) => RepoPaths {
                prefix: relative(root, &dir).unwrap_or_default(),
                root: Some(root.to_path_buf()),
                blob_url: None,
            },
            None => RepoPaths::default(),
        }
    }

    /// `file` (relative to the project folder, as the loader names it)
    /// from the repository's root.
    pub fn path(&self, file: &str) -> String {
        let file = file.replace('\\', "/");
        let file = file.trim_start_matches("./");
        format!("{}{file}", self.prefix)
    }

    /// A link to `file` (relative to the project folder) at `line` in the
    /// repository's web view, in a GitHub Actions run.
    pub fn link(&self, file: &str, line: u64) -> Option<String> {
        let base = self.blob_url.as_ref()?;
        Some(format!("{base}{}#L{line}", uri_path(&self.path(file))))
    }

    /// The repository's root as a `file:` URI ending in `/` (SARIF's
    /// `originalUriBaseIds`), when known.
    pub fn root_uri(&self) -> Option<String> {
        let root = self.root.as_ref()?;
        let path = root.to_string_lossy().replace('\\', "/");
        let path = uri_path(path.trim_end_matches('/'));
        // A Windows path (`C:/x`) takes a third slash, as a Unix one has.
        let slash = if path.starts_with('/') { "" } else { "/" };
        Some(format!("file://{slash}{path}/"))
    }
}

/// `GITHUB_SERVER_URL/GITHUB_REPOSITORY/blob/GITHUB_SHA/`, which GitHub
/// Actions sets in every run, else `None`.
fn github_blob_url(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let get = |name: &str| var(name).filter(|value| !value.trim().is_empty());
    let (server, repository, sha) = (get("GITHUB_SERVER_URL")?, get("GITHUB_REPOSITORY")?, get("GITHUB_SHA")?);
    Some(format!(
        "{}/{}/blob/{}/",
        server.trim_end_matches('/'),
        uri_path(&repository),
        uri_path(&sha)
    ))
}

/// `dir` below `root` as `a/b/` (empty when they are one folder), or
/// `None` when it is not below it.
fn relative(root: &Path, dir: &Path) -> Option<String> {
    let below = dir.strip_prefix(root).ok()?;
    Some(
        below
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => Some(format!("{}/", part.to_string_lossy())),
                _ => None,
            })
            .collect(),
    )
}

/// A prefix as given (`./shop`, `shop/`, `/shop`, `shop\web`) as `shop/`
/// (`.` and empty: none).
fn normalise(prefix: &str) -> String {
    prefix
        .replace('\\', "/")
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .map(|part| format!("{part}/"))
        .collect()
}

/// `path` as a URI path: characters a URI cannot hold as they are
/// (spaces, `%`, `#`, `?`, non-ASCII) percent-encoded, `/` kept.
pub fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        let kept = byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte);
        if kept {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_in_a_subfolder_of_a_repository_is_prefixed() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        std::fs::create_dir_all(repo.path().join("teams/shop")).unwrap();
        let found = RepoPaths::find(&repo.path().join("teams/shop"), None);
        assert_eq!(found.path("monitors/health.yaml"), "teams/shop/monitors/health.yaml");
        let root = std::fs::canonicalize(repo.path()).unwrap();
        assert_eq!(found.root, Some(root.clone()));
        assert_eq!(
            RepoPaths::find(repo.path(), None).path("monitors/health.yaml"),
            "monitors/health.yaml"
        );
        // A worktree's `.git` is a file.
        std::fs::remove_dir(repo.path().join(".git")).unwrap();
        std::fs::write(repo.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(
            RepoPaths::find(&repo.path().join("teams/shop"), None).prefix,
            "teams/shop/"
        );
        // The flag wins, and still finds the root when the folder ends with it.
        let flagged = RepoPaths::find(&repo.path().join("teams/shop"), Some("./shop/"));
        assert_eq!(flagged.path("./m.yaml"), "shop/m.yaml");
        assert_eq!(flagged.root, Some(root.join("teams")));
        assert_eq!(RepoPaths::find(repo.path(), Some("other")).root, None);
        assert_eq!(RepoPaths::find(repo.path(), Some(".")).path("m.yaml"), "m.yaml");
    }

    #[test]
    fn uris_encode_what_a_uri_cannot_hold() {
        assert_eq!(uri_path("my shop/100%/é#1.yaml"), "my%20shop/100%25/%C3%A9%231.yaml");
        let paths = RepoPaths {
            prefix: String::new(),
            root: Some(PathBuf::from("/work/my repo")),
            blob_url: None,
        };
        assert_eq!(paths.root_uri().as_deref(), Some("file:///work/my%20repo/"));
    }

    #[test]
    fn links_point_at_the_commit_in_a_github_actions_run() {
        let env = |name: &str| {
            Some(match name {
                "GITHUB_SERVER_URL" => "https://github.com/".to_owned(),
                "GITHUB_REPOSITORY" => "acme/mono".to_owned(),
                _ => "0123abc".to_owned(),
            })
        };
        let paths = RepoPaths {
            prefix: "shop/".into(),
            root: None,
            blob_url: github_blob_url(env),
        };
        assert_eq!(
            paths.link("my checks.yaml", 7).as_deref(),
            Some("https://github.com/acme/mono/blob/0123abc/shop/my%20checks.yaml#L7")
        );
        assert_eq!(github_blob_url(|_| None), None);
        assert_eq!(RepoPaths::default().link("a.yaml", 1), None);
    }
}
