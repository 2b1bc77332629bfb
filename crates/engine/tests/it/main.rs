//! The engine's integration tests against the in-process emulator. One
//! test binary (as the root's and the emulator's), so the crate and its
//! dependencies are linked once.

mod conformance;
mod converge;
mod open;
mod request_count;
mod zero_diff;
