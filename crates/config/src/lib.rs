//! The loader: reads a monform project (monform.toml and every YAML or TOML
//! resource file) into the desired state, with a span on every value and a
//! diagnostic for every problem.
//!
//! **Architecture invariant:** no network. Environment variables are read
//! only through the lookup the caller passes in.

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
pub mod source;
pub mod tree;

pub use declare::{Declarations, Import, Moved, Removed};
pub use desired::{Desired, DesiredResource, Reference, Target};
pub use diagnostic::{Diagnostic, Report, Severity};
pub use discover::included;
pub use expand::EnvLookup;
pub use load::{
    CACHE_DIR, CACHE_FORMAT, CacheStats, Loaded, Opening, Unsaved, load, load_environment, load_project, load_unsaved,
    load_with_cache, open,
};
pub use project::{Environment, Lint, LintLevel, Project, Reconcile, StateBackend};

pub(crate) use monform_model::suggest;
