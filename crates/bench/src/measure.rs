//! What one phase costs the process: wall time, CPU time (user + system,
//! from `getrusage`), resident memory (`VmRSS` / `VmHWM` of
//! `/proc/self/status`) and API requests.
//!
//! `VmHWM` is process-wide and only grows. Before each phase the probe
//! resets it to the current RSS by writing `5` to `/proc/self/clear_refs`
//! (Linux 4.0+), so the peak read after the phase is that phase's own peak
//! (on top of whatever the process already held). Where the reset is not
//! allowed the peak is the process's monotonic high-water mark, and the
//! report says so (`rss_reset: false`).

use std::time::{Duration, Instant};

/// CPU time of the whole process so far (every thread), user + system.
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// A field of `/proc/self/status` in kB (e.g. `VmHWM`, `VmRSS`).
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

/// Peak resident memory of the process (MiB), since start or the last reset.
pub fn peak_rss_mb() -> f64 {
    status_kb("VmHWM").map_or(0.0, mb)
}

/// Resident memory now (MiB).
pub fn rss_mb() -> f64 {
    status_kb("VmRSS").map_or(0.0, mb)
}

/// Resets the peak RSS to the current RSS; false when the kernel refuses.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// API request counters read at the start and end of a phase.
#[derive(Debug, Clone, Copy, Default)]
pub struct Requests {
    /// Requests the emulator served (its metrics).
    pub served: u64,
    /// Requests the client sent (`requests_sent`, retries included).
    pub sent: u64,
    /// POST, PUT, PATCH and DELETE the emulator served.
    pub writes: u64,
}

impl std::ops::Sub for Requests {
    type Output = Requests;
    fn sub(self, before: Requests) -> Requests {
        Requests {
            served: self.served - before.served,
            sent: self.sent - before.sent,
            writes: self.writes - before.writes,
        }
    }
}

/// What a phase cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    pub wall: Duration,
    pub cpu: Duration,
    /// RSS when the phase started (MiB).
    pub rss_start_mb: f64,
    /// Peak RSS during the phase (MiB; see the module docs).
    pub peak_rss_mb: f64,
    pub requests: Requests,
}

/// Started before a phase, finished after it.
pub struct Probe {
    started: Instant,
    cpu: Duration,
    rss_start_mb: f64,
    requests: Requests,
}

impl Probe {
    pub fn start(requests: Requests) -> Probe {
        reset_peak_rss();
        Probe {
            rss_start_mb: rss_mb(),
            requests,
            cpu: cpu_time(),
            started: Instant::now(),
        }
    }

    pub fn finish(self, requests: Requests) -> Cost {
        let wall = self.started.elapsed();
        let cpu = cpu_time().saturating_sub(self.cpu);
        Cost {
            wall,
            cpu,
            rss_start_mb: self.rss_start_mb,
            peak_rss_mb: peak_rss_mb(),
            requests: requests - self.requests,
        }
    }
}

/// The middle of `times` (sorted in place).
pub(crate) fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// `x` to a tenth: the figures are noisier than that.
pub(crate) fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `d` in milliseconds, to a tenth.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_and_memory_of_the_process() {
        let before = cpu_time();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(std::hint::black_box(x) != 1);
        assert!(cpu_time() >= before);
        assert!(rss_mb() > 0.0);
        assert!(peak_rss_mb() >= rss_mb() - 1.0);
    }
}
