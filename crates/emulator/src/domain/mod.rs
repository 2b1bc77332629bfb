//! The service's domain: what the monitoring service does, apart from how
//! requests reach it. Sessions and their runs, results and error groups
//! (`sessions/`), alerts and their state machine, notifications,
//! maintenance windows, retention and roll-ups, analytics and reports,
//! heartbeat pings, the scheduler, and private-location agents.
//!
//! **Invariant:** no HTTP types: nothing here imports axum (no extractors,
//! responses or routers); `routes/` parses requests into the arguments of
//! these functions and shapes what they return. Errors are `ApiError`
//! values built with its constructors (the status is part of the
//! service's contract, e.g. 404 for a missing check). Nothing here
//! imports `routes`.

pub mod agents;
pub mod alerts;
pub mod analytics;
pub mod checks;
pub mod compact;
pub mod heartbeats;
pub mod incidents;
pub mod maintenance;
pub mod notify;
pub mod objects;
pub mod outages;
pub mod pages;
pub mod retention;
pub mod scheduler;
pub mod sessions;
pub mod simulate;
pub mod stats;
