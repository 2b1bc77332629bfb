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
                        check: &check.wire,
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
                        eprint!("\r\x1b[K[{finished}/{total}] {}", check.address);
                        let _ = std::io::stderr().flush();
                    }
                    Ran {
                        line: Line {
                            address: check.address.to_string(),
                            name: check.name.clone(),
                            location: location.to_owned(),
                            status: status(outcome.status),
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

fn status(status: monform_runner::RunStatus) -> monform_api::RunStatus {
    match status {
        monform_runner::RunStatus::Passed => monform_api::RunStatus::Passed,
        monform_runner::RunStatus::Degraded => monform_api::RunStatus::Degraded,
        monform_runner::RunStatus::Failed => monform_api::RunStatus::Failed,
        monform_runner::RunStatus::TimedOut => monform_api::RunStatus::TimedOut,
    }
}
