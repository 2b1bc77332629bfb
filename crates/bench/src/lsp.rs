//! The language server at scale (issue 48 item 2): the real `monform lsp`
//! over stdio, spoken to as an editor does (lsp-server's framing,
//! lsp-types' messages), in the generated project of 100,000 checks in
//! 1,000 files of 100 (all ten check types, groups, channels, snippets),
//! with one alert channel, `escalation`, named by one check of each file.
//!
//! Measured, each with its target:
//! - **open**: `didOpen` of one file of a project opened for the first
//!   time (no parse cache yet) to that file's first diagnostics;
//! - **keystroke p95**: a letter typed into a check's name to the file's
//!   diagnostics for that version (the pause the server waits for in
//!   typing included), each waited for;
//! - **completion p95**: `textDocument/completion` at a check's `group:`
//!   value (2,000 group ids);
//! - **rename**: `textDocument/rename` of `escalation` (its definition,
//!   1,000 references in 1,000 files, and the `moved` entry);
//! - **memory**: the server process's peak RSS (`VmHWM`) at the end.

use std::io::{BufReader, BufWriter};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use lsp_types::notification::Notification as _;
use lsp_types::{Position, Range, Url};
use serde_json::{Value, json};

use crate::generate::{self, Edits, Shape};
use crate::report::Target;

/// The targets (issue 48 item 2).
pub const OPEN_LIMIT_MS: f64 = 3_000.0;
pub const KEYSTROKE_LIMIT_MS: f64 = 150.0;
pub const COMPLETION_LIMIT_MS: f64 = 50.0;
pub const RENAME_LIMIT_MS: f64 = 1_000.0;
pub const MEMORY_LIMIT_MB: f64 = 1_024.0;

/// The id renamed, and how many checks name it (one per file).
const RENAMED: &str = "escalation";

/// What was measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Measured {
    pub checks: usize,
    pub files: usize,
    pub open_ms: f64,
    pub keystrokes: usize,
    pub keystroke_p50_ms: f64,
    pub keystroke_p95_ms: f64,
    pub completions: usize,
    pub completion_p95_ms: f64,
    pub completion_items: usize,
    pub rename_ms: f64,
    /// Text edits of the rename (references, definition, `moved` entry).
    pub rename_edits: usize,
    pub peak_rss_mb: f64,
}

/// The project: the benchmark's generated one, with `escalation` named by
/// check 50 of each hundred.
fn write_project(dir: &Path, checks: usize) -> std::io::Result<()> {
    let shared = |sections: &mut serde_json::Map<String, Value>| {
        if let Some(Value::Object(channels)) = sections.get_mut("alertChannels") {
            channels.insert(
                RENAMED.into(),
                json!({ "type": "EMAIL", "config": { "address": "escalation@example.com" } }),
            );
        }
    };
    let check = |n: usize, check: &mut Value| {
        if n % generate::CHECKS_PER_FILE == 50
            && let Some(Value::Array(channels)) = check.get_mut("alertChannels")
        {
            channels.push(json!(RENAMED));
        }
    };
    let edits = Edits {
        shared: Some(&shared),
        check: Some(&check),
    };
    generate::generate_edited(dir, &Shape::new(checks), 0, &edits).map(|_| ())
}

/// `monform lsp` as a child process, and what it sends.
struct Server {
    child: Child,
    input: BufWriter<ChildStdin>,
    messages: Receiver<Message>,
    next_id: i32,
}

impl Server {
    fn start(monform: &Path, dir: &Path) -> Result<Server, String> {
        let mut child = Command::new(monform)
            .arg("lsp")
            .current_dir(dir)
            .env_remove("MONFORM_API_KEY")
            .env_remove("MONFORM_ENV")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {} lsp: {e}", monform.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the server".into());
        };
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            while let Ok(Some(message)) = Message::read(&mut stdout) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Ok(Server {
            child,
            input: BufWriter::new(stdin),
            messages,
            next_id: 0,
        })
    }

    fn send(&mut self, message: Message) -> Result<(), String> {
        message
            .write(&mut self.input)
            .map_err(|e| format!("cannot write to the server: {e}"))
    }

    fn notify(&mut self, method: &str, params: impl serde::Serialize) -> Result<(), String> {
        let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
        self.send(Notification::new(method.into(), params).into())
    }

    /// Sends a request and waits for its answer (what comes before it is
    /// dropped).
    fn request(&mut self, method: &str, params: impl serde::Serialize) -> Result<Value, String> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
        self.send(Request::new(id.clone(), method.into(), params).into())?;
        loop {
            if let Message::Response(response) = self.next()?
                && response.id == id
            {
                return match response.error {
                    Some(error) => Err(format!("{method}: {}", error.message)),
                    None => Ok(response.result.unwrap_or(Value::Null)),
                };
            }
        }
    }

    fn next(&self) -> Result<Message, String> {
        let wait = silence_limit();
        self.messages
            .recv_timeout(wait)
            .map_err(|_| format!("the server said nothing for {} s", wait.as_secs()))
    }

    /// Waits for the diagnostics of `uri` at `version`.
    fn diagnostics(&self, uri: &Url, version: i32) -> Result<Vec<lsp_types::Diagnostic>, String> {
        loop {
            if let Message::Notification(n) = self.next()?
                && n.method == lsp_types::notification::PublishDiagnostics::METHOD
            {
                let params: lsp_types::PublishDiagnosticsParams =
                    serde_json::from_value(n.params).map_err(|e| e.to_string())?;
                if &params.uri == uri && params.version == Some(version) {
                    return Ok(params.diagnostics);
                }
            }
        }
    }

    /// The process's peak resident memory so far (MiB).
    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }

    fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null);
        let _ = self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long the server may say nothing: 120 s, or
/// `MONFORM_BENCH_LSP_SILENCE` seconds (a server run under valgrind
/// through `--monform`, to count a keystroke's instructions, is tens of
/// times slower).
fn silence_limit() -> Duration {
    let seconds = std::env::var("MONFORM_BENCH_LSP_SILENCE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    Duration::from_secs(seconds)
}

fn ms(elapsed: Duration) -> f64 {
    (elapsed.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The `q` quantile of `times` (sorted here), nearest rank.
fn quantile(times: &mut [f64], q: f64) -> f64 {
    times.sort_by(f64::total_cmp);
    let rank = ((q * times.len() as f64).ceil() as usize).clamp(1, times.len().max(1));
    times.get(rank - 1).copied().unwrap_or(0.0)
}

/// Runs `monform` (the binary) as the language server of a project of
/// `checks` checks: open, `keystrokes` keystrokes, `completions`
/// completions, one rename.
pub fn measure(monform: &Path, checks: usize, keystrokes: usize, completions: usize) -> Result<Measured, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    write_project(dir.path(), checks).map_err(|e| format!("the project: {e}"))?;
    let mut server = Server::start(monform, dir.path())?;
    let root = Url::from_directory_path(dir.path()).map_err(|()| "an absolute path".to_owned())?;
    server.request("initialize", json!({ "capabilities": {}, "rootUri": root }))?;
    server.notify("initialized", json!({}))?;
    let path = dir.path().join("monitors/team-0/checks-000.yaml");
    let uri = Url::from_file_path(&path).map_err(|()| "an absolute path".to_owned())?;
    let mut text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let started = Instant::now();
    server.notify(
        lsp_types::notification::DidOpenTextDocument::METHOD,
        lsp_types::DidOpenTextDocumentParams {
            text_document: lsp_types::TextDocumentItem::new(uri.clone(), "yaml".into(), 1, text.clone()),
        },
    )?;
    let opened = server.diagnostics(&uri, 1)?;
    let open_ms = ms(started.elapsed());
    if opened
        .iter()
        .any(|d| d.severity == Some(lsp_types::DiagnosticSeverity::ERROR))
    {
        return Err(format!("the benchmark's project has errors: {opened:?}"));
    }
    // Keystrokes: a letter at the end of check-00001's name.
    let line_of = |text: &str, needle: &str| text.lines().position(|l| l.contains(needle));
    let name_line = line_of(&text, "name: api check 1").ok_or("no check-00001 name")?;
    let mut times = Vec::with_capacity(keystrokes);
    for run in 0..keystrokes {
        let version = 2 + run as i32;
        let column = text.lines().nth(name_line).map_or(0, str::len);
        let at = Position::new(name_line as u32, column as u32);
        let started = Instant::now();
        server.notify(
            lsp_types::notification::DidChangeTextDocument::METHOD,
            lsp_types::DidChangeTextDocumentParams {
                text_document: lsp_types::VersionedTextDocumentIdentifier::new(uri.clone(), version),
                content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                    range: Some(Range::new(at, at)),
                    range_length: None,
                    text: "x".into(),
                }],
            },
        )?;
        let found = server.diagnostics(&uri, version)?;
        times.push(ms(started.elapsed()));
        if found
            .iter()
            .any(|d| d.severity == Some(lsp_types::DiagnosticSeverity::ERROR))
        {
            return Err(format!("a keystroke in a name made an error: {found:?}"));
        }
        let offset: usize = text.lines().take(name_line + 1).map(|l| l.len() + 1).sum::<usize>() - 1;
        text.insert(offset, 'x');
    }
    let keystroke_p50_ms = quantile(&mut times, 0.5);
    let keystroke_p95_ms = quantile(&mut times, 0.95);
    // Completion of a group id.
    let group_line = line_of(&text, "group: g-").ok_or("no group: line")?;
    let column = text.lines().nth(group_line).map_or(0, str::len);
    let mut times = Vec::with_capacity(completions);
    let mut completion_items = 0;
    for _ in 0..completions {
        let started = Instant::now();
        let result = server.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": { "line": group_line, "character": column } }),
        )?;
        times.push(ms(started.elapsed()));
        completion_items = result
            .as_array()
            .or_else(|| result["items"].as_array())
            .map_or(0, Vec::len);
    }
    let completion_p95_ms = quantile(&mut times, 0.95);
    // Rename of `escalation` at its definition.
    let shared_path = dir.path().join("monitors/shared.yaml");
    let shared_uri = Url::from_file_path(&shared_path).map_err(|()| "an absolute path".to_owned())?;
    let shared = std::fs::read_to_string(&shared_path).map_err(|e| e.to_string())?;
    let definition = line_of(&shared, &format!("  {RENAMED}:")).ok_or("no escalation: line")?;
    let column = shared
        .lines()
        .nth(definition)
        .and_then(|l| l.find(RENAMED))
        .unwrap_or(2)
        + 1;
    let started = Instant::now();
    let edit = server.request(
        "textDocument/rename",
        json!({
            "textDocument": { "uri": shared_uri },
            "position": { "line": definition, "character": column },
            "newName": "escalation-team",
        }),
    )?;
    let rename_ms = ms(started.elapsed());
    let rename_edits = edit["changes"].as_object().map_or(0, |files| {
        files.values().filter_map(Value::as_array).map(Vec::len).sum()
    });
    let files = checks.div_ceil(generate::CHECKS_PER_FILE);
    // The definition, a reference per file, the `moved` entry.
    if rename_edits != files + 2 {
        return Err(format!("the rename made {rename_edits} edits, not {}", files + 2));
    }
    let peak_rss_mb = (server.peak_rss_mb() * 10.0).round() / 10.0;
    server.stop();
    Ok(Measured {
        checks,
        files,
        open_ms,
        keystrokes,
        keystroke_p50_ms,
        keystroke_p95_ms,
        completions,
        completion_p95_ms,
        completion_items,
        rename_ms,
        rename_edits,
        peak_rss_mb,
    })
}

/// The Markdown table and the targets of a measurement.
pub fn report(measured: &Measured) -> (String, Vec<Target>) {
    let m = measured;
    let target = |id, description: String, value: f64, limit: f64, unit| Target {
        checks: m.checks,
        id,
        description,
        measured: value,
        limit,
        unit,
        pass: value < limit,
    };
    let targets = vec![
        target(
            "lsp_open",
            format!(
                "monform lsp, {} checks in {} files: first diagnostics of an opened file (no parse cache yet)",
                m.checks, m.files
            ),
            m.open_ms,
            OPEN_LIMIT_MS,
            "ms",
        ),
        target(
            "lsp_keystroke_p95",
            format!("monform lsp: a keystroke's diagnostics, p95 of {}", m.keystrokes),
            m.keystroke_p95_ms,
            KEYSTROKE_LIMIT_MS,
            "ms",
        ),
        target(
            "lsp_completion_p95",
            format!(
                "monform lsp: completion of a group id ({} items), p95 of {}",
                m.completion_items, m.completions
            ),
            m.completion_p95_ms,
            COMPLETION_LIMIT_MS,
            "ms",
        ),
        target(
            "lsp_rename",
            format!(
                "monform lsp: rename of an id used in {} places ({} edits)",
                m.files, m.rename_edits
            ),
            m.rename_ms,
            RENAME_LIMIT_MS,
            "ms",
        ),
        target(
            "lsp_peak_rss",
            "monform lsp: peak RSS of the server process".to_owned(),
            m.peak_rss_mb,
            MEMORY_LIMIT_MB,
            "MB",
        ),
    ];
    let mut text = format!(
        "\n### Language server: {} checks in {} files, over stdio\n\n| measure | measured | target | |\n|---|---:|---:|---|\n",
        m.checks, m.files
    );
    let rename = format!("rename (id used in {} places)", crate::report::int(m.files as u64));
    let rows = [
        ("open (first diagnostics)", &targets[0]),
        ("keystroke p95", &targets[1]),
        ("completion p95", &targets[2]),
        (rename.as_str(), &targets[3]),
        ("peak RSS", &targets[4]),
    ];
    for (name, t) in rows {
        text.push_str(&format!(
            "| {name} | {} {} | < {} {} | {} |\n",
            t.measured,
            t.unit,
            t.limit,
            t.unit,
            if t.pass { "PASS" } else { "FAIL" }
        ));
    }
    text.push_str(&format!("\nkeystroke p50: {} ms\n", m.keystroke_p50_ms));
    (text, targets)
}
