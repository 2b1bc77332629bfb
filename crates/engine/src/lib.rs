//! The engine: fetcher (actual state), differ and plan, executor, and the
//! state backends.
//!
//! **Architecture invariant:** no terminal I/O. The engine returns plans
//! and events; the CLI renders them.
//!
//! **API boundary:** front ends call [`ops`] (the operations) and read the
//! values it returns, re-exported below; [`durable`] is how they write a
//! file for the user. [`stages`] runs one stage alone, for the bench and
//! the engine's own request-count test, never for a command.
//! [`conformance`] (feature `test-support` only) is the suite every state
//! backend passes, for a backend written elsewhere. Every other
//! module is the crate's own (ARCHITECTURE.md, "Entry points and API
//! boundaries"; `crates/cli/src/boundary.rs` keeps every front end to this).
//!
//! # Code map
//!
//! - `ops.rs` (`ops/refusal.rs`, `ops/state_ops.rs`, `ops/import_ops.rs`,
//!   `ops/export_ops.rs`, `ops/test_ops.rs`, `ops/status_ops.rs`,
//!   `ops/drift_ops.rs`: `drifted`, a plan's drift with the service's
//!   values in the files' form, secrets as `None`, for `codify`;
//!   `find_unmanaged_for` in `ops/export_ops.rs`, the unmanaged objects
//!   the current project may adopt): **the
//!   front door** (ARCHITECTURE.md, "Entry points and API boundaries"): `plan`,
//!   `prepare_apply` + `execute` (apply, and destroy with
//!   `PlanRequest::destroy`), `import_one`, `find_unmanaged` +
//!   `adopt_unmanaged` (`import --all-unmanaged`), `export_account` +
//!   `write_project`, `state_rm`, `state_mv`, `state_migrate`,
//!   `test_selection` + `run_test_sessions` and `local_checks` (`test`),
//!   `status`, on a `Session` (project, files, client, state backend) or its
//!   parts, with typed `Refusal`s and an `Observer` for progress.
//! - `stages.rs`: fetch, the differ, wire bodies and ownership tags one at a
//!   time, past the operations' rules: for the bench's offline diff and the
//!   request-count test, never a command.
//! - `durable.rs`: the one way monform writes a file for the user (temp file,
//!   fsync, rename, folder fsync): state snapshots, saved plans, reports,
//!   JUnit, exported files; `write_with` takes a writer (through a buffer)
//!   for a file too large to build whole first (the state snapshot).
//! - `budget.rs`: `effective_check` (a check of the files after `[defaults]`
//!   and its group, `monform_model::effective`; `masked_effective_check`
//!   masks the check's secrets by the check's rules and what the group adds
//!   by the group's, for `plan --effective`); a plan's check runs a month
//!   before (the service's checks) and after (the files'), per check type and
//!   per check.
//! - `actual.rs`: what the account holds (`Actual`), the fetcher's result:
//!   the project's objects by address, duplicates, the account's other
//!   objects, clashes. `Actual::moved`: objects claimed by the state whose tag
//!   names another logical id (after `state mv`).
//! - `fetch.rs`: every kind listed once, in parallel; the project's objects
//!   claimed by state remote id first (for kinds with tags, only objects tagged
//!   as the project's), then ownership tag or natural key, never an object
//!   another project owns (`Actual::clashes`, which stop the plan); duplicates (two
//!   objects claiming one address) kept aside to be deleted.
//! - `refresh.rs`: `--refresh=changed|none` (issue 29 item 3). A state entry
//!   whose resource the files still describe as applied (its `applied`
//!   fingerprint and its secrets' fingerprints unchanged) is trusted:
//!   `Actual::unrefreshed` holds its remote id and version, the differ
//!   (`differ/offline.rs`) plans it as a no-op without reading or comparing
//!   it, `Names` and the executor's ids resolve references to it from the
//!   state. `changed` GETs by remote id what the files edited or removed,
//!   the targets of `moved` entries, `import` ids, private locations that a
//!   read or created resource references (references carry their slug, which
//!   the state does not hold), and the project's ownership record (an apply
//!   rewrites it); creates send nothing. `none` reads nothing: an edited
//!   resource is an update of the fields whose state fingerprints differ,
//!   values before unknown; apply refuses `none` (`Refusal::OfflineApply`).
//!   The plan carries `Refreshed` (mode, objects not read) for every output,
//!   and a saved plan its mode: `apply PLANFILE` re-reads its changed objects
//!   and refuses it when one changed (remote version). `rolling`
//!   (`refresh/rolling.rs`, issue 48, `monform reconcile`): within a request
//!   budget the session's `Sweep` carries from plan to plan, what `changed`
//!   reads, the sweep's priorities (drift lately reported), then the next
//!   listing pages from where the last plan stopped; at the sweep's end what
//!   no page showed is read by id, so every object is read once a sweep; the
//!   whole account listed at once when it fits the budget.
//! - `compare.rs`: the diff rule (managed fields only, sets as sets, null = [] =
//!   absent, trailing whitespace and number formats ignored), walking borrowed
//!   paths; a `FieldPath` is made only for what differs.
//! - `plan.rs`: the plan's value types: actions per address with field changes
//!   and a reason (config change, drift, removed, duplicate), the DAG of their
//!   order, suggested moves, discarded results, and the changes caught in a
//!   dependency cycle (`Plan::cycle`: `ops` refuses such a plan).
//! - `creates.rs`: a create's fields, built when asked (`Change::fields_in`,
//!   `Plan::fill_create_fields`) rather than kept in the plan (see "The
//!   engine's public surface" for who builds them when).
//! - `differ.rs`: computes a plan. Fields under `lifecycle.ignoreChanges`
//!   are skipped like secrets are (no change, no drift, never cleared);
//!   `body.rs::drop_ignored` leaves them out of an update's body (a nested one
//!   gets the account's value, read by one GET, as the service replaces a
//!   top-level field whole; ignored `tags` keep the ownership tag) and
//!   verification after apply skips them. Each field change says whether it is
//!   drift (the files still say what was last applied, by the state's field
//!   fingerprints) or a file change; secrets compared by salted fingerprint; a petgraph DAG
//!   (creates after what they reference, deletes after what stops referencing
//!   them, creates after deletes that free a unique value), built in
//!   `differ/order.rs` in linear time (the deleted objects, their unique
//!   values and which objects reference what are gathered once, not searched
//!   per change); `differ/exclude.rs`: `--exclude` patterns
//!   (`monform_model::AddressPattern`: an address where only `*` is special,
//!   so `checks.api[*]` means the items of a `forEach`) drop the matching
//!   changes and, transitively, those of what references them (a destroy:
//!   of what they reference), before ordering; `Plan::excluded` says why
//!   for each that would have done something; changes listed in a stable dependency order, the plan's
//!   own order, which the executor walks. Resources are compared in parallel.
//! - `forms.rs`: the forms both the differ and the executor read: the desired
//!   JSON without monform-only fields (`managed`), field lookups, field and
//!   secret fingerprints, and each actual object read through an `ActualView`
//!   (the API body plus a small overlay of renamed references,
//!   `forms/actual.rs`) rather than copied into the files' form.
//! - `execute.rs`: walks the plan's order, each change once its
//!   prerequisites in the DAG are done, `--parallelism` at a time; each change
//!   completed is queued to the state's `Recorder` (its own thread: the
//!   executor never waits for a write); an ambiguous create failure is followed by a lookup by
//!   identity and adoption (never of the object a replace is replacing); a
//!   replace creates the new object first and deletes the old one after every
//!   other change, when the old one references nothing and the two hold no
//!   unique value in common (else delete, then create); a failure skips its
//!   dependents only; a stop flag
//!   (SIGINT) lets changes in flight finish. Moved objects that need no other
//!   change get a tags-only update (the tag move is not a plan change, so
//!   `state mv` then `plan` shows no changes; `execute/housekeeping.rs` with
//!   the recording of no-op adoptions and declared moves).
//!   `execute/record.rs`: what a completed change leaves: its state entry
//!   (or its removal), the fields the service did not keep, its remote id
//!   for the changes that refer to it; a create's answered id that the
//!   state holds for another address of its kind is refused, that change
//!   failed and the state unchanged (`execute/held.rs`: the state's ids
//!   counted, kept as it changes).
//! - `declared.rs`: the files' `moved` entries as state moves (the same
//!   mechanism as `state mv`: planning fetches and compares against a copy of
//!   the state with the entries moved, so the object is claimed at its new
//!   address and `Actual::moved` / the tags-only update rewrite its tag; apply
//!   records the moves as its first state write), a tag naming a moved address
//!   claimed at the new one, and the `import` entries' targets and problems.
//!   `Moves::destination` expands an entry naming a whole `forEach`
//!   definition into its items (`a[k] -> b[k]`, when `b` is a `forEach` of the
//!   files); `state_moves` also returns the idle entries (nothing at `from`
//!   or `to` in the state), which `ops::plan` hands on as `Planned::idle_moves`
//!   for the CLI to warn about.
//!   The plan marks moved changes (`Change::from`; alone, `Action::Move`),
//!   imports (`Action::Import`: an update of an object in `others`, which
//!   writes the tag) and forgets (`Action::Forget`: the tag removed, the state
//!   entry dropped, so the ownership record no longer lists it).
//! - `verify.rs`: verified applies: after an apply, the objects of the
//!   changes done are listed back (one `list_each` per kind changed, each
//!   object compared as its page arrives and dropped, or one GET each when
//!   that is fewer requests) and compared with the files by the plan's comparison (`differences`, secrets
//!   skipped); a create or update that does not hold, a delete whose object
//!   is still listed, fails the apply naming address and field; a field the
//!   service holds in its own form is returned as a `NormalForm`.
//! - `normal.rs`: the service's normal forms: which differences are rewrites
//!   (case, order), their record in a state entry (`ResourceState::normal`,
//!   fingerprints only), the plan's check for one, and `save` (one durable
//!   write after verification).
//! - `renames.rs`: rename suggestions (`Plan::suggested_moves`): a delete
//!   and a create of one kind and variant whose managed fields are equal but
//!   for one (the rule below), paired fewest differences first, each once.
//! - `foreign.rs`: the account's objects a change's list of references
//!   names that are no object of the project (`Plan::foreign`, issue 27 item
//!   8): for each such remote id, only those, its label (a name, or an alert
//!   channel's type and address or channel, never a URL: webhook URLs carry
//!   tokens) and whose it is (the project whose ownership record or tag has
//!   it, or nobody); the CLI's list diff names them, and saved plans keep them
//!   for `monform show`.
//! - `discards.rs`: what a plan's deletes of checks discard
//!   (`Plan::discarded`, filled in by the CLI's `prepare` after planning):
//!   one `GET /v1/reporting?quickRange=last30Days` for all deleted checks,
//!   each matched by remote id, with an estimated count (below); a failed
//!   report is `Discarded::Unknown`, and the plan goes on.
//! - `state.rs` (`State`, with `Target`: the API URL and account last applied
//!   to, which `ops::Planned::other_target` compares with a plan's to warn
//!   before recreating the state's objects elsewhere; `Delta`: what one change did to it, `StateBackend`
//!   and its `StateWriter` for an apply's changes), `state/recorder.rs` (the
//!   writer thread: group commit, whatever queued during the last write goes
//!   out as the next one), `state/local.rs` (`LocalState`: the snapshot
//!   `state.json` (`state.<env>.json` for an environment, with its own journal and
//!   `lock.<env>`), written whole with temp file, fsync, rename, and the
//!   journal `state.journal` beside it: one checksummed line per change,
//!   appended and fsynced per batch, replayed on read, folded into the
//!   snapshot at the end of an apply and by the next apply after a crash;
//!   `state/journal.rs` its records, a torn last one ignored),
//!   `state/format.rs` (the lean snapshot, version 2: compact, one entry a
//!   line, the entries' shared field-name lists written once, streamed to
//!   the file entry by entry; version 1 read and upgraded),
//!   `state/postgres.rs` (`PostgresState`: tables created by a versioned
//!   migration on first use (`state/postgres/migrations.rs`; version 2 moved each project's entries out of
//!   its document into rows); `state/postgres/rows.rs`: a header row per
//!   project (serial, salt) and a row per entry; a write (an apply's batch
//!   through `state/postgres/writer.rs`,
//!   or a whole `save` reduced to what differs) is one transaction that moves
//!   the header's serial on only from the one it started at, writes the rows
//!   it changed and adds a history row (what it changed kept for the last
//!   100 serials); the apply lock is `pg_try_advisory_lock(ns, hashtext(project))`
//!   on a connection of its own held by the guard, its holder in `monform_locks`;
//!   URLs shown with the password as `***`: `state/postgres/url.rs`);
//!   both backends refuse a `save` older than the stored state (a lower
//!   serial; PostgreSQL also an equal one) and pass one conformance suite,
//!   `state/conformance.rs` (as Terraform's `statemgr.TestFull`: round trip,
//!   an older serial refused, history or its absence, lock exclusivity),
//!   `lock.rs` (`LockGuard`, the same for both backends; `.monform/lock` naming
//!   its holder; stale locks taken over),
//!   `ownership.rs` (who owns objects of kinds without tags: the projects'
//!   ownership records in the service, then use by one project's tagged
//!   objects; writing the project's record),
//!   `export.rs` (the files' form of remote objects for `export` and
//!   `import`: logical ids from names, references through `from_wire`, only
//!   the file schema's properties (`export/prune.rs`), long scripts as files, secrets as
//!   `${env:NAME}`; the state an adoption records),
//!   `saved.rs` (saved plans and their staleness check), `safety.rs`
//!   (`preventDestroy`, mass-delete threshold), `body.rs` (the API body of a
//!   desired resource, with the ownership tag).
//!
//!   `ops/access_ops.rs` (`choose_api`): where the API key may go, from
//!   explicit inputs (the flag, `MONFORM_API_URL`, the project's `[api] url`
//!   and its line, the user's monform folder); `ops/trust_ops.rs`: the user's
//!   `config.toml` and `trusted.toml` (`monform trust`), written atomically.
//!   `ops/local_env.rs` (`unpassed_env`): `test --local` runs a check only
//!   when every `${env:NAME}` its definition carries (its fields, its group's
//!   and snippets' parts that reach it, the project's variables; the loader's
//!   `DesiredResource::env_reads`) is in `[project] pass-env` or
//!   `public-env`; otherwise the check is an error result naming each field
//!   and variable, and nothing of it is run or sent.
//!
//! **Architecture invariant:** no terminal I/O; the CLI renders plans and
//! events. `StateBackend` stays synchronous (callers and tests use it from
//! sync and async code alike): the PostgreSQL backend runs sqlx on a one-thread
//! runtime of its own and, called from async code, waits on a scoped thread,
//! since a runtime cannot block inside another. It uses `sqlx-core` and
//! `sqlx-postgres` directly: the `sqlx` facade's optional SQLite driver pins a
//! `libsqlite3-sys` that conflicts with the emulator's rusqlite.

mod actual;
mod body;
mod budget;
mod compare;
#[cfg(any(test, feature = "test-support"))]
pub mod conformance;
mod creates;
mod declared;
mod differ;
mod discards;
pub mod durable;
mod execute;
mod export;
mod fetch;
mod foreign;
mod forms;
mod identity;
mod lock;
mod normal;
pub mod ops;
mod ownership;
mod plan;
mod refresh;
mod renames;
mod safety;
mod saved;
pub mod stages;
mod state;
mod verify;

// What the operations take and return, for front ends to read and render.
pub use actual::Actual;
pub use budget::{RunBudget, Runs, masked_effective_check};
pub use discards::{Discard, Discarded, RANGE as DISCARD_RANGE};
pub use execute::{ApplyError, ApplyOptions, Event, Report};
pub use lock::{Holder, LockError, LockGuard};
pub use normal::NormalForm;
pub use plan::{
    Action, Change, Conflict, Excluded, ExcludedBy, FieldChange, Foreign, ForeignObjects, Plan, Reason, Refreshed,
    Summary, Whose,
};
pub use refresh::{Refresh, Sweep, SweepRead};
pub use renames::SuggestedMove;
pub use safety::{Overwrite, SafetyError};
pub use saved::{OtherEnvironment, SavedPlan, StalePlan};
pub use state::postgres::Actor;
pub use state::{CallRecord, HistoryEntry, LocalState, PostgresState, State, StateBackend, StateError, Target};
// What a state backend written in another crate implements and is handed.
pub use state::{Delta, ResourceState, StateWriter};
pub use verify::Verification;
