//! `monform serve`: the real binary on a loopback port.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// A `monform serve` process, killed when dropped.
struct Served {
    child: Child,
    url: String,
    key: Option<String>,
    account: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the server and reads its start-up lines.
fn serve(db: &std::path::Path, extra: &[&str]) -> (Served, Duration) {
    let started = Instant::now();
    let port = free_port();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--db"])
        .arg(db)
        .args(extra)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut url, mut key, mut account) = (String::new(), None, String::new());
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("monform emulator listening on ") {
            url = rest.to_owned();
        } else if let Some(rest) = line.trim().strip_prefix("API key:") {
            key = Some(rest.trim().to_owned());
        } else if let Some(rest) = line.trim().strip_prefix("account:") {
            account = rest.trim().to_owned();
        } else if line.trim().starts_with("try:") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    (
        Served {
            child,
            url,
            key,
            account,
        },
        started.elapsed(),
    )
}

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
