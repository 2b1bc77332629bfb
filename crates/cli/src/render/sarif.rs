//! Findings where reviewers look (issue 32): SARIF 2.1.0 for GitHub code
//! scanning, and GitHub Actions workflow commands (`::error file=...`) for
//! inline pull-request annotations. Both from the same diagnostics the
//! human and JSON outputs write.

use monform_config::source::Sources;
use monform_config::{Diagnostic, Severity};
use serde::Serialize;
use serde_json::{Value, json};

use super::Items;
use super::findings::Locator;
use super::repo_paths::{RepoPaths, SRCROOT, uri_path};

const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A SARIF 2.1.0 log of one run of monform: a rule per diagnostic code, a
/// result per diagnostic at its file:line:column. Paths are relative to the
/// repository's root (`paths`), under the base `%SRCROOT%`, which the run
/// declares (`originalUriBaseIds`) as code scanning resolves it against
/// its checkout. Written as it is serialized, a result at a time: 130,000
/// results built as one JSON value first held 440 MB.
pub fn sarif<'a>(diagnostics: &'a [Diagnostic], sources: &'a Sources, paths: &'a RepoPaths) -> impl Serialize + 'a {
    let mut rules: Vec<&str> = Vec::new();
    for diagnostic in diagnostics {
        if !rules.contains(&diagnostic.code) {
            rules.push(diagnostic.code);
        }
    }
    let driver = json!({
        "name": "monform",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules
            .iter()
            .map(|code| json!({ "id": code, "shortDescription": { "text": rule_text(code) } }))
            .collect::<Vec<_>>(),
    });
    let mut locator = Locator::default();
    let results = diagnostics.iter().map(move |diagnostic| {
        let index = rules.iter().position(|r| *r == diagnostic.code).unwrap_or_default();
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
                    "artifactLocation": { "uri": uri_path(&paths.path(&file)), "uriBaseId": SRCROOT },
                    "region": { "startLine": line, "startColumn": column },
                },
            }]);
        }
        result
    });
    Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: json!({ "driver": driver }),
            original_uri_base_ids: json!({ SRCROOT: base(paths) }),
            results: Items::new(results),
        }],
    }
}

#[derive(Serialize)]
struct Log<R> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<R>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<R> {
    tool: Value,
    original_uri_base_ids: Value,
    results: R,
}

/// `%SRCROOT%`: the repository's root, as a `file:` URI when it is known
/// here; else described (code scanning maps it to its checkout either way).
fn base(paths: &RepoPaths) -> Value {
    let description = json!({ "text": "The root of the repository holding the project" });
    match paths.root_uri() {
        Some(uri) => json!({ "uri": uri, "description": description }),
        None => json!({ "description": description }),
    }
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

/// One workflow command per diagnostic: `::error file=F,line=L,col=C,title=CODE::MESSAGE`,
/// `F` from the repository's root (`paths`), where GitHub attaches it.
pub fn github(diagnostics: &[Diagnostic], sources: &Sources, paths: &RepoPaths) -> String {
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
            properties.push(format!("file={}", property(&paths.path(&file))));
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
            &RepoPaths::default(),
        );
        assert_eq!(found, "::warning title=monform.x.deny::no owner\n");
    }
}
