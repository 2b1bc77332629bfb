//! `monform plan`: what an apply would change, field by field, and why.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use monform_engine::Refresh;
use monform_engine::ops::{self, Opened, OverBudget, PlanRequest};

use super::context::{Findings, Open, Reach, Stop, block_on, parse_targets, refused};
use crate::render::Output;
use crate::render::plan::{Style, human, json, markdown_in};
use crate::render::repo_paths::RepoPaths;
use crate::render::shown::{KEY, POLICY_KEY, Shown};
use crate::render::{budget, effective};

/// `--refresh`: how much of the account a plan reads.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RefreshArg {
    /// Every object (drift anywhere is seen)
    All,
    /// Only the objects the files changed, created or removed since the last apply, one request each
    Changed,
    /// Nothing: plan from the state alone, offline
    None,
}

impl RefreshArg {
    pub fn engine(self) -> Refresh {
        match self {
            RefreshArg::All => Refresh::All,
            RefreshArg::Changed => Refresh::Changed,
            RefreshArg::None => Refresh::None,
        }
    }
}

/// How `plan` writes: the plan (human, JSON, Markdown), or the findings of
/// the linter and the policies on it (SARIF, GitHub workflow commands).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
    Markdown,
    /// The linter's and the policies' findings as SARIF 2.1.0 (code scanning)
    Sarif,
    /// The linter's and the policies' findings as GitHub Actions workflow commands
    Github,
}

#[derive(Args)]
pub struct PlanArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Exit 0 when there are no changes, 2 when there are, 1 on error
    #[arg(long)]
    detailed_exitcode: bool,
    /// Plan only this address and what it depends on (repeatable), e.g. checks.homepage
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Leave out this address and what depends on it (repeatable; `*` matches any characters, e.g. 'checks.api[*]')
    #[arg(long = "exclude")]
    excludes: Vec<String>,
    /// Save the plan for `monform apply FILE` and `monform show FILE` (holds no secrets); also `-out FILE`
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
    /// Show each changed check as the service and `test --local` run it: after `[defaults]` and its group (its locations and settings imposed, tags and environment variables merged)
    #[arg(long)]
    effective: bool,
    /// Show every finding of the linter, not a summary past the first few of each rule
    #[arg(long)]
    pub all_findings: bool,
    /// What to read from the service: `changed` trusts the state for what the files did not change (its drift is not checked)
    #[arg(long, value_enum, default_value_t = RefreshArg::All)]
    refresh: RefreshArg,
    /// Let a policy's `deny` pass for this run (a package, e.g. monform.slo_deletes, or one rule of it;
    /// repeatable); recorded in the plan's JSON and Markdown
    #[arg(long = "policy-override", value_name = "RULE")]
    pub policy_overrides: Vec<String>,
}

/// Writes the saved plan whole or not at all, durably, with what `monform
/// show` renders beside what `apply` checks (which ignores it).
fn write_saved(
    path: &Path,
    saved: &monform_engine::SavedPlan,
    shown: Shown,
    policy: Option<serde_json::Value>,
) -> Result<(), Stop> {
    let mut value = serde_json::to_value(saved).map_err(|e| Stop::Message(e.to_string()))?;
    if let Some(object) = value.as_object_mut() {
        let shown = serde_json::to_value(shown).map_err(|e| Stop::Message(e.to_string()))?;
        object.insert(KEY.to_owned(), shown);
        // The findings for `show`, and the overrides `apply PLANFILE` honours.
        if let Some(policy) = policy {
            object.insert(POLICY_KEY.to_owned(), policy);
        }
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| Stop::Message(e.to_string()))?;
    monform_engine::durable::write(path, text.as_bytes())
        .map_err(|e| Stop::Message(format!("cannot write the plan {}: {e}", path.display())))
}

/// What a plan shows, gathered before the connection closes.
struct Planned {
    plan: monform_engine::Plan,
    header: String,
    environment: Option<String>,
    runs: monform_engine::RunBudget,
    max_runs: Option<u64>,
    over: Option<OverBudget>,
    effective: Vec<effective::Effective>,
    policy: Option<ops::PolicyOutcome>,
    loaded: monform_config::Loaded,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: PlanArgs, output: &Output) -> ExitCode {
    let result = block_on(async {
        let targets = parse_targets(&args.targets)?;
        let excludes = super::context::parse_excludes(&args.excludes)?;
        // Every object is read whatever the files say: reading starts
        // while the files load.
        let reach = match args.refresh {
            RefreshArg::None => Reach::Offline,
            refresh => Reach::Service {
                api_url,
                prefetch: refresh == RefreshArg::All,
            },
        };
        let open = Open {
            findings: Findings::Show,
            policies: true,
            state: Some("monform plan"),
            reach,
        };
        let opened = super::context::open(dir, output, open).await?;
        let header = super::context::plan_header(&opened.project);
        let session = opened.session().map_err(|why| Stop::Message(why.to_string()))?;
        let loaded = &opened.loaded;
        let policies = &opened.policies;
        let request = PlanRequest {
            targets,
            excludes,
            destroy: false,
            refresh: args.refresh.engine(),
        };
        let planned = ops::plan(&session, &request)
            .await
            .map_err(|refusal| refused(&refusal, loaded))?;
        super::context::warn_idle_moves(&planned, loaded);
        let target = opened.api.as_ref().map(|api| api.target.clone());
        if let Some(target) = &target {
            super::context::warn_other_target(&planned, target);
        }
        let moved = crate::render::plan::moved_note(&planned.actual, &planned.plan);
        let runs = planned.runs_a_month.clone();
        let over = planned.over_budget.clone();
        let effective = if args.effective {
            effective::of_changes(&planned.plan, &loaded.desired)
        } else {
            Vec::new()
        };
        // A plan over the budget is not saved: it cannot be applied.
        let saved = args.out.as_ref().map(|path| (path, planned.saved(&session)));
        let ops::Planned {
            plan, actual, state, ..
        } = planned;
        // The policies last, over the plan's changes taken while the
        // account's objects are here; those and the state are freed before
        // the files' input is built, which is freed before the plan is
        // rendered (each is a fifth of a GB at 100,000 checks; left to the
        // process's exit, the input raised the plan's peak by 30-68 MiB).
        let policy = if policies.policies.is_empty() {
            // Not needed again: see `exit_without_freeing`.
            super::context::exit_without_freeing((actual, state));
            None
        } else {
            let changes = ops::plan_input(&plan, &loaded.desired, &actual);
            drop((actual, state));
            let files = policies.files(&loaded.desired);
            let check = ops::PolicyCheck {
                policies: &policies.policies,
                files: &files,
                overrides: &args.policy_overrides,
            };
            Some(ops::check_plan_input(changes, &check))
        };
        opened.close().await;
        let Opened { loaded, project, .. } = opened;
        if let Some((path, Ok(saved))) = saved {
            let policy_json = policy.as_ref().map(|p| crate::render::policy::json(p, &loaded));
            write_saved(path, &saved, Shown::of(&plan, project.environment.clone()), policy_json)?;
        }
        let planned = Planned {
            plan,
            header: format!("{header}{moved}"),
            environment: project.environment.clone(),
            runs,
            max_runs: project.max_runs_per_month,
            over,
            effective,
            policy,
            loaded,
        };
        Ok::<_, Stop>(planned)
    });
    let Planned {
        plan,
        header: moved,
        environment,
        runs,
        max_runs,
        over,
        effective,
        policy,
        loaded,
    } = match super::context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    if let Some(policy) = policy
        .as_ref()
        .filter(|_| matches!(args.format, Format::Human | Format::Json | Format::Markdown))
    {
        output.diagnostics(&crate::render::policy::shown(policy, &loaded, output), &loaded.sources);
    }
    // A plan without changes changes no runs: it stays one line, unless the
    // runs as they are are over the budget (the plan fails: it says why).
    let unchanged_over = over.is_some() && !plan.summary().has_changes();
    let runs_line = Some(budget::line(&runs)).filter(|_| plan.summary().has_changes() || unchanged_over);
    let closing = |text: String| match unchanged_over {
        true => text.replacen(&crate::render::plan::summary_line(&plan), budget::UNCHANGED_OVER, 1),
        false => text,
    };
    // What the SLOs need of their checks and what it costs (issue 50).
    let slo_runs = ops::slo_run_costs(&loaded.desired);
    match args.format {
        Format::Human => print!(
            "{moved}{}{}{}{}",
            closing(human(
                &plan,
                Style {
                    color: output.stdout_color()
                }
            )),
            effective::human(&effective),
            runs_line.map(|line| format!("{line}\n")).unwrap_or_default(),
            crate::render::slo::plan_notes_human(&slo_runs)
        ),
        Format::Json => {
            let mut json = json(&plan);
            json.environment = environment;
            json.runs_per_month = Some(budget::json(&runs, max_runs));
            json.slo_runs = (!slo_runs.is_empty()).then(|| crate::render::slo::plan_notes_json(&slo_runs));
            effective::into_json(&mut json, &effective);
            json.policy = policy
                .as_ref()
                .map(|policy| crate::render::policy::json(policy, &loaded));
            crate::render::print_json(&json)
        }
        Format::Sarif | Format::Github => {
            let mut found: Vec<monform_config::Diagnostic> = loaded
                .warnings
                .iter()
                .filter(|d| d.severity != monform_config::Severity::Note)
                .cloned()
                .collect();
            if let Some(policy) = &policy {
                found.extend(crate::render::policy::diagnostics(policy, &loaded));
            }
            let paths = RepoPaths::for_project(dir);
            match args.format {
                Format::Sarif => {
                    crate::render::print_json(&crate::render::sarif::sarif(&found, &loaded.sources, &paths))
                }
                _ => print!("{}", crate::render::sarif::github(&found, &loaded.sources, &paths)),
            }
        }
        Format::Markdown => print!(
            "{}{}{}{}",
            closing(markdown_in(&plan, environment.as_deref())),
            runs_line.map(|line| format!("\n**{line}**\n")).unwrap_or_default(),
            crate::render::slo::plan_notes_markdown(&slo_runs),
            policy
                .as_ref()
                .map(|p| crate::render::policy::markdown(p, &loaded, &RepoPaths::for_project(dir)))
                .unwrap_or_default()
        ),
    }
    let code = if policy.as_ref().is_some_and(ops::PolicyOutcome::blocks) {
        eprintln!(
            "error: the plan breaks the project's policies: apply would refuse it\n\nhint: fix what they find, or override a rule for one run with --policy-override RULE"
        );
        ExitCode::FAILURE
    } else if let Some(over) = over {
        match unchanged_over {
            true => eprintln!("error: {}", budget::over_unchanged(&over)),
            false => eprintln!("error: {}", budget::over(&over)),
        }
        ExitCode::FAILURE
    } else if args.detailed_exitcode && plan.summary().has_changes() {
        crate::exit::code(crate::exit::CHANGES)
    } else {
        ExitCode::SUCCESS
    };
    // The findings too (130,000 at 100,000 checks).
    super::context::exit_without_freeing((plan, loaded, policy));
    code
}
