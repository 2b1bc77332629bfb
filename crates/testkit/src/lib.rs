//! What the test harnesses of the workspace share, so that each does not
//! keep its own copy (dev-only; never a dependency of a shipped crate):
//!
//! - [`Emulator`]: the real emulator on a loopback port, on a runtime of
//!   its own, for blocking tests; [`start_emulator`] for async ones,
//!   [`client_for`] a client of it, [`served_during`] the requests it
//!   served while something ran;
//! - [`targets`]: loopback HTTP and TCP targets that record what they got;
//! - [`Seed`] and [`kill_randomly`]: the random kill loop, replayable with
//!   `MONFORM_TEST_SEED=<n>` (the seed is printed when a test fails);
//! - [`redact_ids`]: remote ids and UUIDs out of output, for snapshots;
//! - [`postgres_url`]: the test database, which `MONFORM_REQUIRE_POSTGRES=1`
//!   makes mandatory;
//! - [`skipped`]: a test that cannot run here says so where `cargo test`
//!   shows it (uncaptured);
//! - [`projects`]: projects drawn from the resource model's schema, with
//!   one random edit and what a plan must show for it (the
//!   zero-spurious-diff property of issue 45);
//! - [`hand_made_checks`]: an account's checks as made by hand in the
//!   web UI, in shapes (issue 49: what folding must find again);
//! - [`circles`]: import circles between the modules of a crate, and the
//!   test that holds every crate of the workspace to none.
//!
//! [`start_emulator_with`] starts the emulator as a given configuration
//! says, in the caller's runtime: the emulator's own async tests
//! (`TestServer`) and the API client's start theirs with it.

pub mod circles;
mod emulator;
mod hand_made;
mod postgres;
pub mod projects;
mod redact;
mod seed;
mod skip;
pub mod targets;

pub use emulator::{Emulator, client_for, served, served_during, start_emulator, start_emulator_with};
pub use hand_made::hand_made_checks;
pub use postgres::postgres_url;
pub use redact::redact_ids;
pub use seed::{Lcg, Seed, kill_randomly};
pub use skip::skipped;
