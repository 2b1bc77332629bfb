//! `monform agent`, the private-location agent: the real binary against the
//! real emulator on a loopback port, running checks against a loopback
//! target that counts what reaches it.

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use monform_testkit::targets::{HttpTarget, Reply};
use serde_json::json;

/// An HTTP target on loopback that records every request (head and all)
/// and answers 200 after `delay`.
fn target(delay: Duration) -> HttpTarget {
    HttpTarget::start(move |_| {
        std::thread::sleep(delay);
        Reply::new("200 OK", "text/plain", "ok")
    })
}

/// A `monform agent` process (killed when dropped) and everything it wrote.
struct Agent {
    child: Child,
    health: u16,
    output: Arc<Mutex<String>>,
}

impl Agent {
    fn start(emulator: &Emulator, key: &str, env: &[(&str, &str)]) -> Agent {
        let health = free_port();
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("monform"))
            .arg("agent")
            .env_clear()
            .env("MONFORM_API_URL", emulator.server.url())
            .env("MONFORM_AGENT_KEY", key)
            .env("AGENT_HEALTH_PORT", health.to_string())
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let output = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let mut all = output.lock().unwrap();
                    all.push_str(&line);
                    all.push('\n');
                }
            });
        }
        Agent { child, health, output }
    }

    fn readiness(&self) -> Option<u16> {
        monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("http://127.0.0.1:{}/-/readiness", self.health))
            .timeout(Duration::from_secs(2))
            .send()
            .ok()
            .map(|r| r.status().as_u16())
    }

    fn wait_ready(&self) {
        eventually("the agent to be ready", Duration::from_secs(20), || {
            self.readiness() == Some(200)
        });
        for path in ["/-/liveness", "/health"] {
            let status = monform_http::blocking()
                .build()
                .expect("an HTTP client")
                .get(format!("http://127.0.0.1:{}{path}", self.health))
                .send()
                .unwrap();
            assert_eq!(status.status().as_u16(), 200, "{path}");
        }
    }

    fn terminate(&self) {
        // SAFETY: signalling our own child process by its id.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the readers drain the pipes.
                std::thread::sleep(Duration::from_millis(100));
                return status;
            }
            assert!(Instant::now() < deadline, "the agent did not exit:\n{}", self.output());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Run ids this agent reported.
    fn reported(&self) -> Vec<String> {
        self.output()
            .lines()
            .filter_map(|l| l.split("run ").nth(1)?.split(" reported").next().map(str::to_owned))
            .collect()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn eventually(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A project with the private location `office` and an API check on it
/// calling `url` with a header, applied with `monform apply`; returns the
/// check's id, the location's id and a new raw key of the location.
fn applied(emulator: &Emulator, project: &Path, url: &str, max_response_ms: u32) -> (String, String, String) {
    applied_with(emulator, project, url, max_response_ms, "")
}

/// [`applied`] with more of monform.toml (`[defaults]`, say).
fn applied_with(
    emulator: &Emulator,
    project: &Path,
    url: &str,
    max_response_ms: u32,
    settings: &str,
) -> (String, String, String) {
    std::fs::write(
        project.join("monform.toml"),
        format!("[project]\nname = \"agent-e2e\"\n{settings}"),
    )
    .unwrap();
    std::fs::write(
        project.join("office.toml"),
        format!(
            r#"[privateLocations.office]
name = "Office"
slugName = "office"

[checks.internal-api]
checkType = "API"
name = "Internal API"
frequency = 10
maxResponseTime = {max_response_ms}
degradedResponseTime = {max_response_ms}
privateLocations = ["office"]
request = {{ method = "GET", url = "{url}", headers = [{{ key = "X-Api-Token", value = "hv-SECRET-2" }}] }}
"#
        ),
    )
    .unwrap();
    emulator
        .monform(project)
        .args(["apply", "--auto-approve"])
        .assert()
        .success();
    let check = emulator.call("GET", "/v1/checks", None)[0]["id"].clone();
    let location = emulator.call("GET", "/v1/private-locations", None)[0]["id"].clone();
    let location = location.as_str().unwrap().to_owned();
    // The key as a user gets it: printed once, alone, on standard output.
    let created = emulator
        .monform(project)
        .args(["location-keys", "create", "privateLocations.office"])
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let key = String::from_utf8(created.stdout).unwrap().trim().to_owned();
    let note = String::from_utf8_lossy(&created.stderr);
    assert!(key.starts_with("pl_"), "{key}");
    assert!(!note.contains(&key), "{note}");
    // The key's id and last four characters (shown masked) vary.
    let masked = regex::Regex::new(r"\(\*+([0-9a-z]{4})\)").unwrap();
    let last_four = masked.captures(&note).map(|c| c[1].to_owned());
    assert_eq!(last_four.as_deref(), Some(&key[key.len() - 4..]), "{note}");
    insta::assert_snapshot!("key_created_note", masked.replace(&steady(&note), "(****[last 4])"));
    let check = check.as_str().map_or_else(|| check.to_string(), str::to_owned);
    (check, location, key)
}

fn trigger(emulator: &Emulator, check: &str) -> String {
    let sessions = emulator.call(
        "POST",
        "/v2/check-sessions/trigger",
        Some(json!({ "target": { "checkId": [check] } })),
    );
    sessions["sessions"][0]["checkSessionId"].as_str().unwrap().to_owned()
}

#[test]
fn a_check_in_a_private_location_runs_through_its_agent_which_stops_gracefully() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let target = target(Duration::from_millis(1500));
    let url = format!("http://127.0.0.1:{}/health", target.port);
    let (check, location, key) = applied(&emulator, project.path(), &url, 10_000);
    let mut agent = Agent::start(&emulator, &key, &[]);
    agent.wait_ready();

    let session = emulator.finished_session(&trigger(&emulator, &check));
    assert_eq!(session["status"], "PASSED", "{session:#}\n{}", agent.output());
    assert_eq!(session["runLocations"], json!(["office"]));
    assert_eq!(session["results"][0]["runLocation"], "office");
    // The agent made the one request: the emulator never calls private targets.
    assert_eq!(target.count(), 1);
    assert!(target.requests()[0].contains("x-api-token: hv-SECRET-2"));
    assert_eq!(agent.reported().len(), 1, "{}", agent.output());

    let record = emulator.call("GET", &format!("/v1/private-locations/{location}"), None);
    assert_eq!(record["agentCount"], 1, "{record:#}");
    let running = &record["runningAgents"][0];
    assert_eq!(running["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        (running["count"].clone(), running["isOutdated"].clone()),
        (json!(1), json!(false))
    );
    assert_eq!(running["agents"].as_array().unwrap().len(), 1);
    assert_eq!(record["minAgentVersion"], env!("CARGO_PKG_VERSION"));
    assert!(record["lastSeen"].is_string());
    assert!(record["keys"].to_string().contains("maskedKey") && !record.to_string().contains(&key));

    // A run in flight at SIGTERM: readiness 503 at once, the run finishes and
    // is reported, exit 0.
    let in_flight = trigger(&emulator, &check);
    eventually("the run to reach the target", Duration::from_secs(10), || {
        target.count() == 2
    });
    agent.terminate();
    eventually("readiness 503", Duration::from_secs(1), || {
        agent.readiness() == Some(503)
    });
    let status = agent.wait_exit(Duration::from_secs(20));
    assert!(status.success(), "{status}\n{}", agent.output());
    assert_eq!(emulator.finished_session(&in_flight)["status"], "PASSED");
    assert!(!agent.output().contains(&key));
}

/// Issue 27 item 4: `[defaults] locations` do not reach a check that
/// names private locations (it would run from a data center against an
/// intranet), and `monform test` runs it at its private location, through
/// the agent.
#[test]
fn defaults_add_no_public_location_and_monform_test_runs_at_the_private_one() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let target = target(Duration::ZERO);
    let url = format!("http://127.0.0.1:{}/health", target.port);
    let defaults = "\n[defaults]\nlocations = [\"eu-west-1\", \"us-east-1\"]\n";
    let (check, _, key) = applied_with(&emulator, project.path(), &url, 10_000, defaults);
    let remote = emulator.call("GET", &format!("/v1/checks/{check}"), None);
    assert_eq!(remote["privateLocations"], json!(["office"]), "{remote:#}");
    let public = remote["locations"].as_array().cloned().unwrap_or_default();
    assert!(public.is_empty(), "defaults leaked into the check: {remote:#}");

    let agent = Agent::start(&emulator, &key, &[]);
    agent.wait_ready();
    // Run at `office` only, none of the default public locations.
    let mut test = emulator.monform(project.path());
    let output = test.args(["test", "--timeout", "60"]).output().unwrap();
    let transcript = steady_columns(&transcript(&output));
    insta::assert_snapshot!("test_at_the_private_location", transcript);
    assert_eq!(target.count(), 1, "the agent made the run:\n{}", agent.output());
}

#[test]
fn two_agents_share_ten_runs_and_run_each_once() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let target = target(Duration::from_millis(200));
    let url = format!("http://127.0.0.1:{}/health", target.port);
    let (check, location, key) = applied(&emulator, project.path(), &url, 10_000);
    let one = [("MONFORM_AGENT_CONCURRENCY", "1")];
    let agents = [Agent::start(&emulator, &key, &one), Agent::start(&emulator, &key, &one)];
    agents.iter().for_each(Agent::wait_ready);
    let sessions: Vec<String> = (0..10).map(|_| trigger(&emulator, &check)).collect();
    for session in &sessions {
        assert_eq!(emulator.finished_session(session)["status"], "PASSED");
    }
    assert_eq!(target.count(), 10);
    let (first, second) = (agents[0].reported(), agents[1].reported());
    let mut all: Vec<&String> = first.iter().chain(&second).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 10, "{first:?} {second:?}");
    assert_eq!(first.len() + second.len(), 10);
    assert!(
        !first.is_empty() && !second.is_empty(),
        "both agents work: {first:?} {second:?}"
    );
    let record = emulator.call("GET", &format!("/v1/private-locations/{location}"), None);
    assert_eq!(record["agentCount"], 2);
    assert_eq!(record["runningAgents"][0]["agents"].as_array().unwrap().len(), 2);
}

#[test]
fn a_wrong_or_revoked_key_ends_the_agent_with_a_clear_error_and_no_key() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let (_, location, key) = applied(&emulator, project.path(), "http://127.0.0.1:9/", 1000);
    for (case, wrong) in [
        ("wrong", "pl_0123456789abcdef0123456789abcdef"),
        ("revoked", key.as_str()),
    ] {
        if wrong == key {
            let listed = emulator
                .monform(project.path())
                .args(["location-keys", "list", "privateLocations.office"])
                .output()
                .unwrap();
            let listed = String::from_utf8(listed.stdout).unwrap();
            assert!(
                !listed.contains(&key) && listed.contains(&key[key.len() - 4..]),
                "{listed}"
            );
            let newest = listed.lines().last().unwrap().split_whitespace().next().unwrap();
            emulator
                .monform(project.path())
                .args(["location-keys", "revoke", "privateLocations.office", newest])
                .assert()
                .success()
                .stdout(format!("Key {newest} of privateLocations.office revoked.\n"));
            let keys = emulator.call("GET", &format!("/v1/private-locations/{location}/keys"), None);
            assert!(!keys.to_string().contains(newest), "{keys}");
        }
        let mut agent = Agent::start(&emulator, wrong, &[]);
        let status = agent.wait_exit(Duration::from_secs(15));
        let output = agent.output();
        assert!(!status.success());
        assert!(!output.contains(wrong) && !output.contains(&wrong[3..]), "{output}");
        // What it says on its way out, after its (timestamped) start-up log.
        insta::assert_snapshot!(format!("refused_{case}_key"), tail_from(&output, "error: "));
    }
    // The account's own API key is not an agent key.
    let mut agent = Agent::start(&emulator, &emulator.server.api_key, &[]);
    assert!(!agent.wait_exit(Duration::from_secs(15)).success());
}

#[test]
fn without_an_agent_the_run_times_out_saying_no_agent_is_connected() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let target = target(Duration::ZERO);
    let url = format!("http://127.0.0.1:{}/health", target.port);
    let (check, _, _) = applied(&emulator, project.path(), &url, 1000);
    let session = emulator.finished_session(&trigger(&emulator, &check));
    assert_eq!(session["status"], "TIMED_OUT", "{session:#}");
    insta::assert_snapshot!("no_agent_connected", session["results"][0]["error"].to_string());
    assert_eq!(target.count(), 0, "nobody but an agent calls the target");
}

#[test]
fn error_events_arrive_scrubbed_and_none_with_external_observability_off() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    // Nothing listens there: the run cannot be made from the agent's network.
    let closed = free_port();
    let url = format!("http://127.0.0.1:{closed}/private/orders?token=tok-SECRET-1");
    let (check, _, key) = applied(&emulator, project.path(), &url, 2000);
    let events = || emulator.call("GET", "/v1/agent-events", None);

    let off = Agent::start(&emulator, &key, &[("EXTERNAL_OBSERVABILITY", "off")]);
    off.wait_ready();
    assert_eq!(
        emulator.finished_session(&trigger(&emulator, &check))["status"],
        "FAILED"
    );
    assert_eq!(
        events(),
        json!([]),
        "nothing is reported with EXTERNAL_OBSERVABILITY=off"
    );
    drop(off);

    let on = Agent::start(&emulator, &key, &[("EXTERNAL_OBSERVABILITY", "on")]);
    on.wait_ready();
    assert_eq!(
        emulator.finished_session(&trigger(&emulator, &check))["status"],
        "FAILED"
    );
    eventually("an error event", Duration::from_secs(10), || {
        events().as_array().is_some_and(|e| !e.is_empty())
    });
    let stored = events();
    let event = &stored[0];
    insta::assert_snapshot!("error_event_message", steady(event["message"].as_str().unwrap()));
    assert_eq!(event["agentVersion"], env!("CARGO_PKG_VERSION"));
    assert!(event["platform"].as_str().unwrap().contains(std::env::consts::OS));
    assert!(event["runtimeVersion"].as_str().unwrap().starts_with("rustc"));
    assert!(!event["backtrace"].as_str().unwrap().is_empty());
    let text = stored.to_string();
    for secret in [
        key.as_str(),
        "hv-SECRET-2",
        "tok-SECRET-1",
        &format!("127.0.0.1:{closed}"),
        "/private/orders",
    ] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
}

#[test]
fn an_unreachable_service_is_retried_with_readiness_503() {
    let emulator = Emulator::start();
    let mut agent = Agent::start(
        &emulator,
        "pl_any",
        &[("MONFORM_API_URL", &format!("http://127.0.0.1:{}", free_port()))],
    );
    eventually("the probes", Duration::from_secs(10), || agent.readiness().is_some());
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(agent.readiness(), Some(503));
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "still running:\n{}",
        agent.output()
    );
    assert!(
        agent.output().contains("the service is unreachable"),
        "{}",
        agent.output()
    );
    assert!(
        agent.output().matches("retrying in").count() <= 3,
        "backoff, not a storm:\n{}",
        agent.output()
    );
    agent.terminate();
    assert!(agent.wait_exit(Duration::from_secs(10)).success());
    assert!(!agent.output().contains("pl_any"));
}

/// SIGKILLs an agent (nothing runs on its way out).
fn kill(agent: &mut Agent) {
    agent.child.kill().unwrap();
    agent.child.wait().unwrap();
}

#[test]
fn a_run_left_by_a_killed_agent_is_taken_again_once_by_the_restarted_one() {
    // A heartbeat of 1 s: a silent agent's leases go after 3 s, not 30 s.
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        agent_heartbeat: Duration::from_secs(1),
        ..Default::default()
    });
    let project = tempfile::tempdir().unwrap();
    let target = target(Duration::from_secs(3));
    let url = format!("http://127.0.0.1:{}/health", target.port);
    let (check, _, key) = applied(&emulator, project.path(), &url, 10_000);
    let one = [("MONFORM_AGENT_CONCURRENCY", "1")];

    // Killed while its run waits on the target: the agent started in its
    // place takes the run and the session passes, long before its deadline.
    let mut first = Agent::start(&emulator, &key, &one);
    first.wait_ready();
    let session = trigger(&emulator, &check);
    eventually("the first agent's request", Duration::from_secs(10), || {
        target.count() == 1
    });
    kill(&mut first);
    let mut restarted = Agent::start(&emulator, &key, &one);
    restarted.wait_ready();
    let started = Instant::now();
    let passed = emulator.finished_session(&session);
    assert_eq!(passed["status"], "PASSED", "{passed:#}\n{}", restarted.output());
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert_eq!(target.count(), 2, "run again once");
    assert_eq!(restarted.reported().len(), 1, "{}", restarted.output());

    // Once: a run whose second agent is killed too is not taken a third
    // time; it ends at its deadline naming both agents.
    let session = trigger(&emulator, &check);
    eventually("the second agent's request", Duration::from_secs(10), || {
        target.count() == 3
    });
    kill(&mut restarted);
    let mut third = Agent::start(&emulator, &key, &one);
    third.wait_ready();
    eventually("the third agent's request", Duration::from_secs(10), || {
        target.count() == 4
    });
    kill(&mut third);
    let fourth = Agent::start(&emulator, &key, &one);
    fourth.wait_ready();
    let failed = emulator.finished_session(&session);
    assert_ne!(failed["status"], "PASSED", "{failed:#}");
    let error = failed["results"][0]["error"].to_string();
    assert!(error.contains("neither reported"), "{error}");
    assert_eq!(target.count(), 4, "no third run\n{}", fourth.output());
}

#[test]
fn help_lists_the_environment_one_per_line_and_no_option_it_ignores() {
    let output = monform().args(["agent", "--help"]).output().unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!("agent_help", stdout(&output));
    assert_run!("agent_refuses_dir", monform().args(["agent", "--dir", "somewhere"]));
}

#[test]
fn the_log_names_the_location_each_run_and_what_shutdown_left_unreported() {
    let emulator = Emulator::start();
    let project = tempfile::tempdir().unwrap();
    let target = target(Duration::from_millis(4000));
    let url = format!("http://127.0.0.1:{}/health", target.port);
    let (check, _, key) = applied(&emulator, project.path(), &url, 10_000);
    let mut agent = Agent::start(&emulator, &key, &[("MONFORM_AGENT_SHUTDOWN_GRACE", "1")]);
    agent.wait_ready();
    assert!(
        agent.output().contains("as an agent of private location office"),
        "{}",
        agent.output()
    );
    let first = trigger(&emulator, &check);
    assert_eq!(emulator.finished_session(&first)["status"], "PASSED");
    let reported = regex::Regex::new(r#"run \S+ reported: PASSED, check "Internal API" in \d+ ms"#).unwrap();
    eventually("the run's log line", Duration::from_secs(5), || {
        reported.is_match(&agent.output())
    });
    // A run still going when the grace ends is named as not reported.
    trigger(&emulator, &check);
    eventually("the run to reach the target", Duration::from_secs(10), || {
        target.count() == 2
    });
    agent.terminate();
    let status = agent.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status}\n{}", agent.output());
    let output = agent.output();
    assert!(
        regex::Regex::new(r#"not reported at shutdown: run \S+ of check "Internal API""#)
            .unwrap()
            .is_match(&output),
        "{output}"
    );
}
