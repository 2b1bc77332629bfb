//! The resource model of monform: every kind, field, type, default and limit
//! of the monitoring service, and the rules that validate them.
//!
//! **Architecture invariant:** this crate does no I/O. The loader, the
//! schema, the differ, the client and the emulator all read field facts from
//! here; none of them lists fields of its own.

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
