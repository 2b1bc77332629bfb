//! Pacing requests at the budget the server states.
//!
//! The service counts requests per key in windows and says where a client
//! stands on every response (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in
//! seconds; `Retry-After` on a 429). The pacer keeps that budget: a request
//! goes out while the window has some left, otherwise it waits for the
//! window to reset. Until the server says anything (or if it never does),
//! the documented 600 per 60 s applies, counted the same way.
//!
//! A client may also be given a share of that budget (`Pacer::set_share`:
//! `monform reconcile`'s `request-share`, issue 48): its requests are then
//! spread evenly at that share of the limit ([`Share`]: a token bucket with
//! a small burst), never more than the share in one of the server's
//! windows, and it yields to the key's other clients: while the server's
//! remaining budget is below the share (another client is busy), it sends
//! nothing until the window resets.
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
    /// Times a share waited because the key's other clients left less
    /// than it in the server's window (it yielded to them).
    pub yields: u64,
}

pub type WaitObserver = Arc<dyn Fn(Wait) + Send + Sync>;

/// The rule of a share of the budget: pure arithmetic, so it is tested
/// apart and read by the engine (a sweep's requests per interval).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// In (0, 1].
    pub fraction: f64,
}

impl Share {
    /// `None` outside (0, 1].
    pub fn new(fraction: f64) -> Option<Share> {
        (fraction > 0.0 && fraction <= 1.0).then_some(Share { fraction })
    }

    /// Requests of a window of `limit` this share may send: at least one.
    pub fn allowance(self, limit: u32) -> u32 {
        ((f64::from(limit) * self.fraction).floor() as u32).clamp(1, limit.max(1))
    }

    /// What the key's other clients are left before this share yields: it
    /// sends only while the server's remaining budget stays at or above
    /// this. Its own allowance, or what is left besides it when that is
    /// less (a share above half the limit could otherwise never use it).
    pub fn reserve(self, limit: u32) -> u32 {
        let allowance = self.allowance(limit);
        allowance.min(limit.saturating_sub(allowance))
    }

    /// Requests sent at once before the even pace applies: a sixth of the
    /// allowance (10 s of a 60 s window), so a small project's whole read
    /// goes out at once and a large one's is spread.
    pub fn burst(self, limit: u32) -> u32 {
        (self.allowance(limit) / 6).max(1)
    }

    /// The even pace: one request per this.
    pub fn spacing(self, limit: u32, window: Duration) -> Duration {
        window.div_f64(f64::from(self.allowance(limit)))
    }

    /// Requests this share sends in `span` at the even pace, the burst
    /// not counted (the requests a sweep may plan for an interval).
    pub fn requests_in(self, limit: u32, window: Duration, span: Duration) -> u64 {
        if window.is_zero() {
            return u64::from(self.allowance(limit));
        }
        (f64::from(self.allowance(limit)) * span.as_secs_f64() / window.as_secs_f64()).floor() as u64
    }
}

/// A share's state: the bucket that spreads its requests and its count in
/// the server's window.
#[derive(Debug, Clone, Copy)]
struct Shared {
    rule: Share,
    tokens: f64,
    filled: Instant,
    /// Own requests in the window of `limit` that resets at `counted_until`.
    used: u32,
    counted_until: Instant,
    limit: u32,
}

impl Shared {
    /// When this share may send its next request in `window`, or `None`:
    /// now. `window` is the server's (or the assumed) budget, rolled.
    fn blocked(&mut self, window: &Window, now: Instant) -> Option<Instant> {
        // A new window: the counted one ended (its end moved later by the
        // server's rounding, a second, is the same one), one ending about a
        // window later, or another budget (the server's replacing the one
        // assumed until it spoke).
        let new = now >= self.counted_until
            || window.resets_at >= self.counted_until + window.length / 2
            || window.limit != self.limit;
        if new {
            self.used = 0;
            self.counted_until = window.resets_at;
            self.limit = window.limit;
        } else {
            self.counted_until = self.counted_until.max(window.resets_at);
        }
        let rule = self.rule;
        if self.used >= rule.allowance(window.limit) || window.remaining <= rule.reserve(window.limit) {
            // Its share of this window is spent, or the others need the rest.
            return Some(window.resets_at.max(now + Duration::from_millis(1)));
        }
        let spacing = rule.spacing(window.limit, window.length);
        let burst = f64::from(rule.burst(window.limit));
        let elapsed = now.saturating_duration_since(self.filled);
        self.tokens = (self.tokens + elapsed.as_secs_f64() / spacing.as_secs_f64().max(1e-9)).min(burst);
        self.filled = now;
        if self.tokens >= 1.0 {
            return None;
        }
        Some(now + spacing.mul_f64(1.0 - self.tokens))
    }

    fn take(&mut self) {
        self.tokens -= 1.0;
        self.used += 1;
    }
}

#[derive(Default)]
struct Budget {
    /// The documented default, or the user's own limit.
    own: Option<Window>,
    /// What the server stated last.
    server: Option<Window>,
    /// The reset of the last wait reported, so each is reported once.
    reported: Option<Instant>,
    stats: PaceStats,
    /// The client's share of the budget, if it was given one.
    share: Option<Shared>,
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

    /// Holds this client to `share` of the budget (see the module's
    /// header); `None`: the whole budget again.
    pub fn set_share(&self, share: Option<Share>) {
        let now = Instant::now();
        self.lock().share = share.map(|rule| Shared {
            rule,
            tokens: f64::from(rule.burst(self.own.0)),
            filled: now,
            used: 0,
            counted_until: now,
            limit: self.own.0,
        });
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
                // A share waits for its pace, its allowance or the others.
                let mut share_wait = None;
                if blocked.is_none() && budget.share.is_some() {
                    let window = match budget.server {
                        Some(w) => w,
                        None => budget.own.unwrap_or_else(|| Window::fresh(limit, window, now)),
                    };
                    let yielding = budget.share.as_ref().is_some_and(|s| {
                        window.remaining <= s.rule.reserve(window.limit) && s.used < s.rule.allowance(window.limit)
                    });
                    share_wait = budget.share.as_mut().and_then(|s| s.blocked(&window, now));
                    match share_wait {
                        Some(until) if yielding && budget.reported != Some(until) => {
                            budget.reported = Some(until);
                            budget.stats.yields += 1;
                        }
                        Some(_) => {}
                        None => {
                            if let Some(share) = budget.share.as_mut() {
                                share.take();
                            }
                        }
                    }
                }
                match blocked {
                    None if share_wait.is_some() => (share_wait.unwrap_or(now), None),
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

    #[test]
    fn a_shares_allowance_reserve_burst_and_pace() {
        let minute = Duration::from_secs(60);
        let quarter = Share::new(0.25).expect("a share");
        assert_eq!(quarter.allowance(600), 150);
        assert_eq!(quarter.reserve(600), 150);
        assert_eq!(quarter.burst(600), 25);
        assert_eq!(quarter.spacing(600, minute), Duration::from_millis(400));
        // A 5-minute interval's reads at 25% of 600/60: 750 requests.
        assert_eq!(quarter.requests_in(600, minute, 5 * minute), 750);
        // All of it: nothing kept back for others, or it could never use it.
        let all = Share::new(1.0).expect("a share");
        assert_eq!((all.allowance(600), all.reserve(600)), (600, 0));
        // Above half: the reserve is what is left besides it.
        let most = Share::new(0.6).expect("a share");
        assert_eq!((most.allowance(600), most.reserve(600)), (360, 240));
        // A share too small for one request a window still gets one.
        let tiny = Share::new(0.001).expect("a share");
        assert_eq!((tiny.allowance(600), tiny.burst(600)), (1, 1));
        for bad in [0.0, -0.1, 1.01, f64::NAN] {
            assert_eq!(Share::new(bad), None, "{bad}");
        }
    }

    /// A fixed-window server shared by two clients of one key.
    struct Server {
        limit: u32,
        window: Duration,
        opened: Instant,
        count: u32,
        rejected: u32,
    }

    impl Server {
        /// Counts a request now: the reply's (remaining, reset) or `None` (429).
        fn request(&mut self) -> Option<(u32, Duration)> {
            let now = Instant::now();
            if now - self.opened >= self.window {
                self.opened = now;
                self.count = 0;
            }
            let reset = self.window - (now - self.opened);
            let reset = Duration::from_secs(reset.as_secs() + u64::from(reset.subsec_nanos() > 0));
            if self.count == self.limit {
                self.rejected += 1;
                return None;
            }
            self.count += 1;
            Some((self.limit - self.count, reset))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_share_spreads_its_requests_and_keeps_to_its_allowance_per_window() {
        let minute = Duration::from_secs(60);
        let pacer = Pacer::new(600, minute, false);
        pacer.set_share(Share::new(0.25));
        let start = Instant::now();
        let mut server = Server {
            limit: 600,
            window: minute,
            opened: start,
            count: 0,
            rejected: 0,
        };
        let mut sent_at = Vec::new();
        for _ in 0..300 {
            pacer.acquire().await;
            sent_at.push(Instant::now() - start);
            let (remaining, reset) = server.request().expect("within the budget");
            pacer.learn(600, remaining, reset);
        }
        // 150 a window: the burst, then one each 0.4 s.
        let in_first = sent_at.iter().filter(|t| **t < minute).count();
        assert_eq!(in_first, 150);
        assert_eq!(sent_at[24], Duration::ZERO, "the burst goes out at once");
        assert!(sent_at[25] >= Duration::from_millis(399), "{:?}", sent_at[25]);
        assert!(sent_at[149] >= Duration::from_secs(49), "{:?}", sent_at[149]);
        assert!(sent_at[299] >= minute + Duration::from_secs(49), "{:?}", sent_at[299]);
        assert_eq!(server.rejected, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_share_counts_against_the_servers_budget_once_it_is_stated() {
        // Assumed 600/60 until the server says 60/10: 15 a 10 s window.
        let window = Duration::from_secs(10);
        let pacer = Pacer::new(600, Duration::from_secs(60), false);
        pacer.set_share(Share::new(0.25));
        let start = Instant::now();
        let mut server = Server {
            limit: 60,
            window,
            opened: start,
            count: 0,
            rejected: 0,
        };
        let mut sent_at = Vec::new();
        for _ in 0..45 {
            pacer.acquire().await;
            sent_at.push(Instant::now() - start);
            let (remaining, reset) = server.request().expect("within the budget");
            pacer.learn(60, remaining, reset);
        }
        // Three windows' allowance in about three windows, not held to
        // the assumed minute.
        assert!(sent_at[44] < 3 * window, "{:?}", sent_at[44]);
        for w in 0..2u32 {
            let n = sent_at
                .iter()
                .filter(|t| **t >= window * w && **t < window * (w + 1))
                .count();
            assert!(n <= 15 + 1, "window {w}: {n}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_share_yields_while_the_others_leave_less_than_it() {
        let minute = Duration::from_secs(60);
        let pacer = Pacer::new(600, minute, false);
        pacer.set_share(Share::new(0.25));
        let start = Instant::now();
        let mut server = Server {
            limit: 600,
            window: minute,
            opened: start,
            count: 0,
            rejected: 0,
        };
        // Another client of the key takes 400 at once.
        for _ in 0..400 {
            server.request().expect("the other client's");
        }
        let mut ours_in_first = 0;
        for _ in 0..100 {
            pacer.acquire().await;
            if Instant::now() - start < minute {
                ours_in_first += 1;
            }
            let (remaining, reset) = server.request().expect("never a 429");
            pacer.learn(600, remaining, reset);
        }
        // It learns the others' use from its first reply, then takes only
        // down to its reserve: 50 (of 200 left), leaving 150 to them.
        assert_eq!(ours_in_first, 50);
        assert_eq!(server.count, 50, "the second window holds the other 50");
        assert!(pacer.stats().yields >= 1);
        // The others still have their 150 in the first window: no 429 to them.
        assert_eq!(server.rejected, 0);
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
