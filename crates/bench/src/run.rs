//! The phases of one size, in one process against one in-process emulator
//! (file-backed SQLite, rate limit off), plus the no-op plan again in a
//! child process for its own peak RSS (`child.rs`) and load + diff without
//! network (`offline.rs`).

use std::path::Path;
use std::time::Instant;

use futures_util::StreamExt;
use monform_api::Client;
use monform_engine::ops::{self, ApplyRequest, Opened, Planned, Session};
use monform_engine::{Actual, ApplyOptions, Event, LocalState, Plan, StateBackend, Summary};

use crate::generate::{PROJECT, Shape, generate};
use crate::harness::{Bench, Sanity, client_for, fetch_and_plan, open};
use crate::measure::{median, ms, round1};
use crate::report::{Phase, SizeReport, StateFigures};

/// Requests a Terraform-style refresh has in flight at once
/// (`terraform -parallelism` defaults to 10).
pub const BASELINE_PARALLELISM: usize = 10;

/// Reconcile intervals measured per size, up to this many checks.
const RECONCILE_INTERVALS: usize = 100;
const RECONCILE_MAX_CHECKS: usize = 10_000;

fn describe_changes(plan: &Plan, limit: usize) -> String {
    plan.changes
        .iter()
        .filter(|c| c.action != monform_engine::Action::Noop)
        .take(limit)
        .map(|c| {
            let fields: Vec<&str> = c.fields.iter().map(|f| f.path.as_str()).take(6).collect();
            format!(
                "{:?} {} ({}): {}",
                c.action,
                c.address,
                c.reason.text(),
                fields.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// Applies what the files say, as `monform apply --auto-approve` does:
/// the engine's operations (lock, plan, guards, apply, verification).
async fn apply(opened: &Opened) -> ops::Applied {
    let session = opened.session().expect("opened with the bench's client");
    execute(prepare(&session).await).await
}

/// The lock, the plan and its guards, as `monform apply` takes them.
async fn prepare<'s>(session: &'s Session<'s>) -> ops::Ready<'s> {
    let request = ApplyRequest {
        command: "monform-bench".into(),
        ..Default::default()
    };
    ops::prepare_apply(session, request)
        .await
        .expect("the plan can be applied")
}

/// The changes of a prepared plan and their verification.
async fn execute(ready: ops::Ready<'_>) -> ops::Applied {
    let on_event = |_: Event| {};
    ops::execute(ready, &ApplyOptions::default(), &on_event)
        .await
        .expect("the state can be written")
}

/// What an apply did, in one line: whether each change was done, failed
/// or skipped (the first of each named), whether it was cut short, and
/// what reading back found (its error, or the first object that did not
/// hold what was written): an incomplete apply says which part failed.
fn outcome(applied: &ops::Applied) -> String {
    let report = &applied.report;
    let first = |list: &[(monform_model::Address, monform_engine::Action, String)]| {
        list.first()
            .map(|(address, action, why)| format!(" (first: {action:?} {address}: {why})"))
            .unwrap_or_default()
    };
    let mut text = format!(
        "{} done, {} failed{}, {} skipped{}",
        report.done.len(),
        report.failed.len(),
        first(&report.failed),
        report.skipped.len(),
        first(&report.skipped),
    );
    if report.interrupted {
        text.push_str(", interrupted");
    }
    if report.unreachable {
        text.push_str(", the service stopped answering");
    }
    text.push_str(&match &applied.verification {
        None => "; not read back (nothing changed)".to_owned(),
        Some(Err(error)) => format!("; reading back failed: {error}"),
        Some(Ok(v)) => match v.failures.first() {
            None => format!("; {} of {} read back as written", v.verified(), v.checked),
            Some((address, problem)) => format!(
                "; {} of {} read back as written, first not: {address}: {problem}",
                v.verified(),
                v.checked
            ),
        },
    });
    text
}

fn summary_text(s: &Summary) -> String {
    format!(
        "{} to create, {} to update, {} to replace, {} to delete, {} unchanged",
        s.create, s.update, s.replace, s.delete, s.noop
    )
}

fn state_figures(dir: &Path) -> StateFigures {
    let backend = LocalState::new(dir);
    let bytes = std::fs::metadata(backend.path()).map_or(0, |m| m.len());
    let mut times = Vec::new();
    let mut state = None;
    for _ in 0..3 {
        let started = Instant::now();
        state = Some(backend.load(PROJECT).expect("state loads"));
        times.push(started.elapsed());
    }
    let mut state = state.expect("loaded");
    state.version = 1;
    // Version 1's fingerprints had 16 more digits.
    let pad = |f: &mut String| f.push_str("0123456789abcdef");
    for entry in state.resources.values_mut() {
        pad(&mut entry.applied);
        entry.secrets.values_mut().for_each(pad);
    }
    let version_1 = serde_json::to_string_pretty(&state).expect("a state is JSON").len();
    let entries = state.resources.len().max(1);
    StateFigures {
        entries: state.resources.len(),
        bytes,
        bytes_per_entry: round1(bytes as f64 / entries as f64),
        version_1_bytes_per_entry: round1(version_1 as f64 / entries as f64),
        load_ms: ms(median(&mut times)),
    }
}

/// Every phase for `checks` checks; the per-object-GET baseline only up to
/// `baseline_max` checks (it takes one request per object).
/// With `keep`, the project and the emulator's database are written to
/// `keep/<checks>/` (which must not exist yet) and left there.
pub async fn run_size(
    checks: usize,
    runs: usize,
    baseline_max: usize,
    keep: Option<&Path>,
    sanity: &mut Sanity,
) -> SizeReport {
    let shape = Shape::new(checks);
    let temporary = tempfile::tempdir().expect("temporary directory");
    let base = match keep {
        Some(keep) => {
            let base = keep.join(checks.to_string());
            assert!(
                !base.exists(),
                "{} exists already: --keep needs a fresh folder",
                base.display()
            );
            base
        }
        None => temporary.path().to_owned(),
    };
    let project_dir = base.join("project");
    let db = base.join("emulator.db");
    std::fs::create_dir_all(&project_dir).expect("project folder");
    let dir = project_dir.as_path();
    eprintln!(
        "[{checks}] generating {} resources in {} files",
        shape.resources(),
        shape.files
    );
    let bytes = generate(dir, &shape, 0).expect("project written");

    let server = monform_emulator::start_local(monform_emulator::Config {
        db: Some(db),
        rate_limit: None,
        ..Default::default()
    })
    .await
    .expect("emulator starts");
    let client = client_for(&server.url(), &server.api_key, &server.account_id);
    let bench = Bench { server, client };
    let mut report = SizeReport::new(shape, bytes);

    // Load (no network).
    eprintln!("[{checks}] load");
    let probe = bench.probe();
    let mut opened = open(dir, Some(&bench.client), false);
    report.push(Phase::new(
        "load",
        "load (files → desired, offline)",
        bench.finish(probe),
    ));

    // Ten Rego policies over the files (issue 32), as `validate` runs them.
    eprintln!("[{checks}] policies");
    crate::policies::write(dir);
    let probe = bench.probe();
    let figures = crate::policies::measure(dir, &mut opened.loaded);
    report.push(Phase::new(
        "policies",
        "10 Rego policies over the files (input + evaluation)",
        bench.finish(probe),
    ));
    crate::policies::remove(dir);
    sanity.expect(
        figures.findings > 0,
        format!("[{checks}] the policies found nothing in the generated project"),
    );
    sanity.expect(
        opened.loaded.desired.len() == shape.resources(),
        format!(
            "[{checks}] loaded {} resources, expected {}",
            opened.loaded.desired.len(),
            shape.resources()
        ),
    );

    // Cold apply: fetch + plan + apply from an empty account and state.
    eprintln!("[{checks}] cold apply");
    let probe = bench.probe();
    let applied = apply(&opened).await;
    let cost = bench.finish(probe);
    report.push(Phase::new(
        "cold_apply",
        "cold apply (fetch + plan + apply + verify)",
        cost,
    ));
    sanity.expect(
        applied.is_complete() && applied.report.done.len() == shape.resources(),
        format!("[{checks}] cold apply: {}", outcome(&applied)),
    );
    drop(applied);
    report.state = Some(state_figures(dir));

    // No-op plan: fetch + plan.
    eprintln!("[{checks}] no-op plan");
    let probe = bench.probe();
    let Planned { actual, plan, .. } = fetch_and_plan(&opened).await;
    report.push(Phase::new(
        "noop_plan",
        "no-op plan (fetch + plan)",
        bench.finish(probe),
    ));
    let summary = plan.summary();
    sanity.expect(
        !summary.has_changes(),
        format!(
            "[{checks}] the no-op plan has changes: {}\n  {}",
            summary_text(&summary),
            describe_changes(&plan, 10)
        ),
    );
    sanity.expect(
        actual.owned.len() == shape.resources(),
        format!(
            "[{checks}] fetch found {} of {} objects",
            actual.owned.len(),
            shape.resources()
        ),
    );
    drop(plan);

    // The same no-op plan in a fresh process (load + fetch + plan), for a
    // peak RSS that is the plan's alone.
    eprintln!("[{checks}] no-op plan, isolated process");
    let before = bench.requests();
    let child = crate::child::run_child(&bench, dir).await;
    let served = bench.requests() - before;
    if checks <= RECONCILE_MAX_CHECKS {
        eprintln!("[{checks}] {RECONCILE_INTERVALS} reconcile intervals, isolated process");
        let figures = crate::reconcile::run_child(&bench.server, dir, RECONCILE_INTERVALS).await;
        crate::reconcile::judge(checks, &figures, child.requests_sent, sanity);
        report.reconcile = Some(figures);
    }
    report.noop_isolated = Some(child.into_phase(served));

    // A list while writers run (issue 28): the store's fair lock.
    eprintln!(
        "[{checks}] a list request while {} writers run",
        crate::contention::WRITERS
    );
    let writer = client_for(&bench.server.url(), &bench.server.api_key, &bench.server.account_id);
    let contention = crate::contention::measure(&bench.client, &writer).await;
    sanity.expect(
        contention.errors == 0,
        format!(
            "[{checks}] {} requests failed while measuring a list under load",
            contention.errors
        ),
    );
    report.list_under_load = Some(contention);

    // Load + diff without network, against the Actual fetched above.
    eprintln!("[{checks}] load + diff, offline ({runs} runs)");
    let offline = crate::offline::load_and_diff(&bench, dir, &actual, runs);
    sanity.expect(
        offline.unchanged,
        format!("[{checks}] the offline load + diff has changes"),
    );
    report.load_and_diff = Some(offline);

    // Baseline: one GET per managed object.
    if checks <= baseline_max {
        eprintln!("[{checks}] baseline: {} GETs", actual.owned.len());
        let probe = bench.probe();
        let found = refresh(&bench.client, &actual).await;
        report.baseline = Some(Phase::new(
            "baseline_refresh",
            "baseline: refresh, one GET per object",
            bench.finish(probe),
        ));
        sanity.expect(
            found == actual.owned.len(),
            format!(
                "[{checks}] the baseline found {found} of {} objects",
                actual.owned.len()
            ),
        );
    }
    drop((actual, opened));

    // 1% of the checks changed: edit the files, reload, plan, apply.
    generate(dir, &shape, 1).expect("project edited");
    let started = Instant::now();
    let opened = open(dir, Some(&bench.client), false);
    report.reload_ms = ms(started.elapsed());
    eprintln!("[{checks}] 1% plan");
    let session = opened.session().expect("opened with the bench's client");
    let probe = bench.probe();
    // As `monform apply`: the lock, the plan and its guards...
    let ready = prepare(&session).await;
    report.push(Phase::new(
        "change_plan",
        "1% changed: plan (fetch + plan)",
        bench.finish(probe),
    ));
    let summary = ready.plan().summary();
    sanity.expect(
        summary.update == shape.changed() && summary.noop + summary.update == shape.resources(),
        format!(
            "[{checks}] the 1% plan is not {} updates: {}\n  {}",
            shape.changed(),
            summary_text(&summary),
            describe_changes(ready.plan(), 10)
        ),
    );
    report.change_summary = Some(summary);
    eprintln!("[{checks}] 1% apply");
    // ...then the changes and their verification, measured apart.
    let probe = bench.probe();
    let applied = execute(ready).await;
    report.push(Phase::new(
        "change_apply",
        "1% changed: apply (changes + verify)",
        bench.finish(probe),
    ));
    sanity.expect(
        applied.is_complete(),
        format!("[{checks}] the 1% apply is not complete: {}", outcome(&applied)),
    );
    drop(opened);
    crate::partial::pull_request(&bench.server, &bench.client, dir, &mut report, sanity).await;

    let Bench { server, .. } = bench;
    let _ = server.shutdown().await;
    drop(temporary);
    report.load_average.1 = crate::report::load_average();
    report
}

/// `client.get` of every managed object, `BASELINE_PARALLELISM` at a time;
/// returns how many were found.
async fn refresh(client: &Client, actual: &Actual) -> usize {
    futures_util::stream::iter(actual.owned.iter())
        .map(|(address, remote)| async move {
            client
                .get(address.kind, &remote.id)
                .await
                .expect("GET succeeds")
                .is_some()
        })
        .buffer_unordered(BASELINE_PARALLELISM)
        .filter(|found| std::future::ready(*found))
        .count()
        .await
}

#[cfg(test)]
mod tests {
    use monform_engine::Report;
    use monform_engine::ops::Applied;

    use super::outcome;

    fn applied(verification: Option<Result<monform_engine::Verification, monform_api::Error>>) -> Applied {
        Applied {
            report: Report {
                done: vec![("checks.a".parse().unwrap(), monform_engine::Action::Update)],
                ..Report::default()
            },
            verification,
            normal_forms_saved: None,
        }
    }

    #[test]
    fn an_incomplete_apply_says_that_reading_back_failed_and_why() {
        let error = monform_api::Error::Transport {
            method: "GET".into(),
            path: "/v1/checks/x".into(),
            detail: "timed out".into(),
            connect: false,
        };
        assert_eq!(
            outcome(&applied(Some(Err(error)))),
            "1 done, 0 failed, 0 skipped; reading back failed: GET /v1/checks/x failed: timed out"
        );
    }

    #[test]
    fn an_incomplete_apply_names_the_first_object_not_held_as_written() {
        let verification = monform_engine::Verification {
            checked: 1,
            failures: vec![("checks.a".parse().unwrap(), "the change did not land".into())],
            normal_forms: Vec::new(),
        };
        assert_eq!(
            outcome(&applied(Some(Ok(verification)))),
            "1 done, 0 failed, 0 skipped; 0 of 1 read back as written, first not: checks.a: the change did not land"
        );
    }
}
