//! The policies' findings on a plan (issue 32) as diagnostics, and their
//! part of the plan's JSON and Markdown (with the overrides of the run).

use monform_config::{Diagnostic, Loaded};
use monform_engine::ops::PolicyOutcome;
use serde_json::{Value, json};

/// An outcome's findings and errors as diagnostics at their file:line.
pub fn diagnostics(outcome: &PolicyOutcome, loaded: &Loaded) -> Vec<Diagnostic> {
    let mut found = monform_policy::diagnostics(&outcome.findings, &loaded.desired, &loaded.sources);
    found.extend(outcome.errors.iter().map(|e| e.to_diagnostic()));
    found
}

/// The policies' part of a plan's JSON: findings, errors and overrides.
pub fn json(outcome: &PolicyOutcome, loaded: &Loaded) -> Value {
    let mut locator = super::findings::Locator::default();
    let findings: Vec<Value> = diagnostics(outcome, loaded)
        .iter()
        .map(|d| super::findings::to_json(d, &loaded.sources, &mut locator))
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
        let level = super::findings::severity_name(diagnostic.severity);
        out.push_str(&format!(
            "- {level} `{}` at `{at}`: {}\n",
            diagnostic.code,
            diagnostic.message.replace('\n', " ")
        ));
    }
    out
}
