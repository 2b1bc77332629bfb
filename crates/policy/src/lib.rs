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
pub use locate::diagnostics;
pub use testing::{TestCase, TestOutcome, TestReport};

/// The root every policy package must sit under (`package monform.x`).
pub const PACKAGE_ROOT: &str = "monform";
