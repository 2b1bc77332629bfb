//! `monform test`'s arguments, and what both ways of testing make of them.

use std::path::PathBuf;

use clap::Args;
use monform_engine::ops::{Refusal, TestRefusal, TestRequest};

use crate::commands::context::{Stop, parse_targets};

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
    pub timeout: u64,
    /// Run the files' checks on this machine (nothing applied, no service); --location only labels the runs
    #[arg(long)]
    pub local: bool,
    /// With --local: how many runs at once
    #[arg(long, value_name = "N", default_value_t = 4, requires = "local")]
    pub parallelism: usize,
    /// How to print the results (json: `monform schema --output test`)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// With --local: print every run's console output and notes, and an API check's request, response status and assertions
    #[arg(long, short, requires = "local")]
    pub verbose: bool,
    /// With --local: keep a screenshot and a Playwright trace of each failed browser run in DIR (a folder per check and location)
    #[arg(long, value_name = "DIR", requires = "local")]
    pub artifacts: Option<PathBuf>,
}

/// How `monform test` prints its results.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    /// A table for a pull-request comment, then the failures with their errors
    Markdown,
    Json,
}

/// The request `--target`, `--tags` and `--location` make.
pub fn request(args: &TestArgs) -> Result<TestRequest, Stop> {
    Ok(TestRequest {
        targets: parse_targets(&args.targets)?,
        tags: args.tags.clone(),
        locations: args.locations.clone(),
    })
}

/// A refusal of the engine in this command's words (`--target` named).
pub fn refused(refusal: Refusal) -> Stop {
    Stop::Message(match refusal {
        Refusal::Test(TestRefusal::NotACheck(_) | TestRefusal::NotApplied(_) | TestRefusal::NotInFiles(_)) => {
            format!("--target {refusal}")
        }
        other => other.to_string(),
    })
}
