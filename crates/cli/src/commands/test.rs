//! `monform test`: runs the project's applied checks once in a test session,
//! waits for it, and reports one line per check and location; with
//! `--local`, runs the files' checks here instead (`local`). Which checks
//! run where and the sessions themselves are the engine's
//! (`ops::test_selection`, `ops::run_test_sessions`, `ops::local_checks`).

mod local;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use monform_engine::ops::{self, Refusal, TestRefusal, TestRequest};
use monform_model::Address;

use super::context::{Stop, block_on, open_backend, parse_targets, write_atomically};
use crate::connect::connect;
use crate::render::Output;
use crate::render::test::{Line, Summary, human, junit};

#[derive(Args)]
pub struct TestArgs {
    /// Test only this check (repeatable), e.g. checks.homepage
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<String>,
    /// Test only checks carrying this tag (repeatable: every tag given)
    #[arg(long = "tags", value_name = "T")]
    pub tags: Vec<String>,
    /// Write the results as JUnit XML to FILE (for CI)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run every check here instead of in its own locations: a data-center location or a private location's slug (repeatable: one session each)
    #[arg(long = "location", value_name = "LOC")]
    pub locations: Vec<String>,
    /// Give up waiting after this many seconds
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    timeout: u64,
    /// Run the files' checks on this machine (nothing applied, no service); --location only labels the runs
    #[arg(long)]
    pub local: bool,
    /// With --local: how many runs at once
    #[arg(long, value_name = "N", default_value_t = 4, requires = "local")]
    pub parallelism: usize,
    /// With --local: how to print the results
    #[arg(long, value_enum, default_value_t = Format::Human, requires = "local")]
    pub format: Format,
    /// With --local: print every run's console output and notes
    #[arg(long, short, requires = "local")]
    pub verbose: bool,
}

/// How `monform test --local` prints its results.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    /// A table for a pull-request comment, then the failures with their errors
    Markdown,
    Json,
}

/// The request `--target`, `--tags` and `--location` make.
fn request(args: &TestArgs) -> Result<TestRequest, Stop> {
    Ok(TestRequest {
        targets: parse_targets(&args.targets)?,
        tags: args.tags.clone(),
        locations: args.locations.clone(),
    })
}

struct Outcome {
    lines: Vec<Line>,
    elapsed_ms: Option<f64>,
    not_run: Vec<Address>,
    project: String,
}

/// A refusal of the engine in this command's words (`--target` named).
fn refused(refusal: Refusal) -> Stop {
    Stop::Message(match refusal {
        Refusal::Test(TestRefusal::NotACheck(_) | TestRefusal::NotApplied(_) | TestRefusal::NotInFiles(_)) => {
            format!("--target {refusal}")
        }
        other => other.to_string(),
    })
}

pub fn run(dir: &Path, api_url: Option<&str>, args: TestArgs, output: &Output) -> ExitCode {
    if args.local {
        return local::run(dir, args, output);
    }
    let result = block_on(async {
        let request = request(&args)?;
        let (loaded, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
        let backend = open_backend(dir, &project, "monform test")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let selection = ops::test_selection(&loaded.desired, &state, &request).map_err(refused)?;
        let connection = connect(dir, api_url, &project).await?;
        let timeout = Duration::from_secs(args.timeout);
        let tested =
            ops::run_test_sessions(&connection.client, &project.name, &selection, &request.tags, timeout).await;
        connection.close().await;
        let tested = tested.map_err(refused)?;
        let lines = tested
            .runs
            .into_iter()
            .map(|run| Line {
                address: run.address,
                name: run.name,
                location: run.location,
                status: run.status,
                response_time: run.response_time,
                error: None,
            })
            .collect();
        Ok::<_, Stop>(Outcome {
            lines,
            elapsed_ms: tested.elapsed_ms,
            not_run: tested.not_run,
            project: project.name.clone(),
        })
    });
    let outcome = match super::context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    print!("{}", human(&outcome.lines, outcome.elapsed_ms, output.stdout_color()));
    for address in &outcome.not_run {
        eprintln!("note: {address} was not run (heartbeat or deactivated checks are not run by test sessions)");
    }
    if let Some(path) = &args.junit {
        let xml = junit(&outcome.project, &outcome.lines, outcome.elapsed_ms);
        if let Err(Stop::Message(message)) = write_atomically(path, &xml) {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    }
    if Summary::of(&outcome.lines).any_failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
