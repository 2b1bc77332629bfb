//! `monform test --local`: runs the files' checks on this machine with
//! monform-runner, nothing applied and no service needed. Each check comes
//! as the service would run it (`ops::local_checks`: its group applied,
//! snippet scripts inlined), and its variables are the project's variables
//! then its own `environmentVariables` (its group's merged).
//!
//! The scripts are the files' code, in CI a pull request's: they run with
//! an environment built from nothing (`monform_runner::script_env`), plus
//! the names `[project] pass-env` lists, read here from monform's own.
//! The same list says which of monform's variables the files may hand
//! them, or have the runner send, through `${env:}`: a check reading any
//! other does not run and is an error result (`ops::unpassed_env`).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use monform_engine::ops::{self, LocalCheck, TestRun};
use monform_model::Address;
use monform_runner::{BrowserSetup, Job, Outcome, Runner, RunnerConfig, Variables};

use super::args::{Format, TestArgs, refused, request};
use crate::commands::context::{self, Stop, block_on, write_atomically};
use crate::render::Output;
use crate::render::repo_paths::RepoPaths;
use crate::render::run_detail::{detail, failing_line};
use crate::render::test::{SuiteStatus, SuiteTest, Summary, human, json as json_report, junit, markdown, places};

/// The variables of monform's own environment that `[project] pass-env`
/// gives the scripts, with their values (unset ones are left out). The
/// loader has refused monform's credentials there; they are left out here
/// too, whatever the list says.
fn passed_env(project: &monform_config::Project) -> Vec<(String, std::ffi::OsString)> {
    project
        .pass_env
        .iter()
        .filter(|(name, _)| !monform_config::interpolate::CREDENTIAL_ENV.contains(&name.as_str()))
        .filter_map(|(name, _)| std::env::var_os(name).map(|value| (name.clone(), value)))
        .collect()
}

/// The location local runs are labelled with when no `--location` is given.
pub const LOCAL_LOCATION: &str = "local";

/// A check of the files to run here, with the variables it sees.
struct Planned {
    check: LocalCheck,
    variables: Variables,
    /// Why it does not run: it reads variables pass-env does not list.
    refused: Option<String>,
}

struct Ran {
    line: TestRun,
    outcome: Outcome,
}

pub fn run(dir: &Path, args: TestArgs, output: &Output) -> ExitCode {
    let started = Instant::now();
    let result = block_on(async {
        let (loaded, project) = context::load(dir, output, context::Findings::Hide)?;
        let places = places(&loaded, &RepoPaths::for_project(dir));
        // Runs happen in their own folders: code bundles need absolute paths.
        let dir = &std::path::absolute(dir).map_err(|e| Stop::Message(format!("{}: {e}", dir.display())))?;
        let request = request(&args)?;
        let project_variables = ops::project_variables(&loaded.desired);
        let checks: Vec<Planned> = ops::local_checks(&loaded.desired, dir, &request)
            .map_err(refused)?
            .into_iter()
            .map(|check| Planned {
                variables: Variables::for_check(project_variables.iter().cloned(), &check.wire),
                refused: ops::unpassed_env(&check.env_reads, &project).map(|refusal| refusal.to_string()),
                check,
            })
            .collect();
        let mut runner = Runner::new(RunnerConfig::default())
            .with_browser(BrowserSetup::discover(Some(dir)))
            .with_passed_env(passed_env(&project));
        if let Some(artifacts) = &args.artifacts {
            std::fs::create_dir_all(artifacts)
                .map_err(|e| Stop::Message(format!("--artifacts {}: {e}", artifacts.display())))?;
            // Absolute: browser runs happen in temporary folders of their own.
            let absolute = std::path::absolute(artifacts)
                .map_err(|e| Stop::Message(format!("--artifacts {}: {e}", artifacts.display())))?;
            runner = runner.with_artifacts(absolute);
        }
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
        let kept_in = args.artifacts.as_deref();
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
                    let outcome = match &check.refused {
                        Some(why) => monform_runner::errored(why.clone()),
                        None => {
                            let attempts = runner.run(job).await;
                            // Only the run's outcome (its last attempt) keeps its files.
                            for earlier in attempts.iter().rev().skip(1) {
                                discard_artifacts(&earlier.outcome);
                            }
                            attempts
                                .last()
                                .map(|a| a.outcome.clone())
                                .unwrap_or_else(|| monform_runner::errored("the runner made no attempt"))
                        }
                    };
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress {
                        eprint!("\r\x1b[K[{finished}/{total}] {}", check.check.address);
                        let _ = std::io::stderr().flush();
                    }
                    let error = match (&outcome.error, failing_line(&outcome)) {
                        (Some(error), Some(at)) => Some(format!("{error}\n{at}")),
                        (error, _) => error.clone(),
                    };
                    let artifacts = kept_in
                        .map(|shown| keep_artifacts(&outcome, shown, &check.check.address, location))
                        .unwrap_or_default();
                    Ran {
                        line: TestRun {
                            address: check.check.address.to_string(),
                            name: check.check.name.clone(),
                            location: location.to_owned(),
                            status: outcome.status,
                            response_time: Some(outcome.response_time),
                            error,
                            artifacts,
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
        Ok::<_, Stop>((ran, project.name.clone(), places))
    });
    let (ran, project, places) = match context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    let elapsed = Some(started.elapsed().as_secs_f64() * 1000.0);
    let lines: Vec<TestRun> = ran.iter().map(|r| r.line.clone()).collect();
    match args.format {
        Format::Human => {
            print!("{}", human(&lines, elapsed, output.stdout_color()));
            for r in ran.iter().filter(|r| r.line.status.is_failure() || args.verbose) {
                print!("{}", detail(&r.line, &r.outcome, args.verbose));
            }
        }
        Format::Markdown => print!("{}", markdown(&lines, elapsed)),
        Format::Json => {
            let mut report = json_report(&lines, elapsed);
            // A Playwright project's run: each of its tests a result of its own.
            for (run, r) in report.runs.iter_mut().zip(&ran) {
                run.tests = suite_tests(&r.outcome.details["tests"]);
            }
            crate::render::print_json(&report)
        }
    }
    if let Some(path) = &args.junit
        && let Err(Stop::Message(message)) = write_atomically(path, &junit(&project, &lines, elapsed, &places))
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

/// The tests of a Playwright project's run as `--format json` lists them:
/// name (its `describe` titles, `›`), project, status, duration, the spec's
/// file and line, and a failed one's error and the `file:line` it failed at.
fn suite_tests(tests: &serde_json::Value) -> Option<Vec<SuiteTest>> {
    let tests = tests.as_array()?;
    let text = |value: &serde_json::Value| value.as_str().map(str::to_owned);
    Some(
        tests
            .iter()
            .map(|test| {
                let passed = test["passed"] == true;
                let failed_at = match (test["at"]["file"].as_str(), test["at"]["line"].as_u64()) {
                    (Some(file), Some(line)) if !passed => Some(format!("{file}:{line}")),
                    _ => None,
                };
                SuiteTest {
                    name: text(&test["name"]),
                    project: text(&test["project"]),
                    status: if passed {
                        SuiteStatus::Passed
                    } else {
                        SuiteStatus::Failed
                    },
                    duration_ms: test["ms"].as_number().cloned(),
                    file: text(&test["file"]),
                    line: test["line"].as_u64(),
                    error: text(&test["error"]).filter(|_| !passed),
                    failed_at,
                }
            })
            .collect(),
    )
}

/// Removes the folder of files an attempt left (one that was retried).
fn discard_artifacts(outcome: &Outcome) {
    let folder = outcome.details["artifacts"][0]["path"]
        .as_str()
        .and_then(|f| Path::new(f).parent().map(Path::to_path_buf));
    if let Some(folder) = folder {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// Moves the files a failed browser run left (in the runner's `run-N`
/// folder) to a folder named after the check and location, and returns
/// their paths below `shown` (`--artifacts` as the user wrote it); nothing
/// for a run that left none.
fn keep_artifacts(outcome: &Outcome, shown: &Path, address: &Address, location: &str) -> Vec<String> {
    let files: Vec<std::path::PathBuf> = outcome.details["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["path"].as_str().map(std::path::PathBuf::from))
        .collect();
    let Some(run_dir) = files.first().and_then(|f| f.parent()).map(Path::to_path_buf) else {
        return Vec::new();
    };
    let root = run_dir.parent().unwrap_or(Path::new("."));
    let name = format!("{address}-{location}").replace(['/', '\\'], "_");
    let mut folder = name.clone();
    let mut n = 2;
    while root.join(&folder).exists() {
        folder = format!("{name}-{n}");
        n += 1;
    }
    if std::fs::rename(&run_dir, root.join(&folder)).is_err() {
        folder = run_dir
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    files
        .iter()
        .filter_map(|f| f.file_name())
        .map(|f| shown.join(&folder).join(f).display().to_string())
        .collect()
}
