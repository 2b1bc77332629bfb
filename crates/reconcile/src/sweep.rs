//! The reconciler's reads within `[reconcile] request-share` (issue 48).
//! The rule lives in the engine and the API client: the client paces the
//! reconciler's requests at its share of the key's budget and yields to
//! the key's other clients (`monform_api::Share`), and the engine's rolling
//! refresh (`Refresh::Rolling`, `monform_engine::Sweep`) reads what one
//! interval's share holds, what the files changed and lately drifted
//! objects first. Here the reconciler chooses: the share (set on the client
//! when it changes, since setting it starts its count again), each plan's
//! budget (its interval's share), the priorities (the drift it reported),
//! and each sweep's report (a log line, `/metrics`).

use std::sync::Mutex;
use std::time::Duration;

use monform_api::{Client, Share};
use monform_engine::Sweep;
use monform_model::Address;

use crate::Context;

/// The rolling refresh's state, kept from one interval to the next.
#[derive(Debug, Default)]
pub struct Sweeping {
    /// Set on each plan's session.
    pub sweep: Mutex<Sweep>,
    /// The share last set on the client.
    share: Mutex<Option<f64>>,
    /// Requests of the sweep under way, over its plans.
    requests: Mutex<u64>,
}

/// Objects that drifted lately read by id each plan, at most (and at
/// most half the plan's budget): past that, their pages find them (a mass
/// edit must not cost a GET each per plan).
pub const MAX_PRIORITY: usize = 200;

impl Sweeping {
    /// Before a plan: the share on the client (when it changed), the
    /// plan's request budget (the share of an `interval`) and its
    /// priorities (the drift reported: its end is seen the next plan).
    pub fn prepare(&self, client: &Client, fraction: f64, interval: Duration, drifting: &[Address]) {
        let Some(share) = Share::new(fraction) else {
            return;
        };
        let mut set = lock(&self.share);
        if *set != Some(fraction) {
            client.set_share(Some(share));
            *set = Some(fraction);
        }
        let (limit, window) = client.budget();
        let mut sweep = lock(&self.sweep);
        sweep.budget = Sweep::budget_for(share, limit, window, interval);
        // Half the interval's budget at most: the rest moves the sweep on.
        let room = usize::try_from(sweep.budget / 2)
            .unwrap_or(usize::MAX)
            .clamp(1, MAX_PRIORITY);
        sweep.priority = drifting.iter().take(room).cloned().collect();
    }

    /// After a plan: what it read into the metrics, and at the end of a
    /// sweep spread over intervals a log line with its time, requests and
    /// share of the key's budget.
    pub fn report(&self, ctx: &Context<'_>, client: &Client) {
        let Some(read) = lock(&self.sweep).last.take() else {
            return;
        };
        let yields = client.pace().yields;
        let mut requests = lock(&self.requests);
        *requests += read.requests;
        ctx.metrics.update(|f| {
            f.read_requests += read.requests;
            f.sweep_progress = read.progress;
            f.yields = yields;
        });
        let Some(took) = read.swept_in else {
            return;
        };
        let (limit, window) = client.budget();
        let share = share_used(*requests, took, limit, window);
        let sent = std::mem::take(&mut *requests);
        ctx.metrics.update(|f| {
            f.sweeps += 1;
            f.sweep_seconds = took.as_secs_f64();
            f.sweep_requests = sent;
            f.sweep_share = share;
        });
        // A sweep read whole in one interval is the interval: its figures
        // are in /metrics; one spread over intervals is told in the log.
        if read.whole {
            return;
        }
        ctx.log.info(
            "swept the service: every object read",
            crate::Message::Sweep {
                seconds: (took.as_secs_f64() * 10.0).round() / 10.0,
                requests: sent,
                share: format!("{:.1}%", share * 100.0),
                rate_limit: format!("{limit}/{}s", window.as_secs()),
                yields,
            },
        );
    }
}

/// `requests` sent in `took` as a share of a budget of `limit` per
/// `window` (0 to 1, or above when it went over).
pub fn share_used(requests: u64, took: Duration, limit: u32, window: Duration) -> f64 {
    let windows = took.as_secs_f64() / window.as_secs_f64().max(1e-9);
    // A sweep shorter than a window is held to that window's budget.
    requests as f64 / (f64::from(limit.max(1)) * windows.max(1.0))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_used_is_requests_over_the_budget_of_the_time_taken() {
        let minute = Duration::from_secs(60);
        // 105 pages in 42 s: within one window of 600, 17.5%.
        assert!((share_used(105, Duration::from_secs(42), 600, minute) - 0.175).abs() < 1e-9);
        // 1,015 in 406 s at 600/60: 25%.
        assert!((share_used(1015, Duration::from_secs(406), 600, minute) - 0.25).abs() < 1e-3);
    }
}
