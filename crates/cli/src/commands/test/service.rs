//! `monform test` in the service: runs the project's applied checks once
//! in test sessions (`ops::test_selection`, `ops::run_test_sessions`),
//! waits for them, and reports one line per check and location.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use monform_engine::ops::{self, TestRun};
use monform_model::Address;

use super::args::Format;
use super::args::{TestArgs, refused, request};
use crate::commands::context::{self, Stop, block_on, open_backend, write_atomically};
use crate::connect::connect;
use crate::render::Output;
use crate::render::repo_paths::RepoPaths;
use crate::render::test::{Places, Summary, failure_detail, human, json as json_report, junit, markdown, places};

struct Outcome {
    lines: Vec<TestRun>,
    /// Where each check is defined, for JUnit.
    places: Places,
    elapsed_ms: Option<f64>,
    not_run: Vec<Address>,
    project: String,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: TestArgs, output: &Output) -> ExitCode {
    let result = block_on(async {
        let request = request(&args)?;
        let (loaded, project) = context::load(dir, output, context::Findings::Hide)?;
        let backend = open_backend(dir, &project, "monform test")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let selection = ops::test_selection(&loaded.desired, &state, &request).map_err(refused)?;
        let connection = connect(dir, api_url, &project).await?;
        let timeout = Duration::from_secs(args.timeout);
        let tested =
            ops::run_test_sessions(&connection.client, &project.name, &selection, &request.tags, timeout).await;
        connection.close().await;
        let tested = tested.map_err(refused)?;
        let lines = tested.runs;
        Ok::<_, Stop>(Outcome {
            lines,
            places: places(&loaded, &RepoPaths::for_project(dir)),
            elapsed_ms: tested.elapsed_ms,
            not_run: tested.not_run,
            project: project.name.clone(),
        })
    });
    let outcome = match context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    match args.format {
        Format::Human => {
            print!("{}", human(&outcome.lines, outcome.elapsed_ms, output.stdout_color()));
            for line in outcome.lines.iter().filter(|l| l.status.is_failure()) {
                print!("{}", failure_detail(line));
            }
        }
        Format::Markdown => print!("{}", markdown(&outcome.lines, outcome.elapsed_ms)),
        Format::Json => {
            let mut report = json_report(&outcome.lines, outcome.elapsed_ms);
            report.not_run = outcome.not_run.iter().map(ToString::to_string).collect();
            crate::render::print_json(&report);
        }
    }
    for address in &outcome.not_run {
        eprintln!("note: {address} was not run (heartbeat or deactivated checks are not run by test sessions)");
    }
    if let Some(path) = &args.junit {
        let xml = junit(&outcome.project, &outcome.lines, outcome.elapsed_ms, &outcome.places);
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
