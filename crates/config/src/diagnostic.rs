//! Problems found while loading, with where they are. Rendered by the CLI
//! through miette: each names the file, line, column and field.

use miette::{LabeledSpan, SourceSpan};

use crate::source::{Sources, Span};
use crate::tree::{Node, NodeValue, Sensitive};

pub mod codes;
mod excerpt;
pub mod summary;
pub use excerpt::CONTEXT_LINES;
use excerpt::Excerpt;

/// A value of the files as a diagnostic may quote it: "`eu-west-9`", or,
/// when it holds text of a non-public `${env:}`, "the value of
/// `${env:NAME}`", never the text. The loader's one way of wording a
/// value (the model's validation words the resources' the same way:
/// `monform_model::sensitive::word`).
pub fn quote(node: &Node) -> String {
    let hidden = sensitive_within(node).map(Sensitive::hidden);
    monform_model::sensitive::word(&node.to_json(), hidden.as_ref())
}

/// The first sensitive part of `node`, itself or inside it.
fn sensitive_within(node: &Node) -> Option<&Sensitive> {
    if let Some(sensitive) = &node.sensitive {
        return Some(sensitive);
    }
    match &node.value {
        NodeValue::Seq(items) => items.iter().find_map(sensitive_within),
        NodeValue::Map(entries) => entries.iter().find_map(|e| sensitive_within(&e.value)),
        _ => None,
    }
}

/// One problem found while loading a project.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Stable identifier, e.g. `monform::unknown-field`.
    pub code: &'static str,
    pub message: String,
    pub span: Option<Span>,
    pub label: String,
    pub help: Option<String>,
    /// Other places involved, e.g. the first definition of a duplicate.
    pub related: Vec<Diagnostic>,
    /// Only an error makes a load fail.
    pub severity: Severity,
    /// A rule's finding (the linter's, a policy's) rather than a mistake in
    /// a file: many of one rule are summarised when printed.
    pub finding: bool,
}

/// How much a diagnostic matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Severity {
    #[default]
    Error,
    Warning,
    /// Something monform cannot check, said once: never a finding.
    Note,
}

impl Diagnostic {
    pub fn new(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            span: None,
            label: String::new(),
            help: None,
            related: Vec::new(),
            severity: Severity::Error,
            finding: false,
        }
    }

    /// Marks a rule's finding (see [`Diagnostic::finding`]).
    pub fn finding(mut self) -> Diagnostic {
        self.finding = true;
        self
    }

    pub fn warning(mut self) -> Diagnostic {
        self.severity = Severity::Warning;
        self
    }

    pub fn note(mut self) -> Diagnostic {
        self.severity = Severity::Note;
        self
    }

    pub fn at(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.span = Some(span);
        self.label = label.into();
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn related(mut self, other: Diagnostic) -> Diagnostic {
        self.related.push(other);
        self
    }

    /// `file:line:column` of the primary span, for plain-text output and tests.
    pub fn location(&self, sources: &Sources) -> Option<String> {
        let span = self.span?;
        let file = sources.get(span.file);
        let (line, column) = file.line_col(span.start);
        Some(format!("{}:{line}:{column}", file.name))
    }

    /// A miette diagnostic carrying the source text it points into.
    pub fn to_report(&self, sources: &Sources) -> Report {
        let shown = self.span.map(|span| {
            let file = sources.get(span.file);
            let language = match file.format {
                crate::source::Format::Yaml => "yaml",
                crate::source::Format::Toml => "toml",
                crate::source::Format::Rego => "rego",
            };
            Excerpt::new(
                file.name.clone(),
                language,
                &file.text,
                SourceSpan::new(span.start.into(), span.len),
            )
        });
        let (source, span) = shown.map_or((None, None), |(source, span)| (Some(source), Some(span)));
        Report {
            code: self.code,
            message: self.message.clone(),
            span,
            label: self.label.clone(),
            help: self.help.clone(),
            source,
            related: self.related.iter().map(|r| r.to_report(sources)).collect(),
            severity: self.severity,
        }
    }
}

/// A diagnostic ready for miette's renderers.
#[derive(Debug)]
pub struct Report {
    code: &'static str,
    message: String,
    span: Option<SourceSpan>,
    label: String,
    help: Option<String>,
    source: Option<Excerpt>,
    related: Vec<Report>,
    severity: Severity,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.span?;
        let label = (!self.label.is_empty()).then(|| self.label.clone());
        Some(Box::new(std::iter::once(LabeledSpan::new_primary_with_span(
            label, span,
        ))))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|r| r as &dyn miette::Diagnostic)))
    }
}
