//! The random kill loop, replayable: a test that kills `monform` at random
//! moments draws them from a [`Seed`], printed when the test fails, and
//! `MONFORM_TEST_SEED=<n>` makes the next run draw the same moments.

use std::fmt;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The seed of one test's random numbers. Dropped during a panic (the
/// test failed), it prints how to replay the test.
pub struct Seed(u64);

impl Seed {
    /// `MONFORM_TEST_SEED` when set, else drawn from the clock.
    pub fn new() -> Seed {
        Seed::from_setting(std::env::var("MONFORM_TEST_SEED").ok().as_deref())
    }

    fn from_setting(setting: Option<&str>) -> Seed {
        match setting.map(str::trim).filter(|s| !s.is_empty()) {
            Some(text) => Seed(
                text.parse()
                    .unwrap_or_else(|_| panic!("MONFORM_TEST_SEED={text:?} is not a whole number")),
            ),
            None => Seed(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64),
            ),
        }
    }

    pub fn value(&self) -> u64 {
        self.0
    }

    /// A generator starting from this seed.
    pub fn lcg(&self) -> Lcg {
        Lcg(self.0)
    }
}

impl Default for Seed {
    fn default() -> Seed {
        Seed::new()
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Drop for Seed {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "this test drew its random moments from seed {0}: MONFORM_TEST_SEED={0} replays them",
                self.0
            );
        }
    }
}

/// A small deterministic generator (Knuth's MMIX constants): the same seed
/// gives the same numbers on every machine.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Starts `command` with its output discarded and SIGKILLs it after
/// `min_ms` plus a random part of `spread_ms`.
pub fn kill_randomly(command: &mut Command, random: &mut Lcg, min_ms: u64, spread_ms: u64) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the command starts");
    std::thread::sleep(Duration::from_millis(min_ms + random.below(spread_ms)));
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_seed_replays_the_same_moments() {
        let draw = |seed: &Seed| {
            let mut random = seed.lcg();
            (0..5).map(|_| random.below(600)).collect::<Vec<_>>()
        };
        let given = Seed::from_setting(Some(" 20261125 "));
        assert_eq!(given.value(), 20261125);
        assert_eq!(draw(&given), draw(&Seed::from_setting(Some("20261125"))));
        assert_ne!(draw(&given), draw(&Seed::from_setting(Some("20261126"))));
        assert!(draw(&given).iter().all(|n| *n < 600));
        assert!(std::panic::catch_unwind(|| Seed::from_setting(Some("soon"))).is_err());
    }

    #[test]
    fn without_a_setting_the_seed_comes_from_the_clock() {
        let (a, b) = (Seed::from_setting(None), Seed::from_setting(Some("")));
        assert!(a.value() > 1 && b.value() > 1);
    }
}
