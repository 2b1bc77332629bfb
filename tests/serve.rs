//! `monform serve`: the real binary on a loopback port.

mod common;

use std::time::{Duration, Instant};

use common::*;

#[test]
fn serves_persists_and_reuses_the_development_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("emulator.db");
    let client = reqwest::blocking::Client::new();
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

#[test]
fn given_keys_are_not_printed() {
    let dir = tempfile::tempdir().unwrap();
    let (served, _) = serve(
        &dir.path().join("e.db"),
        &["--api-key", "sekrit-key", "--account-id", "acme"],
    );
    assert_eq!(served.key, None);
    assert_eq!(served.account, "acme");
    let status = reqwest::blocking::Client::new()
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
    let output = monform().args(["serve", "--rate-limit", "lots"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--rate-limit"), "{}", stderr(&output));
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
    let client = reqwest::blocking::Client::new();
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
