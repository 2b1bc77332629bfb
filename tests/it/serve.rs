//! `monform serve`: the real binary on a loopback port.

use crate::common;

use std::time::{Duration, Instant};

use common::*;

#[test]
fn serves_persists_and_reuses_the_development_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("emulator.db");
    let client = monform_http::blocking().build().expect("an HTTP client");
    let (first, startup) = serve(&db, &[]);
    assert!(startup < Duration::from_secs(10), "start-up took {startup:?}");
    let key = first.key.clone().expect("a development key is printed");
    let created: serde_json::Value = client
        .post(format!("{}/v1/snippets", first.url))
        .bearer_auth(&key)
        .json(&serde_json::json!({"name": "Login", "script": "console.log(1)"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(created["name"], "Login");
    let account = first.account.clone();
    drop(first);

    let (second, _) = serve(&db, &[]);
    assert_eq!(
        second.key.as_deref(),
        Some(key.as_str()),
        "the key is reused from the database"
    );
    assert_eq!(second.account, account);
    let snippets: serde_json::Value = client
        .get(format!("{}/v1/snippets", second.url))
        .bearer_auth(&key)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(snippets[0]["name"], "Login", "data survives a restart");
}

/// Every byte the database left on disk: the file, its log and anything beside it.
fn database_bytes(db: &std::path::Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        bytes.extend(std::fs::read(std::path::PathBuf::from(name)).unwrap_or_default());
    }
    bytes
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn keys_are_kept_as_digests_and_the_development_key_beside_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("emulator.db");
    let (served, _) = serve(&db, &["--api-key", "given-key-0123456789"]);
    let status = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(format!("{}/v1/checks", served.url))
        .bearer_auth("given-key-0123456789")
        .send()
        .unwrap()
        .status();
    assert_eq!(status, 200);
    drop(served);
    let (served, _) = serve(&db, &[]);
    let key = served.key.clone().expect("a development key is printed");
    drop(served);
    let bytes = database_bytes(&db);
    assert!(!bytes.is_empty());
    for key in ["given-key-0123456789", key.as_str()] {
        assert!(!holds(&bytes, key), "{key} is in the database");
    }
    let kept = dir.path().join("emulator.db.key");
    assert_eq!(std::fs::read_to_string(&kept).unwrap().trim(), key);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "only its owner reads the key file");
    }
}

#[test]
fn given_keys_are_not_printed() {
    let dir = tempfile::tempdir().unwrap();
    let (served, _) = serve(
        &dir.path().join("e.db"),
        &["--api-key", "sekrit-key", "--account-id", "acme"],
    );
    assert_eq!(served.key, None);
    assert_eq!(served.account, "acme");
    let status = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(format!("{}/v1/checks", served.url))
        .bearer_auth("sekrit-key")
        .header("X-Service-Account", "acme")
        .send()
        .unwrap()
        .status();
    assert_eq!(status, 200);
}

#[test]
fn bad_flags_are_explained() {
    let mut serve = monform();
    assert_run!("bad_rate_limit", serve.args(["serve", "--rate-limit", "lots"]));
}

/// A loopback HTTP endpoint that answers 200 and hands over each request it reads.
fn webhook_receiver() -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            // Headers, then as much body as Content-Length says.
            while let Ok(n) = stream.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(str::trim)
                                .map(str::to_owned)
                        })
                        .and_then(|l| l.parse::<usize>().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break;
                    }
                }
            }
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
            let _ = sender.send(String::from_utf8_lossy(&request).to_string());
        }
    });
    (url, received)
}

#[test]
fn scheduled_checks_run_alert_and_notify_a_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let (served, _) = serve(&dir.path().join("e.db"), &["--schedule", "--rate-limit", "off"]);
    let key = served.key.clone().unwrap();
    let client = monform_http::blocking().build().expect("an HTTP client");
    let post = |path: &str, body: serde_json::Value| -> serde_json::Value {
        let response = client
            .post(format!("{}{path}", served.url))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
        response.json().unwrap()
    };
    let (hook_url, received) = webhook_receiver();
    let channel = post(
        "/v1/alert-channels",
        serde_json::json!({ "type": "WEBHOOK", "config": { "name": "hook", "url": hook_url, "method": "POST" } }),
    );
    // Nothing listens on this port: every run fails.
    let closed = free_port();
    let check = post(
        "/v1/checks/tcp?autoAssignAlerts=false",
        serde_json::json!({
            "name": "Database port",
            "frequency": 1,
            "doubleCheck": false,
            "request": { "hostname": "127.0.0.1", "port": closed },
            "alertChannelSubscriptions": [{ "alertChannelId": channel["id"], "activated": true }],
        }),
    );
    let request = received
        .recv_timeout(Duration::from_secs(30))
        .expect("the scheduled run's failure alert reaches the webhook");
    assert!(request.starts_with("POST /hook"), "{request}");
    assert!(request.contains("ALERT_FAILURE"), "{request}");
    assert!(request.contains("Database port"), "{request}");

    let get = |path: &str| -> serde_json::Value {
        client
            .get(format!("{}{path}", served.url))
            .bearer_auth(&key)
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    let id = check["id"].as_str().unwrap();
    let results = get(&format!("/v1/check-results/{id}"));
    assert_eq!(results[0]["hasErrors"], true, "{results}");
    let alerts = get("/v1/check-alerts");
    assert_eq!(alerts[0]["alertType"], "ALERT_FAILURE", "{alerts}");
    // The notification is recorded once sent.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let notifications = get("/v1/alert-notifications");
        if notifications[0]["status"] == "SUCCESS" {
            assert_eq!(notifications[0]["notificationResult"], "ok");
            break;
        }
        assert!(Instant::now() < deadline, "{notifications}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Descriptors a process holds (Linux), to see the connection limit hold.
fn descriptors(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd")).ok().map(|d| d.count())
}

/// A client connection of the flood, and how it misbehaves.
struct Slow {
    stream: std::net::TcpStream,
    kind: &'static str,
    received: Vec<u8>,
    closed: bool,
}

#[test]
fn idle_and_slow_connections_are_closed_and_limited_while_real_requests_get_through() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (served, _) = serve(
        &dir.path().join("e.db"),
        &[
            "--api-key",
            "flood-key",
            "--rate-limit",
            "off",
            "--header-read-timeout",
            "1",
            "--body-timeout",
            "2",
            "--idle-timeout",
            "2",
            "--max-connections",
            "40",
        ],
    );
    let pid = served.child.id();
    let baseline = descriptors(pid);
    let address = served.url.trim_start_matches("http://").to_owned();
    let head = "POST /v1/snippets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer flood-key\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"na";
    let mut flood = Vec::new();
    for i in 0..240 {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        let kind = match i % 4 {
            0 => "silent",
            1 => {
                stream.write_all(b"GET /v1/checks HTTP/1.1\r\nHost: x\r\n").unwrap();
                "slow head"
            }
            2 => {
                stream.write_all(head.as_bytes()).unwrap();
                "slow body"
            }
            _ => {
                stream
                    .write_all(b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
                    .unwrap();
                "idle"
            }
        };
        stream.set_nonblocking(true).unwrap();
        flood.push(Slow {
            stream,
            kind,
            received: Vec::new(),
            closed: false,
        });
    }
    // A real request while the flood holds every slot: it waits for slots
    // the timeouts free, and succeeds.
    let url = served.url.clone();
    let real = std::thread::spawn(move || {
        let started = Instant::now();
        let status = monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("{url}/v1/checks"))
            .bearer_auth("flood-key")
            .timeout(Duration::from_secs(60))
            .send()
            .map(|r| r.status().as_u16());
        (status, started.elapsed())
    });
    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);
    let mut most = 0;
    let mut buffer = [0u8; 4096];
    while flood.iter().any(|s| !s.closed) && Instant::now() < deadline {
        for slow in flood.iter_mut().filter(|s| !s.closed) {
            if slow.kind == "slow head" {
                // A byte now and then: trickling does not buy time.
                let _ = slow.stream.write(b"X");
            }
            loop {
                match slow.stream.read(&mut buffer) {
                    Ok(0) => slow.closed = true,
                    Ok(n) => {
                        slow.received.extend_from_slice(&buffer[..n]);
                        continue;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => slow.closed = true,
                }
                break;
            }
        }
        if let Some(n) = descriptors(pid) {
            most = most.max(n);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let took = started.elapsed();
    let open: Vec<&str> = flood.iter().filter(|s| !s.closed).map(|s| s.kind).collect();
    assert!(open.is_empty(), "still open after {took:?}: {open:?}");
    for slow in &flood {
        let answer = String::from_utf8_lossy(&slow.received);
        match slow.kind {
            "idle" => assert!(answer.starts_with("HTTP/1.1 200"), "{answer}"),
            "slow body" => assert!(answer.starts_with("HTTP/1.1 408"), "{answer}"),
            _ => assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer}"),
        }
    }
    let (status, waited) = real.join().unwrap();
    assert_eq!(status.ok(), Some(200), "the real request");
    if let Some(baseline) = baseline {
        assert!(
            most <= baseline + 40,
            "{most} descriptors for {baseline} before the flood"
        );
    }
    eprintln!(
        "240 slow connections closed in {took:?}; a real request waited {waited:?}; descriptors at most {most} ({baseline:?} before)"
    );
    // After the flood, requests are served at once.
    let started = Instant::now();
    let status = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(format!("{}/v1/checks", served.url))
        .bearer_auth("flood-key")
        .send()
        .unwrap()
        .status();
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
}

/// `monform serve` on a free port with `RUST_LOG=level` and its stderr a
/// pipe: its start-up lines (to `try:`), then, after `use` ran and it was
/// stopped, the rest of what it wrote.
fn serve_piped(db: &std::path::Path, level: &str, use_it: impl FnOnce(&str)) -> (String, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port()), "--db"])
        .arg(db)
        .env("RUST_LOG", level)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut start = String::new();
    while reader.read_line(&mut start).unwrap() > 0 && !start.lines().last().unwrap_or("").contains("try:") {}
    use_it(&start);
    std::thread::sleep(Duration::from_millis(200));
    let _ = child.kill();
    let _ = child.wait();
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    (start, rest)
}

#[test]
fn a_ready_export_line_and_plain_logs_without_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let request = |start: &str| {
        let export = start
            .lines()
            .find_map(|l| l.strip_prefix("export "))
            .unwrap_or_else(|| panic!("no export line:\n{start}"));
        let vars: std::collections::HashMap<&str, &str> =
            export.split(' ').filter_map(|pair| pair.split_once('=')).collect();
        let status = monform_http::blocking()
            .build()
            .expect("an HTTP client")
            .get(format!("{}/v1/checks", vars["MONFORM_API_URL"]))
            .bearer_auth(vars["MONFORM_API_KEY"])
            .header("X-Service-Account", vars["MONFORM_ACCOUNT_ID"])
            .send()
            .unwrap()
            .status();
        assert_eq!(status, 200, "the export line's values work");
    };
    let (start, rest) = serve_piped(&db, "info", request);
    assert!(
        !start.contains('\x1b') && !rest.contains('\x1b'),
        "no colours in a pipe:\n{start}{rest}"
    );
    assert!(!rest.contains("request"), "requests are not logged at info:\n{rest}");
    let (_, rest) = serve_piped(&db, "monform=debug", request);
    assert!(
        rest.contains("request") && rest.contains("/v1/checks"),
        "at debug they are:\n{rest}"
    );
    assert!(!rest.contains('\x1b'), "no colours in a pipe:\n{rest}");
}

/// Issue 25 item 7: the connection limits are flags `monform serve --help`
/// explains with their defaults, and every flag of `serve` has its row in
/// the emulator guide's table (`--fault-rate P`, `--fault-seed N` share one).
#[test]
fn help_and_the_emulator_guide_document_every_serve_flag_and_the_connection_limits() {
    let output = monform().args(["serve", "--help"]).output().unwrap();
    assert!(output.status.success());
    let help = stdout(&output);
    for (flag, default) in [
        ("--header-read-timeout <SECS>", "[default: 10]"),
        ("--body-timeout <SECS>", "[default: 30]"),
        ("--idle-timeout <SECS>", "[default: 60]"),
        ("--max-connections <N>", "[default: 512]"),
    ] {
        // The flag's line and its description's wrapped lines, up to the next flag.
        let lines: Vec<&str> = help.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(flag))
            .unwrap_or_else(|| panic!("{flag} not in serve --help:\n{help}"));
        let block: Vec<&str> = std::iter::once(lines[at])
            .chain(
                lines[at + 1..]
                    .iter()
                    .copied()
                    .take_while(|l| !l.trim_start().starts_with('-')),
            )
            .collect();
        let block = block.join(" ");
        assert!(block.trim_end().ends_with(default), "{block}");
    }
    let readme = std::fs::read_to_string(repo_root().join("docs/src/guide/emulator.md")).unwrap();
    let global = ["--dir", "--api-url", "--env", "--color", "--path-prefix", "--help"];
    let flags: Vec<&str> = help
        .lines()
        .filter_map(|l| l.trim_start().split_once("--"))
        .filter(|(short, _)| short.is_empty() || short.ends_with(", "))
        .filter_map(|(_, rest)| rest.split([' ', '=']).next())
        .collect();
    assert!(flags.len() > 15, "{flags:?}");
    for flag in flags {
        let flag = format!("--{flag}");
        if global.contains(&flag.as_str()) {
            continue;
        }
        assert!(
            readme.contains(&format!("| `{flag} "))
                || readme.contains(&format!("| `{flag}`"))
                || readme.contains(&format!(", `{flag} ")),
            "docs/src/guide/emulator.md's serve table has no row for {flag}"
        );
    }
}
