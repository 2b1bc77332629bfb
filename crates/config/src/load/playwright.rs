//! A PLAYWRIGHT check's Playwright project (`playwright: { config }`, issue
//! 49) read into its code bundle: the config, the specs of its test folders,
//! the files they import by relative path (followed through `.ts` / `.js`
//! sources), the files its string literals name (`globalSetup`, a data
//! file; not those in hidden folders, such as the `.auth/` state a
//! globalSetup writes), and the package and lock files beside it; never
//! `node_modules`. The project's files are untrusted input: every path is
//! resolved through [`Roots`] (inside the project or an allowed folder,
//! symbolic links followed) and the bundle is bounded in files and bytes.
//! Nothing is executed: the config and the specs are read as text.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use monform_model::resources::check::{BundleFile, MAX_BUNDLE_FILES};
use monform_model::resources::common::{MAX_SCRIPT_BYTES, json_len};
use regex::Regex;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::paths::{PathError, Roots};
use crate::source::decode;

/// Why the project could not be bundled: the message, and whether a path
/// led outside the project (`monform::path`) rather than not being found
/// or readable (`monform::script-file`).
#[derive(Debug)]
pub(super) struct BundleError {
    pub message: String,
    pub outside: bool,
}

fn error(message: String) -> BundleError {
    BundleError {
        message,
        outside: false,
    }
}

/// Source files whose relative imports are followed.
const CODE: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];
/// What an import without its extension may name, in Node's and
/// TypeScript's order.
const TRIED: &[&str] = &[
    "",
    ".ts",
    ".tsx",
    ".mts",
    ".cts",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".json",
    "/index.ts",
    "/index.tsx",
    "/index.js",
    "/index.mjs",
    "/index.cjs",
];
/// Files beside the config (or in a folder above it, inside the project)
/// that say how the suite installs and compiles.
const BESIDE: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "tsconfig.json",
];
/// Folders of a Playwright project that are never the suite's sources.
const SKIPPED_FOLDERS: &[&str] = &["node_modules", "test-results", "playwright-report", "blob-report"];

static SPEC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\.(spec|test|setup|teardown)\.(c|m)?[jt]sx?$").expect("a valid pattern"));
static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire(?:\.resolve)?\s*\(\s*|\bexport\s*\*\s*from\s*)['"]([^'"\n]+)['"]"#,
    )
    .expect("a valid pattern")
});
static LITERAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"['"`]([^'"`\s]{1,300})['"`]"#).expect("a valid pattern"));
static TEST_DIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\btestDir\s*:\s*['"`]([^'"`\n]+)['"`]"#).expect("a valid pattern"));

/// The bundle of the project whose config is `config` (as written,
/// relative to `base`, the resource file's folder): its files, and the
/// config's path below the bundle's root.
pub(super) fn bundle(base: &Path, config: &str, roots: &Roots) -> Result<(Value, String), BundleError> {
    let config_path = match roots.resolve(&base.join(config)) {
        Ok(path) if path.is_file() => path,
        Ok(_) => return Err(error(format!("playwright config `{config}` is not a file"))),
        Err(PathError::Outside) => {
            return Err(BundleError {
                message: format!("playwright config `{config}` is outside the project"),
                outside: true,
            });
        }
        Err(PathError::NotFound) => return Err(error(format!("playwright config `{config}` not found"))),
        Err(PathError::Io(e)) => return Err(error(format!("cannot read playwright config `{config}`: {e}"))),
    };
    let config_dir = config_path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut found = Found::new(roots);
    let text = found.read(&config_path)?;
    // The test folders the config names; the config's own folder if none.
    let mut test_dirs: Vec<PathBuf> = TEST_DIR
        .captures_iter(&text)
        .filter_map(|c| roots.resolve(&config_dir.join(&c[1])).ok())
        .filter(|dir| dir.is_dir())
        .collect();
    if test_dirs.is_empty() {
        test_dirs.push(config_dir.clone());
    }
    for dir in &test_dirs {
        for spec in specs(dir, roots)? {
            found.add(spec);
        }
    }
    // Files the config's string literals name: globalSetup, a storageState
    // that exists, a data file. What does not resolve to a file inside the
    // project is not a file of the suite (a URL, a project name).
    for literal in LITERAL.captures_iter(&text) {
        let literal = &literal[1];
        if !(literal.contains('/') || literal.contains('.')) || literal.contains("://") {
            continue;
        }
        // A hidden folder's files (`.auth/state.json`) are what globalSetup
        // writes on each run, as Playwright's guide has it: not sources.
        let hidden = Path::new(literal).components().any(|c| {
            c.as_os_str().to_string_lossy().starts_with('.')
                && !matches!(c, std::path::Component::CurDir | std::path::Component::ParentDir)
        });
        if let Some(file) = existing(&config_dir.join(literal), roots).filter(|_| !hidden) {
            found.add(file);
        }
    }
    for name in BESIDE {
        if let Some(file) = config_dir
            .ancestors()
            .take_while(|dir| roots.contains(dir))
            .map(|dir| dir.join(name))
            .find(|file| file.is_file())
            .and_then(|file| roots.resolve(&file).ok())
        {
            found.add(file);
        }
    }
    found.add(config_path.clone());
    found.follow()?;
    let root = common_root(found.files.keys());
    let relative = |path: &Path| -> String {
        let below = path.strip_prefix(&root).unwrap_or(path);
        below
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    };
    let files: Vec<BundleFile> = found
        .files
        .iter()
        .map(|(path, content)| BundleFile {
            path: relative(path),
            content: content.clone(),
        })
        .collect();
    let size: usize = files.iter().map(|f| json_len(&f.content) + json_len(&f.path)).sum();
    if size > MAX_SCRIPT_BYTES {
        return Err(error(format!(
            "the Playwright project's {} files take {size} bytes in a request; the service accepts at most {MAX_SCRIPT_BYTES} (1 MiB)",
            files.len()
        )));
    }
    Ok((code_bundle(files), relative(&config_path)))
}

/// `codeBundle`: the files (sorted by path, as `found` keeps them) and
/// their hash, each path and content with its length before it, so no two
/// bundles hash the same text.
fn code_bundle(files: Vec<BundleFile>) -> Value {
    let mut hash = Sha256::new();
    for file in &files {
        for part in [&file.path, &file.content] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part.as_bytes());
        }
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    json!({ "sha256": format!("sha256:{hex}"), "files": files })
}

/// The files found so far (canonical path to text) and those whose imports
/// are still to be read.
struct Found<'r> {
    roots: &'r Roots,
    files: BTreeMap<PathBuf, String>,
    queue: VecDeque<PathBuf>,
    queued: BTreeSet<PathBuf>,
}

impl<'r> Found<'r> {
    fn new(roots: &'r Roots) -> Found<'r> {
        Found {
            roots,
            files: BTreeMap::new(),
            queue: VecDeque::new(),
            queued: BTreeSet::new(),
        }
    }

    fn add(&mut self, path: PathBuf) {
        if self.queued.insert(path.clone()) {
            self.queue.push_back(path);
        }
    }

    /// The text of a file of the bundle (no larger than a request).
    fn read(&self, path: &Path) -> Result<String, BundleError> {
        let shown = self.shown(path);
        let metadata = std::fs::metadata(path).map_err(|e| error(format!("cannot read `{shown}`: {e}")))?;
        if !metadata.is_file() {
            return Err(error(format!("`{shown}` is not a regular file")));
        }
        if metadata.len() > MAX_SCRIPT_BYTES as u64 {
            return Err(error(format!(
                "`{shown}` is larger than {} MiB, the most the service accepts",
                MAX_SCRIPT_BYTES >> 20
            )));
        }
        match std::fs::read(path).map(decode) {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(e)) => Err(error(format!("`{shown}` {}", e.message()))),
            Err(e) => Err(error(format!("cannot read `{shown}`: {e}"))),
        }
    }

    /// A path as a message shows it: below the project root.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(self.roots.root())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Reads every queued file, and queues the files its relative imports
    /// name, until none is left.
    fn follow(&mut self) -> Result<(), BundleError> {
        while let Some(path) = self.queue.pop_front() {
            if self.files.len() >= MAX_BUNDLE_FILES {
                return Err(error(format!(
                    "the Playwright project needs more than {MAX_BUNDLE_FILES} files, the most a code bundle holds"
                )));
            }
            let text = self.read(&path)?;
            let is_code = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| CODE.contains(&e));
            if is_code {
                for (line, specifier) in imports(&text) {
                    let at = format!("{}:{line}", self.shown(&path));
                    let dir = path.parent().unwrap_or(Path::new("/"));
                    self.add(resolve_import(dir, &specifier, self.roots, &at)?);
                }
            }
            self.files.insert(path, text);
        }
        Ok(())
    }
}

/// The relative imports of a source file (`./x`, `../y`), with their lines.
/// Package imports (`@playwright/test`) are the runner's, not the bundle's.
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") || code.starts_with('*') {
            continue;
        }
        for capture in IMPORT.captures_iter(line) {
            let specifier = &capture[1];
            if specifier.starts_with("./") || specifier.starts_with("../") {
                out.push((n + 1, specifier.to_owned()));
            }
        }
    }
    out
}

/// The file a relative import names, as Node and TypeScript find it (`./x`
/// is `x.ts`, `x.js`, `x/index.ts`...; `./x.js` may be `x.ts`).
fn resolve_import(dir: &Path, specifier: &str, roots: &Roots, at: &str) -> Result<PathBuf, BundleError> {
    let mut candidates: Vec<String> = TRIED.iter().map(|ext| format!("{specifier}{ext}")).collect();
    for (js, ts) in [(".js", ".ts"), (".jsx", ".tsx"), (".mjs", ".mts"), (".cjs", ".cts")] {
        if let Some(stem) = specifier.strip_suffix(js) {
            candidates.push(format!("{stem}{ts}"));
        }
    }
    let mut outside = false;
    for candidate in &candidates {
        match roots.resolve(&dir.join(candidate)) {
            Ok(path) if path.is_file() => return Ok(path),
            Err(PathError::Outside) => outside = true,
            _ => {}
        }
    }
    if outside {
        return Err(BundleError {
            message: format!("{at}: import `{specifier}` is outside the project"),
            outside: true,
        });
    }
    Err(error(format!("{at}: import `{specifier}` not found")))
}

/// A file at `path` inside the project, if there is one.
fn existing(path: &Path, roots: &Roots) -> Option<PathBuf> {
    roots.resolve(path).ok().filter(|p| p.is_file())
}

/// The spec files below `dir` (`*.spec.ts`, `*.test.js`...), skipping
/// `node_modules`, reports and hidden folders.
fn specs(dir: &Path, roots: &Roots) -> Result<Vec<PathBuf>, BundleError> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            entry.depth() == 0
                || !(name.starts_with('.') || (entry.file_type().is_dir() && SKIPPED_FOLDERS.contains(&&*name)))
        });
    for entry in walk {
        let entry = entry.map_err(|e| error(format!("cannot list the tests of `{}`: {e}", dir.display())))?;
        if SPEC.is_match(&entry.file_name().to_string_lossy())
            && let Some(file) = existing(entry.path(), roots)
        {
            out.push(file);
            if out.len() > MAX_BUNDLE_FILES {
                break;
            }
        }
    }
    Ok(out)
}

/// The deepest folder holding every file.
fn common_root<'a>(files: impl Iterator<Item = &'a PathBuf>) -> PathBuf {
    let mut root: Option<PathBuf> = None;
    for file in files {
        let dir = file.parent().unwrap_or(Path::new("/"));
        root = Some(match root {
            None => dir.to_path_buf(),
            Some(root) => root
                .ancestors()
                .find(|a| dir.starts_with(a))
                .unwrap_or(Path::new("/"))
                .to_path_buf(),
        });
    }
    root.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn paths(bundle: &Value) -> Vec<&str> {
        bundle["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn a_project_is_bundled_with_its_imports_setup_and_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(
            &root,
            &[
                (
                    "e2e/playwright.config.ts",
                    "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: './tests', \
                     globalSetup: './global-setup.ts', use: { storageState: '.auth/state.json', baseURL: 'http://x.test/a.b' } });\n",
                ),
                (
                    "e2e/global-setup.ts",
                    "import { seed } from './lib/seed';\nexport default seed;\n",
                ),
                ("e2e/lib/seed.ts", "export const seed = () => {};\n"),
                (
                    "e2e/fixtures/shop.ts",
                    "import { test } from '@playwright/test';\nexport { test };\n",
                ),
                (
                    "e2e/tests/cart.spec.ts",
                    "import { test } from '../fixtures/shop';\n// import './not-a-file';\ntest('x', () => {});\n",
                ),
                (
                    "e2e/tests/nested/home.spec.ts",
                    "import { test } from '../../fixtures/shop.js';\n",
                ),
                ("e2e/tests/helper.ts", "not a spec and not imported"),
                ("e2e/node_modules/pkg/a.spec.ts", "never bundled"),
                ("e2e/package.json", "{}"),
                ("e2e/.auth/state.json", "written by globalSetup"),
                ("e2e/package-lock.json", "{}"),
                ("monitors/suite.yaml", "checks: {}"),
            ],
        );
        let roots = Roots::new(&root).unwrap();
        let (bundle, config) = bundle(&root.join("monitors"), "../e2e/playwright.config.ts", &roots).unwrap();
        assert_eq!(config, "playwright.config.ts");
        assert_eq!(
            paths(&bundle),
            [
                "fixtures/shop.ts",
                "global-setup.ts",
                "lib/seed.ts",
                "package-lock.json",
                "package.json",
                "playwright.config.ts",
                "tests/cart.spec.ts",
                "tests/nested/home.spec.ts",
            ]
        );
        let hash = bundle["sha256"].as_str().unwrap().to_owned();
        assert_eq!(hash.len(), 71);
        // One spec changed: another hash; the same files: the same hash.
        let (again, _) = bundle_of(&root, &roots);
        assert_eq!(again["sha256"], hash);
        write(
            &root,
            &[("e2e/tests/cart.spec.ts", "import { test } from '../fixtures/shop';\n")],
        );
        let (changed, _) = bundle_of(&root, &roots);
        assert_ne!(changed["sha256"], hash);
    }

    fn bundle_of(root: &Path, roots: &Roots) -> (Value, String) {
        bundle(&root.join("monitors"), "../e2e/playwright.config.ts", roots).unwrap()
    }

    #[test]
    fn an_import_outside_the_project_or_missing_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        write(
            &base,
            &[
                ("secret.ts", "export const key = 'k';\n"),
                ("project/playwright.config.ts", "export default {};\n"),
                (
                    "project/a.spec.ts",
                    "import { test } from '@playwright/test';\nimport { key } from '../secret';\n",
                ),
            ],
        );
        let roots = Roots::new(&root).unwrap();
        let e = bundle(&root, "playwright.config.ts", &roots).unwrap_err();
        assert!(e.outside, "{e:?}");
        assert_eq!(e.message, "a.spec.ts:2: import `../secret` is outside the project");
        write(&base, &[("project/a.spec.ts", "\n\nimport './gone';\n")]);
        let e = bundle(&root, "playwright.config.ts", &roots).unwrap_err();
        assert_eq!(e.message, "a.spec.ts:3: import `./gone` not found");
        let e = bundle(&root, "../secret.ts", &roots).unwrap_err();
        assert!(e.outside && e.message.contains("outside the project"), "{e:?}");
    }
}
