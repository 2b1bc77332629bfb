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
    markdown_of(&json(outcome, loaded))
}

/// The Markdown of the policies' part of a plan's JSON ([`json`]): what
/// `plan --format markdown` prints, and `show` of a saved plan, which has
/// only the JSON.
pub fn markdown_of(policy: &Value) -> String {
    let (overrides, findings) = parts(policy);
    if findings.is_empty() && overrides.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n### Policies\n\n");
    for rule in &overrides {
        out.push_str(&format!("- **overridden for this run:** `{rule}`\n"));
    }
    for finding in &findings {
        out.push_str(&format!(
            "- {} `{}` at `{}`: {}\n",
            finding.severity,
            finding.code,
            finding.at,
            finding.message.replace('\n', " ")
        ));
    }
    out
}

/// The same for a terminal (`show` of a saved plan: `plan` itself prints
/// the findings as diagnostics, with their source lines).
pub fn human_of(policy: &Value) -> String {
    let (overrides, findings) = parts(policy);
    if findings.is_empty() && overrides.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nPolicies:\n");
    for rule in &overrides {
        out.push_str(&format!("  overridden for this run: {rule}\n"));
    }
    for finding in &findings {
        out.push_str(&format!(
            "  {} {} at {}: {}\n",
            finding.severity,
            finding.code,
            finding.at,
            finding.message.replace('\n', " ")
        ));
    }
    out
}

/// One finding as the policy JSON holds it.
struct Shown<'a> {
    severity: &'a str,
    code: &'a str,
    /// `file:line:column`, or empty for a finding about no place.
    at: String,
    message: &'a str,
}

/// The overrides and findings of the policy JSON (missing parts: none).
fn parts(policy: &Value) -> (Vec<&str>, Vec<Shown<'_>>) {
    let overrides = policy["overrides"]
        .as_array()
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let findings = policy["findings"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|f| Shown {
                    severity: f["severity"].as_str().unwrap_or("error"),
                    code: f["code"].as_str().unwrap_or_default(),
                    at: match (f["file"].as_str(), f["line"].as_u64(), f["column"].as_u64()) {
                        (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
                        _ => String::new(),
                    },
                    message: f["message"].as_str().unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    (overrides, findings)
}
