//! The circuit breaker: when the service stops answering (connections
//! refused or timing out, request after request), retrying every remaining
//! request for minutes helps nobody. After [`LIMIT`] such failures in a row
//! the client stops retrying and answers at once, sending one probe at most
//! every [`PROBE_EVERY`] so a service that comes back is noticed. Any
//! answer from the service, even an error status, closes it again.
//!
//! While a probe is in flight, other requests wait for its outcome
//! ([`Breaker::admit`]) instead of failing at once: a caller reading
//! several lists at once (a plan's fetch) fails on the first error and
//! drops the rest, so a probe whose siblings failed at once was always
//! cancelled before its answer could close the breaker, and a
//! long-running `monform reconcile` never noticed the service was back.
//!
//! Written here rather than taken from a crate: it is twenty lines over
//! the client's own retry loop (backon), which a breaker crate would
//! have to wrap anyway.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Failures to reach the service in a row that open the breaker.
pub const LIMIT: u32 = 8;
/// How often an open breaker lets one request through.
pub const PROBE_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub(crate) struct Breaker {
    streak: AtomicU32,
    last_probe: Mutex<Option<Instant>>,
    /// Set by [`Breaker::stop`]: no request is retried any more.
    stopped: AtomicBool,
    /// Wakes the pauses between retries when [`Breaker::stop`] is called.
    stopping: tokio::sync::Notify,
    /// Held by the probe in flight while the breaker is open.
    probe: tokio::sync::Mutex<()>,
}

/// Whether a request may be sent, from [`Breaker::admit`].
#[derive(Debug)]
pub(crate) enum Admission<'a> {
    /// The breaker is closed.
    Send,
    /// The breaker is open and this request is its probe: others wait
    /// until the guard is dropped (the probe answered, failed or was
    /// cancelled).
    Probe(tokio::sync::MutexGuard<'a, ()>),
    /// Open, and the last probe was too recent.
    Refused,
}

impl Breaker {
    /// The service answered.
    pub fn answered(&self) {
        self.streak.store(0, Ordering::Relaxed);
    }

    /// A request did not reach the service.
    pub fn unreachable(&self) {
        self.streak.fetch_add(1, Ordering::Relaxed);
    }

    pub fn is_open(&self) -> bool {
        self.streak.load(Ordering::Relaxed) >= LIMIT
    }

    pub fn streak(&self) -> u32 {
        self.streak.load(Ordering::Relaxed)
    }

    /// Whether a request may be sent now: always while closed; while open,
    /// one probe every [`PROBE_EVERY`].
    pub fn may_send(&self) -> bool {
        if !self.is_open() {
            return true;
        }
        let Ok(mut last) = self.last_probe.lock() else {
            return true;
        };
        let now = Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < PROBE_EVERY) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// Whether a request may be sent now, waiting for a probe in flight:
    /// when it answered, the breaker is closed and the request is sent.
    pub async fn admit(&self) -> Admission<'_> {
        if !self.is_open() {
            return Admission::Send;
        }
        let guard = self.probe.lock().await;
        if !self.is_open() {
            return Admission::Send;
        }
        if self.may_send() {
            Admission::Probe(guard)
        } else {
            Admission::Refused
        }
    }

    /// Whether a failed request may be tried again.
    pub fn may_retry(&self) -> bool {
        !self.is_open() && !self.is_stopped()
    }

    /// No request is retried from now on, and the pauses before retries
    /// end at once: a retry pausing for seconds would hold an interrupted
    /// run that long (a service answering 503 never opens the breaker).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.stopping.notify_waiters();
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// The pause before a retry: `delay`, or less once [`Breaker::stop`]
    /// is called.
    pub async fn pause(&self, delay: Duration) {
        let stopping = self.stopping.notified();
        tokio::pin!(stopping);
        // Registered before the flag is read, so a stop between the two
        // still wakes this pause.
        stopping.as_mut().enable();
        if self.is_stopped() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stopping => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_limit_probes_rarely_and_closes_on_an_answer() {
        let breaker = Breaker::default();
        for _ in 0..LIMIT - 1 {
            breaker.unreachable();
        }
        assert!(breaker.may_retry() && breaker.may_send());
        breaker.unreachable();
        assert!(breaker.is_open() && !breaker.may_retry());
        assert!(breaker.may_send(), "the first probe goes");
        assert!(!breaker.may_send(), "the next waits for PROBE_EVERY");
        breaker.answered();
        assert!(!breaker.is_open() && breaker.may_send() && breaker.may_retry());
        breaker.stop();
        assert!(!breaker.may_retry());
    }

    #[tokio::test]
    async fn stop_ends_the_pauses_before_retries() {
        let breaker = std::sync::Arc::new(Breaker::default());
        let pausing = {
            let breaker = std::sync::Arc::clone(&breaker);
            tokio::spawn(async move { breaker.pause(Duration::from_secs(60)).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!pausing.is_finished(), "pauses while not stopped");
        breaker.stop();
        tokio::time::timeout(Duration::from_secs(5), pausing)
            .await
            .expect("the pause ended")
            .expect("joined");
        // A pause after the stop does not wait at all.
        tokio::time::timeout(Duration::from_secs(5), breaker.pause(Duration::from_secs(60)))
            .await
            .expect("no pause once stopped");
    }

    #[tokio::test]
    async fn requests_wait_for_the_probe_in_flight_and_go_once_it_answered() {
        let breaker = std::sync::Arc::new(Breaker::default());
        for _ in 0..LIMIT {
            breaker.unreachable();
        }
        let Admission::Probe(probe) = breaker.admit().await else {
            panic!("the first request is the probe");
        };
        let waiting = {
            let breaker = std::sync::Arc::clone(&breaker);
            tokio::spawn(async move { matches!(breaker.admit().await, Admission::Send) })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "waits for the probe's outcome");
        breaker.answered();
        drop(probe);
        assert!(waiting.await.unwrap(), "sent once the probe answered");
    }

    #[tokio::test]
    async fn a_failed_probe_refuses_the_requests_that_waited_for_it() {
        let breaker = Breaker::default();
        for _ in 0..LIMIT {
            breaker.unreachable();
        }
        let probe = breaker.admit().await;
        assert!(matches!(probe, Admission::Probe(_)));
        breaker.unreachable();
        drop(probe);
        assert!(matches!(breaker.admit().await, Admission::Refused));
    }
}
