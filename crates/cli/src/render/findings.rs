//! Diagnostics in bulk: many of one rule summarised (issue 29), and every
//! one as data (`validate --format json`).

use std::collections::HashMap;

use monform_config::source::{FileId, Sources, Span};
use monform_config::{Diagnostic, Severity};

/// One thing to write: a diagnostic in full, or the summary of its rule.
pub type Item<'d> = monform_config::diagnostic::summary::Item<'d, Diagnostic>;

/// What to write for `diagnostics`, in their order: every one when `all`;
/// else many of one rule summarised (`summary::summarise`). Only rules'
/// findings (the linter's and the policies'), warnings and notes are:
/// each of the loader's errors is a distinct mistake to fix, shown in full.
pub fn summarise(diagnostics: &[Diagnostic], all: bool) -> Vec<Item<'_>> {
    monform_config::diagnostic::summary::diagnostics(diagnostics, |d| {
        !all && (d.severity != Severity::Error || d.finding)
    })
}

/// A rule's summary as plain text, for stderr.
pub fn summary_text(first: &Diagnostic, next: &[&Diagnostic], total: usize, sources: &Sources) -> String {
    let (mark, noun) = match first.severity {
        Severity::Error => ("×", "errors"),
        Severity::Warning => ("⚠", "warnings"),
        Severity::Note => ("☞", "notes"),
    };
    let mut text = format!(
        "  {mark} {}: {total} {noun} in all, the first shown above; the next at\n",
        first.code
    );
    for diagnostic in next {
        let at = diagnostic.location(sources).unwrap_or_else(|| "(no file)".into());
        text.push_str(&format!("    {at}  {}\n", diagnostic.message));
    }
    text.push_str(&format!("    and {} more\n", total - 1 - next.len()));
    text.push_str("  help: `--all-findings` shows every one; `monform validate --format json` lists them all\n");
    text
}

/// `1 problem`, `2 problems`.
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Line and column of spans, from each file's line starts computed once:
/// `SourceFile::line_col` scans from the file's start, which at 100,000
/// diagnostics would cost more than the load.
#[derive(Default)]
pub struct Locator {
    lines: HashMap<FileId, Vec<usize>>,
}

impl Locator {
    /// 1-based line and column (in characters) of `span`'s start.
    pub fn locate(&mut self, sources: &Sources, span: Span) -> (String, usize, usize) {
        let file = sources.get(span.file);
        let starts = self.lines.entry(span.file).or_insert_with(|| {
            std::iter::once(0)
                .chain(file.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        let offset = span.start.min(file.text.len());
        let line = starts.partition_point(|&start| start <= offset);
        let start = starts[line - 1];
        let column = file.text.get(start..offset).map_or(0, |before| before.chars().count()) + 1;
        (file.name.clone(), line, column)
    }
}

/// How much a diagnostic matters, in `--format json`.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SeverityJson {
    /// Makes the command fail.
    Error,
    Warning,
    /// Something monform cannot check, said once.
    Note,
}

/// One diagnostic as an object (`validate`, `policy test` and the plan's
/// policy findings in `--format json`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DiagnosticJson {
    /// Stable identifier, e.g. `monform::unknown-field` (`monform docs` lists them).
    pub code: String,
    pub severity: SeverityJson,
    pub message: String,
    /// The file, relative to the project folder; null when the diagnostic has no place.
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<usize>,
    /// 1-based, in characters.
    pub column: Option<usize>,
    /// What the place is, when said.
    pub label: Option<String>,
    /// The fix, when one is known.
    pub help: Option<String>,
    /// Other places involved, e.g. the first definition of a duplicate.
    pub related: Vec<DiagnosticJson>,
}

/// One diagnostic as an object: code, severity, message, where (file, line,
/// column, label), help and the other places involved.
pub fn to_json(diagnostic: &Diagnostic, sources: &Sources, locator: &mut Locator) -> DiagnosticJson {
    let (file, line, column) = match diagnostic.span {
        Some(span) => {
            let (file, line, column) = locator.locate(sources, span);
            (Some(file), Some(line), Some(column))
        }
        None => (None, None, None),
    };
    DiagnosticJson {
        code: diagnostic.code.to_owned(),
        severity: match diagnostic.severity {
            Severity::Error => SeverityJson::Error,
            Severity::Warning => SeverityJson::Warning,
            Severity::Note => SeverityJson::Note,
        },
        message: diagnostic.message.clone(),
        file,
        line,
        column,
        label: (!diagnostic.label.is_empty()).then(|| diagnostic.label.clone()),
        help: diagnostic.help.clone(),
        related: diagnostic
            .related
            .iter()
            .map(|r| to_json(r, sources, locator))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(n: usize, code: &'static str) -> Vec<Diagnostic> {
        (0..n)
            .map(|i| Diagnostic::new(code, format!("{code} {i}")).warning())
            .collect()
    }

    #[test]
    fn a_rule_past_the_limit_is_its_first_and_a_summary() {
        let mut diagnostics = found(5, "monform::many");
        diagnostics.extend(found(2, "monform::few"));
        let items = summarise(&diagnostics, false);
        assert_eq!(items.len(), 4, "{items:?}");
        assert_eq!(items[0], Item::Full(&diagnostics[0]));
        let Item::Summary { first, next, total } = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!((first.message.as_str(), next.len(), *total), ("monform::many 0", 2, 5));
        assert_eq!(items[2], Item::Full(&diagnostics[5]));
        assert_eq!(summarise(&diagnostics, true).len(), 7);
    }

    #[test]
    fn the_same_code_at_another_severity_is_another_rule() {
        let mut diagnostics = found(3, "monform::rule");
        diagnostics.push(Diagnostic::new("monform::rule", "an error"));
        assert!(
            summarise(&diagnostics, false)
                .iter()
                .all(|i| matches!(i, Item::Full(_)))
        );
    }

    #[test]
    fn lines_and_columns_match_the_files_own() {
        let mut sources = Sources::default();
        let text = "a: 1\nbé: 2\n\nc: 3";
        let id = sources.add(monform_config::source::SourceFile {
            name: "x.yaml".into(),
            path: "x.yaml".into(),
            text: text.into(),
            format: monform_config::source::Format::Yaml,
        });
        let mut locator = Locator::default();
        for offset in 0..=text.len() {
            if !text.is_char_boundary(offset) {
                continue;
            }
            let (_, line, column) = locator.locate(&sources, Span::new(id, offset, 0));
            assert_eq!((line, column), sources.get(id).line_col(offset), "at {offset}");
        }
    }
}
