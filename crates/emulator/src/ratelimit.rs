//! Rate limiting per API key (api-contract.md, spec 8): 600 requests per
//! 60 s by default (or `Config::rate_limit`), 5 per 10 s on the deprecated
//! check-result listing, which has its own budget. Over budget: 429 with the
//! API's error body, `Retry-After` and the `X-RateLimit-*` headers.
//!
//! Budgets are fixed windows: a key's window opens with its first request and
//! lasts the limit's window; `X-RateLimit-Reset` is the number of seconds
//! until it closes (like `Retry-After`). Responses within budget carry the
//! `X-RateLimit-*` headers too, so clients can pace themselves.
//!
//! Only known keys are limited that way: a request without a well-formed
//! bearer token or with an unknown key goes on to get its 401 (and the map
//! of windows stays bounded by the number of keys). Those 401s are counted
//! per client address instead ([`AuthFailures`]), so guessing keys is slow.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A request budget: `requests` per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub requests: u32,
    pub window: Duration,
}

impl RateLimit {
    /// The service's default for most routes (spec 8).
    pub const DEFAULT: RateLimit = RateLimit {
        requests: 600,
        window: Duration::from_secs(60),
    };
    /// The deprecated check-result listing (spec 8).
    pub const RESULT_LISTING: RateLimit = RateLimit {
        requests: 5,
        window: Duration::from_secs(10),
    };

    /// Parses `N/SECS` (e.g. `600/60`).
    pub fn parse(text: &str) -> Result<RateLimit, String> {
        let (requests, window) = monform_model::rate_limit::parse(text)?;
        Ok(RateLimit { requests, window })
    }
}

/// Route template of the deprecated check-result listing (its own budget).
pub const RESULT_LISTING_ROUTE: &str = "/v1/check-results/{checkId}";

pub const LIMIT_HEADER: &str = "x-ratelimit-limit";
pub const REMAINING_HEADER: &str = "x-ratelimit-remaining";
pub const RESET_HEADER: &str = "x-ratelimit-reset";

/// Which budget a route draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bucket {
    Default,
    ResultListing,
}

/// The outcome of counting one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    /// Requests left in the window after this one.
    pub remaining: u32,
    /// Time until the window closes.
    pub reset: Duration,
}

impl Decision {
    /// Whole seconds until the window closes, rounded up, at least 1.
    pub fn reset_seconds(&self) -> u64 {
        let secs = self.reset.as_secs() + u64::from(self.reset.subsec_nanos() > 0);
        secs.max(1)
    }

    /// The rate-limit headers of a response.
    pub fn headers(&self) -> [(&'static str, String); 3] {
        [
            (LIMIT_HEADER, self.limit.to_string()),
            (REMAINING_HEADER, self.remaining.to_string()),
            (RESET_HEADER, self.reset_seconds().to_string()),
        ]
    }
}

#[derive(Debug)]
struct Window {
    opened: Instant,
    count: u32,
}

/// Every key's windows.
pub struct Limiter {
    default: Option<RateLimit>,
    windows: Mutex<HashMap<(String, Bucket), Window>>,
}

impl Limiter {
    /// `None` turns limiting off.
    pub fn new(default: Option<RateLimit>) -> Limiter {
        Limiter {
            default,
            windows: Mutex::new(HashMap::new()),
        }
    }

    pub fn enabled(&self) -> bool {
        self.default.is_some()
    }

    /// The budget of a route template: the listing's own, else the default.
    pub fn budget(&self, route: &str) -> Option<(Bucket, RateLimit)> {
        let default = self.default?;
        Some(if route == RESULT_LISTING_ROUTE {
            (Bucket::ResultListing, RateLimit::RESULT_LISTING)
        } else {
            (Bucket::Default, default)
        })
    }

    /// Counts a request of `key` to `route` at `now`; `None` when limiting is off.
    pub fn check(&self, key: &str, route: &str, now: Instant) -> Option<Decision> {
        let (bucket, limit) = self.budget(route)?;
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let window = windows
            .entry((key.to_owned(), bucket))
            .or_insert(Window { opened: now, count: 0 });
        let elapsed = now.saturating_duration_since(window.opened);
        if elapsed >= limit.window {
            *window = Window { opened: now, count: 0 };
        }
        let reset = limit
            .window
            .saturating_sub(now.saturating_duration_since(window.opened));
        let allowed = window.count < limit.requests;
        if allowed {
            window.count += 1;
        }
        Some(Decision {
            allowed,
            limit: limit.requests,
            remaining: limit.requests - window.count,
            reset,
        })
    }
}

/// Failed authentications (401 answers) per client address: an address
/// that had `limit.requests` of them in a window gets 429 with
/// `Retry-After` for every request until the window closes, whatever key it
/// sends then, so the answers tell a guesser nothing. Fixed windows, opened
/// by an address's first failure. An IPv6 address counts by its /64, what
/// one host usually holds. The map forgets closed windows when it grows
/// past [`AuthFailures::MAX_ADDRESSES`]; past that, new addresses are not
/// counted rather than let the map grow without bound.
pub struct AuthFailures {
    limit: Option<RateLimit>,
    windows: Mutex<HashMap<IpAddr, Window>>,
}

impl AuthFailures {
    /// The default: 20 failures per minute and address.
    pub const DEFAULT: RateLimit = RateLimit {
        requests: 20,
        window: Duration::from_secs(60),
    };
    pub const MAX_ADDRESSES: usize = 100_000;

    /// `None` turns counting off.
    pub fn new(limit: Option<RateLimit>) -> AuthFailures {
        AuthFailures {
            limit,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// How long `address` must wait, when its failures spent the budget.
    pub fn blocked(&self, address: IpAddr, now: Instant) -> Option<Duration> {
        let limit = self.limit?;
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let window = windows.get(&client(address))?;
        let left = limit.window.checked_sub(now.saturating_duration_since(window.opened))?;
        (window.count >= limit.requests && !left.is_zero()).then_some(left)
    }

    /// Counts a 401 answered to `address`.
    pub fn failed(&self, address: IpAddr, now: Instant) {
        let Some(limit) = self.limit else {
            return;
        };
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let key = client(address);
        if !windows.contains_key(&key) && windows.len() >= Self::MAX_ADDRESSES {
            windows.retain(|_, w| now.saturating_duration_since(w.opened) < limit.window);
            if windows.len() >= Self::MAX_ADDRESSES {
                return;
            }
        }
        let window = windows.entry(key).or_insert(Window { opened: now, count: 0 });
        if now.saturating_duration_since(window.opened) >= limit.window {
            *window = Window { opened: now, count: 0 };
        }
        window.count = window.count.saturating_add(1);
    }
}

/// The client an address stands for: IPv4 as is (also when mapped into
/// IPv6), IPv6 by its /64 prefix.
fn client(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

/// Routes outside the API: never limited (nor faulted, see `faults`).
pub fn is_exempt(route: &str) -> bool {
    route.starts_with("/-/") || route == "/openapi.json"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter() -> Limiter {
        Limiter::new(Some(RateLimit {
            requests: 3,
            window: Duration::from_secs(60),
        }))
    }

    #[test]
    fn off_when_none() {
        let limiter = Limiter::new(None);
        assert!(!limiter.enabled());
        assert_eq!(limiter.check("k", "/v1/checks", Instant::now()), None);
        assert_eq!(limiter.check("k", RESULT_LISTING_ROUTE, Instant::now()), None);
    }

    #[test]
    fn counts_down_then_refuses_until_the_window_closes() {
        let limiter = limiter();
        let t0 = Instant::now();
        for remaining in [2, 1, 0] {
            let d = limiter.check("k", "/v1/checks", t0).unwrap();
            assert!(d.allowed);
            assert_eq!((d.limit, d.remaining), (3, remaining));
            assert_eq!(d.reset_seconds(), 60);
        }
        let d = limiter
            .check("k", "/v1/checks", t0 + Duration::from_millis(20_500))
            .unwrap();
        assert!(!d.allowed);
        assert_eq!(d.remaining, 0);
        assert_eq!(d.reset, Duration::from_millis(39_500));
        assert_eq!(d.reset_seconds(), 40);
        // A refused request does not extend the window.
        let d = limiter.check("k", "/v1/checks", t0 + Duration::from_secs(60)).unwrap();
        assert!(d.allowed);
        assert_eq!(d.remaining, 2);
    }

    #[test]
    fn keys_are_independent() {
        let limiter = limiter();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limiter.check("a", "/v1/checks", t0).unwrap().allowed);
        }
        assert!(!limiter.check("a", "/v1/checks", t0).unwrap().allowed);
        assert!(limiter.check("b", "/v1/checks", t0).unwrap().allowed);
    }

    #[test]
    fn the_result_listing_has_its_own_budget_of_5_per_10_s() {
        let limiter = limiter();
        let t0 = Instant::now();
        for _ in 0..5 {
            let d = limiter.check("k", RESULT_LISTING_ROUTE, t0).unwrap();
            assert!(d.allowed);
            assert_eq!(d.limit, 5);
        }
        let d = limiter
            .check("k", RESULT_LISTING_ROUTE, t0 + Duration::from_secs(3))
            .unwrap();
        assert!(!d.allowed);
        assert_eq!(d.reset_seconds(), 7);
        // The default budget is untouched, and the listing's reopens after 10 s.
        assert_eq!(limiter.check("k", "/v1/checks/{id}", t0).unwrap().remaining, 2);
        assert!(
            limiter
                .check("k", RESULT_LISTING_ROUTE, t0 + Duration::from_secs(10))
                .unwrap()
                .allowed
        );
    }

    #[test]
    fn an_address_with_too_many_failures_waits_for_its_window() {
        let failures = AuthFailures::new(Some(RateLimit {
            requests: 3,
            window: Duration::from_secs(60),
        }));
        let t0 = Instant::now();
        let me: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..3 {
            assert_eq!(failures.blocked(me, t0), None);
            failures.failed(me, t0);
        }
        assert_eq!(
            failures.blocked(me, t0 + Duration::from_secs(20)),
            Some(Duration::from_secs(40))
        );
        assert_eq!(failures.blocked(other, t0), None, "per address");
        // The same host by its IPv4-mapped form; IPv6 by /64.
        assert!(failures.blocked("::ffff:10.0.0.1".parse().unwrap(), t0).is_some());
        for _ in 0..3 {
            failures.failed("2001:db8::1".parse().unwrap(), t0);
        }
        assert!(failures.blocked("2001:db8::ffff".parse().unwrap(), t0).is_some());
        assert!(failures.blocked("2001:db8:0:1::1".parse().unwrap(), t0).is_none());
        // The window closes; a new failure opens a new one.
        assert_eq!(failures.blocked(me, t0 + Duration::from_secs(60)), None);
        failures.failed(me, t0 + Duration::from_secs(61));
        assert_eq!(failures.blocked(me, t0 + Duration::from_secs(61)), None);
        assert_eq!(AuthFailures::new(None).blocked(me, t0), None);
    }

    #[test]
    fn exempt_routes() {
        assert!(is_exempt("/-/metrics"));
        assert!(is_exempt("/openapi.json"));
        assert!(!is_exempt("/v1/checks"));
        assert!(!is_exempt("unmatched"));
    }
}
