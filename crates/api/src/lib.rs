//! The typed async client of the monitoring API. It is the only crate
//! (with the emulator) that knows HTTP.
//!
//! Every request carries the bearer key and the account header, waits for
//! budget at the rate limit the server states (`pace`), has a timeout, and is retried with jittered
//! exponential backoff on 429, 5xx, 408, dropped connections and timeouts
//! (honouring `Retry-After`). A create (POST) is retried only when it
//! certainly had no effect; otherwise the caller gets the error and must
//! look the object up before trying again (no duplicates). When the
//! service stops answering altogether, the client stops retrying (`breaker`).

pub mod breaker;
mod client;
mod destination;
mod error;
mod pace;
mod remote;
mod resources;
mod sessions;

pub use client::{
    Client, ClientConfig, DEFAULT_MAX_IN_FLIGHT, DEFAULT_RATE_LIMIT, Reply, Retry, RetryObserver, Secret, SendOptions,
    describe as describe_transport,
};
pub use destination::{Unfit, check_destination};
pub use error::{Error, StatusError};
pub use pace::{PaceStats, Wait, WaitObserver};
pub use remote::Remote;
/// The HTTP method of [`Client::send`].
pub use reqwest::Method;
pub use sessions::{
    MAX_WAIT_SECONDS, REPORT_RANGES, ReportEntry, RunStatus, TestResult, TestSession, TestSessionRequest,
};
