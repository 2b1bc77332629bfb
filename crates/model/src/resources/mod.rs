//! One Rust type per kind the project manages. Field names, types, defaults
//! and limits live here and nowhere else: the schema, the loader's
//! validation and the wire format are derived from these types.

#[macro_use]
pub mod common;
pub mod alert_channel;
pub mod check;
pub mod dashboard;
pub mod group;
pub mod maintenance_window;
pub mod private_location;
pub mod slo;
pub mod snippet;
pub mod status_page;
pub mod stored;
pub mod variable;

pub use alert_channel::{AlertChannel, AlertChannelType};
pub use check::{Check, CheckType};
pub use common::{Location, RuntimeId};
pub use dashboard::Dashboard;
pub use group::Group;
pub use maintenance_window::MaintenanceWindow;
pub use private_location::PrivateLocation;
pub use slo::Slo;
pub use snippet::Snippet;
pub use status_page::{StatusPage, StatusPageService};
pub use variable::Variable;
