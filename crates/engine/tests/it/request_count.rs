//! The fetcher lists every kind once, 100 objects a page: planning N objects
//! costs about N/100 requests, never one per object.
//!
//! The account is filled straight through the API client (concurrently,
//! with the bodies the executor would send, ownership tags included) from
//! the loaded files, with a few planned differences: some checks created
//! under another name, some not created, one extra check of the project
//! that the files no longer declare. The plan must show exactly those.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use monform_api::{Client, Remote};
use monform_config::Desired;
use monform_engine::stages::{PlanOptions, ownership_tag, wire_body};
use monform_engine::{Action, State};
use monform_model::{Address, Kind};
use monform_testkit::{client_for, served_during, start_emulator};
use serde_json::{Value, json};

const PROJECT: &str = "bulk";
const GROUPS: usize = 5;
/// Checks created under another name: planned as updates of `name`.
const RENAMED: &[usize] = &[0, 21, 149];
/// Checks not created: planned as creates.
const MISSING: &[usize] = &[17, 148];

fn check_id(n: usize) -> String {
    format!("check-{n:05}")
}

/// One check in YAML, of a type chosen by `n`.
fn check_yaml(n: usize) -> String {
    let mut text = format!("  {}:\n    name: Check {n}\n", check_id(n));
    if n.is_multiple_of(7) {
        let _ = writeln!(text, "    group: group-{}", n % GROUPS);
    }
    if n.is_multiple_of(11) {
        text.push_str("    alertChannels: [oncall, ops]\n");
    }
    if n.is_multiple_of(3) {
        text.push_str("    tags: [bulk, \"shard:");
        let _ = write!(text, "{}", n % 10);
        text.push_str("\"]\n    locations: [eu-west-1, us-east-1]\n");
    }
    let body = match n % 8 {
        0 => format!(
            "    checkType: API\n    frequency: 0\n    frequencyOffset: 20\n    setupSnippet: sign\n    request:\n      method: POST\n      url: https://api.example.com/{n}\n      headers: [{{ key: X-N, value: \"{n}\" }}]\n      assertions: [{{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}]\n"
        ),
        1 => format!("    checkType: URL\n    frequency: 5\n    request: {{ url: \"https://www.example.com/{n}\" }}\n"),
        2 => format!(
            "    checkType: TCP\n    frequency: 1\n    request: {{ hostname: db{n}.internal, port: {} }}\n",
            1 + n % 65000
        ),
        3 => format!("    checkType: DNS\n    request: {{ query: host{n}.example.com, recordType: A }}\n"),
        4 => format!(
            "    checkType: ICMP\n    degradedPacketLossThreshold: 5\n    request: {{ hostname: gw{n}.example.com, pingCount: 5 }}\n"
        ),
        5 => {
            "    checkType: HEARTBEAT\n    heartbeat: { period: 1, periodUnit: hours, grace: 5, graceUnit: minutes }\n"
                .to_owned()
        }
        6 => format!("    checkType: MULTI_STEP\n    frequency: 30\n    script: \"await step({n})\"\n"),
        _ => format!(
            "    checkType: BROWSER\n    frequency: 15\n    script: \"await page.goto('/{n}')\"\n    environmentVariables: [{{ key: NUM, value: \"{n}\" }}]\n"
        ),
    };
    text + &body
}

const SHARED: &str = r#"
groups:
  group-0: { name: Group 0, concurrency: 2 }
  group-1: { name: Group 1, locations: [eu-central-1] }
  group-2: { name: Group 2, tags: [bulk], alertChannels: [oncall] }
  group-3: { name: Group 3, setupSnippet: sign }
  group-4: { name: Group 4, retryStrategy: FALLBACK }
snippets:
  sign: { name: Sign, script: "await sign()" }
alertChannels:
  oncall: { type: EMAIL, config: { address: oncall@example.com } }
  ops: { type: SLACK, config: { url: "https://hooks.slack.com/services/ops" } }
variables:
  BASE_URL: { value: "https://www.example.com" }
statusPageServices:
  shop: { name: Shop }
statusPages:
  public: { name: Status, url: bulk-status, cards: [{ name: Shop, services: [shop] }] }
"#;

/// Writes `files` × `per_file` checks and the shared resources.
fn write_project(root: &Path, files: usize, per_file: usize) {
    std::fs::write(root.join("monform.toml"), format!("[project]\nname = \"{PROJECT}\"\n")).unwrap();
    std::fs::create_dir_all(root.join("checks")).unwrap();
    std::fs::write(root.join("shared.yaml"), SHARED).unwrap();
    for file in 0..files {
        let mut text = String::from("checks:\n");
        for i in 0..per_file {
            text.push_str(&check_yaml(file * per_file + i));
        }
        std::fs::write(root.join("checks").join(format!("part-{file:03}.yaml")), text).unwrap();
    }
}

/// How other objects refer to a created one (as the executor does).
fn remote_ref(kind: Kind, remote: &Remote) -> Value {
    if kind == Kind::PrivateLocation {
        return remote.field("slugName").unwrap_or(Value::Null);
    }
    remote
        .field(kind.id_field())
        .unwrap_or_else(|| Value::String(remote.id.clone()))
}

/// Creates the desired objects of `kinds` straight through the client, 32 at a time.
async fn create_all(
    client: &Client,
    desired: &Desired,
    kinds: &[Kind],
    ids: &mut HashMap<Address, Value>,
    skip: &dyn Fn(&Address) -> bool,
    rename: &dyn Fn(&Address) -> bool,
) {
    let bodies: Vec<(Address, Value)> = desired
        .resources
        .values()
        .filter(|r| kinds.contains(&r.address.kind) && !skip(&r.address))
        .map(|r| {
            let resolve = |kind: Kind, id: &str| ids.get(&Address::new(kind, id)).cloned();
            let mut body = wire_body(PROJECT, r, &resolve);
            if rename(&r.address) {
                body["name"] = json!(format!("old name of {}", r.address.id));
            }
            (r.address.clone(), body)
        })
        .collect();
    let created: Vec<(Address, Remote)> = futures_util::stream::iter(bodies)
        .map(|(address, body)| async move {
            let remote = client
                .create(address.kind, &body)
                .await
                .unwrap_or_else(|e| panic!("create {address}: {e}"));
            (address, remote)
        })
        .buffer_unordered(32)
        .collect()
        .await;
    for (address, remote) in created {
        ids.insert(address.clone(), remote_ref(address.kind, &remote));
    }
}

struct Outcome {
    objects: usize,
    requests: u64,
    expected_requests: u64,
    timings: BTreeMap<&'static str, Duration>,
}

async fn scenario(files: usize, per_file: usize) -> Outcome {
    let mut timings = BTreeMap::new();
    let dir = tempfile::tempdir().unwrap();
    write_project(dir.path(), files, per_file);
    let started = Instant::now();
    let loaded = monform_config::load(dir.path(), &|_| None);
    timings.insert("load", started.elapsed());
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics.first());
    let desired = &loaded.desired;
    let checks = files * per_file;
    assert_eq!(
        desired.resources.keys().filter(|a| a.kind == Kind::Check).count(),
        checks
    );

    let server = start_emulator().await;
    let client = client_for(&server);

    // Fill the account, dependencies first.
    let started = Instant::now();
    let renamed = |a: &Address| a.kind == Kind::Check && RENAMED.iter().any(|n| a.id == check_id(*n));
    let missing = |a: &Address| a.kind == Kind::Check && MISSING.iter().any(|n| a.id == check_id(*n));
    let mut ids = HashMap::new();
    let layers: &[&[Kind]] = &[
        &[
            Kind::AlertChannel,
            Kind::Snippet,
            Kind::Variable,
            Kind::StatusPageService,
        ],
        &[Kind::Group, Kind::StatusPage],
        &[Kind::Check],
    ];
    for kinds in layers {
        create_all(&client, desired, kinds, &mut ids, &missing, &renamed).await;
    }
    // A check of the project that the files no longer declare.
    let gone = json!({
        "checkType": "URL", "name": "Gone", "request": { "url": "https://gone.example.com" },
        "tags": [ownership_tag(PROJECT, "gone")],
    });
    client.create(Kind::Check, &gone).await.unwrap();
    // And one that belongs to nobody: listed, never claimed.
    let foreign = json!({ "checkType": "URL", "name": "Not ours", "request": { "url": "https://x.example.com" } });
    client.create(Kind::Check, &foreign).await.unwrap();
    timings.insert("create through the API", started.elapsed());

    // Measure the fetch.
    let state = State::new(PROJECT);
    let sent = client.requests_sent();
    let started = Instant::now();
    let (actual, requests) = served_during(
        &server,
        None,
        monform_engine::stages::fetch(&client, PROJECT, desired, &state),
    )
    .await;
    let actual = actual.unwrap();
    timings.insert("fetch", started.elapsed());
    assert_eq!(client.requests_sent() - sent, requests, "no retries, nothing dropped");

    let objects: usize = Kind::REMOTE.iter().map(|&k| actual.count(k)).sum();
    let expected_requests: u64 = Kind::REMOTE
        .iter()
        .map(|&k| actual.count(k).div_ceil(100).max(1) as u64)
        .sum();
    assert_eq!(
        actual.count(Kind::Check),
        checks - MISSING.len() + 2,
        "every check listed"
    );
    assert_eq!(
        actual.owned.len(),
        desired.len() - MISSING.len() + 1,
        "every object of the project claimed"
    );
    assert!(actual.duplicates.is_empty());

    let started = Instant::now();
    let plan = monform_engine::stages::plan(PROJECT, desired, &actual, &state, &PlanOptions::default());
    timings.insert("plan", started.elapsed());
    let mut unexpected = Vec::new();
    for change in &plan.changes {
        let expected = if renamed(&change.address) {
            Action::Update
        } else if missing(&change.address) {
            Action::Create
        } else if change.address == Address::new(Kind::Check, "gone") {
            Action::Delete
        } else {
            Action::Noop
        };
        let fields_ok =
            change.action != Action::Update || (change.fields.len() == 1 && change.fields[0].path == "name");
        if change.action != expected || !fields_ok {
            unexpected.push(format!("{:?} {} {:?}", change.action, change.address, change.fields));
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} unexpected changes, e.g.:\n{}",
        unexpected.len(),
        unexpected.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
    let summary = plan.summary();
    assert_eq!(
        (summary.create, summary.update, summary.delete, summary.replace),
        (MISSING.len(), RENAMED.len(), 1, 0)
    );
    assert_eq!(summary.noop, desired.len() - MISSING.len() - RENAMED.len());

    // Again with a state that knows every object (as after an apply): the
    // same requests, the same plan.
    let resources: serde_json::Map<String, Value> = actual
        .owned
        .iter()
        .map(|(address, remote)| (address.to_string(), json!({ "remoteId": remote.id, "applied": "-" })))
        .collect();
    let state: State = serde_json::from_value(json!({
        "version": 1, "serial": 1, "project": PROJECT, "salt": "s", "resources": resources,
    }))
    .expect("a state");
    let started = Instant::now();
    let (again, served) = served_during(
        &server,
        None,
        monform_engine::stages::fetch(&client, PROJECT, desired, &state),
    )
    .await;
    let again = again.unwrap();
    timings.insert("fetch with a full state", started.elapsed());
    assert_eq!(served, requests);
    assert_eq!(again.owned.len(), actual.owned.len());
    let replan = monform_engine::stages::plan(PROJECT, desired, &again, &state, &PlanOptions::default());
    assert_eq!(replan.summary(), summary);
    let _ = server.shutdown().await;
    Outcome {
        objects,
        requests,
        expected_requests,
        timings,
    }
}

fn check_counts(outcome: &Outcome) {
    let kinds = Kind::REMOTE.len() as u64;
    let bound = (outcome.objects as u64).div_ceil(100) + kinds;
    eprintln!(
        "{} objects: fetch made {} requests (bound {bound}); timings {:?}",
        outcome.objects, outcome.requests, outcome.timings
    );
    assert_eq!(kinds, 10);
    assert!(
        outcome.requests <= bound,
        "{} requests for {} objects; at most {bound} (ceil(objects/100) + {kinds} kinds)",
        outcome.requests,
        outcome.objects
    );
    assert_eq!(
        outcome.requests, outcome.expected_requests,
        "one request per page of each kind"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fetching_10_000_checks_takes_a_request_per_page() {
    let outcome = scenario(100, 100).await;
    assert!(outcome.objects >= 10_000);
    check_counts(&outcome);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fetching_a_small_project_takes_one_request_per_kind_and_page() {
    let outcome = scenario(3, 50).await;
    check_counts(&outcome);
    // 150 checks (2 pages), and one page for each other kind, empty or not.
    assert_eq!(outcome.requests, 11);
}
