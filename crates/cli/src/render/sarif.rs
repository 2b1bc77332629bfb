//! Findings where reviewers look (issue 32): SARIF 2.1.0 for GitHub code
//! scanning, and GitHub Actions workflow commands (`::error file=...`) for
//! inline pull-request annotations. Both from the same diagnostics the
//! human and JSON outputs write.

use monform_config::source::Sources;
use monform_config::{Diagnostic, Severity};
use serde_json::{Value, json};

use super::findings::Locator;

const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A SARIF 2.1.0 log of one run of monform: a rule per diagnostic code, a
/// result per diagnostic at its file:line:column (relative to the project
/// root, which code scanning resolves against the repository's checkout).
pub fn sarif(diagnostics: &[Diagnostic], sources: &Sources) -> Value {
    let mut locator = Locator::default();
    let mut rules: Vec<&str> = Vec::new();
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|diagnostic| {
            let index = match rules.iter().position(|r| *r == diagnostic.code) {
                Some(index) => index,
                None => {
                    rules.push(diagnostic.code);
                    rules.len() - 1
                }
            };
            let mut text = diagnostic.message.clone();
            if let Some(help) = &diagnostic.help {
                text = format!("{text} (help: {help})");
            }
            let mut result = json!({
                "ruleId": diagnostic.code,
                "ruleIndex": index,
                "level": level(diagnostic.severity),
                "message": { "text": text },
            });
            if let Some(span) = diagnostic.span {
                let (file, line, column) = locator.locate(sources, span);
                result["locations"] = json!([{
                    "physicalLocation": {
                        "artifactLocation": { "uri": file },
                        "region": { "startLine": line, "startColumn": column },
                    },
                }]);
            }
            result
        })
        .collect();
    let rules: Vec<Value> = rules
        .iter()
        .map(|code| json!({ "id": code, "shortDescription": { "text": rule_text(code) } }))
        .collect();
    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "monform",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            } },
            "results": results,
        }],
    })
}

fn rule_text(code: &str) -> String {
    if code.starts_with("monform::") {
        format!("monform check {code}")
    } else {
        format!("policy rule {code}")
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// One workflow command per diagnostic: `::error file=F,line=L,col=C,title=CODE::MESSAGE`.
pub fn github(diagnostics: &[Diagnostic], sources: &Sources) -> String {
    let mut locator = Locator::default();
    let mut out = String::new();
    for diagnostic in diagnostics {
        let command = match diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut properties = Vec::new();
        if let Some(span) = diagnostic.span {
            let (file, line, column) = locator.locate(sources, span);
            properties.push(format!("file={}", property(&file)));
            properties.push(format!("line={line}"));
            properties.push(format!("col={column}"));
        }
        properties.push(format!("title={}", property(diagnostic.code)));
        out.push_str(&format!(
            "::{command} {}::{}\n",
            properties.join(","),
            data(&diagnostic.message)
        ));
    }
    out
}

/// A workflow command's message, escaped as the runner reads it.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value, which also may not hold `:` or `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_what_the_runner_reads() {
        assert_eq!(data("50% of\nchecks"), "50%25 of%0Achecks");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
        let found = github(
            &[Diagnostic::new("monform.x.deny", "no owner").warning()],
            &Sources::default(),
        );
        assert_eq!(found, "::warning title=monform.x.deny::no owner\n");
    }
}
