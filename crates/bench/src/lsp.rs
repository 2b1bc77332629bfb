//! The language server's latency (issue 31 item 1): in a project of 1,000
//! resource files, the time from a keystroke (`didChange`) to the
//! diagnostics of the whole project published for that version: the
//! pause in typing the server waits for (60 ms) plus one
//! load over the unsaved text. `monform_lsp::serve` on an in-memory
//! connection, spoken to with lsp-types messages as an editor would.

use std::path::Path;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use lsp_types::notification::Notification as _;
use lsp_types::{Position, Range, Url};

use crate::report::Target;

/// What the keystrokes measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Keystrokes {
    pub files: usize,
    pub runs: usize,
    pub median_ms: f64,
    pub max_ms: f64,
    /// CPU time per keystroke (the server's threads; the median): on a
    /// busy machine the wall time is mostly waiting for a core.
    pub median_cpu_ms: f64,
}

/// The target: every diagnostic updated within 300 ms of a keystroke.
pub const LIMIT_MS: f64 = 300.0;

/// A project of `files` resource files: one API check each, in one group,
/// notifying one alert channel (references across files).
fn write_project(dir: &Path, files: usize) -> std::io::Result<()> {
    std::fs::write(dir.join("monform.toml"), "[project]\nname = \"lsp-bench\"\n")?;
    std::fs::create_dir_all(dir.join("checks"))?;
    std::fs::write(
        dir.join("shared.yaml"),
        "groups:\n  web:\n    name: Web\n    locations: [eu-west-1]\n    useGlobalAlertSettings: false\nalertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n",
    )?;
    for i in 0..files.saturating_sub(1) {
        std::fs::write(
            dir.join(format!("checks/c{i:04}.yaml")),
            format!(
                "checks:\n  c{i:04}:\n    checkType: API\n    name: Check {i}\n    group: web\n    alertChannels: [oncall]\n    frequency: 5\n    request:\n      url: https://example.com/{i}\n      method: GET\n      assertions:\n        - {{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}\n"
            ),
        )?;
    }
    Ok(())
}

fn send(client: &Connection, message: Message) {
    client.sender.send(message).expect("the server reads");
}

/// Waits for the diagnostics of `uri` at `version`.
fn published(client: &Connection, uri: &Url, version: i32) -> Vec<lsp_types::Diagnostic> {
    loop {
        let message = client
            .receiver
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers");
        if let Message::Notification(n) = message
            && n.method == lsp_types::notification::PublishDiagnostics::METHOD
        {
            let params: lsp_types::PublishDiagnosticsParams = serde_json::from_value(n.params).expect("params");
            if &params.uri == uri && params.version == Some(version) {
                return params.diagnostics;
            }
        }
    }
}

/// `runs` keystrokes in one file of a `files`-file project, each waited for.
pub fn keystrokes(files: usize, runs: usize) -> Keystrokes {
    let dir = tempfile::tempdir().expect("temporary folder");
    write_project(dir.path(), files).expect("project written");
    let (server, client) = Connection::memory();
    let serving = std::thread::spawn(move || monform_lsp::serve(&server, monform_lsp::Config::default()));
    let initialize = serde_json::json!({ "capabilities": {} });
    send(
        &client,
        Request::new(RequestId::from(1), "initialize".into(), initialize).into(),
    );
    while !matches!(client.receiver.recv(), Ok(Message::Response(_))) {}
    send(
        &client,
        Notification::new("initialized".into(), serde_json::json!({})).into(),
    );
    let path = dir.path().join("checks/c0000.yaml");
    let uri = Url::from_file_path(&path).expect("an absolute path");
    let mut text = std::fs::read_to_string(&path).expect("the file");
    let opened = lsp_types::DidOpenTextDocumentParams {
        text_document: lsp_types::TextDocumentItem::new(uri.clone(), "yaml".into(), 1, text.clone()),
    };
    send(
        &client,
        Notification::new(lsp_types::notification::DidOpenTextDocument::METHOD.into(), opened).into(),
    );
    let clean = published(&client, &uri, 1);
    assert!(clean.is_empty(), "the benchmark's project has problems: {clean:?}");
    // Each keystroke adds a letter to the check's name (line 3, after "name: Check 0").
    let line = text.lines().position(|l| l.contains("name: Check")).unwrap_or(3);
    let mut times: Vec<f64> = Vec::with_capacity(runs);
    let mut cpu: Vec<f64> = Vec::with_capacity(runs);
    for run in 0..runs {
        let version = 2 + run as i32;
        let column = text.lines().nth(line).map_or(0, str::len) as u32;
        let at = Position::new(line as u32, column);
        let change = lsp_types::DidChangeTextDocumentParams {
            text_document: lsp_types::VersionedTextDocumentIdentifier::new(uri.clone(), version),
            content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                range: Some(Range::new(at, at)),
                range_length: None,
                text: "x".into(),
            }],
        };
        let started = Instant::now();
        let cpu_before = crate::measure::cpu_time();
        send(
            &client,
            Notification::new(lsp_types::notification::DidChangeTextDocument::METHOD.into(), change).into(),
        );
        published(&client, &uri, version);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        cpu.push((crate::measure::cpu_time() - cpu_before).as_secs_f64() * 1000.0);
        let offset: usize = text.lines().take(line + 1).map(|l| l.len() + 1).sum::<usize>() - 1;
        text.insert(offset, 'x');
    }
    send(
        &client,
        Request::new(RequestId::from(2), "shutdown".into(), serde_json::Value::Null).into(),
    );
    send(
        &client,
        Notification::new("exit".into(), serde_json::Value::Null).into(),
    );
    let _ = serving.join();
    times.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Keystrokes {
        files,
        runs,
        median_ms: round(times.get(times.len() / 2).copied().unwrap_or(0.0)),
        max_ms: round(times.last().copied().unwrap_or(0.0)),
        median_cpu_ms: round(cpu.get(cpu.len() / 2).copied().unwrap_or(0.0)),
    }
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The Markdown lines and the target of a measurement.
pub fn report(measured: &Keystrokes) -> (String, Target) {
    let text = format!(
        "\n### Language server: diagnostics after a keystroke\n\n| files | keystrokes | median | max | CPU (median) |\n|---:|---:|---:|---:|---:|\n| {} | {} | {} ms | {} ms | {} ms |\n",
        measured.files, measured.runs, measured.median_ms, measured.max_ms, measured.median_cpu_ms
    );
    let target = Target {
        checks: measured.files.saturating_sub(1),
        id: "lsp_keystroke_diagnostics",
        description: format!(
            "monform lsp: every diagnostic of a {}-file project published within 300 ms of a keystroke (median of {})",
            measured.files, measured.runs
        ),
        measured: measured.median_ms,
        limit: LIMIT_MS,
        unit: "ms",
        pass: measured.median_ms <= LIMIT_MS,
    };
    (text, target)
}
