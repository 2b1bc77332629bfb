//! `monform validate`: load the project and report every problem. A project
//! with environments is checked in the one chosen, or else in every one.

use std::path::Path;
use std::process::ExitCode;

use monform_config::{Diagnostic, Loaded};

use crate::render::Output;

pub fn run(dir: &Path, output: &Output) -> ExitCode {
    let loaded = super::context::load_files(dir);
    output.diagnostics(&loaded.warnings, &loaded.sources);
    let environments: Vec<String> = match &loaded.project {
        Some(project) if super::context::environment().is_none() => {
            project.environment_names().into_iter().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    };
    if environments.is_empty() {
        let ok = format!(
            "{} in {}: OK",
            plural(loaded.desired.len(), "resource"),
            plural(loaded.resource_files, "file")
        );
        return report(&loaded, &loaded.diagnostics, &ok, output);
    }
    let env = |name: &str| std::env::var(name).ok();
    let loads: Vec<Loaded> = environments
        .iter()
        .map(|name| monform_config::load_environment(dir, &env, Some(name)))
        .collect();
    let diagnostics = merge(&environments, &loads);
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
    report(&loads[0], &diagnostics, &ok, output)
}

/// Every environment's diagnostics, once each: one found in every
/// environment as it is, one found in some named after them.
fn merge(environments: &[String], loads: &[Loaded]) -> Vec<Diagnostic> {
    let mut merged: Vec<(Diagnostic, Vec<&str>)> = Vec::new();
    for (name, loaded) in environments.iter().zip(loads) {
        for diagnostic in &loaded.diagnostics {
            match merged.iter_mut().find(|(d, _)| d == diagnostic) {
                Some((_, names)) => names.push(name),
                None => merged.push((diagnostic.clone(), vec![name])),
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
fn report(loaded: &Loaded, diagnostics: &[Diagnostic], ok: &str, output: &Output) -> ExitCode {
    if diagnostics.is_empty() {
        println!("{ok}");
        return ExitCode::SUCCESS;
    }
    output.diagnostics(diagnostics, &loaded.sources);
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
