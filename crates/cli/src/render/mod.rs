//! Terminal output: colour choice and diagnostics.

use std::io::{IsTerminal, Write};

use miette::{GraphicalReportHandler, GraphicalTheme};
use monform_config::{Diagnostic, source::Sources};

use crate::ColorChoice;

pub struct Output {
    choice: ColorChoice,
    color: bool,
    /// `--all-findings`: every diagnostic in full, none summarised.
    all_findings: bool,
}

impl Output {
    /// Colour when asked, or on a terminal unless NO_COLOR is set.
    pub fn new(choice: ColorChoice) -> Output {
        Output {
            choice,
            color: color_for(choice, std::io::stderr().is_terminal()),
            all_findings: false,
        }
    }

    /// Writes every diagnostic in full rather than summarising a rule's
    /// past the first few (`--all-findings`).
    pub fn with_all_findings(mut self, all: bool) -> Output {
        self.all_findings = all;
        self
    }

    /// Whether stdout gets colour.
    pub fn stdout_color(&self) -> bool {
        color_for(self.choice, std::io::stdout().is_terminal())
    }

    /// Writes diagnostics to stderr, each with the source line it points
    /// at; past a few of one rule, a summary of the rest (unless
    /// `--all-findings`), so a finding on every check is not a page each.
    pub fn diagnostics(&self, diagnostics: &[Diagnostic], sources: &Sources) {
        let theme = if self.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        let handler = GraphicalReportHandler::new_themed(theme)
            .with_width(100)
            .with_context_lines(monform_config::diagnostic::CONTEXT_LINES);
        // One write per item on a locked stderr: 100,000 findings with
        // --all-findings are not 100,000 lock round trips.
        let mut stderr = std::io::stderr().lock();
        for item in findings::summarise(diagnostics, self.all_findings) {
            let text = match item {
                findings::Item::Full(diagnostic) => {
                    let report = diagnostic.to_report(sources);
                    let mut text = String::new();
                    if handler.render_report(&mut text, &report).is_err() {
                        text = format!("error: {}\n", diagnostic.message);
                    }
                    text
                }
                findings::Item::Summary { first, next, total } => findings::summary_text(first, &next, total, sources),
            };
            let _ = writeln!(stderr, "{text}");
        }
    }
}

/// Writes `value` as indented JSON and a newline on stdout, buffered:
/// stdout flushes at each newline, and printing a large report through
/// `{:#}` was a write per line (130,000 findings: three million writes).
pub fn print_json(value: &(impl serde::Serialize + ?Sized)) {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = serde_json::to_writer_pretty(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.flush());
}

/// A list serialized as its items are made, one at a time, so a report of
/// 100,000 findings never holds them all as JSON values. It can be
/// serialized once.
pub struct Items<I>(std::cell::Cell<Option<I>>);

impl<I> Items<I> {
    pub fn new(items: I) -> Items<I> {
        Items(std::cell::Cell::new(Some(items)))
    }
}

impl<I: Iterator<Item = T>, T: serde::Serialize> serde::Serialize for Items<I> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.take() {
            Some(items) => serializer.collect_seq(items),
            None => Err(serde::ser::Error::custom("a streamed list serialized twice")),
        }
    }
}

fn color_for(choice: ColorChoice, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

pub mod apply_output;
pub mod budget;
pub mod effective;
pub mod export;
pub mod findings;
pub mod lists;
pub mod plan;
pub mod policy;
pub mod progress;
pub mod renames;
pub mod repo_paths;
pub mod run_detail;
pub mod sarif;
pub mod shown;
pub mod slo;
pub mod status;
pub mod status_html;
pub mod test;
