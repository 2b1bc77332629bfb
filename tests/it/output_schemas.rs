//! Issue 51 item 4: every command readable by a program. Each command
//! `monform schema --output` lists is run for real against the emulator,
//! and its `--format json` validated against the schema it publishes (a
//! schema that drifts from the output fails here); a listed command this
//! test does not run fails it too. `housekeeping`: init, trust,
//! location-keys, the state, agent-skill; `exit_codes`: the exit codes of
//! a few real runs are the ones the generated exit-code table
//! (docs/src/reference/output.md) declares.

mod exit_codes;
mod housekeeping;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use crate::common;

use common::*;
use serde_json::Value;

const SECRET: &str = "s3cret-for-output-schemas";

/// What the tests here share: the emulator, a target the checks probe,
/// and [`project`] against them.
struct Fixture {
    emulator: Emulator,
    target: String,
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let emulator = Emulator::start();
        let target = fail_target();
        let dir = project(&target);
        Fixture { emulator, target, dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `monform ARGS` on the project, against the emulator, with the secret set.
    fn run(&self, args: &[&str]) -> Output {
        self.emulator
            .monform(self.path())
            .args(args)
            .env("API_TOKEN", SECRET)
            .output()
            .unwrap()
    }
}

/// The commands whose output was validated, to hold against the published list.
#[derive(Default)]
struct Checked {
    covered: BTreeSet<String>,
}

impl Checked {
    /// Validates `output` as `command`'s (see [`valid`]) and counts it covered.
    fn check(&mut self, command: &str, lines: bool, output: &Output) -> Vec<Value> {
        self.covered.insert(command.to_owned());
        valid(command, lines, output)
    }

    /// `monform reconcile --once --log-format json --events EVENTS` by
    /// `run`, ending with `code`: its log lines (standard error), checked
    /// against their schema, and its events file as an output to check.
    fn reconcile_once(&mut self, run: impl Fn(&[&str]) -> Output, events: &Path, code: i32) -> (Vec<Value>, Output) {
        let reconciled = run(&[
            "reconcile",
            "--once",
            "--log-format",
            "json",
            "--events",
            &events.display().to_string(),
        ]);
        assert_eq!(reconciled.status.code(), Some(code), "{}", stderr(&reconciled));
        let log = self.check(
            "reconcile",
            true,
            &Output {
                stdout: reconciled.stderr.clone(),
                ..reconciled.clone()
            },
        );
        let lines = Output {
            stdout: std::fs::read(events).unwrap_or_default(),
            ..reconciled
        };
        (log, lines)
    }

    /// A command this machine cannot run (PostgreSQL's, without one): it
    /// runs where it must, CI (`MONFORM_REQUIRE_POSTGRES=1`).
    fn skipped(&mut self, command: &str) {
        self.covered.insert(command.to_owned());
    }
}

/// A URL check with a list field (assertions: the plan's items), a secret
/// variable, and a policy whose `warn` finds the unrouted check.
fn project(target: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"schemas\"\n").unwrap();
    std::fs::write(
        dir.path().join("monitors.yaml"),
        format!(
            "checks:
  home:
    checkType: API
    name: Home
    frequency: 10
    locations: [eu-west-1]
    request:
      method: GET
      url: {target}/ok
      assertions:
        - {{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}
variables:
  API_TOKEN: {{ value: \"${{env:API_TOKEN}}\", secret: true }}
privateLocations:
  office: {{ name: Office, slugName: office }}
slos:
  home-up: {{ checks: [checks.home], target: 99, window: 7d }}
"
        ),
    )
    .unwrap();
    let policies = dir.path().join("policies");
    std::fs::create_dir_all(&policies).unwrap();
    for name in ["unrouted_checks.rego", "unrouted_checks_test.rego"] {
        std::fs::copy(repo_root().join("examples/policies").join(name), policies.join(name)).unwrap();
    }
    dir
}

/// The commands with a published output, as `monform schema --output` lists them.
fn published() -> BTreeSet<String> {
    let output = monform().args(["schema", "--output"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    stdout(&output)
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

fn validator(command: &str) -> jsonschema::Validator {
    let output = monform().args(["schema", "--output", command]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut schema: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        schema["title"].as_str().is_some_and(|t| t.starts_with("monform ")),
        "{schema}"
    );
    closed(&mut schema);
    jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("{command}'s schema: {e}"))
}

/// `schema` with every object's fields closed (`additionalProperties:
/// false` where it says nothing): a field the output gains and the schema
/// lacks fails too. The published schema stays open, so that a new field
/// breaks no reader. Fields shared by every kind of a tagged enum (the
/// reconciler's log line: `time`, `level`, `message` and each `kind`'s own)
/// are copied into each kind, which is closed, not the whole.
fn closed(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let shared = map.get("properties").and_then(Value::as_object).cloned();
            match (shared, map.get_mut("oneOf").and_then(Value::as_array_mut)) {
                (Some(shared), Some(variants)) => {
                    for variant in variants {
                        if let Some(own) = variant["properties"].as_object_mut() {
                            own.extend(shared.clone());
                        }
                    }
                }
                _ => {
                    if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                        map.insert("additionalProperties".into(), Value::Bool(false));
                    }
                }
            }
            map.values_mut().for_each(closed);
        }
        Value::Array(items) => items.iter_mut().for_each(closed),
        _ => {}
    }
}

/// Every document `output` printed (one, or one per line) valid against
/// `command`'s schema; returns them.
fn valid(command: &str, lines: bool, output: &Output) -> Vec<Value> {
    let text = stdout(output);
    assert!(!text.contains(SECRET), "{command} printed the secret");
    let documents: Vec<Value> = if lines {
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    } else {
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{command}: not JSON ({e}): {text}"))]
    };
    let validator = validator(command);
    for document in &documents {
        let errors: Vec<String> = validator
            .iter_errors(document)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{command}'s output does not match its schema:\n{}\n{document:#}",
            errors.join("\n")
        );
    }
    documents
}

#[test]
fn every_published_output_is_valid_against_its_schema() {
    let fixture = Fixture::new();
    let (emulator, target, path) = (&fixture.emulator, &fixture.target, fixture.path());
    let run = |args: &[&str]| fixture.run(args);
    let mut checked = Checked::default();
    // Offline: a project of their own.
    housekeeping::trust(&mut checked);
    housekeeping::agent_skill(&mut checked);
    housekeeping::docs(&mut checked);

    let found = checked.check("validate", false, &run(&["validate", "--format", "json"]));
    assert!(
        found[0]["diagnostics"].as_array().is_some_and(|d| !d.is_empty()),
        "{found:?}"
    );
    checked.check("policy-test", false, &run(&["policy", "test", "--format", "json"]));

    // An apply refused before it starts ends with a result line and its error.
    let refused = checked.check("apply", true, &run(&["apply", "missing.plan", "--format", "json"]));
    assert!(refused.last().unwrap()["error"].is_string(), "{refused:?}");
    let applied = checked.check("apply", true, &run(&["apply", "--auto-approve", "--format", "json"]));
    assert_eq!(applied.last().unwrap()["exitCode"], 0, "{applied:?}");

    // The reconciler's log lines (standard error), an interval in sync: 0.
    let events = path.join("events.jsonl");
    let (log, _) = checked.reconcile_once(run, &events, 0);
    assert!(log.iter().any(|l| l["kind"] == "leading"), "{log:?}");
    // Its events file, one event a line: an apply's events, then in sync;
    // the log's lines of a change applied, each kind with its own fields.
    edit(path, "monitors.yaml", "name: Home", "name: Home page");
    let (log, lines) = checked.reconcile_once(run, &events, 2);
    let change = log.iter().find(|l| l["kind"] == "change").expect("a change line");
    assert_eq!(change["address"], "checks.home", "{change}");
    assert_eq!(
        (&change["action"], &change["origin"], &change["verdict"]),
        (&"update".into(), &"files".into(), &"report".into()),
        "{change}"
    );
    let events = checked.check("reconcile-events", true, &lines);
    assert!(events.iter().any(|e| e["event"] == "change"), "{events:?}");
    edit(path, "monitors.yaml", "name: Home page", "name: Home");
    // A list changed item by item, with the policy's finding and the run budget.
    edit(path, "monitors.yaml", "target: \"200\" }", "target: \"201\" }");
    let saved = path.join("saved.plan").display().to_string();
    let planned = checked.check("plan", false, &run(&["plan", "--format", "json", "--out", &saved]));
    let change = &planned[0]["changes"][0];
    assert!(change["fields"][0]["items"].is_array(), "{change:#}");
    assert!(planned[0]["policy"]["findings"].is_array(), "{:#}", planned[0]);
    checked.check("show", false, &run(&["show", &saved, "--format", "json"]));
    // A person approves a plan an agent saved (`.monform/plans/HASH.json`, as `monform mcp` keeps them).
    let hashed = std::process::Command::new("sha256sum").arg(&saved).output().unwrap();
    let hash = String::from_utf8_lossy(&hashed.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    std::fs::create_dir_all(path.join(".monform/plans")).unwrap();
    std::fs::copy(&saved, path.join(format!(".monform/plans/{hash}.json"))).unwrap();
    let approved = emulator
        .monform(path)
        .args(["approve", &hash[..12], "--format", "json"])
        .env("MONFORM_APPROVALS", path.join("approvals.json"))
        .output()
        .unwrap();
    let approved = checked.check("approve", false, &approved);
    assert_eq!(approved[0]["planHash"], hash, "{approved:?}");

    edit(path, "monitors.yaml", "target: \"201\" }", "target: \"200\" }");
    // Codify: a name renamed in the service (written), a frequency changed in
    // both the service and the files (a conflict: exit 3, not written).
    let checks = emulator.call("GET", "/v1/checks?limit=100", None);
    let home = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Home")
        .unwrap()
        .clone();
    let id = home["id"]
        .as_str()
        .map_or_else(|| home["id"].to_string(), str::to_owned);
    emulator.call(
        "PUT",
        &format!("/v1/checks/api/{id}"),
        Some(serde_json::json!({"name": "Home page", "frequency": 30})),
    );
    edit(path, "monitors.yaml", "frequency: 10", "frequency: 5");
    // The reconciler reports that drift: its event with the fields drifted, its log line.
    let drift_events = path.join("drift-events.jsonl");
    let (log, lines) = checked.reconcile_once(run, &drift_events, 2);
    assert!(log.iter().any(|l| l["kind"] == "drift"), "{log:?}");
    let events = checked.check("reconcile-events", true, &lines);
    let drift = events.iter().find(|e| e["event"] == "drift").expect("a drift event");
    assert_eq!(drift["drifted"][0]["address"], "checks.home", "{drift}");
    assert!(drift["drifted"][0]["fields"].is_array(), "{drift}");
    let would = run(&["codify", "--check", "--format", "json"]);
    assert_eq!(would.status.code(), Some(3), "{}", stderr(&would));
    let would = checked.check("codify", false, &would);
    assert_eq!(would[0]["written"], false, "{would:?}");
    assert_eq!(would[0]["conflicts"][0]["path"], "frequency", "{would:?}");
    assert!(
        would[0]["files"][0]["diff"]
            .as_str()
            .is_some_and(|d| d.contains("+    name: Home page")),
        "{would:?}"
    );
    let wrote = checked.check("codify", false, &run(&["codify", "--write", "--format", "json"]));
    assert_eq!(wrote[0]["written"], true, "{wrote:?}");
    assert_eq!(wrote[0]["fields"][0]["path"], "name", "{wrote:?}");
    assert!(
        std::fs::read_to_string(path.join("monitors.yaml"))
            .unwrap()
            .contains("name: Home page")
    );
    edit(path, "monitors.yaml", "frequency: 5", "frequency: 10");
    checked.check("test", false, &run(&["test", "--local", "--format", "json"]));
    // The service's test sessions, as applied.
    let tested = checked.check("test", false, &run(&["test", "--format", "json"]));
    assert_eq!(tested[0]["runs"][0]["address"], "checks.home", "{tested:?}");
    assert_eq!(tested[0]["summary"]["passed"], 1, "{tested:?}");
    checked.check("status", false, &run(&["status", "--format", "json"]));
    let slos = checked.check("slo-status", false, &run(&["slo", "status", "--format", "json"]));
    assert_eq!(slos[0]["slos"][0]["address"], "slos.home-up", "{slos:?}");
    // OpenSLO out and back in: the text itself without --out, the file written with it.
    let openslo = checked.check(
        "slo-export",
        false,
        &run(&["slo", "export", "--openslo", "--format", "json"]),
    );
    assert_eq!(openslo[0]["slos"], serde_json::json!(["slos.home-up"]), "{openslo:?}");
    assert!(
        openslo[0]["yaml"].as_str().is_some_and(|y| y.contains("kind: SLO")),
        "{openslo:?}"
    );
    // Outside the project: a .yaml file in it would be read as a resource file.
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("openslo.yaml").display().to_string();
    let written = run(&["slo", "export", "--openslo", "--out", &file, "--format", "json"]);
    let written = checked.check("slo-export", false, &written);
    assert_eq!(written[0]["written"], file.as_str(), "{written:?}");
    assert!(written[0]["yaml"].is_null(), "{written:?}");
    let back = elsewhere.path().join("slos.yaml").display().to_string();
    let imported = checked.check(
        "slo-import",
        false,
        &run(&["slo", "import", &file, "--out", &back, "--format", "json"]),
    );
    assert_eq!(imported[0]["slos"], serde_json::json!(["slos.home-up"]), "{imported:?}");
    assert!(std::fs::read_to_string(&back).unwrap().starts_with("slos:"));
    let shown = checked.check("slo-import", false, &run(&["slo", "import", &file, "--format", "json"]));
    assert!(
        shown[0]["yaml"].as_str().is_some_and(|y| y.contains("home-up:")),
        "{shown:?}"
    );
    // No results yet: the gate is closed, and says why.
    let gate = checked.check(
        "gate",
        false,
        &run(&["gate", "--slo", "slos.home-up", "--format", "json"]),
    );
    assert_eq!(gate[0]["open"], false, "{gate:?}");
    assert!(gate[0]["slos"][0]["blocks"].is_string(), "{gate:?}");
    housekeeping::location_keys(&fixture, &mut checked);
    let exported = path.join("exported");
    let export = run(&["export", "--out", &exported.display().to_string(), "--format", "json"]);
    let export = checked.check("export", false, &export);
    assert!(
        export[0]["files"].as_array().is_some_and(|f| !f.is_empty()),
        "{export:?}"
    );
    assert!(
        export[0]["env"][0]["name"].is_string(),
        "the secret variable's: {export:?}"
    );
    let listed = checked.check("state-list", false, &run(&["state", "list", "--format", "json"]));
    assert!(
        listed[0]["resources"].as_array().is_some_and(|r| r.len() == 4),
        "{listed:?}"
    );
    let entry = checked.check(
        "state-show",
        false,
        &run(&["state", "show", "variables.API_TOKEN", "--format", "json"]),
    );
    assert_eq!(entry[0]["secrets"], serde_json::json!(["value"]), "{entry:?}");
    let history = checked.check("state-history", false, &run(&["state", "history", "--format", "json"]));
    assert!(
        history[0]["writes"].is_null(),
        "the local state keeps no history: {history:?}"
    );
    // Import: a hand-made snippet adopted into a new project with --all-unmanaged
    // (its owner cannot be told: included by name), and another one into this project.
    let hand = emulator.call(
        "POST",
        "/v1/snippets",
        Some(serde_json::json!({"name": "Hand made", "script": "x"})),
    );
    let work = tempfile::tempdir().unwrap();
    let adopter = work.path().join("adopter");
    let all = emulator
        .monform(work.path())
        .args([
            "import",
            "--all-unmanaged",
            "--project",
            "adopter",
            "--format",
            "json",
            "--out",
        ])
        .arg(&adopter)
        .args(["--include", &format!("snippets:{}", hand["id"])])
        .output()
        .unwrap();
    assert_eq!(all.status.code(), Some(0), "{}", stderr(&all));
    let all = checked.check("import", false, &all);
    assert_eq!(all[0]["adopted"][0]["remoteId"], hand["id"].to_string(), "{all:?}");
    assert!(all[0]["written"]["files"].is_array(), "{all:?}");
    let other = emulator.call(
        "POST",
        "/v1/snippets",
        Some(serde_json::json!({"name": "Another", "script": "y"})),
    );
    let yaml = std::fs::read_to_string(path.join("monitors.yaml")).unwrap();
    std::fs::write(
        path.join("monitors.yaml"),
        format!("{yaml}snippets:\n  another: {{ name: Another, script: \"y\" }}\n"),
    )
    .unwrap();
    let one = run(&[
        "import",
        "snippets.another",
        &other["id"].to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let one = checked.check("import", false, &one);
    assert_eq!(one[0]["adopted"][0]["address"], "snippets.another", "{one:?}");
    // Migrate: a Terraform project and its state, written as a project adopting its objects.
    let terraform = copy_example("terraform");
    let migrated = monform()
        .args(["migrate", "terraform"])
        .arg(terraform.path())
        .args(["--state"])
        .arg(terraform.path().join("terraform.show.json"))
        .args(["--format", "json", "--out"])
        .arg(elsewhere.path().join("migrated"))
        .output()
        .unwrap();
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    let migrated = checked.check("migrate", false, &migrated);
    assert!(migrated[0]["imports"][0]["remoteId"].is_string(), "{migrated:?}");
    let files = migrated[0]["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .all(|f| elsewhere.path().join("migrated").join(f.as_str().unwrap()).is_file()),
        "{files:?}"
    );
    // Generate: the files written, then a definition edited by hand left alone (its diff).
    let sitemap = elsewhere.path().join("sitemap.xml");
    std::fs::write(
        &sitemap,
        format!(
            "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{target}/ok</loc></url><url><loc>{target}/about</loc></url></urlset>"
        ),
    )
    .unwrap();
    let sitemap = sitemap.display().to_string();
    let generate = || {
        let output = run(&["generate", "sitemap", &sitemap, "--id", "pages", "--format", "json"]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        output
    };
    let generated = checked.check("generate", false, &generate());
    assert_eq!(generated[0]["checks"], 2, "{generated:?}");
    assert_eq!(generated[0]["definition"]["change"], "written", "{generated:?}");
    let definition = path.join("generated/pages.yaml");
    let text = std::fs::read_to_string(&definition).unwrap();
    std::fs::write(&definition, format!("# mine\n{text}")).unwrap();
    let again = checked.check("generate", false, &generate());
    assert_eq!(again[0]["definition"]["change"], "edited", "{again:?}");
    assert!(
        again[0]["definition"]["diff"]
            .as_str()
            .is_some_and(|d| d.contains("# mine")),
        "{again:?}"
    );
    assert_eq!(again[0]["data"]["change"], "unchanged", "{again:?}");
    std::fs::remove_dir_all(path.join("generated")).unwrap();
    housekeeping::init(&fixture, &mut checked);
    housekeeping::state_rm_and_mv(&fixture, &mut checked);
    let destroyed = checked.check(
        "destroy",
        true,
        &run(&["destroy", "--auto-approve", "--format", "json"]),
    );
    assert_eq!(destroyed.last().unwrap()["exitCode"], 0, "{destroyed:?}");
    housekeeping::state_migrate(&fixture, &mut checked);

    let listed = published();
    assert_eq!(
        checked.covered, listed,
        "each command `monform schema --output` lists is run here, and only those"
    );
}

#[test]
fn the_schema_command_lists_the_commands_and_refuses_an_unknown_one() {
    let listed = monform().args(["schema", "--output"]).output().unwrap();
    assert_eq!(listed.status.code(), Some(0));
    assert!(
        stdout(&listed).contains("monform plan --format json"),
        "{}",
        stdout(&listed)
    );
    let unknown = monform().args(["schema", "--output", "nonsense"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("no published output for `nonsense`"),
        "{}",
        stderr(&unknown)
    );
    assert!(stderr(&unknown).contains("policy-test"), "{}", stderr(&unknown));
    // Words as typed after `monform` work too.
    let spaced = monform().args(["schema", "--output", "policy test"]).output().unwrap();
    assert_eq!(spaced.status.code(), Some(0), "{}", stderr(&spaced));
}

#[test]
fn a_schema_that_drifts_from_the_output_fails() {
    // The validation above is not vacuous: a document missing a required
    // field, with a field of the wrong type, or with a field the schema
    // does not name, is refused.
    let list_schema = validator("state-list");
    let list = serde_json::json!({"serial": 3, "backend": ".monform/state.json",
        "resources": [{"address": "checks.a", "remoteId": "12"}]});
    assert!(list_schema.is_valid(&list), "{list}");
    let drifted = serde_json::json!({"serial": "three", "backend": ".monform/state.json", "resources": []});
    assert!(!list_schema.is_valid(&drifted));
    let missing = serde_json::json!({"serial": 3, "resources": []});
    assert!(!list_schema.is_valid(&missing));
    // A tagged kind (the reconciler's log line): each kind's own fields, closed.
    let log_schema = validator("reconcile");
    let line = serde_json::json!({"time": "2026-11-29T17:00:00Z", "level": "info", "message": "applied",
        "kind": "applied", "address": "checks.a", "action": "update"});
    assert!(log_schema.is_valid(&line), "{line}");
    let mut unnamed = line.clone();
    unnamed["bogus"] = serde_json::json!(1);
    assert!(!log_schema.is_valid(&unnamed), "{unnamed}");
    let mut other_kinds = line.clone();
    other_kinds["kind"] = serde_json::json!("leading");
    assert!(
        !log_schema.is_valid(&other_kinds),
        "a leading line has a project, not an address"
    );
    let mut unknown = line;
    unknown["kind"] = serde_json::json!("nonsense");
    assert!(!log_schema.is_valid(&unknown), "{unknown}");
}
