//! `monform test --local`: runs the files' checks on this machine with
//! monform-runner, nothing applied and no service needed. Each check's API
//! body comes from the model's `to_wire`, references resolved from the
//! desired state (snippet scripts inlined), and its variables are the
//! project's variables then its own `environmentVariables`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use monform_config::Desired;
use monform_model::group_rules::apply_group;
use monform_model::wire::to_wire;
use monform_model::{Address, Kind};
use monform_runner::{BrowserSetup, Job, Outcome, Runner, RunnerConfig, Variables, inline_snippets};
use serde_json::{Value, json};

use super::context::{Stop, block_on, parse_targets};
use super::test::{Format, TestArgs, write_atomically};
use crate::render::Output;
use crate::render::run_detail::{detail, failing_line};
use crate::render::test::{Line, Summary, human, json as json_report, junit, markdown};

/// The location local runs are labelled with when no `--location` is given.
pub const LOCAL_LOCATION: &str = "local";

/// One check to run, in the API's form.
struct Planned {
    address: Address,
    name: String,
    wire: Value,
    variables: Variables,
}

/// The checks of the files selected by `--target` and `--tags`.
fn planned(desired: &Desired, dir: &Path, args: &TestArgs) -> Result<Vec<Planned>, Stop> {
    let targets = parse_targets(&args.targets)?;
    if let Some(other) = targets.iter().find(|t| t.kind != Kind::Check) {
        return Err(Stop::Message(format!("--target {other}: only checks can be tested")));
    }
    if let Some(missing) = targets.iter().find(|t| !desired.resources.contains_key(*t)) {
        return Err(Stop::Message(format!("--target {missing}: no such check in the files")));
    }
    let project_variables: Vec<Value> = desired
        .resources
        .values()
        .filter(|r| r.address.kind == Kind::Variable)
        .map(|r| {
            let file = r.resource.to_json();
            json!({ "key": r.address.id, "value": file["value"], "secret": file["secret"] })
        })
        .collect();
    let snippet_script = |id: &Value| -> Option<String> {
        let resource = desired.resources.get(&Address::new(Kind::Snippet, id.as_str()?))?;
        resource.resource.to_json()["script"].as_str().map(str::to_owned)
    };
    let mut out = Vec::new();
    for resource in desired.resources.values().filter(|r| r.address.kind == Kind::Check) {
        if !targets.is_empty() && !targets.contains(&resource.address) {
            continue;
        }
        let file = resource.resource.to_json();
        let tags: Vec<&str> = file["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !args.tags.iter().all(|t| tags.contains(&t.as_str())) {
            continue;
        }
        // References stay logical ids: nothing here has a remote id.
        let logical = |_: Kind, id: &str| Some(Value::String(id.to_owned()));
        let mut wire = to_wire(Kind::Check, &file, &logical);
        // As the service runs it: with what its group imposes and adds.
        if let Some(group) = file["group"]
            .as_str()
            .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id)))
        {
            wire = apply_group(wire, &to_wire(Kind::Group, &group.resource.to_json(), &logical));
        }
        inline_snippets(&mut wire, &snippet_script);
        if let Some(bundle) = wire["codeBundlePath"].as_str().filter(|p| Path::new(p).is_relative()) {
            wire["codeBundlePath"] = Value::String(dir.join(bundle).to_string_lossy().into_owned());
        }
        let variables = Variables::for_check(project_variables.iter().cloned(), &wire);
        out.push(Planned {
            address: resource.address.clone(),
            name: file["name"].as_str().unwrap_or(&resource.address.id).to_owned(),
            wire,
            variables,
        });
    }
    if out.is_empty() {
        return Err(Stop::Message("no check of the files matches --target/--tags".into()));
    }
    Ok(out)
}

struct Ran {
    line: Line,
    outcome: Outcome,
}

pub fn run(dir: &Path, args: TestArgs, output: &Output) -> ExitCode {
    let started = Instant::now();
    let result = block_on(async {
        let (loaded, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
        // Runs happen in their own folders: code bundles need absolute paths.
        let dir = &std::path::absolute(dir).map_err(|e| Stop::Message(format!("{}: {e}", dir.display())))?;
        let checks = planned(&loaded.desired, dir, &args)?;
        let mut runner = Runner::new(RunnerConfig::default()).with_browser(BrowserSetup::discover(Some(dir)));
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
                        check: &check.wire,
                        variables: &check.variables,
                        heartbeats: None,
                        location,
                    };
                    let attempts = runner.run(job).await;
                    // Only the run's outcome (its last attempt) keeps its files.
                    for earlier in attempts.iter().rev().skip(1) {
                        discard_artifacts(&earlier.outcome);
                    }
                    let outcome = attempts
                        .last()
                        .map(|a| a.outcome.clone())
                        .unwrap_or_else(|| monform_runner::errored("the runner made no attempt"));
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress {
                        eprint!("\r\x1b[K[{finished}/{total}] {}", check.address);
                        let _ = std::io::stderr().flush();
                    }
                    let error = match (&outcome.error, failing_line(&outcome)) {
                        (Some(error), Some(at)) => Some(format!("{error}\n{at}")),
                        (error, _) => error.clone(),
                    };
                    let artifacts = kept_in
                        .map(|shown| keep_artifacts(&outcome, shown, &check.address, location))
                        .unwrap_or_default();
                    Ran {
                        line: Line {
                            address: check.address.to_string(),
                            name: check.name.clone(),
                            location: location.to_owned(),
                            status: status(outcome.status),
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
        Ok::<_, Stop>((ran, project.name.clone()))
    });
    let (ran, project) = match super::context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    let elapsed = Some(started.elapsed().as_secs_f64() * 1000.0);
    let lines: Vec<Line> = ran.iter().map(|r| r.line.clone()).collect();
    match args.format {
        Format::Human => {
            print!("{}", human(&lines, elapsed, output.stdout_color()));
            for r in ran.iter().filter(|r| r.line.status.is_failure() || args.verbose) {
                print!("{}", detail(&r.line, &r.outcome, args.verbose));
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

fn status(status: monform_runner::RunStatus) -> monform_api::RunStatus {
    match status {
        monform_runner::RunStatus::Passed => monform_api::RunStatus::Passed,
        monform_runner::RunStatus::Degraded => monform_api::RunStatus::Degraded,
        monform_runner::RunStatus::Failed => monform_api::RunStatus::Failed,
        monform_runner::RunStatus::TimedOut => monform_api::RunStatus::TimedOut,
    }
}
