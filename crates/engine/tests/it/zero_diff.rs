//! Zero spurious diffs across the whole schema (issue 45, part 2).
//!
//! Each case draws a project from the resource model's schema
//! (`monform_testkit::projects`: every kind and check type, optional
//! fields drawn or left out, defaults written or left out, sets in any
//! order, checks in groups that impose fields, YAML, TOML and JSON files),
//! applies it to an in-process emulator through the engine's `ops` (as
//! `monform apply` does) and then:
//!
//! 1. the plan after the apply is empty;
//! 2. after one random edit of the files, the plan shows exactly that edit
//!    (one change, of the edited resource, at the edited field), or
//!    nothing when the edit does not change what the files say (a default
//!    written out, a set reordered, a resource moved to another file);
//! 3. after applying the edit, the plan is empty again.
//!
//! The same runs against a service that rewrites what it stores
//! (`normalise_urls`) and one that fails requests and loses writes
//! (`fault_rate`, `lost_write_rate`; an apply that did not complete is run
//! again, as a user would). What a long run of it found has a test of its
//! own (`lost_writes.rs`), the fault picked (`Faults::pick`: this request meets
//! that fault) rather than drawn, so it fails the same way every time.
//!
//! `MONFORM_TEST_SEED` (default 45) and `MONFORM_TEST_CASES` (default
//! [`DEFAULT_CASES`]) for long runs; every failure names its case, and each
//! case's seed is derived from the run's, so the same two numbers replay it
//! (`MONFORM_TEST_FIRST_CASE` starts there). Failures are counted, not
//! stopped at, so a long run reports how many cases had a spurious diff.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use monform_api::Client;
use monform_emulator::Config;
use monform_engine::ops::{self, ApplyRequest, PlanRequest, Planned, Session};
use monform_engine::{Action, ApplyOptions, Change, LocalState, Plan, Reason};
use monform_model::{FieldPath, Kind};
use monform_testkit::projects::{self, Expect, Project, Rng, Size, files_of};
use monform_testkit::{client_for, start_emulator_with};

use super::converge::describe;

mod lost_writes;

/// Cases per service in `cargo test` (CI): seconds, not minutes.
const DEFAULT_CASES: u64 = 150;
const DEFAULT_SEED: u64 = 45;

/// The service a run applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Service {
    /// The emulator as it is by default: stores what it is sent.
    Faithful,
    /// `monform serve --normalise-urls`: request URLs stored with scheme
    /// and host in lower case.
    NormalisedUrls,
    /// `--fault-rate` and `--lost-write-rate`: requests fail, responses
    /// are lost after commit, writes are acknowledged and not stored.
    Faulty,
}

impl Service {
    fn config(self, seed: u64) -> Config {
        // Rate limiting off, as `start_emulator` has it: the cases make
        // requests much faster than users do.
        let mut config = Config {
            rate_limit: None,
            ..Config::default()
        };
        match self {
            Service::Faithful => {}
            Service::NormalisedUrls => config.normalise_urls = true,
            Service::Faulty => {
                config.fault_rate = 0.05;
                config.lost_write_rate = 0.05;
                config.fault_seed = seed;
            }
        }
        config
    }

    /// Applies (and plans) attempted before a case is given up: a faulty
    /// service needs a retry now and then, as a user would run `apply` again.
    /// Cases in `cargo test` (CI) unless `MONFORM_TEST_CASES` says: the
    /// faithful service gets the most (they must draw every field of the
    /// schema), the others the same projects' first cases.
    fn default_cases(self) -> u64 {
        match self {
            Service::Faithful => DEFAULT_CASES,
            Service::NormalisedUrls => 50,
            Service::Faulty => 30,
        }
    }

    fn attempts(self) -> usize {
        if self == Service::Faulty { 6 } else { 1 }
    }
}

fn setting(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) if !text.trim().is_empty() => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a whole number")),
        _ => default,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// One case that went wrong: a spurious diff, a hidden or a wrong edit, or
/// (not a diff) an apply that did not succeed.
struct Failure {
    case: u64,
    spurious: bool,
    text: String,
}

/// Runs the cases of one service and fails with every case that went wrong.
fn run(service: Service) {
    let seed = setting("MONFORM_TEST_SEED", DEFAULT_SEED);
    let cases = setting("MONFORM_TEST_CASES", service.default_cases());
    let first = setting("MONFORM_TEST_FIRST_CASE", 0);
    let started = Instant::now();
    let runtime = runtime();
    let mut failures: Vec<Failure> = Vec::new();
    let mut drawn: BTreeSet<String> = BTreeSet::new();
    let mut edits_with_change = 0u64;
    for case in first..first + cases {
        let case_seed = projects::case_seed(seed, case);
        let (project, seen) = Project::generate(case_seed, Size::default());
        drawn.extend(seen);
        let outcome = runtime.block_on(one_case(service, case_seed, project));
        // A long run says how far it got.
        if (case - first + 1).is_multiple_of(500) {
            eprintln!(
                "zero_diff {service:?}: {} cases in {} s, {} failed",
                case - first + 1,
                started.elapsed().as_secs(),
                failures.len()
            );
        }
        match outcome {
            Ok(changed) => edits_with_change += u64::from(changed),
            Err((spurious, text)) => {
                eprintln!(
                    "case {case} ({service:?}, MONFORM_TEST_SEED={seed} MONFORM_TEST_FIRST_CASE={case} MONFORM_TEST_CASES=1):\n{text}\n"
                );
                failures.push(Failure { case, spurious, text });
            }
        }
    }
    let spurious = failures.iter().filter(|f| f.spurious).count();
    eprintln!(
        "zero_diff {service:?}: seed {seed}, cases {first}..{}, {} s, {spurious} spurious diffs, {} other failures, {edits_with_change} edits that changed something",
        first + cases,
        started.elapsed().as_secs(),
        failures.len() - spurious,
    );
    if let Some(failure) = failures.first() {
        panic!(
            "{} of {cases} cases failed ({spurious} spurious diffs); the first, case {}:\n{}",
            failures.len(),
            failure.case,
            failure.text
        );
    }
    // A run of the default size draws every field of the schema at least
    // once: a field the generator never reaches is a field never proven.
    if cases >= DEFAULT_CASES && service == Service::Faithful {
        let missing: Vec<String> = projects::all_fields().difference(&drawn).cloned().collect();
        assert!(
            missing.is_empty(),
            "{} fields of the schema were never drawn in {cases} cases: {missing:?}",
            missing.len()
        );
    }
}

type CaseResult = Result<bool, (bool, String)>;

/// One case: apply, plan empty; edit, plan shows the edit; apply, plan
/// empty. `Ok(true)` when the edit changed something.
async fn one_case(service: Service, seed: u64, project: Project) -> CaseResult {
    let dir = tempfile::tempdir().map_err(|e| (false, e.to_string()))?;
    let root = dir.path();
    let server = start_emulator_with(service.config(seed)).await;
    let client = client_for(&server);
    let result = async {
        let mut rng = Rng::new(seed ^ 0x5EED);
        write(&project, root)?;
        converge(service, root, &client, "the first apply").await?;
        let Some((edited, edit)) = projects::edit(&project, &mut rng) else {
            return Ok(false);
        };
        write(&edited, root)?;
        let plan = plan(service, root, &client).await.map_err(|e| (false, e))?;
        if let Err(problem) = shows_exactly(&plan, &edit.expect) {
            return Err((
                true,
                format!(
                    "after the edit ({}), {problem}:\n{}\nfiles:\n{}",
                    edit.description,
                    describe(&plan),
                    files_of(root)
                ),
            ));
        }
        converge(
            service,
            root,
            &client,
            &format!("the apply of the edit ({})", edit.description),
        )
        .await?;
        Ok(edit.expect != Expect::Nothing)
    }
    .await;
    let _ = server.shutdown().await;
    result
}

fn write(project: &Project, root: &Path) -> Result<(), (bool, String)> {
    project
        .write(root)
        .map_err(|e| (false, format!("the project cannot be written: {e}")))
}

/// Whether `plan` has exactly the change `expect` says.
fn shows_exactly(plan: &Plan, expect: &Expect) -> Result<(), String> {
    let changes: Vec<_> = plan.changes.iter().filter(|c| c.action != Action::Noop).collect();
    match expect {
        Expect::Nothing if changes.is_empty() => Ok(()),
        Expect::Nothing => Err("the files say the same but the plan has changes".into()),
        Expect::Change {
            may_be_nothing: true, ..
        } if changes.is_empty() => Ok(()),
        Expect::Change {
            address, path, also, ..
        } => {
            let (own, others): (Vec<&Change>, Vec<&Change>) =
                changes.iter().partition(|c| c.address.to_string() == *address);
            let [change] = own.as_slice() else {
                return Err(format!(
                    "the plan should have one change ({address} at {path}) but has {}",
                    changes.len()
                ));
            };
            // Replacing an object updates what refers to it (a private
            // location's slug): those, and only those, may come along.
            let cascade = |c: &&&Change| change.action == Action::Replace && c.reason == Reason::DependencyReplaced;
            if let Some(other) = others.iter().find(|c| !cascade(c)) {
                return Err(format!(
                    "the plan should change {address} at {path} only, but also {:?}s {} ({})",
                    other.action,
                    other.address,
                    other.reason.text()
                ));
            }
            if !matches!(change.action, Action::Update | Action::Replace) {
                return Err(format!("the plan should update {address} but does {:?}", change.action));
            }
            if change.reason != Reason::ConfigChanged || change.fields.iter().any(|f| f.drift) {
                return Err(format!(
                    "an edit of the files is shown as {:?} ({})",
                    change.reason,
                    change.reason.text()
                ));
            }
            if change.fields.is_empty() {
                return Err(format!(
                    "the change of {address} names no field (the edit was at {path})"
                ));
            }
            // A replacement creates the object anew: fields the service
            // does not show (a secret variable's value) may be listed with
            // the one that forces it, which must be among them.
            if change.action == Action::Replace {
                return match change.fields.iter().any(|f| related(&FieldPath::parse(&f.path), path)) {
                    true => Ok(()),
                    false => Err(format!("the replacement of {address} does not name {path}")),
                };
            }
            for field in &change.fields {
                let shown = FieldPath::parse(&field.path);
                let in_also =
                    matches!(shown.segments().first(), Some(monform_model::Segment::Key(k)) if also.contains(k));
                if !related(&shown, path) && !in_also && !secret_sibling(field, path) {
                    return Err(format!(
                        "the change of {address} is at {} (the edit was at {path})",
                        field.path
                    ));
                }
            }
            Ok(())
        }
    }
}

/// A value that became (or stopped being) secret because its item's
/// `secret` flag was edited: shown as a secret's change, since what the
/// state keeps of it changes from the value to a fingerprint.
fn secret_sibling(field: &monform_engine::FieldChange, edited: &FieldPath) -> bool {
    let segments = edited.segments();
    field.sensitive
        && segments.last() == Some(&monform_model::Segment::Key("secret".into()))
        && related(
            &FieldPath::parse(&field.path),
            &FieldPath(segments[..segments.len() - 1].to_vec()),
        )
}

/// Whether one path is inside the other (a list's items say `[0]` for
/// any of them: sets are compared as sets).
fn related(a: &FieldPath, b: &FieldPath) -> bool {
    let (a, b) = (a.segments(), b.segments());
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (monform_model::Segment::Index(_), monform_model::Segment::Index(_)) => true,
        _ => x == y,
    })
}

/// Loads the files; an error says which problems the loader found.
fn load(root: &Path) -> Result<monform_config::Loaded, String> {
    let loaded = monform_config::load(root, &|_: &str| None);
    if !loaded.is_ok() {
        let problems: Vec<String> = loaded
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.location(&loaded.sources).unwrap_or_default(), d.message))
            .collect();
        return Err(format!(
            "the generated files do not load:\n{}\nfiles:\n{}",
            problems.join("\n"),
            files_of(root)
        ));
    }
    Ok(loaded)
}

/// `monform plan`: the plan of the files in `root`.
async fn plan(service: Service, root: &Path, client: &Client) -> Result<Plan, String> {
    plan_with(service, root, client, &PlanRequest::default()).await
}

/// `monform plan` with its flags (`request`).
async fn plan_with(service: Service, root: &Path, client: &Client, request: &PlanRequest) -> Result<Plan, String> {
    let loaded = load(root)?;
    let project = loaded.project.clone().ok_or("no project")?;
    let backend = LocalState::new(root);
    let session = Session::for_tests(&project, &loaded.desired, client, &backend);
    let mut last = String::new();
    for _ in 0..service.attempts() {
        match ops::plan(&session, request).await {
            Ok(Planned { plan, .. }) => return Ok(plan),
            Err(e) => last = format!("plan: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(last)
}

/// `monform apply` (again, against a faulty service, until it completes),
/// then `monform plan`, which must be empty; the account must hold exactly
/// the objects the files declare.
async fn converge(service: Service, root: &Path, client: &Client, what: &str) -> Result<(), (bool, String)> {
    let loaded = load(root).map_err(|e| (false, e))?;
    let project = loaded.project.clone().ok_or((false, "no project".to_owned()))?;
    let backend = LocalState::new(root);
    let session = Session::for_tests(&project, &loaded.desired, client, &backend);
    let mut problem = String::new();
    let mut applied_plan = None;
    for _ in 0..service.attempts() {
        let request = ApplyRequest {
            command: "zero-diff".into(),
            allow_mass_delete: true,
            ..Default::default()
        };
        let ready = match ops::prepare_apply(&session, request).await {
            Ok(ready) => ready,
            Err(e) => {
                problem = format!("plan: {e}");
                continue;
            }
        };
        let plan = ready.plan().clone();
        match ops::execute(ready, &ApplyOptions::default(), &|_| {}).await {
            Ok(applied) if applied.is_complete() => {
                applied_plan = Some(plan);
                break;
            }
            Ok(applied) => {
                let verification = match &applied.verification {
                    Some(Ok(v)) => format!("{:?}", v.failures),
                    Some(Err(e)) => e.to_string(),
                    None => "none".into(),
                };
                problem = format!(
                    "apply did not succeed:\n  failed: {:?}\n  skipped: {:?}\n  not verified: {verification}\nthe plan was:\n{}",
                    applied.report.failed,
                    applied.report.skipped,
                    describe(&plan)
                );
            }
            Err(e) => problem = format!("apply: {e}"),
        }
    }
    let Some(applied_plan) = applied_plan else {
        return Err((false, format!("{what}: {problem}\nfiles:\n{}", files_of(root))));
    };
    let mut after = None;
    for _ in 0..service.attempts() {
        match ops::plan(&session, &PlanRequest::default()).await {
            Ok(planned) => {
                after = Some(planned);
                break;
            }
            Err(e) => problem = format!("replan: {e}"),
        }
    }
    let Some(Planned {
        actual, plan: after, ..
    }) = after
    else {
        return Err((false, format!("{what}: {problem}")));
    };
    if after.summary().has_changes() {
        return Err((
            true,
            format!(
                "{what}: the plan after it still has changes:\n{}the applied plan was:\n{}\nfiles:\n{}",
                describe(&after),
                describe(&applied_plan),
                files_of(root)
            ),
        ));
    }
    for &kind in Kind::ALL {
        let want = loaded.desired.resources.keys().filter(|a| a.kind == kind).count();
        let have = actual.count(kind);
        if want != have {
            return Err((
                false,
                format!("{what}: the account holds {have} {kind} but the files declare {want}"),
            ));
        }
    }
    Ok(())
}

#[test]
fn zero_spurious_diffs_across_the_schema() {
    run(Service::Faithful);
}

#[test]
fn zero_spurious_diffs_when_the_service_normalises_urls() {
    run(Service::NormalisedUrls);
}

#[test]
fn zero_spurious_diffs_when_the_service_fails_and_loses_writes() {
    run(Service::Faulty);
}

/// The generator's own promises, without a service: every project it
/// draws loads without a diagnostic, and the same seed draws the same one.
#[test]
fn generated_projects_load_and_replay() {
    let seed = setting("MONFORM_TEST_SEED", DEFAULT_SEED);
    for case in 0..40 {
        let case_seed = projects::case_seed(seed, case);
        let (project, _) = Project::generate(case_seed, Size::default());
        assert_eq!(project, Project::generate(case_seed, Size::default()).0);
        let dir = tempfile::tempdir().unwrap();
        project.write(dir.path()).unwrap();
        if let Err(e) = load(dir.path()) {
            panic!("case {case}: {e}");
        }
    }
}

// ---- what the property found, one fixed case each ----

/// Applies `first`, then plans `second` (both `monitors.yaml`): the plan.
fn plan_of_edit(first: &str, second: &str) -> Plan {
    let dir = tempfile::tempdir().expect("temporary folder");
    let root = dir.path();
    std::fs::write(root.join("monform.toml"), "[project]\nname = \"found\"\n").expect("written");
    runtime().block_on(async {
        let server = start_emulator_with(Service::Faithful.config(1)).await;
        let client = client_for(&server);
        std::fs::write(root.join("monitors.yaml"), first).expect("written");
        if let Err((_, e)) = converge(Service::Faithful, root, &client, "the first apply").await {
            panic!("{e}");
        }
        std::fs::write(root.join("monitors.yaml"), second).expect("written");
        let plan = plan(Service::Faithful, root, &client).await.expect("plan");
        let _ = server.shutdown().await;
        plan
    })
}

/// A nested field taken out of the files (`alertSettings.reminders`) is a
/// change: the update sends `alertSettings` whole and the service drops
/// it. The plan showed nothing, and the service kept the reminders until
/// some other change of the check sent `alertSettings` again.
#[test]
fn a_nested_field_left_out_is_planned() {
    let with = "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: https://example.com }\n    alertSettings:\n      escalationType: RUN_BASED\n      reminders: { amount: 2, interval: 10 }\n";
    let without = with.replace("      reminders: { amount: 2, interval: 10 }\n", "");
    let plan = plan_of_edit(with, &without);
    let expect = Expect::Change {
        address: "checks.home".into(),
        path: FieldPath::parse("alertSettings.reminders"),
        also: vec!["alertSettings".into()],
        may_be_nothing: false,
    };
    shows_exactly(&plan, &expect).unwrap_or_else(|e| panic!("{e}:\n{}", describe(&plan)));
}

/// A secret environment variable's value edited in the files is the
/// files' change, not drift: the list's print leaves the secret out, so it
/// looked unchanged since the apply, and the plan said "changed outside
/// monform (drift)".
#[test]
fn a_secret_list_item_edited_in_the_files_is_not_drift() {
    let first = "checks:\n  flow:\n    checkType: MULTI_STEP\n    name: Flow\n    script: \"await fetch('https://example.com')\"\n    environmentVariables:\n    - { key: PLAIN, value: one }\n    - { key: TOKEN, value: first-value, secret: true }\n";
    let second = first.replace("first-value", "second-value");
    let plan = plan_of_edit(first, &second);
    let expect = Expect::Change {
        address: "checks.flow".into(),
        path: FieldPath::parse("environmentVariables[1].value"),
        also: vec!["environmentVariables".into()],
        may_be_nothing: false,
    };
    shows_exactly(&plan, &expect).unwrap_or_else(|e| panic!("{e}:\n{}", describe(&plan)));
}

/// A field written `null` says what leaving it out says (ARCHITECTURE's
/// design decision 3): `alertSettings: null` in YAML, where TOML can only
/// leave it out, plans nothing, and applies once.
#[test]
fn a_field_written_null_is_a_field_left_out() {
    let left_out =
        "checks:\n  home:\n    checkType: DNS\n    name: Home\n    request: { query: example.com, recordType: MX }\n";
    let null = left_out.replace("    request:", "    alertSettings: null\n    request:");
    let plan = plan_of_edit(left_out, &null);
    shows_exactly(&plan, &Expect::Nothing).unwrap_or_else(|e| panic!("{e}:\n{}", describe(&plan)));
    let plan = plan_of_edit(&null, left_out);
    shows_exactly(&plan, &Expect::Nothing).unwrap_or_else(|e| panic!("{e}:\n{}", describe(&plan)));
}

/// A secret taken out of the files (a webhook's `webhookSecret`) is the
/// files' change, not drift: prints leave secrets out, so the field looked
/// unchanged since the apply.
#[test]
fn a_secret_left_out_of_the_files_is_not_drift() {
    let with = "alertChannels:\n  hook:\n    type: WEBHOOK\n    config:\n      name: Hook\n      url: https://example.com/hook\n      webhookSecret: first-secret\n";
    let without = with.replace("      webhookSecret: first-secret\n", "");
    let plan = plan_of_edit(with, &without);
    let expect = Expect::Change {
        address: "alertChannels.hook".into(),
        path: FieldPath::parse("config.webhookSecret"),
        also: vec!["config".into()],
        may_be_nothing: false,
    };
    shows_exactly(&plan, &expect).unwrap_or_else(|e| panic!("{e}:\n{}", describe(&plan)));
}
