//! Pacing requests at the budget the server states.
//!
//! The service counts requests per key in windows and says where a client
//! stands on every response (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in
//! seconds; `Retry-After` on a 429). The pacer keeps that budget: a request
//! goes out while the window has some left, otherwise it waits for the
//! window to reset. Until the server says anything (or if it never does),
//! the documented 600 per 60 s applies, counted the same way.
//!
//! Hand-written rather than governor's GCRA: a GCRA's quota is fixed when
//! it is built, while here the server corrects the count on every response
//! ("37 left, resets in 12 s"), which is a counter and a deadline.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::time::Instant;

/// The budget of one window.
#[derive(Debug, Clone, Copy)]
struct Window {
    limit: u32,
    remaining: u32,
    resets_at: Instant,
    /// How long a window lasts once it opens.
    length: Duration,
}

impl Window {
    fn fresh(limit: u32, length: Duration, now: Instant) -> Window {
        Window {
            limit,
            remaining: limit,
            resets_at: now + length,
            length,
        }
    }

    /// A window that has closed opens again full.
    fn roll(&mut self, now: Instant) {
        if now >= self.resets_at {
            *self = Window::fresh(self.limit, self.length, now);
        }
    }
}

/// A wait for budget, as reported to an observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// How long until the window resets.
    pub duration: Duration,
    /// The budget being waited for: requests per window.
    pub limit: u32,
    pub window: Duration,
    /// Whether the server stated this budget (else the documented default or the user's).
    pub advertised: bool,
}

/// What the pacer has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PaceStats {
    /// Times the client waited for a window to reset (one per window, however
    /// many requests waited in it).
    pub waits: u64,
    /// The longest gap in the budget waited for.
    pub waited: Duration,
    /// The budget the server last stated: requests per window.
    pub advertised: Option<(u32, Duration)>,
}

pub type WaitObserver = Arc<dyn Fn(Wait) + Send + Sync>;

#[derive(Default)]
struct Budget {
    /// The documented default, or the user's own limit.
    own: Option<Window>,
    /// What the server stated last.
    server: Option<Window>,
    /// The reset of the last wait reported, so each is reported once.
    reported: Option<Instant>,
    stats: PaceStats,
}

pub struct Pacer {
    /// The limit assumed until the server states one.
    own: (u32, Duration),
    /// The user chose `own`: it stays a ceiling under the server's budget.
    keep_own: bool,
    budget: Mutex<Budget>,
    observer: RwLock<Option<WaitObserver>>,
}

impl Pacer {
    pub fn new(limit: u32, window: Duration, keep_own: bool) -> Pacer {
        Pacer {
            own: (limit.max(1), window),
            keep_own,
            budget: Mutex::new(Budget::default()),
            observer: RwLock::new(None),
        }
    }

    pub fn observe(&self, observer: Option<WaitObserver>) {
        *self.observer.write().unwrap_or_else(|p| p.into_inner()) = observer;
    }

    pub fn stats(&self) -> PaceStats {
        self.lock().stats
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Budget> {
        self.budget.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the budget allows one more request, and counts it.
    pub async fn acquire(&self) {
        loop {
            let wait = {
                let mut budget = self.lock();
                let now = Instant::now();
                let (limit, window) = self.own;
                let use_own = self.keep_own || budget.server.is_none();
                if use_own && budget.own.is_none() {
                    budget.own = Some(Window::fresh(limit, window, now));
                }
                let mut blocked: Option<(Instant, Window, bool)> = None;
                let windows = [(use_own, false), (true, true)];
                for (active, advertised) in windows {
                    let slot = if advertised {
                        &mut budget.server
                    } else {
                        &mut budget.own
                    };
                    let Some(w) = slot.as_mut().filter(|_| active) else {
                        continue;
                    };
                    w.roll(now);
                    if w.remaining == 0 && blocked.is_none_or(|(at, _, _)| w.resets_at > at) {
                        blocked = Some((w.resets_at, *w, advertised));
                    }
                }
                match blocked {
                    None => {
                        for (active, advertised) in windows {
                            let slot = if advertised {
                                &mut budget.server
                            } else {
                                &mut budget.own
                            };
                            if let Some(w) = slot.as_mut().filter(|_| active) {
                                w.remaining -= 1;
                            }
                        }
                        return;
                    }
                    Some((until, w, advertised)) => {
                        let first = budget.reported != Some(until);
                        let duration = until - now;
                        if first {
                            budget.reported = Some(until);
                            budget.stats.waits += 1;
                            budget.stats.waited = budget.stats.waited.max(duration);
                        }
                        let wait = Wait {
                            duration,
                            limit: w.limit,
                            window: w.length,
                            advertised,
                        };
                        (until, first.then_some(wait))
                    }
                }
            };
            let (until, report) = wait;
            if let Some(report) = report {
                let observer = self.observer.read().unwrap_or_else(|p| p.into_inner()).clone();
                if let Some(observer) = observer {
                    observer(report);
                }
            }
            tokio::time::sleep_until(until).await;
        }
    }

    /// Takes in what a response says of the budget: `X-RateLimit-Limit`,
    /// `-Remaining`, `-Reset` (seconds until the window resets).
    pub fn learn(&self, limit: u32, remaining: u32, reset: Duration) {
        let now = Instant::now();
        let mut budget = self.lock();
        let resets_at = now + reset;
        let window = match budget.server {
            // Same window: requests sent since this one was counted are
            // not in `remaining` yet, so the lower count wins.
            Some(mut w) if now < w.resets_at && w.limit == limit => {
                w.remaining = w.remaining.min(remaining);
                // The server rounds up to whole seconds: the later deadline is the safe one.
                w.resets_at = w.resets_at.max(resets_at);
                w.length = w.length.max(reset);
                w
            }
            previous => Window {
                limit,
                remaining,
                resets_at,
                // A window's length is never stated: the longest reset seen is the best guess.
                length: previous.map_or(reset, |w| w.length.max(reset)),
            },
        };
        budget.stats.advertised = Some((limit, window.length));
        budget.server = Some(window);
    }

    /// A 429: nothing is left until `retry_after`, for every request in flight.
    pub fn exhausted(&self, retry_after: Duration) {
        let now = Instant::now();
        let mut budget = self.lock();
        let (limit, window) = self.own;
        let w = budget.server.get_or_insert(Window::fresh(limit, window, now));
        // The server's word on when its window resets beats any estimate.
        w.remaining = 0;
        w.resets_at = now + retry_after;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `requests` through the pacer against a fixed-window server
    /// simulated on tokio's paused clock; returns (waits, 429s, elapsed).
    async fn run(pacer: &Pacer, server_limit: u32, window: Duration, requests: u32) -> (u64, u32, Duration) {
        let start = Instant::now();
        let mut opened = start;
        let mut count = 0;
        let mut rejected = 0;
        for _ in 0..requests {
            pacer.acquire().await;
            let now = Instant::now();
            if now - opened >= window {
                opened = now;
                count = 0;
            }
            let reset = window - (now - opened);
            let reset = Duration::from_secs(reset.as_secs() + u64::from(reset.subsec_nanos() > 0));
            if count == server_limit {
                rejected += 1;
                pacer.exhausted(reset);
                continue;
            }
            count += 1;
            pacer.learn(server_limit, server_limit - count, reset);
        }
        (pacer.stats().waits, rejected, start.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn the_servers_budget_replaces_the_default() {
        let minute = Duration::from_secs(60);
        // 2,000 requests at 6,000 per minute: no wait at all.
        let fast = Pacer::new(600, minute, false);
        let (waits, rejected, _) = run(&fast, 6000, minute, 2000).await;
        assert_eq!((waits, rejected), (0, 0));
        assert_eq!(fast.stats().advertised, Some((6000, minute)));
        // At 600 per minute: three full windows waited, ten times the requests per window.
        let slow = Pacer::new(600, minute, false);
        let (waits, rejected, elapsed) = run(&slow, 600, minute, 2000).await;
        assert_eq!((waits, rejected), (3, 0));
        assert!(elapsed >= 3 * minute, "{elapsed:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_server_gets_the_default_and_a_chosen_limit_stays_a_ceiling() {
        let minute = Duration::from_secs(60);
        let silent = Pacer::new(600, minute, false);
        for _ in 0..1200 {
            silent.acquire().await;
        }
        assert_eq!(silent.stats().waits, 1, "600 per window");
        let chosen = Pacer::new(100, minute, true);
        let (waits, rejected, _) = run(&chosen, 6000, minute, 250).await;
        assert_eq!(
            (waits, rejected),
            (2, 0),
            "100 per window although the server allows more"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_holds_every_request_until_retry_after() {
        let pacer = Pacer::new(600, Duration::from_secs(60), false);
        pacer.acquire().await;
        pacer.exhausted(Duration::from_secs(5));
        let start = Instant::now();
        pacer.acquire().await;
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        assert_eq!(pacer.stats().waits, 1);
    }
}
