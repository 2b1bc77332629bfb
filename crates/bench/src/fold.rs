//! Folding an account (issue 49 item 2): 1,000 checks made by hand in 40
//! shapes (`monform_testkit::hand_made_checks`, created through the
//! emulator's API), found by `ops::find_unmanaged` with `--fold safe`,
//! written and adopted (`ops::adopt_unmanaged`), then planned: the target
//! is at most 60 definitions, with an empty plan.

use std::time::Instant;

use monform_engine::ops::{self, Fold, SplitBy};
use monform_model::Kind;

use crate::harness::{client_for, fetch_and_plan, open};
use crate::report::Target;

/// The figures: 1,000 checks in 40 shapes, at most 60 definitions.
pub const CHECKS: usize = 1_000;
pub const SHAPES: usize = 40;
pub const LIMIT: usize = 60;

/// What folding the account gave.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Folding {
    pub checks: usize,
    pub shapes: usize,
    /// Entries of the written files (a `forEach` definition counts once).
    pub definitions: usize,
    /// Objects adopted into the new project's state.
    pub adopted: usize,
    /// Changes the plan after the import shows (0 expected).
    pub plan_changes: usize,
    /// Find, fold, write and adopt; then the plan.
    pub import_ms: f64,
    pub plan_ms: f64,
}

/// Makes the account, imports it folded, plans it.
pub async fn measure(checks: usize, shapes: usize) -> Result<Folding, String> {
    let temporary = tempfile::tempdir().map_err(|e| e.to_string())?;
    let server = monform_emulator::start_local(monform_emulator::Config {
        db: Some(temporary.path().join("emulator.db")),
        rate_limit: None,
        ..Default::default()
    })
    .await
    .map_err(|e| format!("the emulator does not start: {e}"))?;
    let client = client_for(&server.url(), &server.api_key, &server.account_id);
    for (_, body) in monform_testkit::hand_made_checks(checks, shapes) {
        client
            .create(Kind::Check, &body)
            .await
            .map_err(|e| format!("creating a hand-made check: {e}"))?;
    }
    let out = temporary.path().join("imported");
    let started = Instant::now();
    let found = ops::find_unmanaged(&client, "folded", None, &[], SplitBy::Kind, Fold::Safe)
        .await
        .map_err(|e| e.to_string())?;
    let definitions = found.exported.definitions();
    let no_env = |_: &str| None;
    let adopted = ops::adopt_unmanaged(&client, "folded", None, &out, found.exported, &no_env)
        .await
        .map_err(|e| e.to_string())?;
    let import_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = Instant::now();
    let opened = open(&out, Some(&client), false);
    let planned = fetch_and_plan(&opened).await;
    let plan_ms = started.elapsed().as_secs_f64() * 1000.0;
    let summary = planned.plan.summary();
    let plan_changes = summary.create + summary.update + summary.delete + summary.replace;
    Ok(Folding {
        checks,
        shapes,
        definitions,
        adopted: adopted.exported.objects.len() - adopted.not_tagged.len(),
        plan_changes,
        import_ms,
        plan_ms,
    })
}

/// The Markdown section and the PASS/FAIL target: at most 60 definitions
/// and an empty plan.
pub fn report(folding: &Folding) -> (String, Target) {
    let text = format!(
        "\n### Folding an account (import --all-unmanaged --fold safe)\n\n| checks | shapes | definitions | adopted | plan changes | import | plan |\n|---:|---:|---:|---:|---:|---:|---:|\n| {} | {} | {} | {} | {} | {:.0} ms | {:.0} ms |\n",
        folding.checks,
        folding.shapes,
        folding.definitions,
        folding.adopted,
        folding.plan_changes,
        folding.import_ms,
        folding.plan_ms
    );
    let target = Target {
        checks: folding.checks,
        id: "fold_definitions",
        description: format!(
            "fold: {} checks in {} shapes -> {} definitions (target <= {LIMIT}), plan after: {} changes",
            crate::report::int(folding.checks as u64),
            folding.shapes,
            folding.definitions,
            folding.plan_changes
        ),
        measured: folding.definitions as f64,
        limit: LIMIT as f64,
        unit: "definitions",
        pass: folding.definitions <= LIMIT && folding.plan_changes == 0 && folding.adopted == folding.checks,
    };
    (text, target)
}

/// The bench's fold row: measured on `runtime`, its target added to
/// `targets`; the Markdown section to print, or a sanity problem.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    targets: &mut Vec<Target>,
    sanity: &mut crate::harness::Sanity,
) -> Option<String> {
    eprintln!("[fold] {CHECKS} hand-made checks in {SHAPES} shapes");
    match runtime.block_on(measure(CHECKS, SHAPES)) {
        Ok(folding) => {
            let (text, target) = report(&folding);
            targets.push(target);
            Some(text)
        }
        Err(e) => {
            sanity.expect(false, format!("fold: {e}"));
            None
        }
    }
}
