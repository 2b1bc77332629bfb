//! A pull request cannot read a secret out of monform (issue 25): a project
//! whose every secret-like value is a unique marker goes through every
//! output (plans in three formats with and without `--effective`, validate
//! and plan as SARIF and GitHub annotations, the saved plan, apply, a
//! drifted plan, `codify --check` of that drift, `apply --format json` and
//! `markdown`, export, the state and its commands, JUnit, the emulator's
//! debug log), and no marker comes out.

use crate::common;

use std::path::Path;

use common::*;

/// Each secret-like value of the project; none may appear in any output.
const MARKERS: &[&str] = &[
    "zq-marker-env-1",
    "zq-marker-2",
    "zq-marker-3",
    "zq-marker-4",
    "zq-marker-5",
    "zq-marker-6",
    "zq-marker-7",
    "zq-marker-8",
    "zq-marker-9",
    "zq-marker-10",
    "zq-marker-11",
    "zq-marker-drift-12",
    "zq-marker-drift-13",
    "zq-marker-env-14",
    "zq-marker-15",
];

const PROJECT: &str = r#"
variables:
  API_TOKEN: { value: "${env:MF_SECRET_ONE}", secret: true }
groups:
  prod:
    name: Production
    concurrency: 1
    locations: [eu-west-1]
    apiCheckDefaults:
      url: "http://127.0.0.1:9"
      basicAuth: { username: ops, password: "zq-marker-2" }
      headers: [{ key: X-Auth-Token, value: "zq-marker-3" }]
    environmentVariables:
      - { key: GROUP_SECRET, value: "zq-marker-4", secret: true }
alertChannels:
  hook:
    type: WEBHOOK
    config:
      name: hook
      url: "http://127.0.0.1:9/hook"
      headers:
        - { key: X-Api-Key, value: "zq-marker-5" }
        - { key: X-Tenant, value: "zq-marker-6", secret: true }
      webhookSecret: "zq-marker-7"
checks:
  api:
    checkType: API
    name: Secret API
    group: prod
    frequency: 10
    locations: [eu-west-1]
    request:
      method: GET
      url: "http://127.0.0.1:9/api"
      headers:
        - { key: Accept, value: application/json }
        - { key: Authorization, value: "Bearer zq-marker-8" }
        - { key: Cookie, value: "sid=zq-marker-9" }
        - { key: X-Api-Token, value: "zq-marker-15" }
      basicAuth: { username: u, password: "zq-marker-10" }
    alertChannels: [hook]
  browser:
    checkType: BROWSER
    name: "Secret browser ${env:MF_SECRET_NAME}"
    frequency: 10
    locations: [eu-west-1]
    activated: false
    script: "console.log(process.env.CHECK_SECRET.length)"
    environmentVariables:
      - { key: CHECK_SECRET, value: "zq-marker-11", secret: true }
"#;

/// The value a JSON plan shows for the header named `header` in the list
/// at `path` of the resource created at `address`.
fn header_value(plan: &serde_json::Value, address: &str, path: &str, header: &str) -> String {
    let change = plan["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("no change of {address}: {plan}"));
    let list = change["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no {path} in {change}"));
    let item = list["after"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["key"] == header)
        .unwrap_or_else(|| panic!("no {header} in {list}"));
    item["value"].as_str().unwrap_or_default().to_owned()
}

struct Walk {
    served: Served,
    project: tempfile::TempDir,
    /// Every output seen, named by where it came from.
    seen: Vec<(String, String)>,
}

impl Walk {
    fn monform(&self, args: &[&str]) -> std::process::Output {
        monform()
            .arg("--dir")
            .arg(self.project.path())
            .args(["--api-url", &self.served.url, "--color", "never"])
            .args(args)
            .env("MONFORM_API_KEY", self.served.key.as_deref().unwrap_or_default())
            .env("MONFORM_ACCOUNT_ID", &self.served.account)
            .env("MF_SECRET_ONE", "zq-marker-env-1")
            .env("MF_SECRET_NAME", "zq-marker-env-14")
            .env("RUST_LOG", "debug")
            .output()
            .expect("monform runs")
    }

    /// Runs monform and keeps what it printed, failing on an unexpected exit.
    fn run(&mut self, args: &[&str], codes: &[i32]) -> String {
        let output = self.monform(args);
        let (out, err) = (stdout(&output), stderr(&output));
        let code = output.status.code().unwrap_or(-1);
        assert!(codes.contains(&code), "monform {args:?} exited {code}\n{out}\n{err}");
        self.seen
            .push((format!("monform {} (stdout)", args.join(" ")), out.clone()));
        self.seen.push((format!("monform {} (stderr)", args.join(" ")), err));
        out
    }

    fn file(&mut self, path: &Path) {
        let text = String::from_utf8_lossy(&std::fs::read(path).expect("file written")).into_owned();
        self.seen.push((path.display().to_string(), text));
    }

    fn folder(&mut self, dir: &Path) {
        for entry in std::fs::read_dir(dir).expect("folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                self.folder(&path);
            } else {
                self.file(&path);
            }
        }
    }
}

#[test]
fn no_secret_reaches_any_output() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (served, _) = serve_logging(&dir.path().join("emulator.db"), &["--rate-limit", "off"], "debug");
    let project = tempfile::tempdir().expect("temporary folder");
    std::fs::write(
        project.path().join("monform.toml"),
        "[project]\nname = \"secrets-walk\"\n",
    )
    .expect("write");
    std::fs::write(project.path().join("monitors.yaml"), PROJECT).expect("write");
    let mut walk = Walk {
        served,
        project,
        seen: Vec::new(),
    };

    for format in ["human", "json", "markdown"] {
        walk.run(&["plan", "--format", format], &[0]);
        walk.run(&["plan", "--format", format, "--effective"], &[0]);
    }
    // Masked, not left out: each credential header is there, `(sensitive)`.
    let plan: serde_json::Value =
        serde_json::from_str(&walk.run(&["plan", "--format", "json"], &[0])).expect("JSON plan");
    for (address, path, header) in [
        ("checks.api", "request.headers", "Authorization"),
        ("checks.api", "request.headers", "X-Api-Token"),
        ("alertChannels.hook", "config.headers", "X-Api-Key"),
        ("alertChannels.hook", "config.headers", "X-Tenant"),
    ] {
        assert_eq!(
            header_value(&plan, address, path, header),
            "(sensitive)",
            "{address} {header}"
        );
    }
    assert_eq!(
        header_value(&plan, "checks.api", "request.headers", "Accept"),
        "application/json"
    );
    for format in ["sarif", "github"] {
        walk.run(&["validate", "--format", format], &[0]);
        walk.run(&["plan", "--format", format], &[0]);
    }
    let saved = walk.project.path().join("reviewed.plan");
    walk.run(&["plan", "--out", saved.to_str().expect("utf-8")], &[0]);
    walk.file(&saved);
    // The saved plan keeps salted fingerprints of the secrets it would
    // write, headers by name or by `secret: true` among them, so a secret
    // changed after review makes it stale.
    let saved_plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).expect("saved plan")).expect("JSON");
    for (address, path) in [
        ("checks.api", "request.headers[1].value"),
        ("checks.api", "request.headers[3].value"),
        ("alertChannels.hook", "config.headers[0].value"),
        ("alertChannels.hook", "config.headers[1].value"),
        ("variables.API_TOKEN", "value"),
    ] {
        let print = &saved_plan["secrets"][address][path];
        assert!(
            print.as_str().is_some_and(|p| !p.is_empty()),
            "no fingerprint of {address} {path}: {}",
            saved_plan["secrets"]
        );
    }
    walk.run(&["apply", "--auto-approve", saved.to_str().expect("utf-8")], &[0]);
    walk.run(&["plan", "--format", "json", "--detailed-exitcode"], &[0]);

    // Changed behind monform's back, as in the service's UI: the plan shows
    // the account's old values, which must be masked by what they hold.
    let checks: serde_json::Value = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(format!("{}/v1/checks", walk.served.url))
        .bearer_auth(walk.served.key.as_deref().unwrap_or_default())
        .header("X-Service-Account", &walk.served.account)
        .send()
        .and_then(|r| r.json())
        .expect("checks listed");
    let check = checks
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "Secret API")
        .expect("the API check")
        .clone();
    let mut body = serde_json::json!({
        "checkType": "API", "name": check["name"], "request": check["request"], "heartbeat": {}, "script": "",
    });
    body["request"]["headers"] = serde_json::json!([
        {"key": "Authorization", "value": "Bearer zq-marker-drift-12"},
        {"key": "Cookie", "value": "sid=zq-marker-drift-13"}
    ]);
    let response = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .put(format!(
            "{}/v1/checks/{}",
            walk.served.url,
            check["id"].as_str().expect("id")
        ))
        .bearer_auth(walk.served.key.as_deref().unwrap_or_default())
        .header("X-Service-Account", &walk.served.account)
        .json(&body)
        .send()
        .expect("updated");
    let status = response.status();
    assert!(status.is_success(), "{status}: {}", response.text().unwrap_or_default());
    for format in ["human", "json", "markdown"] {
        let out = walk.run(&["plan", "--format", format, "--detailed-exitcode"], &[2]);
        assert!(out.contains("request"), "the drift is shown: {out}");
    }
    // Writing the drift back lists the secret header, never shows it.
    walk.run(&["codify", "--check"], &[3]);
    walk.run(&["apply", "--auto-approve", "--format", "json"], &[0]);
    walk.run(&["apply", "--auto-approve", "--format", "markdown"], &[0]);

    let exported = walk.project.path().join("exported");
    walk.run(&["export", "--out", exported.to_str().expect("utf-8")], &[0]);
    walk.folder(&exported);
    walk.run(&["state", "list"], &[0]);
    walk.run(&["state", "show", "checks.api"], &[0]);
    walk.folder(&walk.project.path().join(".monform"));
    let junit = walk.project.path().join("junit.xml");
    walk.run(&["test", "--junit", junit.to_str().expect("utf-8")], &[0, 1]);
    walk.file(&junit);

    std::thread::sleep(std::time::Duration::from_millis(200));
    let log = walk.served.log.lock().expect("log").clone();
    assert!(
        log.contains("/v1/checks"),
        "the emulator logged requests at debug: {log}"
    );
    walk.seen.push(("monform serve (debug log)".into(), log));

    let leaks: Vec<String> = walk
        .seen
        .iter()
        .flat_map(|(place, text)| {
            MARKERS
                .iter()
                .filter(|m| text.contains(**m))
                .map(move |m| format!("{m} in {place}"))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "secrets leaked:\n{}\n\nfirst leaking output:\n{}",
        leaks.join("\n"),
        walk.seen
            .iter()
            .find(|(_, t)| MARKERS.iter().any(|m| t.contains(m)))
            .map(|(p, t)| format!("{p}:\n{t}"))
            .unwrap_or_default()
    );
    assert!(walk.seen.len() > 30, "every output was read");
}

/// What `${env:MARKER_VAR}` holds in the diagnostics walks: it may appear
/// in no output; its variable's name is what they show.
const DIAGNOSTIC_MARKER: &str = "zq-marker-diag-43";

/// Issue 43 item 2: values of `${env:}` in wrong fields (a type, a length,
/// an enum and a did-you-mean, a tag, a reference, a value from
/// `[defaults]`).
const WRONG_FIELDS: &str = r#"alertChannels:
  mail: { type: EMAIL, config: { address: "a@example.com" } }
checks:
  c1:
    checkType: API
    name: c1
    frequency: ${env:MARKER_VAR}
    description: "${env:LONG_MARKER_VAR}"
    locations: ["${env:MARKER_VAR}"]
    alertChannels: ["${env:MARKER_VAR}"]
    request: { method: "${env:MARKER_VAR}", url: "http://127.0.0.1:9/" }
  c2:
    checkType: "${env:MARKER_VAR}"
    name: c2
"#;

/// Runs `monform` on `project` against `served` with `MARKER_VAR` set.
fn marked(served: &Served, project: &Path, args: &[&str]) -> std::process::Output {
    monform()
        .arg("--dir")
        .arg(project)
        .args(["--api-url", &served.url, "--color", "never"])
        .args(args)
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .env("MARKER_VAR", DIAGNOSTIC_MARKER)
        .env("LONG_MARKER_VAR", DIAGNOSTIC_MARKER.repeat(40))
        .output()
        .expect("monform runs")
}

/// Runs validate and plan in every diagnostic format (human, json, sarif,
/// github): each fails, shows no marker and names the variable.
fn walk_diagnostics(served: &Served, project: &Path) {
    for command in ["validate", "plan"] {
        for format in ["human", "json", "sarif", "github"] {
            let output = marked(served, project, &[command, "--format", format]);
            let (out, err) = (stdout(&output), stderr(&output));
            assert!(
                !output.status.success(),
                "{command} --format {format} passed:\n{out}\n{err}"
            );
            for (stream, text) in [("stdout", &out), ("stderr", &err)] {
                assert!(
                    !text.contains(DIAGNOSTIC_MARKER),
                    "{command} --format {format} shows the value on {stream}:\n{text}"
                );
            }
            assert!(
                out.contains("${env:MARKER_VAR}") || err.contains("${env:MARKER_VAR}"),
                "{command} --format {format} names no variable:\n{out}\n{err}"
            );
        }
    }
}

/// A project of `files` (path, text) in a fresh folder.
fn project_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let project = tempfile::tempdir().expect("temporary folder");
    for (path, text) in files {
        std::fs::write(project.path().join(path), text).expect("write");
    }
    project
}

#[test]
fn no_environment_value_reaches_a_diagnostic() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (served, _) = serve(&dir.path().join("emulator.db"), &["--rate-limit", "off"]);
    let project = project_of(&[
        (
            "monform.toml",
            "[project]\nname = \"diagnostics-walk\"\n\n[defaults]\ndegradedResponseTime = \"${env:MARKER_VAR}\"\n",
        ),
        ("monitors.yaml", WRONG_FIELDS),
    ]);
    walk_diagnostics(&served, project.path());
    // The wording a reviewer reads: each value named by its variable.
    let output = marked(&served, project.path(), &["validate"]);
    insta::assert_snapshot!("diagnostics_name_the_variable", transcript(&output));
}

/// Issue 43 item 7: `forEach` over a `[vars]` list read from `${env:}`
/// would put the value in addresses, names, every plan format and the
/// saved plan: refused at the forEach field, naming the variable.
#[test]
fn a_for_each_over_an_environment_list_is_refused() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (served, _) = serve(&dir.path().join("emulator.db"), &["--rate-limit", "off"]);
    let project = project_of(&[
        (
            "monform.toml",
            "[project]\nname = \"for-each-walk\"\n\n[vars]\nlst = [\"${env:MARKER_VAR}\"]\n",
        ),
        (
            "monitors.yaml",
            "checks:\n  c2:\n    forEach: \"${var:lst}\"\n    checkType: URL\n    name: \"c2 ${each.key}\"\n    request: { url: \"http://127.0.0.1:9/${each.value}\" }\n",
        ),
    ]);
    walk_diagnostics(&served, project.path());
    for format in ["human", "json", "markdown"] {
        let output = marked(&served, project.path(), &["plan", "--format", format]);
        let text = format!("{}{}", stdout(&output), stderr(&output));
        assert!(!output.status.success(), "plan --format {format} passed:\n{text}");
        assert!(!text.contains(DIAGNOSTIC_MARKER), "plan --format {format}:\n{text}");
        assert!(
            text.contains("monform::sensitive-key"),
            "plan --format {format}:\n{text}"
        );
    }
    let saved = project.path().join("reviewed.plan");
    let output = marked(
        &served,
        project.path(),
        &["plan", "--out", saved.to_str().expect("utf-8")],
    );
    assert!(!output.status.success() && !saved.exists(), "{}", stderr(&output));
}

/// Issue 43 item 2: a policy from a pull request printing every field of
/// every resource sees the values of `${env:}` masked (the input is built
/// by the plan's rule), in every format of validate and plan.
#[test]
fn a_policy_finding_shows_no_environment_value() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let (served, _) = serve(&dir.path().join("emulator.db"), &["--rate-limit", "off"]);
    let project = project_of(&[
        (
            "monform.toml",
            "[project]\nname = \"policy-walk\"\n\n[vars]\nmap = { a = \"${env:MARKER_VAR}\" }\n",
        ),
        (
            "monitors.yaml",
            "checks:\n  c:\n    forEach: \"${var:map}\"\n    checkType: URL\n    name: \"c ${each.key}\"\n    description: \"${each.value}\"\n    request: { url: \"http://127.0.0.1:9/?q=${env:MARKER_VAR}\" }\n",
        ),
    ]);
    std::fs::create_dir_all(project.path().join("policies")).expect("folder");
    std::fs::write(
        project.path().join("policies/leak.rego"),
        "package monform.leak\n\ndeny contains sprintf(\"%s %v\", [r.address, r.fields]) if {\n\tsome r in input.resources\n}\n",
    )
    .expect("write");
    for command in ["validate", "plan"] {
        for format in ["human", "json", "sarif", "github"] {
            let output = marked(&served, project.path(), &[command, "--format", format]);
            let text = format!("{}{}", stdout(&output), stderr(&output));
            assert!(
                !text.contains(DIAGNOSTIC_MARKER),
                "{command} --format {format}:\n{text}"
            );
            assert!(
                text.contains("checks.c[a]") && text.contains("(sensitive)"),
                "{command} --format {format}: no finding:\n{text}"
            );
        }
    }
}
