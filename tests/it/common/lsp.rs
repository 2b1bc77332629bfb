//! A small LSP client for the language server's end-to-end tests: the real
//! `monform lsp` as a child process, JSON-RPC over its stdio with
//! `lsp-server`'s framing and `lsp-types`' messages.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use lsp_types::notification::Notification as _;
use lsp_types::{NumberOrString, Position, PublishDiagnosticsParams, Range, Url};

/// How long a test waits for an answer before failing.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: std::sync::mpsc::Receiver<Message>,
    next_id: i32,
    /// Diagnostics published so far, the latest per file.
    pub diagnostics: std::collections::HashMap<Url, PublishDiagnosticsParams>,
    /// The `window/showMessage` texts so far.
    pub shown: Vec<String>,
    version: i32,
}

impl Client {
    /// Starts `monform lsp` with `env` set (and no API credentials unless
    /// given) and initialises it.
    pub fn start(env: &[(&str, &str)]) -> Client {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("monform"));
        command
            .arg("lsp")
            .env_remove("MONFORM_API_KEY")
            .env_remove("MONFORM_ACCOUNT_ID")
            .env_remove("MONFORM_API_URL")
            .env_remove("MONFORM_ENV")
            .env("XDG_CONFIG_HOME", super::user_config_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("monform lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Ok(Some(message)) = Message::read(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            messages,
            next_id: 0,
            diagnostics: Default::default(),
            shown: Vec::new(),
            version: 1,
        };
        let _: lsp_types::InitializeResult = client.request::<lsp_types::request::Initialize>(
            serde_json::from_value(serde_json::json!({ "capabilities": {} })).expect("params"),
        );
        client.notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {});
        client
    }

    fn send(&mut self, message: Message) {
        message.write(&mut self.stdin).expect("monform lsp reads");
        self.stdin.flush().expect("flush");
    }

    pub fn notify<N: lsp_types::notification::Notification>(&mut self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_owned(), params).into());
    }

    /// Sends a request and waits for its answer (publishing diagnostics met
    /// on the way).
    pub fn request<R: lsp_types::request::Request>(&mut self, params: R::Params) -> R::Result {
        let value = self.request_value(R::METHOD, serde_json::to_value(params).expect("params"));
        serde_json::from_value(value).expect("a result of the right type")
    }

    /// As [`request`](Self::request), the result as JSON (for snapshots).
    pub fn request_value(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.to_owned(), params).into());
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.next_message(deadline) {
                Message::Response(response) if response.id == id => {
                    if let Some(error) = response.error {
                        panic!("{method} failed: {} ({})", error.message, error.code);
                    }
                    return response.result.unwrap_or(serde_json::Value::Null);
                }
                _ => {}
            }
        }
    }

    fn next_message(&mut self, deadline: Instant) -> Message {
        let wait = deadline.saturating_duration_since(Instant::now());
        let message = self.messages.recv_timeout(wait).expect("monform lsp answers in time");
        if let Message::Notification(notification) = &message
            && notification.method == lsp_types::notification::PublishDiagnostics::METHOD
        {
            let params: PublishDiagnosticsParams =
                serde_json::from_value(notification.params.clone()).expect("diagnostics");
            self.diagnostics.insert(params.uri.clone(), params);
        }
        if let Message::Notification(notification) = &message
            && notification.method == lsp_types::notification::ShowMessage::METHOD
        {
            let params: lsp_types::ShowMessageParams =
                serde_json::from_value(notification.params.clone()).expect("a message");
            self.shown.push(params.message);
        }
        message
    }

    /// Waits until a `window/showMessage` text satisfies `done`, and returns it.
    pub fn shown_until(&mut self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(shown) = self.shown.iter().find(|m| done(m)) {
                return shown.clone();
            }
            if Instant::now() > deadline {
                panic!("no such message came: {:#?}", self.shown);
            }
            self.next_message(deadline);
        }
    }

    /// Waits until the diagnostics published for `uri` satisfy `done`, and
    /// returns them.
    pub fn diagnostics_until(
        &mut self,
        uri: &Url,
        done: impl Fn(&[lsp_types::Diagnostic]) -> bool,
    ) -> Vec<lsp_types::Diagnostic> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(params) = self.diagnostics.get(uri)
                && done(&params.diagnostics)
            {
                return params.diagnostics.clone();
            }
            if Instant::now() > deadline {
                panic!("diagnostics of {uri} never came: {:#?}", self.diagnostics.get(uri));
            }
            self.next_message(deadline);
        }
    }

    pub fn open(&mut self, path: &Path) -> Url {
        let text = std::fs::read_to_string(path).expect("the file");
        let uri = uri(path);
        let language = if path.extension().is_some_and(|e| e == "toml") {
            "toml"
        } else {
            "yaml"
        };
        self.notify::<lsp_types::notification::DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
            text_document: lsp_types::TextDocumentItem::new(uri.clone(), language.into(), 1, text),
        });
        uri
    }

    /// Replaces `range` of the document with `text` (incremental sync).
    pub fn edit(&mut self, uri: &Url, range: Range, text: &str) {
        self.version += 1;
        self.notify::<lsp_types::notification::DidChangeTextDocument>(lsp_types::DidChangeTextDocumentParams {
            text_document: lsp_types::VersionedTextDocumentIdentifier::new(uri.clone(), self.version),
            content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                range: Some(range),
                range_length: None,
                text: text.into(),
            }],
        });
    }

    pub fn close(&mut self, uri: &Url) {
        self.notify::<lsp_types::notification::DidCloseTextDocument>(lsp_types::DidCloseTextDocumentParams {
            text_document: lsp_types::TextDocumentIdentifier::new(uri.clone()),
        });
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let _ = Message::from(Request::new(id, "shutdown".into(), serde_json::Value::Null)).write(&mut self.stdin);
        let _ = Message::from(Notification::new("exit".into(), serde_json::Value::Null)).write(&mut self.stdin);
        let _ = self.stdin.flush();
        let deadline = Instant::now() + Duration::from_secs(5);
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

pub fn uri(path: &Path) -> Url {
    Url::from_file_path(path).expect("an absolute path")
}

/// The position of the `nth` (0-based) occurrence of `needle` in `text`,
/// plus `offset` characters (ASCII text).
pub fn position_of(text: &str, needle: &str, nth: usize, offset: u32) -> Position {
    let at = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` not in the text"))
        .0;
    let before = &text[..at];
    let line = before.matches('\n').count() as u32;
    let column = before.rsplit('\n').next().map_or(0, str::len) as u32;
    Position::new(line, column + offset)
}

/// The range of the `nth` occurrence of `needle`.
pub fn range_of(text: &str, needle: &str, nth: usize) -> Range {
    let start = position_of(text, needle, nth, 0);
    Range::new(start, Position::new(start.line, start.character + needle.len() as u32))
}

/// Writes a workspace edit's text edits to the files (ASCII text).
pub fn apply_edit(edit: &lsp_types::WorkspaceEdit) {
    for (uri, edits) in edit.changes.iter().flatten() {
        let path = uri.to_file_path().expect("a file");
        let mut text = std::fs::read_to_string(&path).expect("the file");
        let mut edits = edits.clone();
        edits.sort_by_key(|e| std::cmp::Reverse((e.range.start.line, e.range.start.character)));
        for edit in edits {
            let start = offset(&text, edit.range.start);
            let end = offset(&text, edit.range.end);
            text.replace_range(start..end, &edit.new_text);
        }
        std::fs::write(&path, text).expect("write");
    }
}

fn offset(text: &str, position: Position) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(position.line as usize)
        .map(str::len)
        .sum();
    (line_start + position.character as usize).min(text.len())
}

// What the language server's tests share: a small project and requests.

/// Checks alerting nobody are fine here: the findings' test turns it on.
pub const PROJECT: &str = "[project]\nname = \"editor\"\n\n[lint]\nunrouted-checks = \"off\"\n";

pub const GROUPS: &str = "groups:\n  production:\n    name: Production\n    locations: [eu-west-1]\n";

pub const CHECKS: &str = "checks:
  homepage:
    checkType: API
    name: Homepage
    group: production
    frequency: 5
    request:
      url: https://example.com
      method: GET
";

/// A project of three files in a fresh folder.
pub fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    write(dir.path(), "monform.toml", PROJECT);
    write(dir.path(), "monitors/groups.yaml", GROUPS);
    write(dir.path(), "monitors/checks.yaml", CHECKS);
    dir
}

pub fn write(root: &Path, name: &str, text: &str) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
    std::fs::write(path, text).expect("write");
}

pub fn code(diagnostic: &lsp_types::Diagnostic) -> &str {
    match &diagnostic.code {
        Some(NumberOrString::String(code)) => code,
        _ => "",
    }
}

pub fn at(uri: &lsp_types::Url, position: lsp_types::Position) -> lsp_types::TextDocumentPositionParams {
    lsp_types::TextDocumentPositionParams::new(lsp_types::TextDocumentIdentifier::new(uri.clone()), position)
}

pub fn hover_text(client: &mut Client, uri: &lsp_types::Url, position: lsp_types::Position) -> String {
    let answer = client.request::<lsp_types::request::HoverRequest>(lsp_types::HoverParams {
        text_document_position_params: at(uri, position),
        work_done_progress_params: Default::default(),
    });
    match answer.map(|h| h.contents) {
        Some(lsp_types::HoverContents::Markup(markup)) => markup.value,
        other => format!("{other:?}"),
    }
}

pub fn code_actions(
    client: &mut Client,
    uri: &lsp_types::Url,
    range: lsp_types::Range,
    diagnostics: Vec<lsp_types::Diagnostic>,
) -> Vec<lsp_types::CodeAction> {
    let answer = client.request::<lsp_types::request::CodeActionRequest>(lsp_types::CodeActionParams {
        text_document: lsp_types::TextDocumentIdentifier::new(uri.clone()),
        range,
        context: lsp_types::CodeActionContext {
            diagnostics,
            only: None,
            trigger_kind: None,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    answer
        .into_iter()
        .flatten()
        .filter_map(|a| match a {
            lsp_types::CodeActionOrCommand::CodeAction(action) => Some(action),
            lsp_types::CodeActionOrCommand::Command(_) => None,
        })
        .collect()
}
