//! The loader: reads a monform project (monform.toml and every YAML or TOML
//! resource file) into the desired state, with a span on every value and a
//! diagnostic for every problem.
//!
//! **Architecture invariant:** no network. Environment variables are read
//! only through the lookup the caller passes in.
//!
//! # Code map
//!
//! - `load/cache.rs`: the parse cache (issue 29 item 4): `load_with_cache`
//!   reads each file's text, and when an entry keyed by the SHA-256 of its
//!   bytes, its name and everything else its load reads (`[defaults]`,
//!   `[vars]` with sensitive values as a marker, the environments, the
//!   `${env:}` policy, the format version and monform's version) is there,
//!   takes its resources from it instead of parsing and validating: each
//!   resource a list `[address, key span, item span, resource, refs, own
//!   fields]`, the typed resource in its stored form (`Resource::to_stored`,
//!   written only when `from_stored_str` reads it back equal; read in place
//!   by `Resource::from_stored` for the kind its address names), spans as offsets in the file or monform.toml, reference
//!   sites (each a list `[path, target, id, soft, span]`), overridable fields. References, duplicates, cycles and lints run
//!   on every load as before. Files with `${env:}`, `{ file: }` scripts,
//!   `forEachFile`, declarations, diagnostics or sensitive fields are never
//!   written; entries are written to a temporary name and renamed, and one
//!   that does not parse or names another key, file or format is ignored and
//!   rewritten. Entries are named `FILE-CONTEXT-KEY.json` (digests), so
//!   each load prunes by name alone: entries of files gone and this
//!   context's stale entries of edited files are removed, other contexts'
//!   kept up to `OTHER_CONTEXTS` per file (oldest out first), a crash's
//!   temporary files after an hour. **Architecture invariant:** no secret,
//!   nor a digest of one, in the cache. The CLI loads with it (`.monform/cache/`); `load` and
//!   `load_environment` do not.
//!
//! - `project_schema.rs`: the JSON Schema of `monform.toml` for editors,
//!   built from `project.rs`'s section and key lists (a test keeps them in step).
//! - `lint.rs`: findings about a project that loads (a grouped check's
//!   ignored fields, checks whose failures alert nobody, the note on the
//!   account's alert settings), each an error, warning, note or nothing by its
//!   own `[lint]` key and marked a finding (`Diagnostic::finding`, as the
//!   policies' are) apart from the loader's diagnostics, so commands not
//!   about the files leave them out and many of one rule are summarised. Every
//!   finding's code is here, `shared.rs`'s too: the linter runs inside the
//!   load, `shared.rs` over finished loads, so it sits above both.
//! - `project.rs`: `monform.toml`, with `[vars]`, `[environments.NAME]`,
//!   `[lint]`, `[budget]` and `[reconcile]` (`project/reconcile.rs`: interval,
//!   default drift policy, apply-changes, the channels to notify; `project/env.rs`:
//!   `[project] secret-env`, `public-env` and `pass-env`);
//!   `Project::select` makes an environment's project name, API, vars and
//!   defaults the project's.
//! - `discover.rs`: which files are resource files; a folder with its own
//!   `monform.toml` is another project, skipped with a warning
//!   (`Loaded::warnings`, which do not fail a load). Symbolic links are
//!   followed when they stay inside the project (a file reached twice is read
//!   once); a link leaving it, broken or looping is an error.
//! - `paths.rs`: `Roots`, the canonical project root and `[project]
//!   allow-paths`: every path the files name (`{ file }` scripts, `forEachFile`
//!   folders and the links met below them, resource files, monform.toml)
//!   resolves there after symbolic links, or is refused; a missing path
//!   outside says "outside", not "not found" (the files cannot probe the
//!   runner's disk).
//! - `budget.rs`: what one file may expand to (128 MiB of values): the YAML
//!   parse (an alias charged what it repeats), `forEach` copies and
//!   substitutions are charged to the file's `Budget`; past it, one diagnostic
//!   at the place that went over and the rest of the file is not expanded.
//! - `tree.rs`, `tree/yaml.rs` (scalars in `tree/yaml/scalars.rs`, byte offsets and
//!   scalar ends in `tree/yaml/spans.rs`, yaml-rust2's gaps made up for in
//!   `tree/yaml/quirks.rs`): YAML (built straight from an event
//!   stream with an explicit stack: byte spans, YAML 1.2 core scalars with
//!   strict booleans, anchors, aliases and merge keys, duplicate keys, a depth
//!   limit and the byte budget; 3x faster than serde-saphyr with a span on every node) and
//!   `tree/yaml/fast.rs`: the events of the YAML monitor files are written in
//!   (block maps and lists, one-line scalars and flow collections, literal
//!   blocks, comments) scanned from bytes, yaml-rust2's for any other text and
//!   every error (a cold load's instructions a quarter fewer; its tests compare both trees
//!   on generated and randomly edited texts), and
//!   TOML (`toml::de::DeTable`, spans on every key and value) into one `Node`
//!   tree (`Node::sensitive` marks a value holding a non-public `${env:}`; it
//!   travels with copies). Validation runs on its JSON form; a violation's field path is looked
//!   up in the tree again to find its span.
//! - `expand.rs`: a definition into its resources: `forEach` (map or list of
//!   strings, or `"${var:NAME}"` substituted first into one, or `{ file: PATH }`
//!   read by `data.rs`) and `forEachFile` (glob, `expand/files.rs`) make one resource per item, addressed
//!   `section.id[key]`, cloned from the parsed definition (spans kept: fields
//!   point at the definition, substituted values at the item or variable);
//!   `environments` drops a resource from the other environments; then the
//!   substitutions. Runs inside each file's parallel task, before validation.
//! - `data.rs`: `forEach: { file: PATH }`: a CSV, JSON or YAML data file's
//!   rows as items (the path resolved through `Roots`, charged to the
//!   file's `Budget`; the rows' spans are the `file:` value's, as the data
//!   file is no source). The files read as data are collected (`DataFiles`)
//!   and `load.rs` drops whatever their own parse as resource files found.
//!   It is given the roots and the `DataFiles`, not `expand.rs`'s context,
//!   so `expand.rs` calls it without it calling back.
//! - `shared.rs`: across the environments `validate` loads, account-wide
//!   objects (variables by key, the natural-key kinds by natural key) that
//!   two environments with the same API URL and other project names would
//!   both claim (`[lint] shared-objects`, an error by default).
//! - `interpolate.rs`: `${env:}`, `${var:}`, `${each.key}`, `${each.value}`,
//!   `${each.value.PATH}`, `:-default` (nested substitutions, `${env:}`'s
//!   too, at most 16 deep), `$${`; a whole-scalar substitution keeps its type
//!   and spans. `EnvPolicy` (`[project] secret-env`, `public-env`, read from
//!   monform.toml before its own substitutions): `CREDENTIAL_ENV` and
//!   secret-env are never read (a string naming one anywhere, in an unused
//!   default too, is refused before anything is looked up); what a non-public
//!   variable gives marks the value sensitive. The diagnostics of a failed
//!   substitution.
//! - `load.rs`: the pipeline (`load_environment` for one environment):
//!   project, files, sections, expansion and substitution, logical ids
//!   (duplicates across files), `[defaults]`, shape, scripts, rules, typed
//!   resource, references, graph, cycles (one resource's checks in
//!   `load/resource.rs`; the items into the desired state, duplicates and
//!   cycles reported, in `load/desired.rs`). Each file is read,
//!   parsed and its resources validated in one parallel task (rayon), so its
//!   tree is freed while still in cache; duplicates across files are then
//!   found in file order, and references resolved in parallel; the graph's
//!   edges are found while the linter runs (`rayon::join`). The rest runs
//!   in file order, so results and diagnostics never depend on scheduling.
//!   `load/read.rs` reads one file (a file that is not UTF-8: its line,
//!   column and byte offset, the text shown up to there), or its text from
//!   `Unsaved` (`load_unsaved`: an editor's unsaved text by file name, for
//!   `monform lsp`; only for a file the project reads anyway, so the path
//!   rules stay; the parse cache is read for every file, its entries being
//!   keyed by the text's bytes, and written only for files read from disk); `load/sections.rs`
//!   turns one file's tree into its declarations and expanded resources.
//! - `desired.rs`: `Desired`: resources by `Address` and a petgraph `DiGraph`
//!   with an edge `a -> b` for every reference from `a` to `b` (no weight:
//!   the referencing field is in `DesiredResource::references`), and the files'
//!   `Declarations`. `DesiredResource::resource` is boxed (a `Resource` is
//!   about 800 bytes; the load moves each through several vectors). `DesiredResource::sensitive`: the field paths (file form,
//!   `request.headers[1].value`) holding non-public environment text, gathered
//!   from `Node::sensitive` after `[defaults]` are merged (a path the typed
//!   form lacks, `script.file`, becomes its nearest ancestor, `script`).
//! - `declare.rs`: the `moved`, `import` and `removed` lists (parsed with
//!   spans, checked across files: cycles, two moves to or from one address,
//!   moves from or removals of addresses still defined, imports of undefined
//!   ones); `Declarations::moves` resolves chains.
//! - `diagnostic.rs`: `Diagnostic` (file id + span) and its miette `Report`,
//!   whose source (`diagnostic/excerpt.rs`) is the span's lines and one on
//!   each side (`CONTEXT_LINES`, what the renderer shows), never the whole
//!   file: miette finds a line by reading from the text's start;
//!   `diagnostic/summary.rs` summarises many findings of one rule (the first
//!   in full, the next two by place, a count) for the terminal, the Markdown
//!   plan's policy list, `show` and the reconciler's log.
//!
//!   `literal.rs`: text written into the files from the service (codify,
//!   export, import) has every `${` escaped as `$${`, so nothing from the
//!   service is ever substituted. `project/policy.rs`: `[policy]
//!   max-instructions` and `timeout`. A node's `sensitive` carries the
//!   `${env:}` names it was read from, which diagnostics name instead of the
//!   value.
//!
//! **Architecture invariant:** no network; the environment is read only
//! through the lookup the caller passes in, and never for a credential
//! (`EnvPolicy`). The files are untrusted input (a pull request's): no path
//! they name is read outside `Roots`, and no file expands past its `Budget`.
//! Loading never stops at the first problem: every diagnostic comes back in one run, and shape, rule and
//! reference checks each run on whatever part of a resource is well-formed.

pub mod budget;
mod data;
pub mod declare;
pub mod desired;
pub mod diagnostic;
mod discover;
mod expand;
pub mod interpolate;
pub mod lint;
pub mod literal;
mod load;
pub mod paths;
pub mod project;
pub mod project_schema;
pub mod shared;
pub mod slos;
pub mod source;
pub mod tree;

pub use declare::{Declarations, Import, Moved, Removed};
pub use desired::{Desired, DesiredResource, Reference, Target};
pub use diagnostic::{Diagnostic, Report, Severity};
pub use discover::included;
pub use expand::EnvLookup;
pub use load::{
    CACHE_DIR, CACHE_FORMAT, CacheStats, Loaded, Opening, Reloaded, Unsaved, is_lint_code, load, load_environment,
    load_project, load_unsaved, load_with_cache, open, place, reload_file, settle_cache,
};
pub use project::{Environment, Lint, LintLevel, Project, Reconcile, StateBackend};

pub(crate) use monform_model::suggest;
