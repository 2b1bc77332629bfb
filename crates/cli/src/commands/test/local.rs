//! `monform test --local`: runs the files' checks on this machine with
//! monform-runner, nothing applied and no service needed. Each check comes
//! as the service would run it (`ops::local_checks`: its group applied,
//! snippet scripts inlined), and its variables are the project's variables
//! then its own `environmentVariables` (its group's merged).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use monform_engine::ops::{self, LocalCheck};
use monform_runner::{BrowserSetup, Job, Outcome, Runner, RunnerConfig, Variables};

use super::args::{Format, TestArgs, refused, request};
use crate::commands::context::{self, Stop, block_on, write_atomically};
use crate::render::Output;
use crate::render::test::{Line, Summary, human, json as json_report, junit, markdown};

/// The location local runs are labelled with when no `--location` is given.
pub const LOCAL_LOCATION: &str = "local";

/// A check of the files to run here, with the variables it sees.
struct Planned {
    check: LocalCheck,
    variables: Variables,
}

struct Ran {
    line: Line,
    outcome: Outcome,
}

pub fn run(dir: &Path, args: TestArgs, output: &Output) -> ExitCode {
    let started = Instant::now();
    let result = block_on(async {
        let (loaded, project) = context::load(dir, output, context::Findings::Hide)?;
        // Runs happen in their own folders: code bundles need absolute paths.
        let dir = &std::path::absolute(dir).map_err(|e| Stop::Message(format!("{}: {e}", dir.display())))?;
        let request = request(&args)?;
        let project_variables = ops::project_variables(&loaded.desired);
        let checks: Vec<Planned> = ops::local_checks(&loaded.desired, dir, &request)
            .map_err(refused)?
            .into_iter()
            .map(|check| Planned {
                variables: Variables::for_check(project_variables.iter().cloned(), &check.wire),
                check,
            })
            .collect();
        let runner = Runner::new(RunnerConfig::default()).with_browser(BrowserSetup::discover(Some(dir)));
        let locations = if args.locations.is_empty() {
            vec![LOCAL_LOCATION.to_owned()]
        } else {
            args.locations.clone()
        };
        let runs: Vec<(&Planned, &str)> = checks
            .iter()
            .flat_map(|c| locations.iter().map(move |l| (c, l.as_str())))
            .collect();
        let total = runs.len();
        let done = AtomicUsize::new(0);
        let progress = std::io::stderr().is_terminal();
        let mut ran: Vec<Ran> = futures_util::stream::iter(runs)
            .map(|(check, location)| {
                let (runner, done) = (&runner, &done);
                async move {
                    let job = Job {
                        check: &check.check.wire,
                        variables: &check.variables,
                        heartbeats: None,
                        location,
                    };
                    let attempts = runner.run(job).await;
                    let outcome = attempts
                        .last()
                        .map(|a| a.outcome.clone())
                        .unwrap_or_else(|| monform_runner::errored("the runner made no attempt"));
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress {
                        eprint!("\r\x1b[K[{finished}/{total}] {}", check.check.address);
                        let _ = std::io::stderr().flush();
                    }
                    Ran {
                        line: Line {
                            address: check.check.address.to_string(),
                            name: check.check.name.clone(),
                            location: location.to_owned(),
                            status: outcome.status,
                            response_time: Some(outcome.response_time),
                            error: outcome.error.clone(),
                        },
                        outcome,
                    }
                }
            })
            .buffer_unordered(args.parallelism.max(1))
            .collect()
            .await;
        if progress {
            eprint!("\r\x1b[K");
        }
        ran.sort_by(|a, b| (&a.line.address, &a.line.location).cmp(&(&b.line.address, &b.line.location)));
        Ok::<_, Stop>((ran, project.name.clone()))
    });
    let (ran, project) = match context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    let elapsed = Some(started.elapsed().as_secs_f64() * 1000.0);
    let lines: Vec<Line> = ran.iter().map(|r| r.line.clone()).collect();
    match args.format {
        Format::Human => {
            print!("{}", human(&lines, elapsed, output.stdout_color()));
            for r in ran.iter().filter(|r| r.line.status.is_failure() || args.verbose) {
                print!("{}", detail(r, args.verbose));
            }
        }
        Format::Markdown => print!("{}", markdown(&lines, elapsed)),
        Format::Json => println!("{:#}", json_report(&lines, elapsed)),
    }
    if let Some(path) = &args.junit
        && let Err(Stop::Message(message)) = write_atomically(path, &junit(&project, &lines, elapsed))
    {
        eprintln!("error: {message}");
        return ExitCode::FAILURE;
    }
    if Summary::of(&lines).any_failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// A run's error (failures) and, with `--verbose`, its console output and
/// notes; secrets are already masked by the runner.
fn detail(ran: &Ran, verbose: bool) -> String {
    let mut out = format!("\n{} ({}):\n", ran.line.address, ran.line.location);
    if let Some(error) = &ran.outcome.error {
        out.push_str(&format!("  error: {}\n", error.replace('\n', "\n    ")));
    }
    if verbose {
        for note in &ran.outcome.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        if let Some(console) = ran.outcome.details["output"].as_str().filter(|o| !o.trim().is_empty()) {
            out.push_str("  output:\n");
            for line in console.lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    out
}
