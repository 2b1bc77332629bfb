//! The engine: fetcher (actual state), differ and plan, executor, and the
//! state backends.
//!
//! **Architecture invariant:** no terminal I/O. The engine returns plans
//! and events; the CLI renders them.

pub mod actual;
pub mod body;
pub mod budget;
pub mod compare;
pub mod declared;
pub mod differ;
pub mod discards;
pub mod durable;
pub mod execute;
pub mod export;
pub mod fetch;
pub mod forms;
pub mod identity;
pub mod lock;
pub mod normal;
pub mod ops;
pub mod ownership;
pub mod plan;
pub mod refresh;
pub mod renames;
pub mod safety;
pub mod saved;
pub mod state;
pub mod verify;

pub use actual::Actual;
pub use budget::{RunBudget, Runs, effective_check, run_budget};
pub use differ::{PlanOptions, plan};
pub use execute::{ApplyInput, ApplyOptions, Event, Report, apply};
pub use fetch::fetch;
pub use plan::{Action, Change, Excluded, ExcludedBy, FieldChange, Plan, Reason, Summary};
pub use refresh::Refresh;
pub use renames::SuggestedMove;
pub use saved::{SavedPlan, StalePlan};
pub use state::{HistoryEntry, LocalState, PostgresState, State, StateBackend, StateError};
pub use verify::{Verification, verify};
