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
    Action, Change, Conflict, Excluded, ExcludedBy, FieldChange, Foreign, ForeignObjects, Plan, Reason, Refreshed, Summary, Whose,
};
pub use refresh::Refresh;
pub use renames::SuggestedMove;
pub use safety::SafetyError;
pub use saved::{SavedPlan, StalePlan};
pub use state::postgres::Actor;
pub use state::{HistoryEntry, LocalState, PostgresState, State, StateBackend, StateError, Target};
// What a state backend written in another crate implements and is handed.
pub use state::{Delta, ResourceState, StateWriter};
pub use verify::Verification;
