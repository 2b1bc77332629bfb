//! The client paces itself at the rate limit the server states: the real
//! binary applying 2,000 checks to the real emulator on a loopback port,
//! counting requests per window and waits (never timing them).

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use monform_emulator::{Config, RateLimit};

const CHECKS: usize = 2000;

/// A project of `CHECKS` ICMP checks.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"paced\"\n").unwrap();
    let mut checks = String::from("checks:\n");
    for i in 0..CHECKS {
        checks.push_str(&format!(
            "  c{i}: {{ checkType: ICMP, name: Check {i}, request: {{ hostname: h{i}.example.com }} }}\n"
        ));
    }
    std::fs::write(dir.path().join("checks.yaml"), checks).unwrap();
    dir
}

fn limited(requests: u32) -> Emulator {
    Emulator::with(Config {
        rate_limit: Some(RateLimit {
            requests,
            window: Duration::from_secs(60),
        }),
        ..Default::default()
    })
}

fn apply(emulator: &Emulator, dir: &Path) -> std::process::Child {
    let mut command = emulator.background(dir, &["apply", "--auto-approve"]);
    command.stderr(Stdio::piped());
    command.spawn().expect("monform starts")
}

/// At 6,000 per minute the server's budget replaces the documented 600: the
/// whole cold apply fits in one window, with no wait and no 429.
#[test]
fn a_cold_apply_goes_at_the_pace_the_server_states() {
    let emulator = limited(6000);
    let dir = project();
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    let errors = stderr(&output);
    assert!(output.status.success(), "{errors}");
    insta::assert_snapshot!("cold_apply_summary", tail_from(&errors, "Apply complete"));
    assert!(!errors.contains("waiting"), "no wait for budget: {errors}");
    let metrics = &emulator.server.app.metrics;
    assert_eq!(metrics.with_status("429"), 0);
    let requests = metrics.total(None);
    assert!(
        (CHECKS as u64..=6000).contains(&requests),
        "{requests} requests, all in one window of 6,000"
    );
}

/// At the default 600 per minute the same apply sends 600 requests, says on
/// its progress line that it waits for the window (so 2,000 checks need at
/// least three more windows: ten times the time of 6,000 per minute), and
/// never draws a 429.
#[test]
fn at_the_default_limit_it_waits_for_each_window_and_says_so() {
    let emulator = limited(600);
    let dir = project();
    let mut child = apply(&emulator, dir.path());
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut waiting = None;
    let mut done = 0;
    for line in lines.map_while(Result::ok) {
        if line.starts_with("waiting") {
            waiting = Some(line);
            break;
        }
        done += usize::from(line.ends_with(": created"));
    }
    let sent = emulator.server.app.metrics.total(None);
    let rejected = emulator.server.app.metrics.with_status("429");
    let _ = child.kill();
    let _ = child.wait();
    let waiting = waiting.expect("the apply says it waits");
    insta::assert_snapshot!("waiting_line", steady(&waiting));
    assert_eq!(rejected, 0);
    assert!(sent <= 600, "{sent} requests in the first window");
    assert!((500..CHECKS).contains(&done), "{done} checks created before the wait");
}
