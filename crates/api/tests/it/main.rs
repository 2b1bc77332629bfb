//! The API client's integration tests: against the in-process emulator
//! and against scripted servers on loopback. One test binary (as the
//! root's and the emulator's).

mod client;
mod scripted;
mod sessions;
