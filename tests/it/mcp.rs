//! `monform mcp` end to end (issue 51), driven by the official MCP
//! TypeScript SDK's client (tests/mcp/client.mjs, the SDK pinned in
//! node/package-lock.json) against the real emulator: initialize, the
//! tools, a broken project validated (findings at their lines), a write
//! refused while invalid and accepted once valid, a plan's hash, apply
//! refused until `monform approve HASH` is run as a person would, then
//! applied; a stale plan and a policy's `deny` refused; every call in the
//! state's history; no secret in any answer.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::common;
use monform_testkit::Emulator;

/// The secret the files read from the environment: never in an answer.
const TOKEN: &str = "tok-mcp51-9f3c2a7e-never-shown";

/// Line 5: a misspelt field.
const BROKEN: &str = "checks:
  home:
    checkType: URL
    name: Home
    frequncy: 5
    tags: [slo]
    locations: [eu-west-1]
    request:
      url: http://127.0.0.1:9/
";

fn checks(frequency: &str) -> String {
    BROKEN.replace("frequncy: 5", &format!("frequency: {frequency}"))
}

const SECRETS: &str = "variables:
  API_TOKEN:
    value: \"${env:API_TOKEN}\"
    secret: true
";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"agents\"\n").unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), BROKEN).unwrap();
    std::fs::write(dir.path().join("secrets.yaml"), SECRETS).unwrap();
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::copy(
        common::repo_root().join("examples/policies/slo_deletes.rego"),
        policies.join("slo_deletes.rego"),
    )
    .unwrap();
    dir
}

/// The SDK's client, one JSON request and answer per line.
struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// Every line the client wrote: searched for secrets at the end.
    seen: Vec<String>,
}

fn sdk_installed() -> bool {
    common::repo_root()
        .join("node/node_modules/@modelcontextprotocol/sdk/package.json")
        .is_file()
}

impl Client {
    fn start(emulator: &Emulator, dir: &Path, user_dir: &Path) -> Client {
        Client::start_with(emulator, dir, user_dir, &[])
    }

    /// With more environment variables (the PostgreSQL state's URL).
    fn start_with(emulator: &Emulator, dir: &Path, user_dir: &Path, env: &[(&str, &str)]) -> Client {
        let mut command = Command::new("node");
        command.envs(env.iter().copied());
        let mut child = command
            .arg(common::repo_root().join("tests/mcp/client.mjs"))
            .arg(assert_cmd::cargo::cargo_bin("monform"))
            .arg(dir)
            .env("XDG_CONFIG_HOME", user_dir)
            .env("NO_COLOR", "1")
            .env("MONFORM_API_URL", emulator.url())
            .env("MONFORM_API_KEY", &emulator.server.api_key)
            .env("MONFORM_ACCOUNT_ID", &emulator.server.account_id)
            .env("API_TOKEN", TOKEN)
            .env_remove("MONFORM_APPROVALS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs the MCP client");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut client = Client {
            child,
            input,
            output,
            seen: Vec::new(),
        };
        let hello = client.read();
        assert_eq!(hello["op"], "initialized", "{hello}");
        client
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.output.read_line(&mut line).expect("the client answers");
        assert!(!line.is_empty(), "the MCP client ended early");
        self.seen.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn send(&mut self, request: Value) -> Value {
        writeln!(self.input, "{request}").unwrap();
        self.input.flush().unwrap();
        let answer = self.read();
        assert_eq!(answer["ok"], true, "{request}: {answer}");
        answer["result"].clone()
    }

    /// A tool's structured answer and whether it is an error.
    fn call(&mut self, name: &str, arguments: Value) -> (bool, Value) {
        let result = self.send(json!({"op": "call", "name": name, "arguments": arguments}));
        let error = result["isError"] == true;
        (error, result["structuredContent"].clone())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn approve(dir: &Path, user_dir: &Path, hash: &str) -> std::process::Output {
    common::monform()
        .arg("--dir")
        .arg(dir)
        .args(["approve", hash])
        .env("XDG_CONFIG_HOME", user_dir)
        .output()
        .unwrap()
}

fn write(client: &mut Client, content: &str) -> (bool, Value) {
    client.call("write_file", json!({"path": "monitors.yaml", "content": content}))
}

fn plan_hash(client: &mut Client) -> String {
    let (error, plan) = client.call("plan", json!({}));
    assert!(!error, "{plan:#}");
    let hash = plan["planHash"].as_str().expect("planHash").to_owned();
    assert_eq!(hash.len(), 64, "{hash}");
    hash
}

#[test]
fn an_agent_plans_and_applies_only_what_a_person_approved() {
    if !sdk_installed() && std::env::var_os("CI").is_none() {
        eprintln!("skipped: run `npm ci` in node/ for the MCP client SDK");
        return;
    }
    let emulator = Emulator::start();
    let dir = project();
    let user_dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&emulator, dir.path(), user_dir.path());

    let tools = client.send(json!({"op": "tools"}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "validate",
            "plan",
            "apply",
            "write_file",
            "add_check",
            "explain",
            "schema",
            "test_local",
            "status",
            "import_preview",
            "codify_check",
            "policy_test"
        ]
    );

    // The broken project: the misspelt field at its line, with its fix.
    let (_, found) = client.call("validate", json!({}));
    assert_eq!(found["ok"], false, "{found:#}");
    let typo = found["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["severity"] == "error")
        .unwrap_or_else(|| panic!("{found:#}"));
    assert_eq!(
        (typo["file"].as_str(), typo["line"].as_u64()),
        (Some("monitors.yaml"), Some(5)),
        "{typo:#}"
    );

    // Still invalid (a frequency the service does not offer): refused, nothing written.
    let (error, refused) = write(&mut client, &checks("7"));
    assert!(error, "{refused:#}");
    assert_eq!(refused["diagnostics"][0]["line"], 5, "{refused:#}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("monitors.yaml")).unwrap(),
        BROKEN
    );
    // Outside the project, or not a resource file: refused.
    let (error, _) = client.call("write_file", json!({"path": "../x.yaml", "content": "checks: {}\n"}));
    assert!(error);
    let (error, _) = client.call(
        "write_file",
        json!({"path": ".monform/approvals.json", "content": "{}"}),
    );
    assert!(error);

    let (error, written) = write(&mut client, &checks("5"));
    assert!(!error, "{written:#}");
    assert!(
        written["diff"].as_str().unwrap().contains("+    frequency: 5"),
        "{written:#}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("monitors.yaml")).unwrap(),
        checks("5")
    );

    let first = plan_hash(&mut client);
    let (error, refused) = client.call("apply", json!({"planHash": first}));
    assert!(error, "{refused:#}");
    assert!(
        refused["reason"].as_str().unwrap().contains("not approved"),
        "{refused:#}"
    );
    assert!(
        emulator
            .call("GET", "/v1/checks", None)
            .as_array()
            .is_none_or(Vec::is_empty)
    );

    // A person approves it in a terminal (a prefix is enough there).
    let approved = approve(dir.path(), user_dir.path(), &first[..12]);
    assert!(approved.status.success(), "{}", common::stderr(&approved));
    assert!(
        common::stdout(&approved).contains("create checks.home"),
        "{}",
        common::stdout(&approved)
    );
    let (error, applied) = client.call("apply", json!({"planHash": first}));
    assert!(!error, "{applied:#}");
    assert_eq!(applied["applied"], true, "{applied:#}");
    let done: Vec<&str> = applied["done"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["address"].as_str())
        .collect();
    assert!(done.contains(&"checks.home"), "{applied:#}");

    // Approved, then the files change: the plan is stale.
    write(&mut client, &checks("10"));
    let second = plan_hash(&mut client);
    assert!(approve(dir.path(), user_dir.path(), &second).status.success());
    let (error, _) = write(&mut client, &checks("15"));
    assert!(!error);
    let (error, stale) = client.call("apply", json!({"planHash": second}));
    assert!(error, "{stale:#}");
    assert!(stale["reason"].as_str().unwrap().contains("stale"), "{stale:#}");

    // Deleting a check tagged slo: the policy denies it, approved or not.
    let (error, _) = write(&mut client, "checks: {}\n");
    assert!(!error);
    let (error, plan) = client.call("plan", json!({}));
    assert!(!error, "{plan:#}");
    assert_eq!(plan["policy"]["blocks"], true, "{plan:#}");
    let third = plan["planHash"].as_str().unwrap().to_owned();
    assert!(approve(dir.path(), user_dir.path(), &third).status.success());
    let (error, denied) = client.call("apply", json!({"planHash": third}));
    assert!(error, "{denied:#}");
    assert!(denied["reason"].as_str().unwrap().contains("policies"), "{denied:#}");
    assert_eq!(
        denied["policy"]["findings"][0]["rule"], "monform.slo_deletes.deny",
        "{denied:#}"
    );
    assert_eq!(
        emulator.call("GET", "/v1/checks", None).as_array().map(Vec::len),
        Some(1)
    );

    // The other tools answer; the resources and prompts are listed.
    let (error, explained) = client.call("explain", json!({"address": "variables.API_TOKEN"}));
    assert!(!error, "{explained:#}");
    assert_eq!(explained["at"]["file"], "secrets.yaml");
    let (error, schema) = client.call("schema", json!({"kind": "checks", "checkType": "URL"}));
    assert!(!error, "{schema:#}");
    assert!(
        schema["fields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "frequency")
    );
    for tool in ["status", "import_preview", "codify_check", "policy_test", "test_local"] {
        let (_, answer) = client.call(tool, json!({}));
        assert!(answer.is_object(), "{tool}: {answer:#}");
    }
    let resources = client.send(json!({"op": "resources"}));
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(uris.contains(&"monform://files/secrets.yaml"), "{uris:?}");
    assert!(uris.contains(&"monform://schema/resource-file.json"), "{uris:?}");
    let file = client.send(json!({"op": "read", "uri": "monform://files/secrets.yaml"}));
    assert!(
        file["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("${env:API_TOKEN}")
    );
    let prompts = client.send(json!({"op": "prompts"}));
    assert_eq!(prompts["prompts"].as_array().map(Vec::len), Some(2), "{prompts:#}");
    let prompt = client
        .send(json!({"op": "prompt", "name": "add_check_for_url", "arguments": {"url": "https://shop.example/"}}));
    assert!(
        prompt["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("https://shop.example/")
    );

    // Every plan and apply is in the state's history, with the client and hash.
    let calls = std::fs::read_to_string(dir.path().join(".monform/calls.jsonl")).unwrap();
    let calls: Vec<Value> = calls.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let applies: Vec<(&str, &str)> = calls
        .iter()
        .filter(|c| c["tool"] == "apply")
        .map(|c| (c["planHash"].as_str().unwrap(), c["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(applies.len(), 4, "{calls:#?}");
    assert_eq!(applies[1], (first.as_str(), "applied"));
    assert!(calls.iter().all(|c| c["client"] == "monform-it 1.0.0"), "{calls:#?}");
    // ... and `monform state history` shows them.
    let history = state_history(dir.path(), &[]);
    assert!(history.contains("MCP CALL (UTC)"), "{history}");
    assert!(
        history
            .lines()
            .any(|l| l.contains(" apply ") && l.contains(&first[..12]) && l.ends_with("applied")),
        "{history}"
    );

    // No secret in any answer: the files' token nor the API key.
    for line in &client.seen {
        assert!(!line.contains(TOKEN), "{line}");
        assert!(!line.contains(&emulator.server.api_key), "{line}");
    }
}

/// The server's own files are not the agent's to read through resources.
#[test]
fn resources_are_only_the_projects_files_and_schemas() {
    if !sdk_installed() && std::env::var_os("CI").is_none() {
        return;
    }
    let emulator = Emulator::start();
    let dir = project();
    let user_dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&emulator, dir.path(), user_dir.path());
    for uri in [
        "monform://files/../monform.toml",
        "monform://files/.monform/calls.jsonl",
        "file:///etc/passwd",
    ] {
        writeln!(client.input, "{}", json!({"op": "read", "uri": uri})).unwrap();
        let answer = client.read();
        assert_eq!(answer["ok"], false, "{uri}: {answer}");
    }
}

/// `monform state history`'s standard output (it must succeed).
fn state_history(dir: &Path, env: &[(&str, &str)]) -> String {
    let output = common::monform()
        .arg("--dir")
        .arg(dir)
        .args(["state", "history"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    common::stdout(&output)
}

/// `add_check` writes through `write_file`'s rules: refused with the
/// diagnostics while the project would not validate (nothing written),
/// only inside the root, never over an existing id; otherwise added to
/// the file the checks are in (or a new TOML file), the diff returned,
/// and every call in `monform state history`.
#[test]
fn add_check_writes_only_a_valid_project_and_is_in_the_history() {
    if !sdk_installed() && std::env::var_os("CI").is_none() {
        return;
    }
    let emulator = Emulator::start();
    let dir = project();
    std::fs::write(dir.path().join("monitors.yaml"), checks("5")).unwrap();
    let user_dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&emulator, dir.path(), user_dir.path());
    let shop = |frequency: u64| {
        json!({"checkType": "URL", "name": "Shop home", "url": "https://shop.example/",
               "frequency": frequency, "locations": ["eu-west-1"]})
    };

    // A frequency the service does not offer: refused at the new line, nothing written.
    let (error, refused) = client.call("add_check", shop(7));
    assert!(error, "{refused:#}");
    assert_eq!(refused["diagnostics"][0]["file"], "monitors.yaml", "{refused:#}");
    assert_eq!(refused["diagnostics"][0]["line"], 13, "{refused:#}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("monitors.yaml")).unwrap(),
        checks("5")
    );
    let mut outside = shop(5);
    outside["file"] = json!("../elsewhere.yaml");
    let (error, refused) = client.call("add_check", outside);
    assert!(error, "{refused:#}");
    assert!(
        refused["reason"].as_str().unwrap().contains("leaves the project root"),
        "{refused:#}"
    );

    let (error, added) = client.call("add_check", shop(5));
    assert!(!error, "{added:#}");
    assert_eq!(added["address"], "checks.shop-home", "{added:#}");
    assert_eq!(added["path"], "monitors.yaml", "{added:#}");
    let diff = added["diff"].as_str().unwrap();
    assert!(diff.contains("+  shop-home:\n+    checkType: URL\n"), "{diff}");
    assert!(
        !diff.lines().any(|l| l.starts_with("-") && !l.starts_with("---")),
        "{diff}"
    );
    let written = std::fs::read_to_string(dir.path().join("monitors.yaml")).unwrap();
    assert!(written.starts_with(&checks("5")), "{written}");

    let (error, taken) = client.call("add_check", shop(5));
    assert!(error, "{taken:#}");
    assert!(
        taken["reason"]
            .as_str()
            .unwrap()
            .contains("checks.shop-home already exists at monitors.yaml:"),
        "{taken:#}"
    );

    // A TCP check in a new TOML file.
    let (error, added) = client.call(
        "add_check",
        json!({"checkType": "TCP", "name": "Database", "id": "db", "target": "127.0.0.1:5432",
               "file": "tcp.toml", "locations": ["eu-west-1"]}),
    );
    assert!(!error, "{added:#}");
    assert_eq!(added["created"], true, "{added:#}");
    let (_, found) = client.call("validate", json!({}));
    assert_eq!(found["ok"], true, "{found:#}");
    let (error, plan) = client.call("plan", json!({}));
    assert!(!error, "{plan:#}");
    let hash = plan["planHash"].as_str().unwrap().to_owned();
    let created: Vec<&str> = plan["plan"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "create")
        .filter_map(|c| c["address"].as_str())
        .collect();
    for address in ["checks.home", "checks.shop-home", "checks.db"] {
        assert!(created.contains(&address), "{address}: {plan:#}");
    }

    let history = state_history(dir.path(), &[]);
    for expected in [
        "add_check  -             refused: monitors.yaml would not validate",
        "add_check  -             written monitors.yaml",
        "add_check  -             written tcp.toml",
    ] {
        assert!(history.contains(expected), "{expected}\n{history}");
    }
    assert!(
        history
            .lines()
            .any(|l| l.contains("monform-it 1.0.0") && l.contains(" plan ") && l.contains(&hash[..12])),
        "{history}"
    );
}

/// With the PostgreSQL state, the calls are in its `monform_calls` table
/// and `monform state history` shows them below the state's writes.
#[test]
fn calls_are_in_the_postgres_history() {
    let Some(url) = common::postgres() else { return };
    if !sdk_installed() && std::env::var_os("CI").is_none() {
        return;
    }
    let emulator = Emulator::start();
    let dir = project();
    let name = common::unique("mcp-calls");
    std::fs::write(
        dir.path().join("monform.toml"),
        format!("[project]\nname = \"{name}\"\n\n[state]\nbackend = \"postgres\"\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), checks("5")).unwrap();
    let user_dir = tempfile::tempdir().unwrap();
    let env = [("MONFORM_STATE_URL", url.as_str())];
    let mut client = Client::start_with(&emulator, dir.path(), user_dir.path(), &env);
    let (error, _) = write(&mut client, &checks("10"));
    assert!(!error);
    let hash = plan_hash(&mut client);
    assert!(approve(dir.path(), user_dir.path(), &hash).status.success());
    let (error, applied) = client.call("apply", json!({"planHash": hash}));
    assert!(!error, "{applied:#}");
    drop(client);

    let history = state_history(dir.path(), &env);
    let (writes, calls) = history
        .split_once("MCP CALL (UTC)")
        .unwrap_or_else(|| panic!("{history}"));
    assert!(writes.contains("monform mcp apply"), "{history}");
    for (tool, outcome) in [
        ("write_file", "written monitors.yaml"),
        ("plan", "planned"),
        ("apply", "applied"),
    ] {
        assert!(
            calls
                .lines()
                .any(|l| l.contains("monform-it 1.0.0") && l.contains(&format!(" {tool} ")) && l.ends_with(outcome)),
            "{tool}: {history}"
        );
    }
}

/// The skill committed in examples/agent-skill/monform is what
/// `monform agent-skill` writes now: a change of the model (or of the
/// tools) that is not regenerated fails here, as the reference pages do.
#[test]
fn the_committed_agent_skill_is_current() {
    let generated = tempfile::tempdir().unwrap();
    let output = common::monform()
        .args(["agent-skill", "--out"])
        .arg(generated.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    let committed = common::repo_root().join("examples/agent-skill/monform");
    let update = std::env::var_os("MONFORM_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for name in ["SKILL.md", "fields.md"] {
        let fresh = std::fs::read_to_string(generated.path().join(name)).unwrap();
        let path = committed.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(fresh.as_str()) {
            if update {
                std::fs::create_dir_all(&committed).unwrap();
                std::fs::write(&path, &fresh).unwrap();
            } else {
                stale.push(name);
            }
        }
    }
    let written: Vec<_> = std::fs::read_dir(generated.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(written.len(), 2, "{written:?}");
    assert!(
        stale.is_empty(),
        "examples/agent-skill/monform is stale: {stale:?}\nrun `MONFORM_UPDATE_DOCS=1 cargo test -p monform --test it mcp::the_committed_agent_skill_is_current`"
    );
}
