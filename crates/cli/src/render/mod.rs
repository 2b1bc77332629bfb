//! Terminal output: colour choice and diagnostics.

use std::io::IsTerminal;

use miette::{GraphicalReportHandler, GraphicalTheme};
use monform_config::{Diagnostic, source::Sources};

use crate::ColorChoice;

pub struct Output {
    choice: ColorChoice,
    color: bool,
}

impl Output {
    /// Colour when asked, or on a terminal unless NO_COLOR is set.
    pub fn new(choice: ColorChoice) -> Output {
        Output {
            choice,
            color: color_for(choice, std::io::stderr().is_terminal()),
        }
    }

    /// Whether stdout gets colour.
    pub fn stdout_color(&self) -> bool {
        color_for(self.choice, std::io::stdout().is_terminal())
    }

    /// Writes diagnostics to stderr, each with the source line it points at.
    pub fn diagnostics(&self, diagnostics: &[Diagnostic], sources: &Sources) {
        let theme = if self.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        let handler = GraphicalReportHandler::new_themed(theme)
            .with_width(100)
            .with_context_lines(1);
        for diagnostic in diagnostics {
            let report = diagnostic.to_report(sources);
            let mut text = String::new();
            if handler.render_report(&mut text, &report).is_err() {
                text = format!("error: {}\n", diagnostic.message);
            }
            eprintln!("{text}");
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

pub mod budget;
pub mod effective;
pub mod lists;
pub mod plan;
pub mod progress;
pub mod renames;
pub mod shown;
pub mod status;
pub mod status_html;
pub mod test;
