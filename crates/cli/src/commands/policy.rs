//! The project's Rego policies (issue 32): loading them for validate, plan
//! and apply (a broken policy stops the command, at its file:line), and
//! `monform policy test`.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use monform_config::{Diagnostic, Loaded, Project};
use monform_engine::ops::PolicyOutcome;
use monform_policy::{Policies, TestOutcome};
use serde_json::{Value, json};

use super::context::Stop;
use crate::render::Output;
use crate::render::sarif::{github, sarif};

/// The project's policies and the input of its files.
pub struct ProjectPolicies {
    pub policies: Policies,
    pub files: Value,
}

/// Loads the policies into `loaded`'s sources; a policy that does not
/// parse (or a `[policy] paths` entry outside the project) is reported and
/// stops the command: a rule the team wrote is never silently skipped.
pub fn load(dir: &Path, loaded: &mut Loaded, project: &Project, output: &Output) -> Result<ProjectPolicies, Stop> {
    let (policies, problems) = monform_policy::load(dir, project, &mut loaded.sources);
    if !problems.is_empty() {
        output.diagnostics(&problems, &loaded.sources);
        eprintln!(
            "error: {} in the policies; nothing was checked",
            super::validate::plural(problems.len(), "problem")
        );
        return Err(Stop::Reported);
    }
    let files = if policies.is_empty() {
        Value::Null
    } else {
        monform_policy::input::files(&loaded.desired, project, &loaded.sources)
    };
    Ok(ProjectPolicies { policies, files })
}

/// An outcome's findings and errors as diagnostics at their file:line.
pub fn diagnostics(outcome: &PolicyOutcome, loaded: &Loaded) -> Vec<Diagnostic> {
    let mut found = monform_policy::diagnostics(&outcome.findings, &loaded.desired, &loaded.sources);
    found.extend(outcome.errors.iter().map(|e| e.to_diagnostic()));
    found
}

/// The policies' part of a plan's JSON: findings, errors and overrides.
pub fn json(outcome: &PolicyOutcome, loaded: &Loaded) -> Value {
    let mut locator = crate::render::findings::Locator::default();
    let findings: Vec<Value> = diagnostics(outcome, loaded)
        .iter()
        .map(|d| crate::render::findings::to_json(d, &loaded.sources, &mut locator))
        .collect();
    json!({
        "overrides": outcome.overrides,
        "blocks": outcome.blocks(),
        "findings": findings,
    })
}

/// The policies' part of a plan in Markdown: overrides first (a reviewer
/// must see them), then each finding.
pub fn markdown(outcome: &PolicyOutcome, loaded: &Loaded) -> String {
    let found = diagnostics(outcome, loaded);
    if found.is_empty() && outcome.overrides.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n### Policies\n\n");
    for rule in &outcome.overrides {
        out.push_str(&format!("- **overridden for this run:** `{rule}`\n"));
    }
    for diagnostic in &found {
        let at = diagnostic.location(&loaded.sources).unwrap_or_default();
        let level = crate::render::findings::severity_name(diagnostic.severity);
        out.push_str(&format!(
            "- {level} `{}` at `{at}`: {}\n",
            diagnostic.code,
            diagnostic.message.replace('\n', " ")
        ));
    }
    out
}

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
    let (policies, problems) = monform_policy::load(dir, &project, &mut loaded.sources);
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
            println!(
                "{}: {} passed, {} failed",
                super::validate::plural(report.cases.len(), "test"),
                report.passed(),
                report.failed()
            );
            if report.cases.is_empty() {
                eprintln!(
                    "error: no test_* rules found in the policies\n\nhint: write them beside the policies, e.g. policies/<name>_test.rego"
                );
            }
        }
        TestFormat::Json => {
            let cases: Vec<Value> = report
                .cases
                .iter()
                .map(|case| {
                    let (file, line, _) = crate::render::findings::Locator::default().locate(&loaded.sources, case.at);
                    let (outcome, error) = match &case.outcome {
                        TestOutcome::Pass => ("pass", None),
                        TestOutcome::Fail => ("fail", None),
                        TestOutcome::Error(error) => ("error", Some(error)),
                    };
                    json!({"name": case.name, "file": file, "line": line, "outcome": outcome, "error": error})
                })
                .collect();
            let mut locator = crate::render::findings::Locator::default();
            let problems: Vec<Value> = problems
                .iter()
                .map(|d| crate::render::findings::to_json(d, &loaded.sources, &mut locator))
                .collect();
            let value = json!({"ok": ok, "passed": report.passed(), "failed": report.failed(),
                               "tests": cases, "diagnostics": problems});
            println!("{value:#}");
        }
        TestFormat::Sarif => println!("{:#}", sarif(&found, &loaded.sources)),
        TestFormat::Github => print!("{}", github(&found, &loaded.sources)),
    }
    if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
