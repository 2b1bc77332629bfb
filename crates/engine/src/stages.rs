//! The pipeline's stages one at a time, past the operations' rules (no
//! lock, no declared moves, no refusals): for measuring or testing one
//! stage alone (the bench's offline diff, the engine's request-count
//! test). A command runs [`crate::ops`], never these.

pub use crate::body::wire_body;
pub use crate::differ::{PlanOptions, plan};
pub use crate::fetch::fetch;
pub use crate::identity::ownership_tag;
