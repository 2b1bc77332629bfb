//! Fault injection and added latency, for testing clients against an
//! unreliable service (`Config::fault_rate`, `fault_seed`, `latency`).
//!
//! Request number `n` (counted from 0 over the API requests this server has
//! received; `/-/metrics` and `/openapi.json` are neither
//! counted nor faulted) fails when the `n`-th draw of a splitmix64 stream
//! seeded with `fault_seed` falls below `fault_rate`; a second draw picks the
//! mode. Requests sent one after another therefore meet the same faults for
//! the same seed. Modes:
//!
//! - before doing anything: 500, 502 or 503 with the API's error body, or the
//!   connection dropped;
//! - writes only (POST, PUT, PATCH, DELETE): the request is handled (when it
//!   succeeds, its write is committed) and its response lost, whatever its
//!   status: the connection dropped, or a 503.
//!
//! Lost writes (`Config::lost_write_rate`, off by default) are separate: a
//! write drawn (on a stream of its own, so the modes above keep their
//! sequence) is handled and answered as if stored, but its transaction is
//! rolled back ([`LOST_WRITE`], read by `Store::transaction`). A client
//! sees a 2xx with the body it expects; only reading back shows the loss.
//!
//! `Config::latency` is added to every API request, faulted or not.
//!
//! A test can also pick the fault a request meets ([`Faults::pick`]): the
//! next requests of a method whose path starts with a prefix meet a given
//! mode or a lost write, whatever the draws say. A failure the random run
//! found then has a test of its own that does not hang on a seed.
//!
//! A dropped connection is a response whose body fails on its first poll,
//! before hyper flushes the head: hyper then closes the connection without
//! writing a byte, and the client sees a transport error (reqwest: "connection
//! closed before message completed"), never a status. The response also
//! declares a `Content-Length` it never sends, so that a client still gets
//! a truncated body rather than a whole one if the head ever went out.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// One way a request fails on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// 500 before doing anything.
    Error500,
    /// 502 before doing anything.
    Error502,
    /// 503 before doing anything.
    Error503,
    /// Connection dropped before doing anything.
    Dropped,
    /// Handled (committed), then the connection dropped.
    DroppedAfterCommit,
    /// Handled (committed), then a 503 instead of the response.
    Error503AfterCommit,
}

impl Fault {
    pub const ALL: [Fault; 6] = [
        Fault::Error500,
        Fault::Error502,
        Fault::Error503,
        Fault::Dropped,
        Fault::DroppedAfterCommit,
        Fault::Error503AfterCommit,
    ];
    /// The modes open to reads: those that happen before doing anything.
    const BEFORE: [Fault; 4] = [Fault::Error500, Fault::Error502, Fault::Error503, Fault::Dropped];

    /// Its label in `/-/metrics` and the log.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Error500 => "500",
            Fault::Error502 => "502",
            Fault::Error503 => "503",
            Fault::Dropped => "dropped",
            Fault::DroppedAfterCommit => "dropped_after_commit",
            Fault::Error503AfterCommit => "503_after_commit",
        }
    }

    /// Whether the request is handled before the fault.
    pub fn after_commit(self) -> bool {
        matches!(self, Fault::DroppedAfterCommit | Fault::Error503AfterCommit)
    }

    /// Whether the connection is dropped (no status reaches the client).
    pub fn drops_connection(self) -> bool {
        matches!(self, Fault::Dropped | Fault::DroppedAfterCommit)
    }

    /// The status label `/-/metrics` counts the request under.
    pub fn status_label(self) -> &'static str {
        match self {
            Fault::Error500 => "500",
            Fault::Error502 => "502",
            Fault::Error503 | Fault::Error503AfterCommit => "503",
            Fault::Dropped | Fault::DroppedAfterCommit => "dropped",
        }
    }

    /// The response that carries the fault (marked with [`Injected`]).
    pub fn response(self) -> Response {
        let mut response = match self {
            Fault::Error500 => injected(StatusCode::INTERNAL_SERVER_ERROR),
            Fault::Error502 => injected(StatusCode::BAD_GATEWAY),
            Fault::Error503 | Fault::Error503AfterCommit => injected(StatusCode::SERVICE_UNAVAILABLE),
            Fault::Dropped | Fault::DroppedAfterCommit => dropped_connection(),
        };
        response.extensions_mut().insert(Injected(self));
        response
    }
}

/// Marks a response as an injected fault, for `observe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected(pub Fault);

fn injected(status: StatusCode) -> Response {
    ApiError::new(status, "injected fault (fault rate); retry the request").into_response()
}

/// A response that makes hyper close the connection without a byte sent.
pub fn dropped_connection() -> Response {
    let stream = futures_util::stream::once(async {
        Err::<bytes::Bytes, std::io::Error>(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "injected fault: connection dropped",
        ))
    });
    let mut response = Response::new(Body::from_stream(stream));
    response
        .headers_mut()
        .insert(axum::http::header::CONTENT_LENGTH, HeaderValue::from_static("64"));
    response
}

tokio::task_local! {
    /// Set for the handling of a write whose changes are to be lost.
    pub static LOST_WRITE: bool;
}

/// Whether the current request's writes are to be lost.
pub fn losing_writes() -> bool {
    LOST_WRITE.try_with(|lost| *lost).unwrap_or(false)
}

/// What a picked request meets ([`Faults::pick`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picked {
    /// One of the modes the random draw has.
    Fault(Fault),
    /// Handled and answered as if stored, its transaction rolled back
    /// (as `Config::lost_write_rate` does).
    LostWrite,
}

/// Requests picked to meet a fault: `times` more of `method` whose path
/// starts with `path`.
#[derive(Debug)]
struct Pick {
    method: String,
    path: String,
    what: Picked,
    times: u32,
}

/// The fault configuration and the request counter.
pub struct Faults {
    rate: f64,
    seed: u64,
    pub latency: Duration,
    counter: AtomicU64,
    lost_write_rate: f64,
    writes: AtomicU64,
    picks: Mutex<Vec<Pick>>,
}

impl Faults {
    /// `rate` (0.0 to 1.0; NaN is 0) of requests fail, drawn from `seed`;
    /// `latency` is added to every request.
    pub fn new(rate: f64, seed: u64, latency: Duration) -> Faults {
        Faults {
            rate: if rate.is_nan() { 0.0 } else { rate.clamp(0.0, 1.0) },
            seed,
            latency,
            counter: AtomicU64::new(0),
            lost_write_rate: 0.0,
            writes: AtomicU64::new(0),
            picks: Mutex::new(Vec::new()),
        }
    }

    /// The next `times` requests of `method` (`"DELETE"`) whose path starts
    /// with `path` (`/v1/private-locations/`) meet `what`, before any
    /// random draw; a later pick of the same method and path comes after
    /// it.
    pub fn pick(&self, method: &str, path: &str, what: Picked, times: u32) {
        self.picks.lock().unwrap_or_else(|p| p.into_inner()).push(Pick {
            method: method.to_ascii_uppercase(),
            path: path.to_owned(),
            what,
            times,
        });
    }

    /// Ends every pick: requests meet only the random draws again.
    pub fn unpick(&self) {
        self.picks.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// What a picked request meets, if it was picked (counts it).
    pub fn picked(&self, method: &Method, path: &str) -> Option<Picked> {
        let mut picks = self.picks.lock().unwrap_or_else(|p| p.into_inner());
        let index = picks
            .iter()
            .position(|p| p.times > 0 && p.method == method.as_str() && path.starts_with(&p.path))?;
        picks[index].times -= 1;
        Some(picks[index].what)
    }

    /// `rate` (0.0 to 1.0; NaN is 0) of writes are acknowledged, not stored.
    pub fn with_lost_writes(mut self, rate: f64) -> Faults {
        self.lost_write_rate = if rate.is_nan() { 0.0 } else { rate.clamp(0.0, 1.0) };
        self
    }

    /// Whether the next write is lost (counts the write).
    pub fn lose_next_write(&self) -> bool {
        if self.lost_write_rate <= 0.0 {
            return false;
        }
        let n = self.writes.fetch_add(1, Ordering::Relaxed);
        // Odd indices of a stream seeded apart from the request faults'.
        let draw = splitmix64(self.seed ^ LOST_WRITE_SEED, n);
        ((draw >> 11) as f64 / (1u64 << 53) as f64) < self.lost_write_rate
    }

    /// The fault of the next request, if any (counts the request).
    pub fn next(&self, write: bool) -> Option<Fault> {
        if self.rate <= 0.0 {
            return None;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        outcome(self.seed, self.rate, n, write)
    }
}

/// Sets the lost writes' stream apart from the request faults'.
const LOST_WRITE_SEED: u64 = 0x105e_d0a7_a000_0000;

/// The fault of request number `n`: a pure function of its arguments.
pub fn outcome(seed: u64, rate: f64, n: u64, write: bool) -> Option<Fault> {
    let draw = splitmix64(seed, n.wrapping_mul(2));
    // 53 random bits as a fraction in [0, 1).
    let fraction = (draw >> 11) as f64 / (1u64 << 53) as f64;
    if fraction >= rate {
        return None;
    }
    let pick = splitmix64(seed, n.wrapping_mul(2).wrapping_add(1));
    let modes: &[Fault] = if write { &Fault::ALL } else { &Fault::BEFORE };
    Some(modes[(pick % modes.len() as u64) as usize])
}

/// The `index`-th output of a splitmix64 generator started at `seed`.
pub fn splitmix64(seed: u64, index: u64) -> u64 {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub fn is_write(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_stream() {
        // Reference outputs of splitmix64 seeded with 1234567.
        assert_eq!(splitmix64(1234567, 0), 6457827717110365317);
        assert_eq!(splitmix64(1234567, 1), 3203168211198807973);
        assert_eq!(splitmix64(1234567, 2), 9817491932198370423);
    }

    #[test]
    fn lost_writes_follow_their_rate_and_are_off_by_default() {
        let off = Faults::new(0.0, 3, Duration::ZERO);
        assert!((0..100).all(|_| !off.lose_next_write()));
        let half = Faults::new(0.0, 3, Duration::ZERO).with_lost_writes(0.5);
        let lost = (0..10_000).filter(|_| half.lose_next_write()).count();
        assert!((4_700..5_300).contains(&lost), "{lost}");
        let all = Faults::new(0.0, 3, Duration::ZERO).with_lost_writes(1.0);
        assert!((0..100).all(|_| all.lose_next_write()));
    }

    #[test]
    fn a_picked_fault_meets_its_requests_only_as_often_as_picked() {
        let faults = Faults::new(0.0, 0, Duration::ZERO);
        faults.pick("DELETE", "/v1/variables/", Picked::LostWrite, 2);
        assert_eq!(faults.picked(&Method::GET, "/v1/variables/A"), None);
        assert_eq!(faults.picked(&Method::DELETE, "/v1/checks/1"), None);
        assert_eq!(
            faults.picked(&Method::DELETE, "/v1/variables/A"),
            Some(Picked::LostWrite)
        );
        assert_eq!(
            faults.picked(&Method::DELETE, "/v1/variables/B"),
            Some(Picked::LostWrite)
        );
        assert_eq!(faults.picked(&Method::DELETE, "/v1/variables/A"), None);
    }

    #[test]
    fn a_nan_rate_is_zero() {
        let faults = Faults::new(f64::NAN, 0, Duration::ZERO);
        assert!((0..100).all(|_| faults.next(true).is_none()));
    }

    #[test]
    fn rate_zero_and_one() {
        for n in 0..1000 {
            assert_eq!(outcome(7, 0.0, n, true), None);
            assert!(outcome(7, 1.0, n, true).is_some());
        }
    }

    #[test]
    fn fraction_and_modes_follow_the_rate() {
        let n = 20_000;
        let mut counts = std::collections::BTreeMap::new();
        for i in 0..n {
            if let Some(f) = outcome(42, 0.3, i, true) {
                *counts.entry(f).or_insert(0u32) += 1;
            }
        }
        let failed: u32 = counts.values().sum();
        let fraction = f64::from(failed) / n as f64;
        assert!((fraction - 0.3).abs() < 0.02, "{fraction}");
        assert_eq!(counts.len(), 6, "{counts:?}");
        for (fault, count) in &counts {
            let share = f64::from(*count) / f64::from(failed);
            assert!((share - 1.0 / 6.0).abs() < 0.03, "{fault:?}: {share}");
        }
        // Reads only fail before doing anything.
        for i in 0..n {
            assert!(!outcome(42, 0.3, i, false).is_some_and(Fault::after_commit));
        }
    }

    #[test]
    fn seeds_give_their_own_reproducible_sequences() {
        let run = |seed| (0..200).map(|n| outcome(seed, 0.3, n, true)).collect::<Vec<_>>();
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
