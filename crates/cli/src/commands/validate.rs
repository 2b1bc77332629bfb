//! `monform validate`: load the project and report every problem. A project
//! with environments is checked in the one chosen, or else in every one,
//! and then across them (`monform_config::shared`: objects two
//! environments in one account would both claim).
//! `--format json` writes every diagnostic as an object on stdout.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use monform_config::source::{Sources, Span};
use monform_config::{Diagnostic, Loaded, Severity};
use serde_json::json;

use crate::render::Items;
use crate::render::Output;
use crate::render::findings::{Locator, to_json};
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
    let mut loaded = super::context::load_files(dir);
    let mut policy_problems = Vec::new();
    let environments: Vec<String> = match &loaded.project {
        Some(project) if super::context::environment().is_none() => {
            project.environment_names().into_iter().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    };
    let mut loads: Vec<Loaded> = environments
        .iter()
        .map(|name| super::context::load_files_for(dir, Some(name)))
        .collect();
    // The policies over the files: of the one load, or of each environment's
    // (merged below as the loader's diagnostics are).
    if loads.is_empty() {
        let (warnings, errors) = policy_findings(dir, &mut loaded, &mut policy_problems);
        loaded.warnings.extend(warnings);
        loaded.diagnostics.extend(errors);
    } else {
        for load in &mut loads {
            let (warnings, errors) = policy_findings(dir, load, &mut policy_problems);
            load.diagnostics.extend(warnings);
            load.diagnostics.extend(errors);
        }
    }
    let (errors, ok, resources) = if loads.is_empty() {
        let ok = format!(
            "{} in {}: OK",
            plural(loaded.desired.len(), "resource"),
            plural(loaded.resource_files, "file")
        );
        (std::mem::take(&mut loaded.diagnostics), ok, json!(loaded.desired.len()))
    } else {
        let counts: Vec<String> = environments
            .iter()
            .zip(&loads)
            .map(|(name, loaded)| format!("{name}: {}", plural(loaded.desired.len(), "resource")))
            .collect();
        let ok = format!(
            "{}: OK in every environment ({})",
            plural(loads[0].resource_files, "file"),
            counts.join(", ")
        );
        let resources: serde_json::Map<String, serde_json::Value> = environments
            .iter()
            .zip(&loads)
            .map(|(name, loaded)| (name.clone(), json!(loaded.desired.len())))
            .collect();
        // Across environments: objects two of them would claim in one account.
        let named: Vec<(&str, &Loaded)> = environments.iter().map(String::as_str).zip(&loads).collect();
        let (shared_warnings, shared_errors) = monform_config::shared::shared_objects(&named);
        loaded.warnings.extend(shared_warnings);
        let mut errors = merge(&environments, &mut loads);
        errors.extend(shared_errors);
        (errors, ok, json!(resources))
    };
    // Policy warnings of the environments are merged with their errors: apart again.
    let mut errors = errors;
    errors.extend(policy_problems);
    let (mut warnings, errors): (Vec<Diagnostic>, Vec<Diagnostic>) =
        errors.into_iter().partition(|d| d.severity != Severity::Error);
    let sources = loads.first().map_or(&loaded.sources, |l| &l.sources);
    let code = match args.format {
        Format::Sarif | Format::Github => {
            // The linter's warnings of the base load point into its own
            // sources; with environments, each environment's are merged.
            let mut all = if loads.is_empty() {
                loaded.warnings.clone()
            } else {
                Vec::new()
            };
            all.extend(warnings.iter().cloned());
            all.extend(errors.iter().cloned());
            let paths = RepoPaths::for_project(dir);
            match args.format {
                Format::Sarif => crate::render::print_json(&crate::render::sarif::sarif(&all, sources, &paths)),
                _ => print!("{}", crate::render::sarif::github(&all, sources, &paths)),
            }
            match errors.is_empty() {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            }
        }
        Format::Human => {
            output.diagnostics(&warnings, sources);
            warnings.clear();
            output.diagnostics(&loaded.warnings, &loaded.sources);
            report(&errors, sources, &ok, output)
        }
        Format::Json => {
            let count = |severity: Severity| {
                loaded
                    .warnings
                    .iter()
                    .chain(&warnings)
                    .chain(&errors)
                    .filter(|d| d.severity == severity)
                    .count()
            };
            let (mut base, mut merged) = (Locator::default(), Locator::default());
            // The environments' loads have their own sources.
            let own = &loaded.sources;
            let diagnostics = (loaded.warnings.iter().map(move |d| to_json(d, own, &mut base))).chain(
                warnings
                    .iter()
                    .chain(&errors)
                    .map(move |d| to_json(d, sources, &mut merged)),
            );
            crate::render::print_json(&JsonReport {
                ok: errors.is_empty(),
                resources,
                files: loads.first().map_or(loaded.resource_files, |l| l.resource_files),
                counts: json!({
                    "errors": errors.len(),
                    "warnings": count(Severity::Warning),
                    "notes": count(Severity::Note),
                }),
                diagnostics: Items::new(diagnostics),
            });
            match errors.is_empty() {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            }
        }
    };
    super::context::exit_without_freeing((loaded, loads));
    code
}

/// `--format json`: every diagnostic, written as it is made (100,000
/// findings never held as JSON values at once).
#[derive(serde::Serialize)]
struct JsonReport<D> {
    ok: bool,
    resources: serde_json::Value,
    files: usize,
    counts: serde_json::Value,
    diagnostics: D,
}

/// The policies' findings on one load's files, as (warnings, errors); a
/// policy that does not load or run is a problem (once, not per environment).
fn policy_findings(
    dir: &Path,
    loaded: &mut Loaded,
    problems: &mut Vec<Diagnostic>,
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let Some(project) = loaded.project.clone() else {
        return (Vec::new(), Vec::new());
    };
    let (policies, broken) = monform_policy::load(dir, &project, &mut loaded.sources);
    if problems.is_empty() {
        problems.extend(broken);
    }
    if policies.is_empty() || !loaded.is_ok() {
        return (Vec::new(), Vec::new());
    }
    let input = monform_policy::input::files(&loaded.desired, &project, &loaded.sources);
    let (findings, errors) = policies.evaluate(&input, &[]);
    // A quarter of a GiB at 100,000 checks: not kept while the findings are placed.
    drop(input);
    let mut found = monform_policy::diagnostics(&findings, &loaded.desired, &loaded.sources);
    found.extend(errors.iter().map(|e| e.to_diagnostic()));
    found.into_iter().partition(|d| d.severity != Severity::Error)
}

/// Every environment's diagnostics, once each: one found in every
/// environment as it is, one found in some named after them. Keyed, not
/// compared pairwise: a finding on each of 100,000 checks is 100,000 keys.
fn merge(environments: &[String], loads: &mut [Loaded]) -> Vec<Diagnostic> {
    type Key = (&'static str, String, Option<Span>, String);
    let mut merged: Vec<(Diagnostic, Vec<&str>)> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    for (name, loaded) in environments.iter().zip(loads.iter_mut()) {
        for diagnostic in std::mem::take(&mut loaded.diagnostics) {
            let key = (
                diagnostic.code,
                diagnostic.message.clone(),
                diagnostic.span,
                diagnostic.label.clone(),
            );
            // Same key but not equal (other help or related places): kept apart.
            match index.get(&key).filter(|&&i| merged[i].0 == diagnostic) {
                Some(&i) => merged[i].1.push(name),
                None => {
                    index.insert(key, merged.len());
                    merged.push((diagnostic, vec![name]));
                }
            }
        }
    }
    let mut diagnostics: Vec<Diagnostic> = merged
        .into_iter()
        .map(|(mut diagnostic, names)| {
            if names.len() < environments.len() {
                let which = if names.len() == 1 {
                    "environment"
                } else {
                    "environments"
                };
                diagnostic.message = format!("{} ({which} {})", diagnostic.message, names.join(", "));
            }
            diagnostic
        })
        .collect();
    diagnostics.sort_by_key(|d| d.span.map(|s| (s.file, s.start)));
    diagnostics
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

pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
