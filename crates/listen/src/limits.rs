//! What clients may take: the timeouts and the connection cap, and what a
//! new connection meets at the cap.

use std::time::Duration;

/// How long clients may take, and how many may be connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub when_full: WhenFull,
}

/// What a new connection meets when [`Limits::max_connections`] are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenFull {
    /// Stop accepting until a connection closes (the timeouts free slots):
    /// the new one waits in the kernel's backlog. Right for clients that
    /// keep connections and can wait (the emulator's API clients); a flood
    /// of idle connections delays a real request by the header timeout
    /// per `max_connections` of them ahead of it.
    #[default]
    Wait,
    /// Accept it, and close at once the connection that has waited longest
    /// for a request (its first, or its next after a response); one with a
    /// request in flight is never chosen, and when every connection has
    /// one, wait as [`WhenFull::Wait`] does. Right for a small endpoint
    /// probed by short requests (`/healthz`, a scrape): a probe's request
    /// arrives with its connection, so it is served before a flood of idle
    /// connections can push it out, however many there are. The process
    /// holds at most `max_connections` + 1 descriptors for it.
    CloseOldestIdle,
}

impl Default for Limits {
    /// 10 s for a head (a client on a slow link sends one in well under a
    /// second), 30 s for a body (1 MiB at most, the API's limit, at 35 KB/s),
    /// 60 s idle (under the 90 s most client pools keep connections, so a
    /// client rarely reuses one the server is closing), 512 connections
    /// (well under the usual 1,024 descriptors a process may open, leaving
    /// room for SQLite and outgoing probes).
    fn default() -> Limits {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
            when_full: WhenFull::Wait,
        }
    }
}
