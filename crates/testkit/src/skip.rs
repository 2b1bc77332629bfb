//! A test that cannot run here (no PostgreSQL, no Chromium) says so where
//! `cargo test` shows it, not only with `--nocapture`: it returns early and
//! libtest counts it as passed, so its line is the only sign it did not run.
//!
//! libtest captures what a test prints through `print!` and `eprint!`, not
//! what it writes to the standard error itself: [`skipped`] writes there,
//! one line per skipped test, between libtest's own lines. (A summary at
//! the end would need a hook after the last test, which libtest does not
//! have, and tests finish in any order; `.ci/run` provides both tools and
//! requires them, so a skip only happens on a developer's machine, in the
//! run they are looking at.)

use std::io::Write;

/// Says on the standard error, uncaptured, that the running test did not
/// run and why: `SKIPPED <test>: <why> (counted as passed)`.
pub fn skipped(why: &str) {
    let _ = std::io::stderr().write_all(line(std::thread::current().name(), why).as_bytes());
}

/// The line [`skipped`] writes; libtest names each test's thread after the
/// test (`main` when it runs tests on the main thread, one at a time).
fn line(thread: Option<&str>, why: &str) -> String {
    let test = thread.filter(|name| *name != "main").unwrap_or("a test");
    format!("\nSKIPPED {test}: {why} (counted as passed)\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_test_and_why() {
        assert_eq!(
            line(Some("state::postgres_conformance"), "no PostgreSQL"),
            "\nSKIPPED state::postgres_conformance: no PostgreSQL (counted as passed)\n"
        );
        assert_eq!(
            line(Some("main"), "no Chromium"),
            "\nSKIPPED a test: no Chromium (counted as passed)\n"
        );
    }
}
