//! `monform apply` and `monform destroy`: make the account match the files
//! (or remove the project's objects), unattended or after a `yes`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use monform_engine::{ApplyOptions, Event};

use super::context::{Stop, block_on, parse_targets, prepare};
use crate::render::Output;
use crate::render::plan::{Style, human};

#[derive(Args)]
pub struct ApplyArgs {
    /// Apply without asking (required without a terminal)
    #[arg(long)]
    auto_approve: bool,
    /// Changes in flight at once
    #[arg(long, default_value_t = 8)]
    parallelism: usize,
    /// Apply only this address and what it depends on (repeatable)
    #[arg(long = "target")]
    targets: Vec<String>,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: ApplyArgs, output: &Output, destroy: bool) -> ExitCode {
    match block_on(apply(dir, api_url, args, output, destroy)) {
        Ok(Ok(code)) => code,
        Ok(Err(Stop::Reported)) => ExitCode::FAILURE,
        Ok(Err(Stop::Message(message))) | Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn apply(
    dir: &Path,
    api_url: Option<&str>,
    args: ApplyArgs,
    output: &Output,
    destroy: bool,
) -> Result<ExitCode, Stop> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !args.auto_approve && !interactive {
        return Err(Stop::Message(
            "no terminal to confirm on: pass --auto-approve to apply unattended".into(),
        ));
    }
    let targets = parse_targets(&args.targets)?;
    let prepared = prepare(dir, api_url, output, &targets, destroy).await?;
    let plan = &prepared.plan;
    print!(
        "{}",
        human(
            plan,
            Style {
                color: output.stdout_color()
            }
        )
    );
    if !plan.summary().has_changes() {
        prepared.connection.close().await;
        return Ok(ExitCode::SUCCESS);
    }
    if !args.auto_approve && !confirm(destroy) {
        eprintln!("Apply cancelled.");
        prepared.connection.close().await;
        return Ok(ExitCode::FAILURE);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("interrupted: finishing the changes in flight, then stopping");
                stop.store(true, Ordering::SeqCst);
            }
        })
    };
    let options = ApplyOptions {
        parallelism: args.parallelism,
        stop: stop.clone(),
    };
    let on_event = |event: Event| match event {
        Event::Started { .. } => {}
        Event::Done { address, action } => eprintln!("{address}: {} done", past(action)),
        Event::Failed { address, error, .. } => eprintln!("{address}: failed: {error}"),
        Event::Skipped { address, because, .. } => eprintln!("{address}: skipped because {because}"),
        Event::NotKept { address, fields } => {
            eprintln!("warning: {address}: the API did not keep {}", fields.join(", "))
        }
        Event::Adopted { address } => {
            eprintln!("{address}: found the object an interrupted create had made; adopted it")
        }
    };
    let input = monform_engine::ApplyInput {
        client: &prepared.connection.client,
        plan,
        desired: &prepared.loaded.desired,
        actual: &prepared.actual,
        backend: prepared.backend.as_ref(),
    };
    let result = monform_engine::apply(input, prepared.state.clone(), &options, &on_event).await;
    watcher.abort();
    prepared.connection.close().await;
    let (report, _) = result.map_err(|e| Stop::Message(e.to_string()))?;
    eprintln!(
        "\nApply {}: {} done, {} failed, {} skipped.",
        if report.is_success() { "complete" } else { "incomplete" },
        report.done.len(),
        report.failed.len(),
        report.skipped.len()
    );
    for (address, _, error) in &report.failed {
        eprintln!("  failed: {address}: {error}");
    }
    if report.interrupted || stop.load(Ordering::SeqCst) {
        return Ok(ExitCode::from(130));
    }
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn past(action: monform_engine::Action) -> &'static str {
    match action {
        monform_engine::Action::Create => "create",
        monform_engine::Action::Update => "update",
        monform_engine::Action::Delete => "delete",
        monform_engine::Action::Replace => "replace",
        monform_engine::Action::Noop => "nothing",
    }
}

fn confirm(destroy: bool) -> bool {
    let what = if destroy {
        "destroy every object of this project"
    } else {
        "perform these actions"
    };
    eprint!("\nDo you want to {what}? Only 'yes' will be accepted.\n  Enter a value: ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).is_ok() && answer.trim() == "yes"
}
