//! Issue 43 item 9: frames `monform lsp` cannot read (not JSON, no
//! Content-Length, a Content-Length of 99999999999) are answered with a
//! JSON-RPC error whose id is null, and the server reads on with its
//! memory small. The bytes go raw over stdio, and answers are read as JSON
//! values: `lsp_server::Message` has no null id.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::lsp::{CHECKS, position_of, project, uri};

const PATIENCE: Duration = Duration::from_secs(30);

/// The address space the server gets: far more than it maps (thread
/// stacks and allocator arenas on a many-core machine included), less than
/// the 93 GiB the header asks for, so that a server sizing a buffer from it
/// (as it did) fails its allocation at once, rather than taking the memory
/// of the machine running the tests.
const ADDRESS_SPACE_KIB: u64 = 32 * 1024 * 1024;

/// What a bad frame may hold that must never come back.
const SECRET: &str = "ghp_frame_content_never_echoed";

struct RawServer {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<Value>,
    /// Every frame the server sent so far.
    seen: Vec<Value>,
}

impl RawServer {
    fn start() -> RawServer {
        let monform = assert_cmd::cargo::cargo_bin("monform");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" lsp"))
            .arg(monform)
            .env_remove("MONFORM_API_KEY")
            .env_remove("MONFORM_ACCOUNT_ID")
            .env_remove("MONFORM_API_URL")
            .env_remove("MONFORM_ENV")
            .env("XDG_CONFIG_HOME", crate::common::user_config_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("monform lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, frames) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            while let Some(frame) = read_frame(&mut stdout) {
                if sender.send(frame).is_err() {
                    break;
                }
            }
        });
        RawServer {
            child,
            stdin,
            frames,
            seen: Vec::new(),
        }
    }

    fn write(&mut self, bytes: &str) {
        self.stdin.write_all(bytes.as_bytes()).expect("monform lsp reads");
        self.stdin.flush().expect("flush");
    }

    fn send(&mut self, message: Value) {
        self.write(&framed(&message.to_string()));
    }

    /// The next frame sent that satisfies `wanted`.
    fn wait(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let frame = self.frames.recv_timeout(wait).unwrap_or_else(|error| {
                let status = self.child.try_wait();
                panic!(
                    "no {what} from monform lsp ({error}; exited: {status:?}); it sent {:#?}",
                    self.seen
                )
            });
            self.seen.push(frame.clone());
            if wanted(&frame) {
                return frame;
            }
        }
    }

    /// The error of the next answer with a null id.
    fn parse_error(&mut self) -> Value {
        let answer = self.wait("error with a null id", |f| {
            f.get("id") == Some(&Value::Null) && f.get("error").is_some()
        });
        answer["error"].clone()
    }

    fn response(&mut self, id: i64) -> Value {
        let answer = self.wait(&format!("answer {id}"), |f| f["id"] == id);
        assert!(answer.get("error").is_none(), "{answer}");
        answer["result"].clone()
    }

    /// The most memory the server has held (resident), in kB.
    fn peak_memory_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("the server runs");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/<pid>/status")
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn framed(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// One frame the server wrote, as JSON (`None` at the end).
fn read_frame(input: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    input.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn hover(server: &mut RawServer, id: i64, checks: &lsp_types::Url) -> Value {
    let position = position_of(CHECKS, "frequency", 0, 2);
    server.send(json!({
        "jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
        "params": { "textDocument": { "uri": checks }, "position": position },
    }));
    server.response(id)
}

#[test]
fn unreadable_frames_are_answered_and_the_server_reads_on() {
    let dir = project();
    let mut server = RawServer::start();

    // Before `initialize`: a body cut short, a header without
    // Content-Length, a Content-Length of 99999999999 whose body never comes.
    server.write(&framed(&format!("{{\"jsonrpc\": \"2.0\", \"id\": 1, \"{SECRET}")));
    let error = server.parse_error();
    assert_eq!(error["code"], -32700, "{error}");
    assert!(
        error["message"].as_str().is_some_and(|m| m.contains("not JSON")),
        "{error}"
    );

    server.write(&format!(
        "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{{\"jsonrpc\":\"2.0\",\"method\":\"{SECRET}\"}}"
    ));
    let error = server.parse_error();
    assert_eq!(error["code"], -32700, "{error}");
    assert_eq!(error["message"], "the header has no Content-Length");

    server.write("Content-Length: 99999999999\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"");
    let error = server.parse_error();
    assert_eq!(error["code"], -32700, "{error}");
    assert!(
        error["message"].as_str().is_some_and(|m| m.contains("over the limit")),
        "{error}"
    );
    let peak = server.peak_memory_kib();
    assert!(peak < 200 * 1024, "monform lsp grew to {peak} kB");

    // The next frame after the lie is read: the handshake as ever.
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"capabilities": {}}}));
    let initialized = server.response(3);
    assert_eq!(initialized["capabilities"]["hoverProvider"], true, "{initialized}");
    server.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    let checks = uri(&dir.path().join("monitors/checks.yaml"));
    server.send(json!({
        "jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": { "textDocument": { "uri": checks, "languageId": "yaml", "version": 1, "text": CHECKS } },
    }));
    let published = server.wait("diagnostics", |f| {
        f["method"] == "textDocument/publishDiagnostics" && f["params"]["uri"] == checks.as_str()
    });
    assert_eq!(published["params"]["diagnostics"], json!([]), "{published}");

    // Bad frames right before good ones, in one write: each answered, each
    // good one read after.
    server.write(&format!(
        "{}Content-Length: 99999999999\r\n\r\n{}",
        framed("[1, 2, 3]"),
        framed(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": { "uri": checks, "version": 2 },
                "contentChanges": [{ "text": CHECKS.replace("frequency: 5", "frequency: often") }],
            }})
            .to_string()
        )
    ));
    assert_eq!(server.parse_error()["code"], -32600);
    assert_eq!(server.parse_error()["code"], -32700);
    let published = server.wait("diagnostics of the edit", |f| {
        f["method"] == "textDocument/publishDiagnostics" && f["params"]["version"] == 2
    });
    assert!(
        published["params"]["diagnostics"]
            .as_array()
            .is_some_and(|d| !d.is_empty()),
        "{published}"
    );

    server.write(&framed(
        "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"textDocument/hover\"",
    ));
    assert_eq!(server.parse_error()["code"], -32700);
    let hovered = hover(&mut server, 5, &checks);
    assert!(
        hovered["contents"]["value"]
            .as_str()
            .is_some_and(|text| !text.is_empty()),
        "{hovered}"
    );

    let peak = server.peak_memory_kib();
    assert!(peak < 200 * 1024, "monform lsp grew to {peak} kB");
    // Each skip is in the editor's log; nothing of a frame came back.
    let logged = server
        .seen
        .iter()
        .filter(|f| f["method"] == "window/logMessage")
        .count();
    assert_eq!(logged, 6, "{:#?}", server.seen);
    let sent = format!("{:?}", server.seen);
    assert!(!sent.contains(SECRET), "{sent}");

    // Shutdown and exit as ever: a clean end.
    server.send(json!({"jsonrpc": "2.0", "id": 6, "method": "shutdown"}));
    server.response(6);
    server.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "monform lsp did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}
