//! Issue 27 item 5: `url = "local"` and `monform serve` use one database,
//! and the state records the service and account it was applied to, so a
//! plan against another one warns before it shows the project as new.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// `monform serve` in `project` with its defaults (no `--db`), killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn project(dir: &Path) {
    std::fs::write(
        dir.join("monform.toml"),
        "[project]\nname = \"targets\"\n\n[api]\nurl = \"local\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("monitors.yaml"),
        "checks:\n  home:\n    checkType: URL\n    name: Home\n    activated: false\n    request: { url: \"https://example.com/\" }\nsnippets:\n  login: { name: Login helper, script: \"console.log(1)\" }\n",
    )
    .unwrap();
}

#[test]
fn serve_shows_what_local_applied_and_a_plan_against_another_service_warns() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    project(dir);
    monform()
        .arg("--dir")
        .arg(dir)
        .args(["apply", "--auto-approve"])
        .assert()
        .success();

    // `monform serve` without --db serves what `url = "local"` applied.
    let port = free_port();
    let served = Served(
        Command::new(assert_cmd::cargo::cargo_bin("monform"))
            .arg("--dir")
            .arg(dir)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://127.0.0.1:{port}");
    let key_file = dir.join(".monform/local.db.key");
    let deadline = Instant::now() + Duration::from_secs(20);
    let key = loop {
        let key = std::fs::read_to_string(&key_file).unwrap_or_default().trim().to_owned();
        let up = !key.is_empty()
            && monform_http::blocking()
                .build()
                .expect("an HTTP client")
                .get(format!("{url}/v1/checks"))
                .bearer_auth(&key)
                .send()
                .is_ok_and(|r| r.status().is_success());
        if up {
            break key;
        }
        assert!(Instant::now() < deadline, "monform serve did not start");
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = monform()
        .arg("--dir")
        .arg(dir)
        .args(["--api-url", &url, "plan", "--detailed-exitcode"])
        .env("MONFORM_API_KEY", &key)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    insta::assert_snapshot!("same_target_no_warning", transcript(&output));
    drop(served);

    // Another service (another account): a warning first, naming both.
    let other = Emulator::start();
    let output = other.monform(dir).args(["plan"]).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");
    insta::assert_snapshot!("other_target_plan", stdout);
    let redacted = stderr
        .replace(&other.server.url(), "http://127.0.0.1:PORT")
        .replace(&other.server.account_id, "OTHER")
        .lines()
        .map(|l| match l.find("local (account ") {
            Some(i) => {
                let end = l[i..].find(')').map_or(l.len(), |e| i + e);
                format!("{}local (account LOCAL{}", &l[..i], &l[end..])
            }
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("other_target_warning", redacted);

    // Applied there, the state follows: no warning against it any more.
    other.monform(dir).args(["apply", "--auto-approve"]).assert().success();
    assert_run!("applied_there_no_warning", other.monform(dir).args(["plan"]));
}
