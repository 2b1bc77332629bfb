//! Shared set-up for the end-to-end tests: the real `monform` binary run on
//! project folders.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod clock;
pub mod conflicts;
pub mod lsp;
pub mod receiver;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// `monform` with a clean, colourless environment: no credentials, no
/// API URL, no GitHub Actions variables (links in Markdown), and a user
/// folder of its own ([`user_config_home`]), never the real
/// `~/.config/monform` (its config.toml or trusted projects).
pub fn monform() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("monform").expect("monform binary");
    command
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", user_config_home())
        .env_remove("MONFORM_API_KEY")
        .env_remove("MONFORM_ACCOUNT_ID")
        .env_remove("MONFORM_API_URL")
        .env_remove("MONFORM_PATH_PREFIX")
        .env_remove("GITHUB_SERVER_URL")
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("GITHUB_SHA");
    command
}

/// The `XDG_CONFIG_HOME` every spawned `monform` gets: an empty folder
/// under the target directory (a test that trusts projects passes one
/// of its own).
pub fn user_config_home() -> PathBuf {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-user-config");
    std::fs::create_dir_all(&home).expect("the tests' user folder");
    home
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

pub use monform_testkit::targets::free_port;
pub use monform_testkit::{Emulator, Lcg, Seed, redact_ids};

/// `monform` run against an [`Emulator`].
pub trait Monform {
    /// `monform --dir DIR --api-url URL` with the emulator's key and account.
    fn monform(&self, project: &Path) -> assert_cmd::Command;
    /// As [`Monform::monform`] with `args`, as a background process whose
    /// output is discarded: for tests that kill or race it.
    fn background(&self, project: &Path, args: &[&str]) -> std::process::Command;
    /// Starts `monform ARGS` in the background and SIGKILLs it after
    /// `min_ms` plus a random part of `spread_ms`.
    fn kill_randomly(&self, project: &Path, args: &[&str], random: &mut Lcg, min_ms: u64, spread_ms: u64);
    /// `monform apply --auto-approve` on `project`, which must succeed: the
    /// set-up most tests against the service start with.
    fn applied(&self, project: &Path) -> std::process::Output;
}

impl Monform for Emulator {
    fn monform(&self, project: &Path) -> assert_cmd::Command {
        let mut command = monform();
        command
            .arg("--dir")
            .arg(project)
            .args(["--api-url", &self.server.url(), "--color", "never"])
            .env("MONFORM_API_KEY", &self.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &self.server.account_id);
        command
    }

    fn background(&self, project: &Path, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("monform"));
        command
            .env("XDG_CONFIG_HOME", user_config_home())
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

    fn kill_randomly(&self, project: &Path, args: &[&str], random: &mut Lcg, min_ms: u64, spread_ms: u64) {
        monform_testkit::kill_randomly(&mut self.background(project, args), random, min_ms, spread_ms);
    }

    fn applied(&self, project: &Path) -> std::process::Output {
        let output = self
            .monform(project)
            .args(["apply", "--auto-approve"])
            .output()
            .expect("monform runs");
        assert!(
            output.status.success(),
            "apply failed:\n{}\n{}",
            stdout(&output),
            stderr(&output)
        );
        output
    }
}

/// The account's check named `name` (as the service shows it).
pub fn check_named(emulator: &Emulator, name: &str) -> serde_json::Value {
    let checks = emulator.call("GET", "/v1/checks?limit=100", None);
    checks
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no check {name}"))
}

/// `git ARGS` in `dir`, which must succeed; its standard output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `dir` made a git repository on `main` whose one commit holds every file
/// but what `ignored` (a .gitignore) leaves out, committed by `who`.
pub fn git_repository(dir: &Path, who: (&str, &str), ignored: &str) {
    git(dir, &["init", "--quiet", "--initial-branch", "main"]);
    git(dir, &["config", "user.name", who.0]);
    git(dir, &["config", "user.email", who.1]);
    std::fs::write(dir.join(".gitignore"), ignored).expect("write .gitignore");
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "start"]);
}

/// A copy of `tests/fixtures/<name>` in a fresh temporary folder.
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    copy_dir(&repo_root().join("tests/fixtures").join(name), dir.path());
    dir
}

/// Secret values given to examples/full through the environment.
pub const FULL_EXAMPLE_SECRETS: [(&str, &str); 4] = [
    ("SIGNING_KEY", "sig-abc-123-secret"),
    ("MONITOR_PASSWORD", "pw-xyz-789-secret"),
    ("OPS_WEBHOOK_SECRET", "hook-secret-456"),
    ("OFFICE_PROXY_URL", "http://user:proxypass-secret@proxy.internal:3128"),
];

/// The test database, or `None` (saying why) when there is none and
/// `MONFORM_REQUIRE_POSTGRES` does not require one.
pub fn postgres() -> Option<String> {
    monform_testkit::postgres_url()
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

/// What one run of `monform` showed, as one text for a snapshot: the exit
/// code, stdout and stderr, with what changes from run to run replaced
/// (remote ids, temporary folders, loopback ports, durations, times,
/// salted fingerprints).
pub fn transcript(output: &std::process::Output) -> String {
    let code = output
        .status
        .code()
        .map_or_else(|| "none (killed by a signal)".to_owned(), |c| c.to_string());
    format!(
        "exit code: {code}\n----- stdout -----\n{}----- stderr -----\n{}",
        steady(&stdout(output)),
        steady(&stderr(output))
    )
}

/// [`steady`] text with the padding before a `[n] ms` timing column
/// collapsed: its width follows the figures, which vary.
pub fn steady_columns(text: &str) -> String {
    let padded = regex::Regex::new(r" +\[n\] ms").expect("valid pattern");
    padded.replace_all(text, " [n] ms").into_owned()
}

/// The part of `text` from `marker` on (failing when it is absent): for
/// output whose start varies (progress lines in the order work finished)
/// but whose end does not.
pub fn tail_from<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text.find(marker).unwrap_or_else(|| panic!("no {marker:?} in:\n{text}"));
    &text[at..]
}

/// The lock holder `monform` names, `(pid N on HOST, started TIME)`, with
/// the parts that vary replaced; checks that the pid is `pid`'s.
pub fn steady_holder(text: &str, pid: u32) -> String {
    let holder = regex::Regex::new(r"\(pid ([0-9]+) on [^,]+, started [^)]+\)").expect("valid pattern");
    let found = holder.captures(text).map(|c| c[1].to_owned());
    assert_eq!(found, Some(pid.to_string()), "the holder is not pid {pid}: {text}");
    holder
        .replace(text, "(pid [holder] on [host], started [time])")
        .into_owned()
}

/// A JUnit report as [`steady`] text, its durations (`time="0.12"`) replaced.
pub fn steady_junit(xml: &str) -> String {
    let time = regex::Regex::new(r#" time="[0-9.]+""#).expect("valid pattern");
    time.replace_all(&steady(xml), r#" time="[t]""#).into_owned()
}

/// `text` with the parts that differ between runs replaced.
pub fn steady(text: &str) -> String {
    use std::sync::LazyLock;
    static PATTERNS: LazyLock<Vec<(regex::Regex, &str)>> = LazyLock::new(|| {
        let temp = std::env::temp_dir();
        let temp = regex::escape(temp.to_string_lossy().trim_end_matches('/'));
        [
            (format!(r"{temp}/\.tmp[A-Za-z0-9_]+"), "[tmp]"),
            (r"127\.0\.0\.1:[0-9]+".to_owned(), "127.0.0.1:[port]"),
            (r"\b[0-9]+ ms\b".to_owned(), "[n] ms"),
            (r"\b[0-9]+(\.[0-9]+)? s\b".to_owned(), "[n] s"),
            (
                r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z".to_owned(),
                "[time]",
            ),
            // Fingerprints are salted per state.
            (r"\b[0-9a-f]{16}\b".to_owned(), "[fingerprint]"),
        ]
        .into_iter()
        .map(|(pattern, with)| (regex::Regex::new(&pattern).expect("valid pattern"), with))
        .collect()
    });
    let mut text = redact_ids(text);
    for (pattern, with) in PATTERNS.iter() {
        text = pattern.replace_all(&text, *with).into_owned();
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Runs a command (`monform ...`) and snapshots its [`transcript`] under
/// `name`, in the calling module's snapshots; returns the output, for the
/// facts a test asserts in machine output.
macro_rules! assert_run {
    ($name:expr, $command:expr) => {{
        let output = $command.output().expect("monform runs");
        insta::assert_snapshot!($name, $crate::common::transcript(&output));
        output
    }};
}
pub(crate) use assert_run;

/// A loopback HTTP target: 500 on paths starting with `/fail`, else 200.
/// Lives as long as the test process.
pub fn fail_target() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                let n = stream.read(&mut buffer).unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..n]);
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let status = if path.starts_with("/fail") {
                    "500 Internal Server Error"
                } else {
                    "200 OK"
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            });
        }
    });
    base
}
