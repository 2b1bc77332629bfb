//! The policies' findings on a plan (issue 32) as diagnostics, and their
//! part of the plan's JSON and Markdown (with the overrides of the run).

use monform_config::diagnostic::summary::{self, Item};
use monform_config::{Diagnostic, Loaded};
use monform_engine::ops::PolicyOutcome;
use serde_json::Value;

use super::repo_paths::RepoPaths;

/// An outcome's findings and errors as diagnostics at their file:line.
pub fn diagnostics(outcome: &PolicyOutcome, loaded: &Loaded) -> Vec<Diagnostic> {
    placing(outcome, loaded, usize::MAX)
}

/// [`diagnostics`] as [`super::Output::diagnostics`] writes them: unless
/// `--all-findings`, a rule's findings past the first few are only
/// counted, so only those few have their field placed (which parses
/// their file again: every file of the project at 100,000 checks with a
/// finding on each).
pub fn shown(outcome: &PolicyOutcome, loaded: &Loaded, output: &super::Output) -> Vec<Diagnostic> {
    let per_rule = match output.all_findings {
        true => usize::MAX,
        false => summary::SHOWN,
    };
    placing(outcome, loaded, per_rule)
}

/// The findings, the first `per_rule` of each rule placed at their field
/// ([`monform_policy::diagnostics_placing`]), and the errors.
fn placing(outcome: &PolicyOutcome, loaded: &Loaded, per_rule: usize) -> Vec<Diagnostic> {
    let mut found = monform_policy::diagnostics_placing(&outcome.findings, &loaded.desired, &loaded.sources, per_rule);
    found.extend(outcome.errors.iter().map(|e| e.to_diagnostic()));
    found
}

/// The policies' part of a plan's JSON (`policy`), kept in a saved plan.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct PolicyJson {
    /// The rules overridden for this run (`--policy-override`), as given.
    pub overrides: Vec<String>,
    /// Apply must not start (a `deny` not overridden, or a policy that failed).
    pub blocks: bool,
    /// Every finding and evaluation error, at its file:line.
    pub findings: Vec<super::findings::DiagnosticJson>,
}

/// The policies' part of a plan's JSON: findings, errors and overrides.
pub fn json(outcome: &PolicyOutcome, loaded: &Loaded) -> Value {
    let mut locator = super::findings::Locator::default();
    let policy = PolicyJson {
        overrides: outcome.overrides.clone(),
        blocks: outcome.blocks(),
        findings: diagnostics(outcome, loaded)
            .iter()
            .map(|d| super::findings::to_json(d, &loaded.sources, &mut locator))
            .collect(),
    };
    serde_json::to_value(policy).unwrap_or_default()
}

/// The policies' part of a plan in Markdown: overrides first (a reviewer
/// must see them), then each finding, its file from the repository's root.
pub fn markdown(outcome: &PolicyOutcome, loaded: &Loaded, paths: &RepoPaths) -> String {
    markdown_of(&json(outcome, loaded), paths)
}

/// The Markdown of the policies' part of a plan's JSON ([`json`]): what
/// `plan --format markdown` prints, and `show` of a saved plan, which has
/// only the JSON. The JSON's files are the project's; a pull request's
/// comment names them from the repository's root (`paths`).
pub fn markdown_of(policy: &Value, paths: &RepoPaths) -> String {
    list(policy, &MARKDOWN, paths)
}

/// The same for a terminal (`show` of a saved plan: `plan` itself prints
/// the findings as diagnostics, with their source lines, from the project).
pub fn human_of(policy: &Value) -> String {
    list(policy, &PLAIN, &RepoPaths::default())
}

/// How a findings list is written.
struct Style {
    heading: &'static str,
    item: &'static str,
    /// Around a rule, a place or a flag.
    quote: &'static str,
    overridden: &'static str,
    /// A place is a link when there is one (GitHub Actions).
    links: bool,
}

const MARKDOWN: Style = Style {
    heading: "\n### Policies\n\n",
    item: "- ",
    quote: "`",
    overridden: "**overridden for this run:**",
    links: true,
};

const PLAIN: Style = Style {
    heading: "\nPolicies:\n",
    item: "  ",
    quote: "",
    overridden: "overridden for this run:",
    links: false,
};

/// The overrides, then the findings: past [`summary::SHOWN`] of one rule
/// (code and severity), a line counting the rest, as the terminal's
/// diagnostics do. A pull request's comment holds a few dozen lines, not
/// 100,000.
fn list(policy: &Value, style: &Style, paths: &RepoPaths) -> String {
    let (overrides, findings) = parts(policy, paths);
    if findings.is_empty() && overrides.is_empty() {
        return String::new();
    }
    let Style {
        heading,
        item,
        quote: q,
        overridden,
        links,
    } = style;
    let mut out = heading.to_string();
    for rule in &overrides {
        out.push_str(&format!("{item}{overridden} {q}{rule}{q}\n"));
    }
    let line = |f: &Shown<'_>| {
        let message = f.message.replace('\n', " ");
        let at = match f.link.as_ref().filter(|_| *links) {
            Some(link) => format!("[{q}{}{q}]({link})", f.at),
            None => format!("{q}{}{q}", f.at),
        };
        format!("{item}{} {q}{}{q} at {at}: {message}\n", f.severity, f.code)
    };
    for shown in summary::summarise(&findings, |f| (f.code, f.severity), |_| true) {
        match shown {
            Item::Full(finding) => out.push_str(&line(finding)),
            Item::Summary { first, next, total } => {
                let more = total - 1 - next.len();
                next.into_iter().for_each(|f| out.push_str(&line(f)));
                out.push_str(&format!(
                    "{item}and {more} more of {q}{}{q} ({q}--format json{q} lists every one)\n",
                    first.code
                ));
            }
        }
    }
    out
}

/// One finding as the policy JSON holds it.
struct Shown<'a> {
    severity: &'a str,
    code: &'a str,
    /// `file:line:column`, or empty for a finding about no place.
    at: String,
    /// Where `at` is in the repository's web view, when known.
    link: Option<String>,
    message: &'a str,
}

/// The overrides and findings of the policy JSON (missing parts: none).
fn parts<'a>(policy: &'a Value, paths: &RepoPaths) -> (Vec<&'a str>, Vec<Shown<'a>>) {
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
                        (Some(file), Some(line), Some(column)) => format!("{}:{line}:{column}", paths.path(file)),
                        _ => String::new(),
                    },
                    link: match (f["file"].as_str(), f["line"].as_u64()) {
                        (Some(file), Some(line)) => paths.link(file, line),
                        _ => None,
                    },
                    message: f["message"].as_str().unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    (overrides, findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn past_three_of_a_rule_the_lists_count_the_rest() {
        let finding = |code: &str, line: u64| json!({"severity": "error", "code": code, "file": "m.yaml", "line": line, "column": 3, "message": format!("at {line}")});
        let mut findings: Vec<Value> = (1..=5).map(|line| finding("monform.owner_tag.deny", line)).collect();
        findings.push(finding("monform.other.deny", 9));
        let policy = json!({"overrides": [], "findings": findings});
        assert_eq!(
            markdown_of(
                &policy,
                &RepoPaths::find(std::path::Path::new("/nowhere"), Some("shop"))
            ),
            "\n### Policies\n\n\
             - error `monform.owner_tag.deny` at `shop/m.yaml:1:3`: at 1\n\
             - error `monform.owner_tag.deny` at `shop/m.yaml:2:3`: at 2\n\
             - error `monform.owner_tag.deny` at `shop/m.yaml:3:3`: at 3\n\
             - and 2 more of `monform.owner_tag.deny` (`--format json` lists every one)\n\
             - error `monform.other.deny` at `shop/m.yaml:9:3`: at 9\n"
        );
        assert!(human_of(&policy).contains("  and 2 more of monform.owner_tag.deny (--format json lists every one)\n"));
    }
}
