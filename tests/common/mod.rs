//! Shared set-up for the end-to-end tests: the real `monform` binary run on
//! project folders.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod receiver;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// `monform` with a clean, colourless environment.
pub fn monform() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("monform").expect("monform binary");
    command
        .env("NO_COLOR", "1")
        .env_remove("MONFORM_API_KEY")
        .env_remove("MONFORM_ACCOUNT_ID");
    command
}

/// A copy of `examples/<name>` in a fresh temporary folder.
pub fn copy_example(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    copy_dir(&repo_root().join("examples").join(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read folder") {
        let entry = entry.expect("folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Replaces `from` by `to` in a file of a project, failing if `from` is absent
/// (so a changed example cannot silently make a test pointless).
pub fn edit(project: &Path, file: &str, from: &str, to: &str) {
    let path = project.join(file);
    let text = std::fs::read_to_string(&path).expect("read file");
    assert!(text.contains(from), "{file} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write file");
}

pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The real emulator on a loopback port, running on its own runtime.
pub struct Emulator {
    pub server: monform_emulator::Server,
    runtime: tokio::runtime::Runtime,
}

impl Emulator {
    pub fn start() -> Emulator {
        Emulator::with(monform_emulator::Config {
            rate_limit: None,
            ..Default::default()
        })
    }

    pub fn with(config: monform_emulator::Config) -> Emulator {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let server = runtime
            .block_on(monform_emulator::start_local(config))
            .expect("emulator starts");
        Emulator { server, runtime }
    }

    /// `monform` pointed at this emulator.
    pub fn monform(&self, project: &Path) -> assert_cmd::Command {
        let mut command = monform();
        command
            .arg("--dir")
            .arg(project)
            .args(["--api-url", &self.server.url(), "--color", "never"])
            .env("MONFORM_API_KEY", &self.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &self.server.account_id);
        command
    }

    /// A direct API call, for changes "behind monform's back".
    pub fn call(&self, method: &str, path: &str, body: Option<serde_json::Value>) -> serde_json::Value {
        let client = reqwest::blocking::Client::new();
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = client
            .request(method, format!("{}{path}", self.server.url()))
            .bearer_auth(&self.server.api_key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().expect("request sent");
        let status = response.status();
        let text = response.text().unwrap_or_default();
        assert!(status.is_success(), "{path}: {status}: {text}");
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }

    /// `monform --dir DIR --api-url URL ARGS` as a background process, its
    /// output discarded: for tests that kill or race it.
    pub fn background(&self, project: &Path, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"));
        command
            .arg("--dir")
            .arg(project)
            .args(["--api-url", &self.server.url(), "--color", "never"])
            .args(args)
            .env("MONFORM_API_KEY", &self.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &self.server.account_id)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    }

    /// Starts `monform ARGS` in the background and SIGKILLs it after
    /// `min_ms` plus a random part of `spread_ms`.
    pub fn kill_randomly(&self, project: &Path, args: &[&str], random: &mut Lcg, min_ms: u64, spread_ms: u64) {
        let mut child = self.background(project, args).spawn().expect("monform starts");
        std::thread::sleep(std::time::Duration::from_millis(min_ms + random.below(spread_ms)));
        let _ = child.kill();
        let _ = child.wait();
    }

    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

/// A copy of `tests/fixtures/<name>` in a fresh temporary folder.
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    copy_dir(&repo_root().join("tests/fixtures").join(name), dir.path());
    dir
}

/// Output with remote ids replaced, for snapshots.
pub fn redact_ids(text: &str) -> String {
    let uuid = regex_lite(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    let id = regex_lite(r", id [0-9]+\)");
    let remote = regex_lite(r#""remoteId": "[0-9]+""#);
    let remote_words = regex_lite(r"\(remote id [0-9]+\)");
    let text = uuid.replace_all(text, "[uuid]");
    let text = id.replace_all(&text, ", id [n])");
    let text = remote_words.replace_all(&text, "(remote id [n])");
    remote.replace_all(&text, "\"remoteId\": \"[n]\"").into_owned()
}

fn regex_lite(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("valid pattern")
}

/// A small deterministic generator, for kill times (seeded and printed by the tests).
pub struct Lcg(pub u64);

impl Lcg {
    /// Seeded from the clock; the tests print the seed when they fail.
    pub fn from_clock() -> Lcg {
        Lcg(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64))
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Secret values given to examples/full through the environment.
pub const FULL_EXAMPLE_SECRETS: [(&str, &str); 4] = [
    ("SIGNING_KEY", "sig-abc-123-secret"),
    ("MONITOR_PASSWORD", "pw-xyz-789-secret"),
    ("OPS_WEBHOOK_SECRET", "hook-secret-456"),
    ("OFFICE_PROXY_URL", "http://user:proxypass-secret@proxy.internal:3128"),
];

/// The test database, or `None` (saying why) when there is none.
pub fn postgres() -> Option<String> {
    let url = std::env::var("MONFORM_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    if url.is_none() {
        eprintln!("skipped: MONFORM_TEST_POSTGRES_URL is not set (no PostgreSQL could be started; see .ci/run)");
    }
    url
}

/// A project name no other test (or earlier run) uses in the shared database.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// A `monform serve` process, killed when dropped.
pub struct Served {
    pub child: std::process::Child,
    pub url: String,
    pub key: Option<String>,
    pub account: String,
    /// What it wrote to stderr after its start-up lines.
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port()
}

/// Starts `monform serve` on a free loopback port and reads its start-up lines.
pub fn serve(db: &Path, extra: &[&str]) -> (Served, std::time::Duration) {
    serve_logging(db, extra, "warn")
}

/// As [`serve`], logging at `level` (`RUST_LOG`) into [`Served::log`].
pub fn serve_logging(db: &Path, extra: &[&str], level: &str) -> (Served, std::time::Duration) {
    serve_at(db, free_port(), extra, level)
}

/// As [`serve_logging`], on a given port (to start it again where it was).
pub fn serve_at(db: &Path, port: u16, extra: &[&str], level: &str) -> (Served, std::time::Duration) {
    use std::io::{BufRead, BufReader};
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--db"])
        .arg(db)
        .args(extra)
        .env("RUST_LOG", level)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("monform serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let (mut url, mut key, mut account) = (String::new(), None, String::new());
    for line in lines.by_ref() {
        let line = line.expect("a line");
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
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = std::sync::Arc::clone(&log);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let Ok(mut log) = sink.lock() {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
    let served = Served {
        child,
        url,
        key,
        account,
        log,
    };
    (served, started.elapsed())
}
