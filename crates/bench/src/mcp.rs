//! `monform mcp` (issue 51): each tool's answer time over stdio, on the
//! quickstart and on a generated project of 10,000 checks, both applied
//! to `monform serve` first. Targets: every tool under 200 ms on the
//! quickstart and under 3 s at 10,000 checks. Spoken to in plain JSON-RPC
//! lines (the protocol's stdio framing), as a client sends them.
//!
//! `monform serve` runs without a rate limit, so it states no budget: the
//! client would then pace at its default, 600 requests a minute, and the
//! set-up apply of 10,000 creates would take 17 minutes idle. The clients
//! here run with `MONFORM_RATE_LIMIT=off`, as the user path's do.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::report::Target;
use crate::user_path::{client_of, serve_with, served_counts};

const KEY: &str = "mcp-bench-key";
/// The quickstart's limit and the 10,000 checks' one, in ms.
const QUICKSTART_LIMIT_MS: f64 = 200.0;
const LARGE_LIMIT_MS: f64 = 3000.0;

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(monform: &Path, dir: &Path, url: &str, user_dir: &Path) -> Result<Server, String> {
        let mut child = client_of(monform, url, KEY)
            .arg("--dir")
            .arg(dir)
            .arg("mcp")
            .env("XDG_CONFIG_HOME", user_dir)
            .env_remove("MONFORM_APPROVALS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start monform mcp: {e}"))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut server = Server {
            child,
            input,
            output,
            next: 1,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "monform-bench", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.input, "{message}").map_err(|e| e.to_string())?;
        self.input.flush().map_err(|e| e.to_string())
    }

    /// Sends a request and waits for its answer (notifications skipped).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err(format!("monform mcp ended before answering {method}"));
            }
            let message: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(message["result"].clone());
            }
        }
    }

    /// A tool's structured answer and its time in ms.
    fn call(&mut self, name: &str, arguments: Value) -> Result<(Value, f64), String> {
        let started = Instant::now();
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}))?;
        Ok((
            result["structuredContent"].clone(),
            started.elapsed().as_secs_f64() * 1000.0,
        ))
    }
}

/// Runs `monform ARGS` in `dir` against `url`; fails on a non-zero exit.
fn run(monform: &Path, dir: &Path, url: &str, args: &[&str]) -> Result<(), String> {
    let output = client_of(monform, url, KEY)
        .arg("--dir")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "monform {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The tools' times on one project, applied first.
fn measure_project(monform: &Path, dir: &Path, checks: usize) -> Result<Vec<(String, f64)>, String> {
    let base = tempfile::tempdir().map_err(|e| e.to_string())?;
    let serve = serve_with(monform, base.path(), KEY, "off")?;
    let url = format!("http://{}", serve.addr);
    run(monform, dir, &url, &["apply", "--auto-approve"])?;
    let loaded = crate::harness::load(dir);
    let check = loaded
        .desired
        .resources
        .keys()
        .find(|a| a.kind == monform_model::Kind::Check)
        .map(ToString::to_string)
        .ok_or("the project has no check")?;
    let file = loaded
        .sources
        .iter()
        .find(|f| f.name.ends_with(".yaml") || f.name.ends_with(".yml"))
        .map(|f| (f.name.clone(), f.text.to_string()))
        .ok_or("the project has no YAML file")?;
    drop(loaded);
    let user_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut server = Server::start(monform, dir, &url, user_dir.path())?;
    let mut times = Vec::new();
    // The requests each tool made of the service: repeatable where times
    // are not (a shared machine).
    let requests = || served_counts(serve.addr).map(|(all, _)| all);
    let mut timed = |server: &mut Server, name: &str, arguments: Value| -> Result<Value, String> {
        let before = requests()?;
        let (answer, ms) = server.call(name, arguments)?;
        let made = requests()? - before;
        eprintln!("  [{checks}] mcp {name}: {ms:.0} ms, {made} requests");
        times.push((name.to_owned(), ms));
        Ok(answer)
    };
    timed(&mut server, "validate", json!({}))?;
    timed(&mut server, "schema", json!({"kind": "checks", "checkType": "URL"}))?;
    timed(&mut server, "explain", json!({"address": check}))?;
    timed(
        &mut server,
        "write_file",
        json!({"path": file.0, "content": format!("{}\n# reviewed\n", file.1.trim_end())}),
    )?;
    let added = timed(
        &mut server,
        "add_check",
        json!({"checkType": "URL", "name": "MCP bench added", "url": "https://example.com/mcp-bench",
               "locations": ["eu-west-1"]}),
    )?;
    if added["written"] != true {
        return Err(format!("add_check did not write: {added}"));
    }
    let plan = timed(&mut server, "plan", json!({}))?;
    let hash = plan["planHash"]
        .as_str()
        .ok_or_else(|| format!("no planHash: {plan}"))?
        .to_owned();
    let approvals = user_dir
        .path()
        .join("monform")
        .join(monform_mcp::approvals::APPROVALS_FILE);
    monform_mcp::approvals::approve(&approvals, dir, &hash, "bench").map_err(|e| e.to_string())?;
    let applied = timed(&mut server, "apply", json!({"planHash": hash}))?;
    if applied["applied"] != true {
        return Err(format!(
            "the approved plan (the added check) was not applied: {applied}"
        ));
    }
    timed(&mut server, "status", json!({}))?;
    timed(&mut server, "import_preview", json!({}))?;
    timed(&mut server, "codify_check", json!({}))?;
    timed(&mut server, "policy_test", json!({}))?;
    timed(&mut server, "test_local", json!({"address": check}))?;
    drop(server);
    drop(serve);
    Ok(times)
}

/// The quickstart and `large` generated checks; the targets.
pub fn measure(monform: &Path, large: usize) -> Result<Vec<Target>, String> {
    let mut targets = Vec::new();
    let quickstart = tempfile::tempdir().map_err(|e| e.to_string())?;
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/quickstart");
    copy_dir(&example, quickstart.path()).map_err(|e| e.to_string())?;
    let mut sizes = vec![(3, quickstart, QUICKSTART_LIMIT_MS, "quickstart")];
    if large > 0 {
        let generated = tempfile::tempdir().map_err(|e| e.to_string())?;
        crate::generate::generate(generated.path(), &crate::generate::Shape::new(large), 0)
            .map_err(|e| e.to_string())?;
        sizes.push((large, generated, LARGE_LIMIT_MS, "generated"));
    }
    for (checks, dir, limit, what) in sizes {
        for (tool, ms) in measure_project(monform, dir.path(), checks)? {
            targets.push(Target {
                checks,
                id: "mcp_tool",
                description: format!("monform mcp {tool} ({what}, {checks} checks)"),
                measured: ms,
                limit,
                unit: "ms",
                pass: ms < limit,
            });
        }
    }
    Ok(targets)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
