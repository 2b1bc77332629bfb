//! `monform policy test` (issue 32): the policies' `test_*` rules, with a
//! pass/fail summary and exit code.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use monform_config::Diagnostic;
use monform_policy::TestOutcome;

use crate::render::Output;
use crate::render::repo_paths::RepoPaths;
use crate::render::sarif::{github, sarif};

#[derive(Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Run the policies' `test_*` rules (each with its own input, as `opa test`); exit 1 if any fails
    Test {
        #[arg(long, value_enum, default_value_t = TestFormat::Human)]
        format: TestFormat,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TestFormat {
    Human,
    Json,
    Sarif,
    Github,
}

pub fn run(dir: &Path, args: PolicyArgs, output: &Output) -> ExitCode {
    let PolicyCommand::Test { format } = args.command;
    // The tests need the policies, not valid resource files.
    let mut loaded = super::context::load_files(dir);
    let Some(project) = loaded.project.clone() else {
        output.diagnostics(&loaded.diagnostics, &loaded.sources);
        eprintln!("error: monform.toml could not be read");
        return ExitCode::FAILURE;
    };
    let (policies, problems) = monform_engine::ops::load_policies(dir, &mut loaded, &project);
    let policies = policies.policies;
    let report = policies.test();
    // A failed test is a finding at its rule, for SARIF and annotations.
    let mut found = problems.clone();
    for case in &report.cases {
        let message = match &case.outcome {
            TestOutcome::Pass => continue,
            TestOutcome::Fail => format!("test {} failed", case.name),
            TestOutcome::Error(error) => format!("test {} could not run: {error}", case.name),
        };
        found.push(Diagnostic::new("monform::policy-test", message).at(case.at, "this test"));
    }
    let ok = problems.is_empty() && report.is_success();
    match format {
        TestFormat::Human => {
            output.diagnostics(&problems, &loaded.sources);
            for case in &report.cases {
                let at = Diagnostic::new("monform::policy-test", "")
                    .at(case.at, "")
                    .location(&loaded.sources)
                    .unwrap_or_default();
                let verdict = match &case.outcome {
                    TestOutcome::Pass => "PASS".to_owned(),
                    TestOutcome::Fail => "FAIL".to_owned(),
                    TestOutcome::Error(error) => format!("ERROR: {error}"),
                };
                println!("{at}: {}: {verdict}", case.name);
            }
            let tests = match report.cases.len() {
                1 => "1 test".to_owned(),
                n => format!("{n} tests"),
            };
            println!("{tests}: {} passed, {} failed", report.passed(), report.failed());
            if report.cases.is_empty() {
                eprintln!(
                    "error: no test_* rules found in the policies\n\nhint: write them beside the policies, e.g. policies/<name>_test.rego"
                );
            }
        }
        TestFormat::Json => {
            let tests = report
                .cases
                .iter()
                .map(|case| {
                    let (file, line, _) = crate::render::findings::Locator::default().locate(&loaded.sources, case.at);
                    let (outcome, error) = match &case.outcome {
                        TestOutcome::Pass => (Outcome::Pass, None),
                        TestOutcome::Fail => (Outcome::Fail, None),
                        TestOutcome::Error(error) => (Outcome::Error, Some(error.clone())),
                    };
                    TestJson {
                        name: case.name.clone(),
                        file,
                        line,
                        outcome,
                        error,
                    }
                })
                .collect();
            let mut locator = crate::render::findings::Locator::default();
            let diagnostics = problems
                .iter()
                .map(|d| crate::render::findings::to_json(d, &loaded.sources, &mut locator))
                .collect();
            crate::render::print_json(&Report {
                ok,
                passed: report.passed(),
                failed: report.failed(),
                tests,
                diagnostics,
            });
        }
        TestFormat::Sarif => crate::render::print_json(&sarif(&found, &loaded.sources, &RepoPaths::for_project(dir))),
        TestFormat::Github => print!("{}", github(&found, &loaded.sources, &RepoPaths::for_project(dir))),
    }
    if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `policy test --format json`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "PolicyTestReport")]
pub struct Report {
    /// Every test passed and every policy loaded: the exit code is 0.
    ok: bool,
    passed: usize,
    failed: usize,
    tests: Vec<TestJson>,
    /// Why a policy did not load.
    diagnostics: Vec<crate::render::findings::DiagnosticJson>,
}

/// One `test_*` rule.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct TestJson {
    /// The rule's name.
    name: String,
    /// Its policy file, relative to the project folder.
    file: String,
    /// 1-based.
    line: usize,
    outcome: Outcome,
    /// Why it could not run (`outcome` is `error`).
    error: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Pass,
    Fail,
    /// The test could not run.
    Error,
}
