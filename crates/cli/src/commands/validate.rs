//! `monform validate`: load the project and report every problem.

use std::path::Path;
use std::process::ExitCode;

use crate::render::Output;

pub fn run(dir: &Path, output: &Output) -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    let loaded = monform_config::load(dir, &env);
    output.diagnostics(&loaded.warnings, &loaded.sources);
    if loaded.is_ok() {
        println!(
            "{} in {}: OK",
            plural(loaded.desired.len(), "resource"),
            plural(loaded.resource_files, "file")
        );
        return ExitCode::SUCCESS;
    }
    output.diagnostics(&loaded.diagnostics, &loaded.sources);
    eprintln!(
        "error: {} found; nothing was checked against the API",
        plural(loaded.diagnostics.len(), "problem")
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
