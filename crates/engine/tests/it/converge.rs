//! Convergence: after `apply`, a fresh `fetch` + `plan` of the same files
//! has no changes, and so it does after a random edit of the files (fields
//! changed, resources removed and added, files moved, secrets rotated).
//!
//! Projects are generated as real files (YAML in two styles and TOML, in
//! several folders, scripts inline and as `{ file }`), loaded with
//! `monform_config::load` and applied to an in-process emulator through the
//! engine, with a `LocalState` in the project's folder. Every round also
//! checks that the account holds exactly the desired objects (nothing
//! orphaned, nothing duplicated).
//!
//! The property runs 24 cases, or `PROPTEST_CASES`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

use monform_api::Client;
use monform_engine::ops::{self, ApplyRequest, PlanRequest, Planned, Session};
use monform_engine::{Action, ApplyOptions, Event, LocalState, Plan};
use monform_model::Kind;
use monform_testkit::{client_for, start_emulator};
use proptest::option::{of as maybe, weighted};
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};
use serde_json::{Map, Value, json};

mod account;
mod checks;
mod edits;
mod files;
use account::*;
use checks::*;
use edits::*;
use files::*;

// ---- harness ----

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    ProptestConfig {
        cases,
        max_shrink_iters: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The changes of a plan, one per line with their fields, noops left out.
pub(crate) fn describe(plan: &Plan) -> String {
    let mut out = String::new();
    for change in plan.changes.iter().filter(|c| c.action != Action::Noop) {
        out.push_str(&format!(
            "  {:?} {} ({})\n",
            change.action,
            change.address,
            change.reason.text()
        ));
        for field in &change.fields {
            out.push_str(&format!(
                "      {}: {} -> {}{}\n",
                field.path,
                field.before.as_ref().map_or("-".into(), Value::to_string),
                field.after.as_ref().map_or("-".into(), Value::to_string),
                if field.sensitive { " (sensitive)" } else { "" }
            ));
        }
    }
    out
}

/// What one `apply` did and what the plan after it says.
struct Round {
    applied: Plan,
    events: Vec<String>,
    after: Plan,
}

/// load → fetch → plan → apply → fetch → plan, like `monform apply` then `monform plan`.
async fn apply_and_replan(dir: &Path, env: &HashMap<String, String>, client: &Client) -> Result<Round, String> {
    let lookup = |name: &str| env.get(name).cloned();
    let loaded = monform_config::load(dir, &lookup);
    if !loaded.is_ok() {
        let problems: Vec<String> = loaded
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.location(&loaded.sources).unwrap_or_default(), d.message))
            .collect();
        return Err(format!("the generated files do not load:\n{}", problems.join("\n")));
    }
    // The same operations as `monform apply` and `monform plan`: declared
    // moves, clash refusals, the budget and safety guards, verification.
    let project = loaded.project.clone().expect("project");
    let backend = LocalState::new(dir);
    let session = Session::for_tests(&project, &loaded.desired, client, &backend);
    let request = ApplyRequest {
        command: "converge".into(),
        allow_mass_delete: true,
        ..Default::default()
    };
    let ready = ops::prepare_apply(&session, request)
        .await
        .map_err(|e| format!("plan: {e}"))?;
    let plan = ready.plan().clone();
    let events = Mutex::new(Vec::new());
    let on_event = |event: Event| {
        if let Event::Failed { .. } | Event::Skipped { .. } | Event::NotKept { .. } = event {
            events.lock().unwrap().push(format!("{event:?}"));
        }
    };
    let applied = ops::execute(ready, &ApplyOptions::default(), &on_event)
        .await
        .map_err(|e| format!("apply: {e}"))?;
    let events = events.into_inner().unwrap();
    let report = &applied.report;
    if !applied.is_complete() {
        let verification = match &applied.verification {
            Some(Ok(v)) => format!("{:?}", v.failures),
            Some(Err(e)) => e.to_string(),
            None => "none".into(),
        };
        return Err(format!(
            "apply did not succeed:\n  failed: {:?}\n  skipped: {:?}\n  not verified: {verification}\nthe plan was:\n{}",
            report.failed,
            report.skipped,
            describe(&plan)
        ));
    }
    let Planned {
        actual, plan: after, ..
    } = ops::plan(&session, &PlanRequest::default())
        .await
        .map_err(|e| format!("replan: {e}"))?;
    // The account holds exactly the desired objects: nothing orphaned or duplicated.
    for &kind in Kind::ALL {
        let want = loaded.desired.resources.keys().filter(|a| a.kind == kind).count();
        let have = actual.count(kind);
        if want != have {
            return Err(format!(
                "the account holds {have} {kind} but the files declare {want}\nthe plan was:\n{}",
                describe(&plan)
            ));
        }
    }
    Ok(Round {
        applied: plan,
        events,
        after,
    })
}

// ---- the generated project ----

const PROJECT: &str = "converge";
const LOCATIONS: &[&str] = &["eu-west-1", "us-east-1", "ap-southeast-2", "eu-central-1", "sa-east-1"];
const TAGS: &[&str] = &["team:web", "team:platform", "prod", "critical", "backend", "nightly"];
const WORDS: &[&str] = &["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
const FREQUENCIES: &[u32] = &[0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440];
const RUNTIMES: &[&str] = &["2026.04", "2025.04", "2024.09"];
/// Environment variables the fake lookup knows; secret values come from them.
const SECRETS: usize = 6;

/// Sections and how many logical ids (slots) each may use.
const SECTIONS: &[(&str, usize)] = &[
    ("privateLocations", 2),
    ("alertChannels", 4),
    ("snippets", 3),
    ("groups", 3),
    ("variables", 4),
    ("statusPageServices", 3),
    ("statusPages", 2),
    ("checks", 10),
];

fn logical_id(section: &str, slot: usize) -> String {
    match section {
        "privateLocations" => format!("office-{slot}"),
        "alertChannels" => format!("channel-{slot}"),
        "snippets" => format!("snippet-{slot}"),
        "groups" => format!("group-{slot}"),
        "variables" => format!("VAR_{slot}"),
        "statusPageServices" => format!("service-{slot}"),
        "statusPages" => format!("page-{slot}"),
        _ => format!("check-{slot}"),
    }
}

fn slots(section: &str) -> usize {
    SECTIONS.iter().find(|(s, _)| *s == section).map_or(0, |(_, n)| *n)
}

/// Where a resource is written.
const FILES: &[&str] = &[
    "monitors/web.yaml",
    "monitors/infra.toml",
    "shared.yaml",
    "pages/more/status.yml",
];

#[derive(Debug, Clone)]
struct Slot {
    body: Value,
    file: usize,
}

#[derive(Debug, Clone)]
struct Spec {
    /// `[defaults]` of monform.toml.
    defaults: Option<Value>,
    /// Values of SECRET_0.. in the environment.
    secrets: Vec<String>,
    /// Per section (in `SECTIONS` order), per slot.
    sections: Vec<Vec<Option<Slot>>>,
}

// ---- the properties ----

/// Applies `spec` and checks that the plan after it is empty.
async fn converges(root: &Path, spec: &Spec, client: &Client, what: &str) -> Result<(), TestCaseError> {
    write_project(root, spec);
    let round = apply_and_replan(root, &environment(spec), client)
        .await
        .map_err(|e| TestCaseError::fail(format!("{what}: {e}\n\nfiles:\n{}", files_of(root))))?;
    prop_assert!(
        !round.after.summary().has_changes(),
        "{what}: the plan after apply still has changes:\n{}\nthe applied plan was:\n{}\nevents: {:#?}\n\nfiles:\n{}",
        describe(&round.after),
        describe(&round.applied),
        round.events,
        files_of(root)
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn apply_converges_and_edits_converge(first in spec(), edit in mutation()) {
        let second = mutate(&first, &edit);
        let dir = tempfile::tempdir().unwrap();
        runtime().block_on(async {
            let server = start_emulator().await;
            let client = client_for(&server);
            converges(dir.path(), &first, &client, "first apply").await?;
            converges(dir.path(), &second, &client, "apply after the edit").await?;
            let _ = server.shutdown().await;
            Ok::<(), TestCaseError>(())
        })?;
    }
}

// ---- fixed cases ----

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_full_example_converges() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/full"),
        dir.path(),
    );
    runtime().block_on(async {
        let server = start_emulator().await;
        let client = client_for(&server);
        let round = apply_and_replan(dir.path(), &HashMap::new(), &client).await.unwrap();
        assert!(round.applied.summary().create > 0);
        assert!(!round.after.summary().has_changes(), "{}", describe(&round.after));
        let _ = server.shutdown().await;
    });
}

// ---- known bugs, one case each ----

/// Applies each version of a project in turn (`files` of YAML by path) and
/// returns the rounds; stops at the first failure.
fn apply_versions(versions: &[&[(&str, &str)]]) -> Result<Vec<Round>, String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    runtime().block_on(async {
        let server = start_emulator().await;
        let client = client_for(&server);
        let mut rounds = Vec::new();
        for files in versions {
            let spec = Spec {
                defaults: None,
                secrets: Vec::new(),
                sections: SECTIONS.iter().map(|(_, n)| vec![None; *n]).collect(),
            };
            write_project(root, &spec);
            for (path, text) in *files {
                std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
                std::fs::write(root.join(path), text).unwrap();
            }
            let round = apply_and_replan(root, &HashMap::new(), &client).await?;
            rounds.push(round);
        }
        let _ = server.shutdown().await;
        Ok(rounds)
    })
}

fn assert_converged(rounds: &[Round]) {
    for (i, round) in rounds.iter().enumerate() {
        assert!(
            !round.after.summary().has_changes(),
            "version {}: the plan after apply still has changes:\n{}the applied plan was:\n{}",
            i + 1,
            describe(&round.after),
            describe(&round.applied)
        );
    }
}

const CHECK_IN_GROUP: &str = "
groups:
  shop:
    name: Shop
checks:
  home:
    checkType: URL
    name: Home
    group: shop
    request: { url: https://example.com }
";

const CHECK_ALONE: &str = "
checks:
  home:
    checkType: URL
    name: Home
    request: { url: https://example.com }
";

/// Taking a check out of a group and removing the group in one edit: the
/// field monform set before is cleared (`groupId: null`), so the check
/// leaves the group before the group is deleted.
#[test]
fn removing_a_group_and_the_reference_to_it_applies() {
    let rounds = apply_versions(&[&[("monitors.yaml", CHECK_IN_GROUP)], &[("monitors.yaml", CHECK_ALONE)]]);
    assert_converged(&rounds.unwrap());
}

/// Changing an alert channel's `type` replaces it (delete + create). The API
/// drops every subscription to the deleted channel, so the checks and groups
/// that list it are updated to subscribe to the new one.
#[test]
fn replacing_a_used_alert_channel_keeps_the_subscriptions() {
    let email = "
alertChannels:
  oncall:
    type: EMAIL
    config: { address: oncall@example.com }
checks:
  home:
    checkType: URL
    name: Home
    alertChannels: [oncall]
    request: { url: https://example.com }
";
    let slack = email.replace(
        "type: EMAIL\n    config: { address: oncall@example.com }",
        "type: SLACK\n    config: { url: https://hooks.slack.com/services/oncall }",
    );
    let rounds = apply_versions(&[&[("monitors.yaml", email)], &[("monitors.yaml", &slack)]]).unwrap();
    assert_converged(&rounds);
}

/// Removing `frequency` and `frequencyOffset` from a check (back to the
/// default frequency 10): the update clears the old offset (300, valid for
/// 60 but not for 10) instead of leaving it behind.
#[test]
fn going_back_to_the_default_frequency_applies() {
    let hourly = "
checks:
  home:
    checkType: URL
    name: Home
    frequency: 60
    frequencyOffset: 300
    request: { url: https://example.com }
";
    let rounds = apply_versions(&[&[("monitors.yaml", hourly)], &[("monitors.yaml", CHECK_ALONE)]]);
    assert_converged(&rounds.unwrap());
}

/// Changing a private location's `slugName` replaces it. Checks and groups
/// use it by slug and the API refuses to delete it while they do: the new
/// one is created first, the checks move to it, then the old one goes.
#[test]
fn renaming_a_used_private_location_slug_applies() {
    let before = "
privateLocations:
  office:
    name: Office
    slugName: office-ams
checks:
  home:
    checkType: URL
    name: Home
    privateLocations: [office]
    request: { url: https://example.com }
";
    let after = before.replace("slugName: office-ams", "slugName: office-rtm");
    let rounds = apply_versions(&[&[("monitors.yaml", before)], &[("monitors.yaml", &after)]]);
    assert_converged(&rounds.unwrap());
}

/// The happy paths of the cases above: they converge.
#[test]
fn moving_checks_between_groups_and_files_converges() {
    let two_groups = "
groups:
  shop: { name: Shop }
  blog: { name: Blog }
snippets:
  setup: { name: Setup, script: 'await setup()' }
checks:
  home:
    checkType: API
    name: Home
    group: shop
    setupSnippet: setup
    request: { url: https://example.com }
";
    let moved = "
groups:
  blog: { name: Blog }
snippets:
  other: { name: Other, script: 'await other()' }
";
    let check = "
checks:
  home:
    checkType: API
    name: Home
    group: blog
    setupSnippet: other
    request: { url: https://example.com }
";
    let rounds = apply_versions(&[
        &[("monitors.yaml", two_groups)],
        &[("a/groups.yaml", moved), ("b/checks.yaml", check)],
    ])
    .unwrap();
    assert_converged(&rounds);
}
