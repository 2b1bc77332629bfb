//! `monform reconcile --listen` under a flood of idle connections (issue 43
//! item 5): a neighbour on the network that opens more connections than
//! the process may hold descriptors must not cut `/healthz` off, nor leave
//! the loop unable to open monform.toml.

use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{CHECKS, PATIENCE, check, project, ui_edit, wait_until};
use crate::common::receiver::Receiver;
use crate::common::*;

/// The reconciler's descriptor limit, as `ulimit -n 256` in its container.
const DESCRIPTORS: u64 = 256;

/// A reconciler started by a test, killed if the test fails first.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Descriptors a process holds (Linux).
fn descriptors(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd")).ok().map(|d| d.count())
}

#[test]
fn idle_connections_to_the_metrics_listener_starve_neither_healthz_nor_the_loop() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project("1s", "", &receiver.url, CHECKS);
    let dir = project.path();
    emulator.applied(dir);

    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let log_path = dir.join("reconcile.log");
    let mut command = emulator.background(dir, &["reconcile", "--listen", &listen]);
    command.stderr(std::fs::File::create(&log_path).unwrap());
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: DESCRIPTORS,
                rlim_max: DESCRIPTORS,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let child = Running(command.spawn().expect("monform reconcile starts"));
    let pid = child.0.id();
    let get = |path: &str, timeout: Duration| {
        monform_http::blocking()
            .timeout(timeout)
            .build()
            .unwrap()
            .get(format!("http://127.0.0.1:{port}{path}"))
            .send()
    };
    wait_until("/readyz", PATIENCE, || {
        get("/readyz", Duration::from_secs(2)).is_ok_and(|r| r.status().is_success())
    });

    // 400 connections that send nothing and stay open: more than the
    // reconciler may hold descriptors.
    let address: SocketAddr = listen.parse().unwrap();
    let mut flood = Vec::new();
    let mut refused = None;
    for i in 0..400 {
        match TcpStream::connect_timeout(&address, Duration::from_secs(3)) {
            Ok(stream) => flood.push(stream),
            // The kernel's queue of connections to accept is full: the
            // listener no longer takes any (checked at the end).
            Err(error) => {
                refused = Some(format!("connection {i}: {error}"));
                break;
            }
        }
    }
    let mut most = 0;
    let mut count = || {
        if let Some(n) = descriptors(pid) {
            most = most.max(n);
        }
    };
    std::thread::sleep(Duration::from_millis(500));
    count();

    let asked = Instant::now();
    let health = get("/healthz", Duration::from_secs(5));
    let took = asked.elapsed();
    let health = health.unwrap_or_else(|e| {
        panic!(
            "/healthz while 400 connections are open, after {took:?}: {e}\n{}",
            log()
        )
    });
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().unwrap(), "ok\n");
    assert!(took < Duration::from_secs(3), "/healthz answered after {took:?}");
    count();

    // The loop still reads the files and acts: an edit in the UI of a
    // `drift: revert` check is put back at the next intervals.
    ui_edit(&emulator, "API", json!({"frequency": 15}));
    let reverted = Instant::now() + PATIENCE;
    while check(&emulator, "API")["frequency"] != 5 {
        count();
        assert!(Instant::now() < reverted, "no revert within {PATIENCE:?}:\n{}", log());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        most < DESCRIPTORS as usize / 2,
        "the reconciler held {most} descriptors while 400 connections were open"
    );
    assert_eq!(
        refused, None,
        "every connection is taken (and the oldest idle ones closed)"
    );
    let metrics = get("/metrics", Duration::from_secs(5)).expect("/metrics after the flood");
    assert_eq!(metrics.status(), 200);
    drop(flood);
    drop(child);
}
