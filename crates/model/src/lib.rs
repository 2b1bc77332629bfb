//! The resource model of monform: every kind, field, type, default and limit
//! of the monitoring service, and the rules that validate them.
//!
//! **Architecture invariant:** this crate does no I/O. The loader, the
//! schema, the differ, the client and the emulator all read field facts from
//! here; none of them lists fields of its own.
//!
//! # Code map
//!
//! - `resources/`: one Rust type per kind (`Check` with its ten check types,
//!   `Group`, `Snippet`, `Variable`, `AlertChannel`, `MaintenanceWindow`,
//!   `StatusPage`, `StatusPageService`, `Dashboard`, `PrivateLocation`). serde
//!   attributes carry names and defaults; schemars attributes carry limits and
//!   monform's field metadata as schema extensions:
//!   `x-ref` (a reference to another section by logical id; `x-ref-soft` may also
//!   name a remote object; `x-wire` the API field it becomes), `x-script`
//!   (string or `{ file }`), `x-sensitive` / `x-sensitive-if` (never printed),
//!   `x-set` (compare as a set), `x-replace` (cannot change in place),
//!   `x-meta` (monform-only, never sent: `preventDestroy`).
//! - `resources/stored.rs`: the parse cache's form of a check, `[checkType,
//!   {"c": shared fields, "s": the type's own}]` (`Resource::to_stored`
//!   / `from_stored_str`; other kinds keep their JSON form): serde reads a
//!   check's JSON form (tagged, two flattened parts) by buffering it twice,
//!   which was most of a cached load of 100,000 checks. `check_from_value`
//!   reads the JSON form the same way, each part from the one map
//!   (`Resource::from_json`; a test holds it to the derived form).
//! - `kind.rs`: `Kind` and `Resource`, generated from one list by a macro.
//! - `schema.rs`: the draft-07 JSON Schema of a resource file, generated from
//!   the types once per process (`schemas()`), post-processed so standard
//!   validators accept it (`allOf` merged, tagged variants inlined, every object
//!   closed).
//! - `validate/shape.rs`: walks a JSON value alongside that schema: every type,
//!   enum, range, length, pattern, required and unknown-field violation, with
//!   "did you mean"; collects references and `{ file }` scripts on the way.
//!   It walks `validate/compiled.rs`, the schema compiled once per schema set
//!   (`$ref`s resolved, tagged unions indexed by tag, keywords read into fields):
//!   looking keywords up in the schema's JSON per value was the loader's
//!   second cost. Both read the schema document through `definitions.rs`
//!   (a kind's schema, `$ref`s followed), so `schema.rs` can cache the
//!   compiled form without the two importing each other.
//! - `suggest.rs`: did-you-mean (Jaro-Winkler over the known names), used by
//!   the validator, `lifecycle.rs` and the loader.
//! - `sensitive.rs`: **the one secrecy rule** every output masks by: a
//!   field is sensitive by `x-sensitive`, by a true sibling flag
//!   (`x-sensitive-if`: a secret variable, a header with `secret: true`), or by
//!   a sibling naming a credential (`x-sensitive-if-named`: a header called
//!   `Authorization`, `Cookie`, `X-Api-Key`, `*-Token`...);
//!   `sensitive_paths_at` / `mask_at` judge a value where it sits in its
//!   resource (a plan's old value by what it holds).
//! - `facts.rs`: the field metadata above, read once from the schema for every
//!   kind and variant (check type, channel type): references, secrets, sets,
//!   replace-on-change, natural keys, unique fields.
//! - `wire.rs`: the API form both ways (`to_wire`, `from_wire`: logical ids
//!   to remote ids under the API's names, `[{alertChannelId, activated}]`
//!   subscriptions...; `from_wire_overlay`: only the fields where the two forms
//!   differ, for comparing without a copy) and the API's request schemas,
//!   derived from the file schema.
//! - `endpoints.rs`: the paths of each kind; `quirks.rs`: the API's required
//!   free-form fields (`heartbeat`, `script` on ICMP create and the generic
//!   check update), filled in by the client, enforced by the emulator.
//! - `samples.rs`: a realistic body of every check type, valid under the
//!   model, from which both benchmarks generate their projects.
//! - `group_rules.rs`: the check fields a group overrides (one table, for the
//!   emulator and the linter); `effective.rs`: **the effective check**, a
//!   check as the service runs it in its group (`apply_group`: overriding
//!   fields imposed, tags and environment variables merged, an API check's
//!   `apiCheckDefaults` and snippets added), in the files' or the API's form,
//!   and `inline_snippets` (snippet scripts into the check's own setup and
//!   teardown): what `plan --effective` shows, `test --local` runs, the run
//!   budget counts and the emulator executes; `runs.rs`: a check's period
//!   (`period_seconds`: a missing `frequency` is 10 minutes, `frequency: 0`
//!   without an offset 10 seconds) for the budget and the emulator's
//!   scheduler, and its runs in 30 days.
//! - The service's vocabulary, once: `status.rs` (`RunStatus`, a run's
//!   outcome, for the runner, the client and the CLI), `reports.rs` (the
//!   quick ranges under the reporting and the analytics endpoints' names,
//!   and which check types have analytics), `wire::id_text` (an id as text),
//!   `resources/check.rs`'s response-time defaults and ceiling (the runner's
//!   constants are these).
//! - `rules.rs`: rules across fields, read from the JSON form field by field
//!   so they also run on a resource with other broken fields (the loader
//!   passes which top-level fields failed the shape check; a rule reading one
//!   is skipped) (spec 2.4 frequency offsets, sub-minute
//!   only for API/TCP, ICMP packet loss max >= degraded, SINGLE_RETRY limits,
//!   private-location slugs, maintenance window dates, every script field at
//!   most `MAX_SCRIPT_BYTES` (1 MiB as a JSON string, the service's request
//!   limit)).
//!
//! - `lifecycle.rs`: `lifecycle: { ignoreChanges, drift }` (an `x-meta`
//!   field of every kind): reading it, and the rule that every ignored path
//!   names a field of the kind and variant (walking the file schema; a "did
//!   you mean" among the properties at the level that failed; list indexes
//!   and monform-only fields refused).
//!
//! `address.rs`: `section.id` and `section.id[key]` (an item of a `forEach`).
//!
//! `sensitive/url.rs`: a credential inside a URL (a query or fragment
//! parameter named like a credential header, a `user:password@`) masked in
//! place, by the same rule as headers. `sensitive/worded.rs` (`word`,
//! `Wording`): the one way a diagnostic quotes a value; a sensitive one is
//! named by the variables it was read from, with no did-you-mean.
//!
//! **Architecture invariant:** no I/O. Field facts are never written twice:
//! the loader, the schema and (later) the differ, client and emulator read
//! them from here.

pub mod address;
pub mod address_pattern;
pub mod definitions;
pub mod effective;
pub mod endpoints;
pub mod facts;
pub mod group_rules;
pub mod kind;
pub mod lifecycle;
pub mod path;
pub mod pick;
pub mod quirks;
pub mod rate_limit;
pub mod reports;
pub mod resources;
pub mod rules;
pub mod runs;
pub mod samples;
pub mod schema;
pub mod sensitive;
pub mod snippets;
pub mod status;
pub mod suggest;
pub mod tree;
pub mod validate;
pub mod wire;

pub use address::{Address, LOGICAL_ID_PATTERN, is_valid_address_id, is_valid_logical_id};
pub use address_pattern::AddressPattern;
pub use kind::{Identity, Kind, OWNERSHIP_TAG_PREFIX, Resource, ownership_in_tags};
pub use path::{FieldPath, Segment};
pub use resources::common::{DriftPolicy, Lifecycle, UnknownName};
pub use status::RunStatus;

pub use suggest::suggest;
pub use validate::{Violation, check_shape, check_shape_in, check_shape_worded, into_resource, validate_resource};
