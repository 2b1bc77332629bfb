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
//!
//! # Code map
//!
//! The typed async client (reqwest + rustls): bearer key and account header,
//! pacing at the budget the server states (`pace.rs`: `X-RateLimit-*` on every
//! response, `Retry-After` on a 429; 600/60 s until it states one; a wait is
//! reported to an observer the CLI shows on the progress line; a client given
//! a share of the budget, `Client::set_share`, spreads its requests at that
//! share, never more than it a window, and yields while the key's other
//! clients leave less than it), a timeout per request,
//! at most `ClientConfig::max_in_flight` requests in flight (64; the rest wait
//! for a slot before their timeout starts, and the pool keeps no more idle
//! connections: the read-back of a 1% apply at 100,000 checks sent 1,000 GETs
//! at once, the emulator serves 512 connections, and those past it waited in
//! its backlog until they timed out and the read-back failed),
//! jittered exponential backoff (backon) on 429, 408, 5xx and transport errors
//! honouring `Retry-After`, errors naming the request, status, message and
//! attributes. `list_all` reads every page (limit 100, pages fetched 4 at a
//! time per kind) or cursor; `list_each` hands each page to its caller as it
//! arrives, for one that looks at each object and drops it (the read-back
//! after an apply). A listed object (`Remote`, `remote.rs`) keeps its
//! body as compact JSON text and where its top-level fields are in it
//! (`monform_model::pick::Fields`, found by one scan when it is listed, a
//! byte or two a field), and parses it when it is read: `body()` whole,
//! `field(name)`, `fields(names)` or `field_texts(names)` sliced without
//! scanning again (slug, a check's schedule for the run budget, the fields
//! that can hold a reference for ownership, the differ's view of each
//! field); its id and its ownership tag (`owner()`) are read in that scan. `Client::prefetch` starts listings in the
//! background, each taken once by the next `list_all` of its kind (a kind of
//! more than 200 pages, 20,000 objects, is read whole; a smaller one only its
//! first page, since holding it while the files load only raises the peak
//! memory: a 10,000-check plan's by a sixth): `monform
//! plan` (`--refresh=all`) connects from monform.toml alone
//! (`config::load_project`) and lists the account while the files load
//! (`ops::prefetch`); its retry lines are held until the load's output is
//! out. `apply` does not: it plans under its lock, never from a listing read
//! before the lock was taken. Parsed into maps a
//! check takes ten times its text, and a large account's bodies were most of a
//! plan's memory (1.5 GB at 100,000 checks). It always sends
//! `autoAssignAlerts=false`. `breaker.rs`: the circuit breaker. After 8
//! requests in a row that do not reach the service (refused, timed out) the
//! client stops retrying and fails requests at once, letting one probe through
//! every 5 s; any answer closes it. Requests made while the probe is in
//! flight wait for its outcome rather than fail at once (half-open): a fetch
//! drops its other lists on the first error, so a probe whose siblings failed
//! at once was always cancelled, and `monform reconcile` never saw the
//! service come back. `Client::unreachable` tells the executor to
//! start nothing new; `Client::stop_retrying` (Ctrl-C) ends every retry,
//! also the pause before one (`Breaker::pause`): a service down behind its
//! load balancer answers 503, which keeps the breaker closed while pauses
//! grow to 6-12 s, and Ctrl-C must not wait them out.
//! `Client::observe_retries` reports each retry (request, attempt, delay,
//! error) to an observer: the library prints nothing; the CLI's `connect.rs`
//! says it on standard error once per attempt number, with the URL and its
//! source (`--api-url`, `MONFORM_API_URL`, `monform.toml:LINE`), and
//! `settle` adds a hint naming them under the error.
//!
//! **Architecture invariant:** a create (POST) is retried only when the
//! failure proves it had no effect (429, 4xx, connection refused); otherwise
//! the caller must look the object up before trying again.

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
pub use pace::{PaceStats, Share, Wait, WaitObserver};
pub use remote::Remote;
/// The HTTP method of [`Client::send`].
pub use reqwest::Method;
pub use sessions::{
    MAX_WAIT_SECONDS, REPORT_RANGES, ReportEntry, RunStatus, TestResult, TestSession, TestSessionRequest,
};
