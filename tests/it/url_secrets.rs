//! Issue 43, item 8: a credential in a URL's query string (`?apikey=`,
//! `?access_token=`, `?sig=`) is masked in place wherever a URL is shown:
//! plans in every format (and `--effective`, the saved plan, `show`),
//! apply, a drifted plan, codify, the reconciler's events and its webhook
//! drift report. A change inside the masked part alone shows as
//! "(sensitive value changed)"; the service receives the real URL.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::receiver::Receiver;
use crate::common::{Emulator, Monform, check_named, stderr, stdout};

/// Every token starts with this; none may appear in any output.
const MARKER: &str = "zq-url-marker";

fn project(hook: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        // The lint's excerpt of a check would quote its line of the file.
        "[project]\nname = \"urls\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[reconcile]\ninterval = \"1m\"\nnotify = [\"hook\"]\n\n[lint]\nunrouted-checks = \"off\"\n",
    )
    .unwrap();
    let monitors = format!(
        r#"checks:
  web:
    checkType: URL
    name: Web
    request: {{ url: "http://127.0.0.1:9/p?apikey={MARKER}-1&page=2" }}
  api:
    checkType: API
    name: API
    request: {{ method: GET, url: "http://127.0.0.1:9/api?access_token={MARKER}-2" }}
alertChannels:
  hook:
    type: WEBHOOK
    config: {{ name: hook, url: "{hook}?sig={MARKER}-3" }}
    sendRecovery: false
    sendFailure: false
    sendDegraded: false
"#
    );
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    dir
}

/// `monform ARGS`; its output must hold no token. Stdout and stderr.
fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = emulator.monform(dir).args(args).output().unwrap();
    let text = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!text.contains(MARKER), "monform {args:?} printed a token:\n{text}");
    (output.status.code(), text)
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(MARKER), "{what} holds a token:\n{text}");
}

#[test]
fn query_credentials_are_masked_in_every_output() {
    let emulator = Emulator::start();
    let receiver = Receiver::start();
    let project = project(&receiver.url);
    let dir = project.path();

    // Creates, in every format.
    let (code, human) = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, Some(2), "{human}");
    assert!(
        human.contains("http://127.0.0.1:9/p?apikey=(sensitive)&page=2"),
        "{human}"
    );
    assert!(human.contains("/api?access_token=(sensitive)"), "{human}");
    assert!(human.contains("/hook?sig=(sensitive)"), "{human}");
    for format in ["json", "markdown"] {
        let (code, text) = run(&emulator, dir, &["plan", "--format", format]);
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains("apikey=(sensitive)"), "{format}: {text}");
    }
    run(&emulator, dir, &["plan", "--effective"]);
    let saved = dir.join("creates.plan");
    run(&emulator, dir, &["plan", "--out", saved.to_str().unwrap()]);
    assert_clean("the saved plan", &std::fs::read_to_string(&saved).unwrap());
    for format in ["human", "json", "markdown"] {
        run(&emulator, dir, &["show", "--format", format, saved.to_str().unwrap()]);
    }
    let (code, applied) = run(&emulator, dir, &["apply", "--format", "json", saved.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{applied}");
    // The service has the real URL.
    let web = check_named(&emulator, "Web");
    assert_eq!(
        web["request"]["url"],
        format!("http://127.0.0.1:9/p?apikey={MARKER}-1&page=2")
    );

    // The token changed in the service: drift, shown as a secret's change.
    let id = web["id"].as_str().unwrap().to_owned();
    let mut request = web["request"].clone();
    request["url"] = json!(format!("http://127.0.0.1:9/p?apikey={MARKER}-4&page=2"));
    emulator.call(
        "PUT",
        &format!("/v1/checks/url/{id}"),
        Some(json!({ "request": request })),
    );
    let (code, drifted) = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, Some(2), "{drifted}");
    assert!(drifted.contains("request.url = (sensitive value changed)"), "{drifted}");
    let (_, json) = run(&emulator, dir, &["plan", "--format", "json"]);
    let plan: Value = serde_json::Deserializer::from_str(&json)
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    let change = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "checks.web")
        .unwrap_or_else(|| panic!("{plan}"));
    let field = &change["fields"][0];
    assert_eq!(
        (&field["path"], &field["sensitive"], &field["drift"]),
        (&json!("request.url"), &json!(true), &json!(true)),
        "{change}"
    );
    run(&emulator, dir, &["plan", "--format", "markdown"]);
    // codify lists it as a secret: never writes the masked text.
    run(&emulator, dir, &["codify", "--check"]);
    let (code, codified) = run(&emulator, dir, &["codify", "--write"]);
    assert_ne!(code, Some(1), "{codified}");
    let files = std::fs::read_to_string(dir.join("monitors.yaml")).unwrap();
    assert!(!files.contains("(sensitive)"), "{files}");

    // The reconciler: its events, its log and the webhook's drift report.
    let events = dir.join("events.jsonl");
    let (code, log) = run(
        &emulator,
        dir,
        &["reconcile", "--once", "--events", events.to_str().unwrap()],
    );
    assert_eq!(code, Some(2), "{log}");
    let events = std::fs::read_to_string(&events).unwrap();
    assert_clean("the events", &events);
    assert!(events.contains("\"event\":\"drift\""), "{events}");
    let reports = receiver.reports();
    assert!(!reports.is_empty(), "no drift report; log:\n{log}");
    for report in &reports {
        assert_clean("the drift report", &report.to_string());
    }
    assert!(
        reports[0].to_string().contains("\"sensitive\":true"),
        "{:?}",
        reports[0]
    );

    // A file edit: the new URL shown masked; a saved plan refuses a token
    // edited after it was made.
    let monitors = dir.join("monitors.yaml");
    let text = std::fs::read_to_string(&monitors).unwrap();
    std::fs::write(&monitors, text.replace("/api?access_token=", "/v2/api?access_token=")).unwrap();
    let (_, edited) = run(&emulator, dir, &["plan", "--target", "checks.api"]);
    assert!(edited.contains("/v2/api?access_token=(sensitive)"), "{edited}");
    let planned = dir.join("edit.plan");
    run(
        &emulator,
        dir,
        &["plan", "--target", "checks.api", "--out", planned.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&monitors).unwrap();
    std::fs::write(&monitors, text.replace(&format!("{MARKER}-2"), &format!("{MARKER}-5"))).unwrap();
    let (code, refused) = run(&emulator, dir, &["apply", planned.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{refused}");
    assert!(refused.contains("checks.api: a secret value"), "{refused}");
    let (code, applied) = run(&emulator, dir, &["apply", "--auto-approve", "--target", "checks.api"]);
    assert_eq!(code, Some(0), "{applied}");
    assert_eq!(
        check_named(&emulator, "API")["request"]["url"],
        format!("http://127.0.0.1:9/v2/api?access_token={MARKER}-5")
    );
}
