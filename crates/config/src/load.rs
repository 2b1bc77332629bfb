//! Loading a project: monform.toml, then every resource file, into the
//! desired state. Every problem is reported; loading never stops at the first.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use monform_model::schema::schemas;
use monform_model::sensitive::{Hidden, Wording};
use monform_model::validate::RefSite;
use monform_model::{Address, FieldPath, Kind, Segment, Violation, check_shape_worded};
use serde_json::Value;

use crate::budget::Budget;
use crate::declare::{self, Declarations};
use crate::desired::{Desired, DesiredResource, Reference, Target};
use crate::diagnostic::Diagnostic;
use crate::discover::{Discovered, Unreadable, discover};
use crate::expand::{Context, EnvLookup, expand};
use crate::interpolate::{EnvPolicy, Scope, interpolate_node, interpolation_diagnostic};
use crate::paths::{OUTSIDE_HELP, PathError, Roots};
use crate::project::{PROJECT_FILE, Project, read_env_policy, read_pass_env, read_project};
use crate::source::{FileId, Format, SourceFile, Sources, Span, decode};
use crate::tree::{Entry, Node, NodeValue, SyntaxError, parse_toml, parse_yaml_within};

mod cache;
mod desired;
mod playwright;
mod read;
mod reload;
mod resource;
mod sections;
#[cfg(test)]
mod sensitive_tests;
#[cfg(test)]
mod tests;
pub use cache::{CACHE_DIR, CACHE_FORMAT, CacheStats, settle as settle_cache};
use read::{ReadFile, parse_text, read_file, read_text};
pub use reload::{Reloaded, is_lint_code, place, reload_file};
use resource::{references, validate};
use sections::resources_of;

/// Everything a load produced. The project is usable when `diagnostics` is empty.
#[derive(Debug)]
pub struct Loaded {
    pub sources: Sources,
    pub project: Option<Project>,
    pub desired: Desired,
    /// Resource files read (monform.toml not counted).
    pub resource_files: usize,
    pub diagnostics: Vec<Diagnostic>,
    /// Worth saying but not wrong (a nested project skipped): they do not
    /// make the load fail.
    pub warnings: Vec<Diagnostic>,
    /// How the parse cache fared (all zero without one).
    pub cache: CacheStats,
    /// Every address defined, valid or not: what reloading one file
    /// (`reload`) resolves its references against and compares.
    pub(crate) defined: desired::Defined,
    /// False once [`Loaded::forget_reload_index`] freed `defined`:
    /// `reload_file` then asks for a whole load.
    pub(crate) reloadable: bool,
    /// Whether some `forEach` read a file of the project as data (a file
    /// changed may then change which files are resource files).
    pub(crate) read_data: bool,
    /// The linter's findings per check, kept by `reload_file` from its
    /// first reload (a load for one command does not need them).
    pub(crate) linted: Option<crate::lint::Linted>,
    /// Each file's resources' addresses (by file id), kept by
    /// `reload_file` from its first reload, as `linted`.
    pub(crate) by_file: Option<Vec<Vec<Address>>>,
}

impl Loaded {
    pub fn is_ok(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// Frees what only reloading one file needs (every address defined:
    /// about 8 MB at 100,000 checks, otherwise held through a whole plan).
    /// For a load that serves one command; [`reload_file`] then answers
    /// `None` (load whole).
    pub fn forget_reload_index(&mut self) {
        self.defined = desired::Defined::default();
        self.reloadable = false;
    }
}

/// Loads the project rooted at `root`, without selecting an environment.
pub fn load(root: &Path, env: EnvLookup<'_>) -> Loaded {
    load_environment(root, env, None)
}

/// Loads the project rooted at `root` for `environment` (its project name,
/// vars, defaults and API; the resources it has). Without one, every
/// resource is loaded with the project's own `[vars]` and `[defaults]`.
///
/// Each file is read, parsed and its resources validated in one parallel
/// task (rayon), so its tree is freed while the memory is still warm;
/// references are resolved in parallel too. Everything else runs in file
/// order, so the result and the diagnostics do not depend on the scheduling.
pub fn load_environment(root: &Path, env: EnvLookup<'_>, environment: Option<&str>) -> Loaded {
    load_with_cache(root, env, environment, None)
}

/// As [`load_environment`], with the parse cache in `cache` (usually
/// `root/.monform/cache`, [`CACHE_DIR`]): a file loaded before with the
/// same bytes and settings is not parsed again (`load/cache.rs`).
pub fn load_with_cache(root: &Path, env: EnvLookup<'_>, environment: Option<&str>, cache: Option<&Path>) -> Loaded {
    load_inner(root, env, environment, cache, &Unsaved::default())
}

/// As [`load_with_cache`], reading the files `unsaved` holds from there
/// instead of the disk: an editor's text not yet saved (`monform lsp`).
/// Only files the project reads anyway are taken from it; every rule about
/// which paths the files may name stays. The parse cache is read for every
/// file (its entries are keyed by the text's bytes) but written only for
/// files read from the disk: text being typed would fill it with entries
/// of texts never saved.
pub fn load_unsaved(
    root: &Path,
    env: EnvLookup<'_>,
    environment: Option<&str>,
    cache: Option<&Path>,
    unsaved: &Unsaved,
) -> Loaded {
    load_inner(root, env, environment, cache, unsaved)
}

/// The project's settings alone, for `environment` (monform.toml, no
/// resource file read): enough to connect to the service while the files
/// load. `None` when monform.toml is missing or has any problem: the full
/// load says which.
pub fn load_project(root: &Path, env: EnvLookup<'_>, environment: Option<&str>) -> Option<Project> {
    let unsaved = Unsaved::default();
    open(root, env, environment, &unsaved).project().cloned()
}

/// The first half of a load: monform.toml read (once) and the environment
/// selected. A front end that needs the project's settings before the
/// resource files (to connect while they load) reads them here
/// ([`Opening::project`]), then finishes the same load ([`Opening::load`]).
pub struct Opening<'e> {
    loader: Loader<'e>,
    roots: Roots,
    root: PathBuf,
    project: Option<Project>,
}

/// Reads monform.toml at `root` (from `unsaved` when it holds it) and
/// selects `environment`; see [`Opening`].
pub fn open<'e>(root: &Path, env: EnvLookup<'e>, environment: Option<&str>, unsaved: &'e Unsaved) -> Opening<'e> {
    let mut loader = Loader::new(env, unsaved);
    // A root that cannot be made canonical has no monform.toml either:
    // loading stops at that.
    let roots = Roots::of(root);
    let mut project = loader.load_project(root, &roots);
    if let (Some(project), Some(environment)) = (&mut project, environment)
        && let Err(diagnostic) = project.select(environment)
    {
        loader.diagnostics.push(*diagnostic);
    }
    Opening {
        loader,
        roots,
        root: root.to_path_buf(),
        project,
    }
}

impl Opening<'_> {
    /// The project's settings, when monform.toml has no problem (the load
    /// says which otherwise).
    pub fn project(&self) -> Option<&Project> {
        self.project.as_ref().filter(|_| self.loader.diagnostics.is_empty())
    }

    /// monform.toml's text as read, when it was.
    pub fn project_text(&self) -> Option<&str> {
        (!self.loader.sources.is_empty()).then(|| self.loader.sources.get(0).text.as_ref())
    }

    /// Reads the resource files, with the parse cache in `cache` when
    /// given: the rest of the load.
    pub fn load(self, cache: Option<&Path>) -> Loaded {
        let Opening {
            loader,
            roots,
            root,
            project,
        } = self;
        finish_load(loader, roots, &root, project, cache)
    }
}

fn load_inner(
    root: &Path,
    env: EnvLookup<'_>,
    environment: Option<&str>,
    cache: Option<&Path>,
    unsaved: &Unsaved,
) -> Loaded {
    open(root, env, environment, unsaved).load(cache)
}

fn finish_load(
    mut loader: Loader<'_>,
    mut roots: Roots,
    root: &Path,
    project: Option<Project>,
    cache: Option<&Path>,
) -> Loaded {
    let env = loader.env;
    for (folder, span) in project.iter().flat_map(|p| &p.allow_paths) {
        if let Err(e) = roots.allow(folder) {
            loader.diagnostics.push(
                Diagnostic::new(
                    "monform::allow-paths",
                    format!("project.allow-paths: cannot use `{folder}`: {e}"),
                )
                .at(*span, "this folder")
                .help("list folders that exist, relative to the project root"),
            );
        }
    }
    let discovered = match &project {
        Some(project) => match discover(root, &project.include, &roots) {
            Ok(discovered) => discovered,
            Err(e) => {
                loader.diagnostics.push(Diagnostic::new(
                    "monform::io",
                    format!("cannot list the files of {}: {e}", root.display()),
                ));
                Discovered::default()
            }
        },
        None => Discovered::default(),
    };
    let mut warnings: Vec<Diagnostic> = discovered
        .nested
        .iter()
        .map(|folder| {
            Diagnostic::new(
                "monform::nested-project",
                format!(
                    "skipped {}/: it holds its own {PROJECT_FILE}, so it is a separate project",
                    display_name(root, folder)
                ),
            )
            .warning()
            .help(format!(
                "run monform in that folder (--dir {}) to manage it",
                display_name(root, folder)
            ))
        })
        .collect();
    for (path, why) in &discovered.unreadable {
        let name = display_name(root, path);
        let message = match why {
            Unreadable::Outside => format!("{name} is a symbolic link to outside the project: not read"),
            Unreadable::Broken => format!("{name} is a broken symbolic link: not read"),
            Unreadable::Loop => format!("{name} is a symbolic link to a folder above it: not followed"),
            Unreadable::Io(e) => format!("cannot read {name}: {e}"),
        };
        let mut diagnostic = Diagnostic::new("monform::path", message);
        if matches!(why, Unreadable::Outside) {
            diagnostic = diagnostic.help(OUTSIDE_HELP);
        }
        // Whatever it defines would be missing from the plan, which would
        // then delete it: an error, not a warning.
        loader.diagnostics.push(diagnostic);
    }
    let files = discovered.files;
    let defaults = project.as_ref().map(|p| p.defaults.as_slice()).unwrap_or_default();
    let environments = project.as_ref().map(Project::environment_names).unwrap_or_default();
    let default_policy = EnvPolicy::default();
    let data_files = crate::data::DataFiles::default();
    let context = Context {
        env,
        policy: project.as_ref().map_or(&default_policy, |p| &p.env_policy),
        roots: &roots,
        vars: project.as_ref().map(|p| p.vars.as_slice()).unwrap_or_default(),
        environments: &environments,
        environment: project.as_ref().and_then(|p| p.environment.as_deref()),
        data_files: &data_files,
    };
    let cache = cache.map(|dir| cache::Cache::new(dir, defaults, &context));
    let (items, mut declarations, resource_files, cache_stats) =
        loader.read_resource_files(root, files, defaults, &context, cache.as_ref());
    if let Some(cache) = cache {
        cache.finish();
    }
    // Defined, even when invalid: a declaration's check is about the address.
    let (mut desired, defined) = loader.build_desired(items);
    // SLOs over their member checks (`slos.rs`): `enforce: true` first, so
    // what it sets is what the rest reads.
    crate::slos::enforce(&mut desired);
    for diagnostic in crate::slos::check(&desired) {
        if diagnostic.severity == crate::diagnostic::Severity::Error {
            loader.diagnostics.push(diagnostic);
        } else {
            warnings.push(diagnostic);
        }
    }
    let levels = project.as_ref().map(|p| p.lint).unwrap_or_default();
    // The linter reads the resources while their references are linked:
    // one after the other, on one core, they were a tenth of the wall time
    // of a 100,000-check load.
    let (edges, (lint_warnings, lint_errors)) = rayon::join(|| desired.edges(), || crate::lint::lint(&desired, levels));
    desired.add_edges(edges);
    loader.report_cycles(&desired);
    declare::check(&mut declarations, &defined.all, &mut loader.diagnostics);
    warnings.extend(lint_warnings);
    loader.diagnostics.extend(lint_errors);
    desired.declarations = declarations;
    let Loader {
        sources,
        mut diagnostics,
        ..
    } = loader;
    diagnostics.sort_by_key(|d| d.span.map(|s| (s.file, s.start)));
    dedup(&mut diagnostics);
    Loaded {
        sources,
        project,
        desired,
        resource_files,
        diagnostics,
        warnings,
        cache: cache_stats,
        defined,
        reloadable: true,
        read_data: !data_files.is_empty(),
        linted: None,
        by_file: None,
    }
}

struct Loader<'e> {
    sources: Sources,
    diagnostics: Vec<Diagnostic>,
    env: EnvLookup<'e>,
    unsaved: &'e Unsaved,
}

impl<'e> Loader<'e> {
    fn new(env: EnvLookup<'e>, unsaved: &'e Unsaved) -> Loader<'e> {
        Loader {
            sources: Sources::default(),
            diagnostics: Vec::new(),
            env,
            unsaved,
        }
    }
}

/// A resource found in a file, before validation.
struct Found {
    address: Address,
    key_span: Span,
    node: Node,
    /// Strings whose substitution failed, already reported.
    unresolved: Vec<Span>,
    /// The value of the item it was made from (`forEach`, `forEachFile`).
    item: Option<Span>,
}

/// A resource found and validated, with what its validation said.
struct Item {
    address: Address,
    key_span: Span,
    item: Option<Span>,
    validated: Validated,
    diagnostics: Vec<Diagnostic>,
    own_fields: Vec<(&'static str, Span)>,
}

/// What validating a resource gave: the typed resource when it is valid,
/// and the references it makes (checked even when it is not).
struct Validated {
    /// Boxed, as in [`DesiredResource`]: an item is moved several times.
    resource: Option<Box<monform_model::Resource>>,
    refs: Vec<(RefSite, Span)>,
    /// Fields holding text of a non-public `${env:}`, with the variables
    /// each read (`DesiredResource::sensitive` and `env_reads`).
    sensitive: Vec<(FieldPath, Vec<String>)>,
    /// The same fields as the files have them, with the variables each
    /// read: what diagnostics name in their values' place.
    substituted: Vec<(FieldPath, Hidden)>,
    /// It holds a script read from another file (`{ file: }`).
    reads_files: bool,
}

/// Files' text to read instead of the disk, by name relative to the project
/// root with `/` separators (`monitors/web.yaml`, `monform.toml`).
pub type Unsaved = FxHashMap<String, Arc<str>>;

impl Loader<'_> {
    fn load_project(&mut self, root: &Path, roots: &Roots) -> Option<Project> {
        let path = root.join(PROJECT_FILE);
        if let Err(PathError::Outside) = roots.resolve(&path) {
            self.diagnostics.push(
                Diagnostic::new(
                    "monform::path",
                    format!("{PROJECT_FILE} is a symbolic link to outside the project: not read"),
                )
                .help("make it a file of the project"),
            );
            return None;
        }
        if !path.is_file() {
            self.diagnostics.push(
                Diagnostic::new(
                    "monform::no-project",
                    format!("no {PROJECT_FILE} in {}", root.display()),
                )
                .help("create one with:\n[project]\nname = \"my-monitors\"\n\nor point --dir at the project's folder"),
            );
            return None;
        }
        let budget = Budget::default();
        let mut file = read_file(root, path, self.sources.len() as FileId, &budget, self.unsaved);
        let mut policy = EnvPolicy::default();
        let mut pass_env = Vec::new();
        if let Some(node) = &mut file.node {
            // What ${env:} may read is settled before monform.toml's own
            // substitutions, which it governs too.
            policy = read_env_policy(node, &mut file.diagnostics);
            pass_env = read_pass_env(node, &policy, &mut file.diagnostics);
            // monform.toml may use ${env:}, not ${var:} or ${each}.
            let scope = Scope {
                env: self.env,
                policy: &policy,
                vars: None,
                each: None,
                budget: &budget,
            };
            let mut errors = Vec::new();
            interpolate_node(node, &scope, &mut errors);
            file.diagnostics
                .extend(errors.into_iter().map(|(e, span)| interpolation_diagnostic(e, span)));
        }
        self.sources.add(file.source);
        self.diagnostics.extend(file.diagnostics);
        let node = file.node?;
        let fields = schemas().check_common_fields();
        let mut project = read_project(&node, &fields, &mut self.diagnostics)?;
        project.env_policy = policy;
        project.pass_env = pass_env;
        Some(project)
    }

    /// Reads, parses and interpolates each file, finds its resources and
    /// validates them (`[defaults]` merged into checks), a file per parallel
    /// task; returns every resource found, by file in file order, and how
    /// many files were resource files. A file some `forEach` read as data is
    /// none: what its parse as a resource file found is dropped.
    fn read_resource_files(
        &mut self,
        root: &Path,
        paths: Vec<PathBuf>,
        defaults: &[Entry],
        context: &Context<'_>,
        cache: Option<&cache::Cache>,
    ) -> (Vec<Vec<Item>>, Declarations, usize, CacheStats) {
        let first = self.sources.len();
        let unsaved = self.unsaved;
        let read: Vec<(ReadFile, Vec<Item>, Declarations, bool)> = paths
            .into_par_iter()
            .enumerate()
            .map(|(i, path)| read_resource_file(root, path, (first + i) as FileId, unsaved, defaults, context, cache))
            .collect();
        // Kept by file: one list of them all was a copy of every item
        // (about 200 bytes each, into pages faulted in fresh) on the
        // load's main thread.
        let mut items = Vec::with_capacity(read.len());
        let mut declarations = Declarations::default();
        let mut resource_files = 0;
        let mut stats = CacheStats::default();
        for (file, found, declared, hit) in read {
            if cache.is_some() {
                if hit { stats.hits += 1 } else { stats.parsed += 1 }
            }
            // Asked only when some `forEach` read a file as data: a path
            // made canonical is a few system calls, for each of 1,000
            // files on the load's main thread.
            let data = !context.data_files.is_empty()
                && file
                    .source
                    .path
                    .canonicalize()
                    .is_ok_and(|path| context.data_files.contains(&path));
            // Added all the same: file ids are positions in the sources.
            self.sources.add(file.source);
            if data {
                continue;
            }
            resource_files += 1;
            self.diagnostics.extend(file.diagnostics);
            items.push(found);
            declarations.extend(declared);
        }
        (items, declarations, resource_files, stats)
    }
}

/// Reads, parses and interpolates one file, finds its resources and
/// validates them (`[defaults]` merged into checks): the parse cache's
/// entry when it has the file's, and whether it did.
fn read_resource_file(
    root: &Path,
    path: PathBuf,
    id: FileId,
    unsaved: &Unsaved,
    defaults: &[Entry],
    context: &Context<'_>,
    cache: Option<&cache::Cache>,
) -> (ReadFile, Vec<Item>, Declarations, bool) {
    // What the file may expand to: its parse, forEach copies and
    // substitutions (`crate::budget`).
    let budget = Budget::default();
    let mut file = read_text(root, path, id, unsaved);
    let key = cache
        .filter(|_| file.diagnostics.is_empty())
        .and_then(|c| c.key(&file.source));
    if let (Some(cache), Some(key)) = (cache, &key)
        && let Some(items) = cache.read(key, &file.source, id)
    {
        return (file, items, Declarations::default(), true);
    }
    if file.diagnostics.is_empty() {
        parse_text(&mut file, id, &budget);
    }
    let base = file.source.path.parent().map(Path::to_owned).unwrap_or_default();
    let mut declarations = Declarations::default();
    let found = match file.node.take() {
        Some(tree) => resources_of(tree, &base, context, &budget, &mut declarations, &mut file.diagnostics),
        None => Vec::new(),
    };
    let items = found
        .into_iter()
        .map(|mut found| {
            let mut own_fields = Vec::new();
            if found.address.kind == Kind::Check {
                own_fields = crate::lint::overridable(&found.node);
                merge_defaults(&mut found.node, defaults);
            }
            if found.address.kind == Kind::Slo {
                own_fields = crate::slos::SPANNED_FIELDS
                    .iter()
                    .filter_map(|field| found.node.get(field).map(|entry| (*field, entry.key_span)))
                    .collect();
            }
            let mut diagnostics = Vec::new();
            let validated = validate(&found, &base, context.roots, &mut diagnostics);
            Item {
                address: found.address,
                key_span: found.key_span,
                item: found.item,
                validated,
                diagnostics,
                own_fields,
            }
        })
        .collect::<Vec<Item>>();
    if let (Some(cache), Some(key)) = (cache, &key)
        && !unsaved.contains_key(&file.source.name)
    {
        cache.write(key, id, &file, &items, &declarations);
    }
    (file, items, declarations, false)
}

/// Removes repeated diagnostics (the items of one definition repeat its
/// mistakes); `diagnostics` is sorted by place, so repeats are near.
fn dedup(diagnostics: &mut Vec<Diagnostic>) {
    let mut kept: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len());
    for diagnostic in diagnostics.drain(..) {
        let repeated = kept
            .iter()
            .rev()
            .take_while(|d| d.span.map(|s| (s.file, s.start)) == diagnostic.span.map(|s| (s.file, s.start)))
            .any(|d| *d == diagnostic);
        if !repeated {
            kept.push(diagnostic);
        }
    }
    *diagnostics = kept;
}

/// Fills each `[defaults]` field the check does not set itself. A check
/// that names private locations runs there only: the defaults' public
/// `locations` would have it run from a data center too, against targets
/// that are usually only reachable from inside the network (issue 27).
fn merge_defaults(node: &mut Node, defaults: &[Entry]) {
    if let NodeValue::Map(entries) = &mut node.value {
        let private = entries
            .iter()
            .any(|e| e.key == "privateLocations" && matches!(&e.value.value, NodeValue::Seq(l) if !l.is_empty()));
        for default in defaults {
            if private && default.key == "locations" {
                continue;
            }
            if !entries.iter().any(|e| e.key == default.key) {
                entries.push(default.clone());
            }
        }
    }
}

fn display_name(root: &Path, path: &Path) -> String {
    let relative: PathBuf = path
        .strip_prefix(root)
        .map(Path::to_owned)
        .unwrap_or_else(|_| path.to_owned());
    relative.to_string_lossy().replace('\\', "/")
}
