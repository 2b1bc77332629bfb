//! `monform validate`: load the project and report every problem. A project
//! with environments is checked in the one chosen, or else in every one,
//! and then across them (`monform_config::shared`: objects two
//! environments in one account would both claim).
//! `--format json` writes every diagnostic as an object on stdout.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use monform_config::source::Sources;
use monform_config::{Diagnostic, Severity};
use monform_engine::ops::{Findings, OpenRequest, PolicyLoad};

use crate::render::Items;
use crate::render::Output;
use crate::render::findings::{DiagnosticJson, Locator, plural, to_json};
use crate::render::repo_paths::RepoPaths;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    /// SARIF 2.1.0 on stdout, for GitHub code scanning
    Sarif,
    /// GitHub Actions workflow commands on stdout, for pull-request annotations
    Github,
}

#[derive(Args)]
pub struct ValidateArgs {
    /// Output format: human (diagnostics on stderr), json (every diagnostic as an object, and counts, on stdout),
    /// sarif (SARIF 2.1.0) or github (workflow commands)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Show every finding, not a summary past the first few of each rule
    #[arg(long)]
    pub all_findings: bool,
}

pub fn run(dir: &Path, args: &ValidateArgs, output: &Output) -> ExitCode {
    let env = super::context::open_env();
    let findings = monform_engine::ops::validate(&OpenRequest {
        environment: super::context::environment(),
        policies: PolicyLoad::Report,
        ..OpenRequest::new(dir, &env)
    });
    let code = render(dir, &findings, args.format, output);
    super::context::exit_without_freeing(findings);
    code
}

fn render(dir: &Path, findings: &Findings, format: Format, output: &Output) -> ExitCode {
    let loaded = &findings.loaded;
    let (ok, resources) = if findings.environments.is_empty() {
        let ok = format!(
            "{} in {}: OK",
            plural(loaded.desired.len(), "resource"),
            plural(loaded.resource_files, "file")
        );
        (ok, Resources::Count(loaded.desired.len()))
    } else {
        let counts: Vec<String> = findings
            .environments
            .iter()
            .map(|(name, loaded)| format!("{name}: {}", plural(loaded.desired.len(), "resource")))
            .collect();
        let ok = format!(
            "{}: OK in every environment ({})",
            plural(findings.files(), "file"),
            counts.join(", ")
        );
        let resources = findings
            .environments
            .iter()
            .map(|(name, loaded)| (name.clone(), loaded.desired.len()))
            .collect();
        (ok, Resources::PerEnvironment(resources))
    };
    let (warnings, errors) = (&findings.warnings, &findings.errors);
    let sources = findings.sources();
    match format {
        Format::Sarif | Format::Github => {
            // The linter's warnings of the base load point into its own
            // sources; with environments, each environment's are merged.
            let mut all = if findings.environments.is_empty() {
                loaded.warnings.clone()
            } else {
                Vec::new()
            };
            all.extend(warnings.iter().cloned());
            all.extend(errors.iter().cloned());
            let paths = RepoPaths::for_project(dir);
            match format {
                Format::Sarif => crate::render::print_json(&crate::render::sarif::sarif(&all, sources, &paths)),
                _ => print!("{}", crate::render::sarif::github(&all, sources, &paths)),
            }
            match errors.is_empty() {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            }
        }
        Format::Human => {
            output.diagnostics(warnings, sources);
            output.diagnostics(&loaded.warnings, &loaded.sources);
            report(errors, sources, &ok, output)
        }
        Format::Json => {
            let count = |severity: Severity| findings.all().filter(|(d, _)| d.severity == severity).count();
            let (mut base, mut merged) = (Locator::default(), Locator::default());
            // The base load's warnings point into its own sources.
            let own = &loaded.sources;
            let diagnostics = (loaded.warnings.iter().map(move |d| to_json(d, own, &mut base))).chain(
                warnings
                    .iter()
                    .chain(errors)
                    .map(move |d| to_json(d, sources, &mut merged)),
            );
            crate::render::print_json(&Report {
                ok: errors.is_empty(),
                resources,
                files: findings.files(),
                counts: Counts {
                    errors: errors.len(),
                    warnings: count(Severity::Warning),
                    notes: count(Severity::Note),
                },
                diagnostics: Items::new(diagnostics),
            });
            match errors.is_empty() {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            }
        }
    }
}

/// `--format json`: every diagnostic, written as it is made (100,000
/// findings never held as JSON values at once).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "ValidateReport")]
pub struct Report<D = Items<std::vec::IntoIter<DiagnosticJson>>> {
    /// No error: the exit code is 0.
    ok: bool,
    resources: Resources,
    /// Resource files read.
    files: usize,
    counts: Counts,
    /// Every diagnostic, the linter's and the policies' included.
    #[schemars(with = "Vec<DiagnosticJson>")]
    diagnostics: D,
}

/// How many resources the files declare.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
enum Resources {
    /// The project's (or the chosen environment's).
    Count(usize),
    /// Each environment's, when every one was validated.
    PerEnvironment(#[schemars(with = "std::collections::BTreeMap<String, usize>")] PerEnvironment),
}

/// Each environment's count, in monform.toml's order.
struct PerEnvironment(Vec<(String, usize)>);

impl FromIterator<(String, usize)> for PerEnvironment {
    fn from_iter<I: IntoIterator<Item = (String, usize)>>(items: I) -> Self {
        PerEnvironment(items.into_iter().collect())
    }
}

impl serde::Serialize for PerEnvironment {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, count)| (name, count)))
    }
}

/// Diagnostics by severity.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Counts {
    errors: usize,
    warnings: usize,
    notes: usize,
}

/// `ok` is what to print when there are no diagnostics.
fn report(diagnostics: &[Diagnostic], sources: &Sources, ok: &str, output: &Output) -> ExitCode {
    if diagnostics.is_empty() {
        println!("{ok}");
        return ExitCode::SUCCESS;
    }
    output.diagnostics(diagnostics, sources);
    eprintln!(
        "error: {} found; nothing was checked against the API",
        plural(diagnostics.len(), "problem")
    );
    ExitCode::FAILURE
}
