//! Team rules as code (issue 32): Rego policies (v1, conftest's
//! conventions) over a project's files and, for `plan` and `apply`, its
//! plan, evaluated in-process by regorus.
//!
//! - [`load`] reads `policies/**/*.rego` (or `[policy] paths`), inside the
//!   project root; a policy that does not parse is a diagnostic at its own
//!   file:line, never a panic.
//! - [`input::files`] builds `input.resources`, `input.project` and
//!   `input.environment` (secrets masked by `monform_model::sensitive`, the
//!   one rule the plan's outputs use); the engine adds `input.plan`.
//!   [`input::Places`] (the project's names and each resource's line) is
//!   taken when the policies load, so the engine builds the input
//!   ([`input::files_at`]) only when it evaluates: a plan after freeing
//!   the account's objects (issue 48).
//! - [`Policies::evaluate`] runs every `deny`, `warn` and `violation` rule
//!   of packages under `monform.` and returns [`Finding`]s; [`diagnostics`]
//!   puts them at the resource's (or field's) file:line.
//! - [`Policies::test`] runs `test_*` rules as `opa test` does.
//! - Every rule's evaluation is bounded by `[policy] max-instructions`
//!   (regorus's VM) and `timeout` (VM and interpreter): a policy file
//!   comes with a pull request ([`LimitHit`], issue 43).
//!
//! **Architecture invariant:** no terminal and no network; what an apply
//! may do on a finding is the engine's rule (`ops`), not this crate's.
//!
//! # Code map
//!
//! Rego policies over the files and the plan (issue 32). `discover.rs` finds
//! `policies/**/*.rego` or `[policy] paths` (resolved inside the project root,
//! as every project path); `evaluate.rs` loads each into regorus (Rego v1; a
//! file that does not parse, or a package outside `monform.`, is a diagnostic
//! at its line and is left out; the others still run) and evaluates `deny`,
//! `violation` and `warn` per package into `Finding`s (a string, or `{msg,
//! address, field}`), each rule on regorus's compiled VM (RVM) when it
//! compiles to it, else on the interpreter (the VM's object literals kept
//! in regorus's compact storage by the patch `vendor/regorus` carries: a
//! rule's 100,000 results all live at once), the rules spread over the cores
//! (each thread takes the next rule when done; results back in rule order; a
//! result that is a string or a flat object of strings read straight from
//! regorus's value, the others through JSON; a rule's set of results taken
//! apart as its findings are made, so the two are not held at once);
//! `input.rs` builds `input.resources`/`project`/`environment` as an `Input`
//! (regorus's values, converted once per resource in parallel, each object
//! made in regorus's compact storage at once (`Value::from_entries`, from
//! `vendor/regorus`'s patch, which also speeds up its key lookups), object keys
//! and short texts (up to 32 bytes, the first 4,096 distinct) shared, and
//! each distinct array or object inside a resource's fields made once (a
//! hash of its members, the first 65,536; none holding a fraction); adding
//! `plan` copies only the top level), every value masked by
//! `monform_model::sensitive::into_masked` (a check after its group,
//! `monform_model::effective::into_effective`, each group masked once; both
//! take the resource's JSON by value, so nothing is copied); `locate.rs` turns
//! findings into diagnostics at the resource's key, or the field's key inside
//! the resource's entry (text up to the next resource of the file; each file
//! parsed once for all its findings and dropped before the next; for a
//! terminal, which shows a rule's first few findings and counts the rest,
//! only those few: `diagnostics_placing`), or the policy's rule for a
//! resource not in the files; `testing.rs` runs `test_*`
//! rules; `schema.rs` is the input's JSON Schema (checked against a real input
//! in a test). Rule names become diagnostic codes (`&'static str`): each
//! distinct name is leaked once per process. `examples/policy_phase.rs` is the
//! bench's `policies` phase alone (a generated project's input and
//! evaluation, wall and CPU time, and a digest of the findings in order, so
//! two builds are shown to give the same findings), which builds without the
//! emulator and runs with mimalloc, the binary's allocator.
//!
//! `limits.rs` and `run.rs`: each rule evaluated within `[policy]
//! max-instructions` (regorus's VM) and `timeout` (VM and interpreter); a
//! rule stopped is an error at the loop it was in. `costs.rs`: each rule's
//! instruction count, for `examples/policy_phase.rs --costs`.
//!
//! **Architecture Invariant:** what an apply may do on a finding is the
//! engine's: `ops::policy_ops` adds `input.plan` (`plan_input`),
//! `check_policies`, and `Ready::check_policies`, which turns a finding that
//! blocks (a `deny`/`violation` no `--policy-override` names, or a policy that
//! cannot run) into `Refusal::Policy`, so `execute` refuses before writing
//! anything. `apply`, `destroy` (whose input has no `resources`: none of them
//! runs after it, so only rules over `input.plan` judge it) and each
//! `reconcile` interval's apply (policies from `Host::policies`, no override,
//! findings in its log and a `policy` event) all go through it.

mod costs;
mod discover;
mod evaluate;
pub mod input;
mod limits;
mod locate;
mod run;
pub mod schema;
mod testing;

pub use costs::RuleCost;
pub use discover::{DEFAULT_DIR, policy_files};
pub use evaluate::{EvalError, Finding, Level, Policies, load};
pub use limits::LimitHit;
pub use locate::{diagnostics, diagnostics_placing};
pub use testing::{TestCase, TestOutcome, TestReport};

/// The root every policy package must sit under (`package monform.x`).
pub const PACKAGE_ROOT: &str = "monform";
