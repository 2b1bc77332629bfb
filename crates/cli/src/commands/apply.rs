//! `monform apply [PLANFILE]` and `monform destroy`: make the account match
//! the files (or remove the project's objects), unattended or after a `yes`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use monform_config::Desired;
use monform_engine::ops::{self, ApplyRequest, PlanRequest};
use monform_engine::{ApplyOptions, Event, Refresh, SavedPlan};

use super::context::{Open, Reach, Stop, finish, parse_targets, refused_to};
use super::plan::RefreshArg;
use crate::render::plan::{IoText, Style, write_human};
use crate::render::progress::Progress;
use crate::render::{Output, budget};

#[derive(Args)]
pub struct ApplyArgs {
    /// A plan saved by `monform plan --out`: applied without asking, if still current
    #[arg(value_name = "PLANFILE")]
    plan_file: Option<PathBuf>,
    /// Show every finding of the linter, not a summary past the first few of each rule
    #[arg(long)]
    pub all_findings: bool,
    /// What to read from the service: `changed` reads only what the files changed (`none` is for plans);
    /// a plan saved after a partial refresh is checked with `changed`
    #[arg(long, value_enum)]
    refresh: Option<RefreshArg>,
    /// Let a policy's `deny` pass for this run (a package, e.g. monform.slo_deletes, or one rule of it; repeatable)
    #[arg(long = "policy-override", value_name = "RULE")]
    policy_overrides: Vec<String>,
    /// Output: human, json (one JSON object per line on stdout: the plan, each event, verification, and last
    /// a result object) or markdown (a summary of what was applied, failed and skipped, for a pull request)
    #[arg(long, value_enum, default_value_t = ApplyFormat::Human)]
    format: ApplyFormat,
    #[command(flatten)]
    common: RunArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApplyFormat {
    Human,
    Json,
    Markdown,
}

/// What `apply` takes besides the run's arguments (`destroy` takes none of it).
struct ApplyExtras {
    plan_file: Option<PathBuf>,
    refresh: Option<RefreshArg>,
    policy_overrides: Vec<String>,
    format: ApplyFormat,
}

#[derive(Args)]
pub struct DestroyArgs {
    /// Let a policy's `deny` pass for this run (e.g. monform.slo_deletes for deleting a check tagged slo; repeatable)
    #[arg(long = "policy-override", value_name = "RULE")]
    policy_overrides: Vec<String>,
    /// Output: human, json (one JSON object per line, as `apply --format json`) or markdown (a summary)
    #[arg(long, value_enum, default_value_t = ApplyFormat::Human)]
    format: ApplyFormat,
    #[command(flatten)]
    common: RunArgs,
}

#[derive(Args)]
pub struct RunArgs {
    /// Apply without asking (required without a terminal)
    #[arg(long)]
    auto_approve: bool,
    /// Changes in flight at once
    #[arg(long, default_value_t = 8)]
    parallelism: usize,
    /// Only this address and what it depends on (repeatable)
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Leave out this address and what depends on it (repeatable; `*` matches any characters, e.g. 'checks.api[*]')
    #[arg(long = "exclude")]
    excludes: Vec<String>,
    /// Allow an apply to delete more than 10 objects and 30% of the project (destroy needs no flag: it asks first)
    #[arg(long)]
    allow_mass_delete: bool,
    /// Overwrite changes made outside monform that the files change too (conflicts) without asking
    #[arg(long)]
    allow_conflicts: bool,
}

pub fn run_apply(dir: &Path, api_url: Option<&str>, args: ApplyArgs, output: &Output) -> ExitCode {
    let format = args.format;
    let extras = ApplyExtras {
        plan_file: args.plan_file,
        refresh: args.refresh,
        policy_overrides: args.policy_overrides,
        format,
    };
    let result = super::context::block_on(apply(dir, api_url, args.common, extras, output, false));
    finish(refused_line(format, result))
}

/// With `--format json`, an apply that never started ends with a result
/// line too (pipelines read the last line).
fn refused_line<T>(format: ApplyFormat, result: Result<Result<T, Stop>, String>) -> Result<Result<T, Stop>, String> {
    if format == ApplyFormat::Json {
        let refused = match &result {
            Ok(Err(Stop::Reported)) => Some("the files or the policies have problems (on standard error)".to_owned()),
            Ok(Err(Stop::Message(message))) | Err(message) => Some(message.clone()),
            Ok(Ok(_)) => None,
        };
        if let Some(message) = refused {
            println!("{}", crate::render::apply_output::refused_line(&message));
        }
    }
    result
}

pub fn run_destroy(dir: &Path, api_url: Option<&str>, args: DestroyArgs, output: &Output) -> ExitCode {
    let format = args.format;
    let extras = ApplyExtras {
        plan_file: None,
        refresh: None,
        policy_overrides: args.policy_overrides,
        format,
    };
    let result = super::context::block_on(apply(dir, api_url, args.common, extras, output, true));
    finish(refused_line(format, result))
}

/// Writes the plan for people to `stream` as it is rendered.
fn show_plan(plan: &monform_engine::Plan, desired: &Desired, style: Style, stream: impl Write) -> Result<(), Stop> {
    let mut text = IoText::new(std::io::BufWriter::new(stream));
    let written = write_human(plan, Some(desired), style, &mut text);
    match (written, text.inner.flush()) {
        (Ok(()), Ok(())) => Ok(()),
        (_, flushed) => {
            let error = text.error.or(flushed.err());
            Err(Stop::Message(format!(
                "cannot show the plan: {}",
                error.map_or_else(|| "formatting failed".to_owned(), |e| e.to_string())
            )))
        }
    }
}

async fn apply(
    dir: &Path,
    api_url: Option<&str>,
    args: RunArgs,
    extras: ApplyExtras,
    output: &Output,
    destroy: bool,
) -> Result<ExitCode, Stop> {
    let ApplyExtras {
        plan_file,
        refresh,
        policy_overrides,
        format,
    } = extras;
    let saved = plan_file.as_deref().map(read_saved).transpose()?;
    if let (Some(path), Some((plan, _))) = (&plan_file, &saved) {
        use_saved_environment(path, plan)?;
    }
    // A reviewed plan is applied as it was reviewed: with the overrides it
    // was planned with, never with ones added at apply time.
    let (saved, policy_overrides) = match (saved, policy_overrides) {
        (Some((_, kept)), given) if !given.is_empty() => {
            let kept = match kept.is_empty() {
                true => "none".to_owned(),
                false => kept.join(", "),
            };
            return Err(Stop::Message(format!(
                "--policy-override cannot be added to a saved plan: it is applied with the overrides it was planned with ({kept}); plan again with the override to review it"
            )));
        }
        (Some((plan, kept)), _) => (Some(plan), kept),
        (None, given) => (None, given),
    };
    // A plan saved after a partial refresh is checked by reading what it changes.
    let refresh = match (refresh, &saved) {
        (Some(chosen), _) => chosen.engine(),
        (None, Some(saved)) if saved.refresh != Refresh::All => Refresh::Changed,
        (None, _) => Refresh::All,
    };
    let targets = match &saved {
        Some(_) => Vec::new(),
        None => parse_targets(&args.targets)?,
    };
    let excludes = match &saved {
        Some(_) => Vec::new(),
        None => super::context::parse_excludes(&args.excludes)?,
    };
    // Destroy is not about the files' settings: the linter's findings are apply's.
    let findings = match destroy {
        true => super::context::Findings::Hide,
        false => super::context::Findings::Show,
    };
    let command = if destroy { "monform destroy" } else { "monform apply" };
    let verb = if destroy { "destroy" } else { "apply" };
    let open = Open {
        findings,
        policies: true,
        state: Some(command),
        reach: Reach::Service {
            api_url,
            prefetch: false,
        },
    };
    let opened = super::context::open(dir, output, open).await?;
    let header = super::context::plan_header(&opened.project);
    let session = opened.session().map_err(|why| Stop::Message(why.to_string()))?;
    let (loaded, project) = (&opened.loaded, &opened.project);
    let target = opened.api.as_ref().map(|api| api.target.clone());
    let from_file = saved.is_some();
    let request = ApplyRequest {
        plan: PlanRequest {
            targets,
            excludes,
            destroy,
            refresh,
        },
        saved,
        allow_mass_delete: args.allow_mass_delete,
        policy_overrides,
        allow_conflicts: args.allow_conflicts,
        command: command.to_owned(),
    };
    let mut ready = ops::prepare_apply(&session, request)
        .await
        .map_err(|refusal| refused_to(verb, &refusal, loaded))?;
    // The engine judged the plan by the policies (and refuses it when
    // they deny): their findings are shown first.
    if let Some(outcome) = &ready.policy {
        output.diagnostics(&crate::render::policy::shown(outcome, loaded, output), &loaded.sources);
    }
    if let Some(holder) = &ready.took_over {
        eprintln!("warning: took over a stale lock left by {holder}");
    }
    let plan = ready.plan();
    if format == ApplyFormat::Json {
        println!("{}", crate::render::apply_output::plan_line(plan));
    }
    // JSON and Markdown keep stdout for themselves: the plan goes to stderr.
    // The plan is streamed, not built as one string: at 10,000 creates it
    // is 11 MB of text, at the moment the plan's own fields peak.
    if !from_file && format != ApplyFormat::Human {
        show_plan(plan, &loaded.desired, Style { color: false }, std::io::stderr().lock())?;
    } else if !from_file {
        super::context::warn_idle_moves(&ready.planned, loaded);
        if let Some(target) = &target {
            super::context::warn_other_target(&ready.planned, target);
        }
        print!(
            "{}{}",
            header,
            crate::render::plan::moved_note(&ready.planned.actual, plan)
        );
        show_plan(
            plan,
            &loaded.desired,
            Style {
                color: output.stdout_color(),
            },
            std::io::stdout().lock(),
        )?;
        if let Some(runs) = &ready.runs {
            println!("{}", budget::line(runs));
        }
    }
    if let Some(refusal) = ready.refusal() {
        // Over the budget (as `plan` fails) or unsafe: nothing starts.
        let message = refused_to(verb, refusal, loaded);
        drop(ready);
        opened.close().await;
        return Err(message);
    }
    // With no changes the engine still runs: it records adopted objects in the state.
    let has_changes = plan.summary().has_changes();
    // Conflicts are asked about as a destroy is; unattended, the engine
    // refuses them (see `ops::Ready::conflicts`).
    let conflicts = ready.conflicts().len();
    if has_changes && !from_file && !args.auto_approve {
        let answer = confirm(destroy, conflicts);
        if answer != Answer::Yes {
            drop(ready);
            opened.close().await;
            return match answer {
                Answer::Nothing => Err(Stop::Message(format!(
                    "no answer to confirm with (standard input is closed): pass --auto-approve to {verb} unattended, or pipe `yes` in"
                ))),
                _ => {
                    eprintln!("{} cancelled.", if destroy { "Destroy" } else { "Apply" });
                    Ok(ExitCode::FAILURE)
                }
            };
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        let client = session.client.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted: finishing the changes in flight (without retries), then stopping");
                stop.store(true, Ordering::SeqCst);
                client.stop_retrying();
            }
        })
    };
    let options = ApplyOptions {
        parallelism: args.parallelism,
        stop: stop.clone(),
        target: target.clone(),
    };
    let progress = Progress::new(plan.ordered().len());
    let on_event = |event: Event| {
        if format == ApplyFormat::Json {
            println!("{}", crate::render::apply_output::event_line(&event));
        }
        progress.event(event)
    };
    let client = session.client;
    let shown = progress.clone();
    client.observe_waits(Some(Arc::new(move |wait| shown.waiting(&wait))));
    let above = progress.clone();
    crate::connect::route_lines(Some(Arc::new(move |text| above.line(text))));
    // JSON and Markdown report per address after the apply, which takes the plan.
    let plan_copy = (format != ApplyFormat::Human).then(|| plan.clone());
    if conflicts > 0 && !from_file && !args.auto_approve {
        // Answered yes to the question naming them.
        ready.approve_conflicts();
    }
    let result = ops::execute(ready, &options, &on_event).await;
    crate::connect::route_lines(None);
    client.observe_waits(None);
    progress.finish();
    watcher.abort();
    let api_url = client.base_url().to_owned();
    opened.close().await;
    let applied = result.map_err(|refusal| refused_to(verb, &refusal, loaded))?;
    if format != ApplyFormat::Human {
        return Ok(machine_output(
            format,
            plan_copy.as_ref(),
            &applied,
            session.backend,
            &project.name,
            &stop,
        ));
    }
    let report = &applied.report;
    if !has_changes {
        // Only tag moves (after `state mv`) can have failed.
        return Ok(if report.failed.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    eprintln!(
        "\n{} {}: {} done, {} failed, {} skipped.",
        if destroy { "Destroy" } else { "Apply" },
        if applied.is_complete() {
            "complete"
        } else {
            "incomplete"
        },
        report.done.len(),
        report.failed.len(),
        report.skipped.len()
    );
    for (address, _, error) in &report.failed {
        eprintln!("  failed:  {address}: {error}");
    }
    for (address, _, because) in &report.skipped {
        eprintln!("  skipped: {address}: {because}");
    }
    if let Some(verification) = &applied.verification {
        report_verification(verification, applied.normal_forms_saved.as_ref());
    }
    if report.unreachable {
        eprintln!(
            "\nerror: stopped: the service at {} stopped answering ({} requests in a row failed to reach it); what is not done is listed above\n\nhint: run the same apply again once it answers: it picks up where this one stopped",
            api_url,
            monform_api::breaker::LIMIT
        );
        return Ok(ExitCode::FAILURE);
    }
    if report.interrupted || stop.load(Ordering::SeqCst) {
        return Ok(crate::exit::code(crate::exit::INTERRUPTED));
    }
    Ok(if applied.is_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `apply --format json|markdown` after the changes: verification and the
/// result line, or the summary; the exit code as the human output has it.
fn machine_output(
    format: ApplyFormat,
    plan: Option<&monform_engine::Plan>,
    applied: &ops::Applied,
    backend: &dyn monform_engine::StateBackend,
    project: &str,
    stop: &AtomicBool,
) -> ExitCode {
    use crate::render::apply_output;
    let report = &applied.report;
    let complete = applied.is_complete();
    let code: u8 = if report.unreachable {
        crate::exit::FAILURE
    } else if report.interrupted || stop.load(Ordering::SeqCst) {
        crate::exit::INTERRUPTED
    } else if complete {
        crate::exit::SUCCESS
    } else {
        crate::exit::FAILURE
    };
    // The remote ids the apply recorded (the state holds no secret).
    let state = backend.load(project).ok();
    let empty = monform_engine::Plan::default();
    let plan = plan.unwrap_or(&empty);
    match format {
        ApplyFormat::Json => {
            if let Some(verification) = &applied.verification {
                for line in apply_output::verified_lines(report, verification) {
                    println!("{line}");
                }
            }
            println!(
                "{}",
                apply_output::result_line(plan, report, state.as_ref(), complete, code)
            );
        }
        _ => print!("{}", apply_output::markdown(plan, report, state.as_ref(), complete)),
    }
    ExitCode::from(code)
}

/// Prints what reading back found, and whether the service's normal forms
/// it found were recorded.
fn report_verification(
    verification: &Result<monform_engine::Verification, monform_api::Error>,
    recorded: Option<&Result<(), monform_engine::StateError>>,
) {
    match verification {
        Ok(v) => {
            eprintln!("verified: {} of {}", v.verified(), v.checked);
            for (address, problem) in &v.failures {
                eprintln!("  not verified: {address}: {problem}");
            }
            for form in &v.normal_forms {
                eprintln!(
                    "  note: {}: the service holds `{}` in its own form (case or order); recorded as its normal form, not a change",
                    form.address, form.path
                );
            }
            if let Some(Err(error)) = recorded {
                eprintln!(
                    "warning: the service's normal forms were not recorded ({error}): the next plan shows them as changes"
                );
            }
        }
        Err(error) => eprintln!("verified: none (reading the objects back failed: {error})"),
    }
}

/// The saved plan and the `--policy-override`s it was planned with.
fn read_saved(path: &Path) -> Result<(SavedPlan, Vec<String>), Stop> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Stop::Message(format!("cannot read the plan {}: {e}", path.display())))?;
    let not_a_plan =
        |e: serde_json::Error| Stop::Message(format!("{} is not a saved monform plan: {e}", path.display()));
    let file: serde_json::Value = serde_json::from_str(&text).map_err(not_a_plan)?;
    let overrides = crate::render::shown::saved_overrides(&file);
    // Plans saved before the engine kept the environment have it only in
    // what `show` reads.
    let shown_environment = file[crate::render::shown::KEY]["environment"]
        .as_str()
        .map(str::to_owned);
    let mut saved: SavedPlan = serde_json::from_value(file).map_err(not_a_plan)?;
    saved.environment = saved.environment.or(shown_environment);
    Ok((saved, overrides))
}

/// Applies the saved plan at `path` in the environment it was planned
/// for; one chosen with `--env` (or `MONFORM_ENV`) must be that one.
fn use_saved_environment(path: &Path, plan: &SavedPlan) -> Result<(), Stop> {
    let chosen = super::context::chosen_environment();
    match plan.environment_to_apply(chosen) {
        Ok(Some(environment)) => {
            if chosen.is_none() {
                eprintln!("Applying {} to environment {environment}, as planned", path.display());
            }
            super::context::set_saved_plan_environment(environment);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(other) => Err(Stop::Message(format!(
            "{}: {other} (chosen with --env or MONFORM_ENV): nothing was applied\n\nhint: leave --env out to apply it to {}, or plan {} with `monform --env {} plan --out FILE`",
            path.display(),
            other.planned,
            other.chosen,
            other.chosen
        ))),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Yes,
    No,
    /// Standard input ended (or failed) before a line: nobody to ask.
    Nothing,
}

/// Asks for `yes` on standard input: a terminal, or a pipe (`echo yes |
/// monform apply`), as Terraform does.
fn confirm(destroy: bool, conflicts: usize) -> Answer {
    let what = match (destroy, conflicts) {
        (true, _) => "destroy every object of this project".to_owned(),
        (false, 0) => "perform these actions".to_owned(),
        (false, 1) => {
            "perform these actions and overwrite 1 change made outside monform (the conflict above)".to_owned()
        }
        (false, n) => {
            format!("perform these actions and overwrite {n} changes made outside monform (the conflicts above)")
        }
    };
    eprint!("\nDo you want to {what}? Only 'yes' will be accepted.\n  Enter a value: ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let read = std::io::stdin().lock().read_line(&mut answer);
    // A terminal echoes the answer and its newline; a piped one is not
    // echoed, and what follows would go on the prompt's line.
    if !std::io::stdin().is_terminal() {
        eprintln!();
    }
    match read {
        Ok(0) | Err(_) => Answer::Nothing,
        Ok(_) if answer.trim() == "yes" => Answer::Yes,
        Ok(_) => Answer::No,
    }
}
