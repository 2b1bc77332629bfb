//! The source a rendered diagnostic shows. A line of a minified or
//! machine-written file can be 100 KB long: rendered whole it floods the
//! terminal, and past column 65,535 miette's renderer panics (a format
//! width out of range). Lines longer than [`MAX_LINE`] are cut to a window
//! around the span, with line numbers and the reported column kept true.

use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// The longest line shown whole, in bytes.
pub const MAX_LINE: usize = 240;
/// How much of a long line is shown before the span.
const BEFORE: usize = 80;

/// A file's text as a diagnostic shows it.
#[derive(Debug)]
pub struct Excerpt {
    name: String,
    language: &'static str,
    text: Arc<str>,
    /// Bytes cut from the start of the span's line, to add back to columns.
    cut: usize,
    /// The (0-based) line of the span.
    line: usize,
}

impl Excerpt {
    /// The source for a span of `text`, and the span inside it.
    pub fn new(name: String, language: &'static str, text: &Arc<str>, span: SourceSpan) -> (Excerpt, SourceSpan) {
        let start = span.offset().min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line = text[..line_start].matches('\n').count();
        let lines: Vec<&str> = text.split('\n').collect();
        let near = line.saturating_sub(1)..(line + 2).min(lines.len());
        if lines[near.clone()].iter().all(|l| l.len() <= MAX_LINE) {
            let excerpt = Excerpt {
                name,
                language,
                text: Arc::clone(text),
                cut: 0,
                line,
            };
            return (excerpt, span);
        }
        let mut out = String::with_capacity(text.len().min(64 * 1024));
        let (mut cut, mut new_start) = (0, start);
        for (i, current) in lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if !near.contains(&i) {
                // Only the lines shown need their text; the rest keep the count.
                continue;
            }
            if current.len() <= MAX_LINE {
                if i == line {
                    new_start = out.len() + (start - line_start);
                }
                out.push_str(current);
                continue;
            }
            let from = if i == line {
                floor(current, (start - line_start).saturating_sub(BEFORE))
            } else {
                0
            };
            let to = floor(current, (from + MAX_LINE).min(current.len()));
            if from > 0 {
                out.push('…');
            }
            if i == line {
                cut = from;
                new_start = out.len() + (start - line_start - from);
            }
            out.push_str(&current[from..to]);
            if to < current.len() {
                out.push('…');
            }
        }
        let shown_end = out[new_start.min(out.len())..]
            .find('\n')
            .map_or(out.len(), |i| new_start + i);
        let len = span.len().min(shown_end.saturating_sub(new_start));
        let excerpt = Excerpt {
            name,
            language,
            text: Arc::from(out),
            cut: cut.saturating_sub('…'.len_utf8()),
            line,
        };
        (excerpt, SourceSpan::new(new_start.into(), len))
    }
}

/// The nearest char boundary at or before `at`.
fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.as_ref().read_span(span, before, after)?;
        let column = if inner.line() == self.line && self.cut > 0 {
            inner.column() + self.cut
        } else {
            inner.column()
        };
        let contents = MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line(),
            column,
            inner.line_count(),
        )
        .with_language(self.language);
        Ok(Box::new(contents))
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;
    use crate::source::{Format, SourceFile, Sources, Span};
    use miette::{GraphicalReportHandler, GraphicalTheme};

    fn render(text: String, start: usize, len: usize) -> String {
        let mut sources = Sources::default();
        let file = sources.add(SourceFile {
            name: "big.yaml".into(),
            path: "big.yaml".into(),
            text: text.into(),
            format: Format::Yaml,
        });
        let report = Diagnostic::new("monform::unknown-field", "unknown field `frequncy`")
            .at(Span::new(file, start, len), "not a field of URL checks")
            .to_report(&sources);
        let mut out = String::new();
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(100)
            .with_context_lines(1)
            .render_report(&mut out, &report)
            .expect("renders");
        out
    }

    #[test]
    fn a_span_past_column_65535_renders_a_window_of_its_line() {
        let filler = "a: 1, ".repeat(12_000);
        let text = format!("checks: {{x: {{ {filler}frequncy: 5 }}}}\nnext: 1\n");
        let start = text.find("frequncy").expect("there");
        let out = render(text.clone(), start, "frequncy".len());
        assert!(out.len() < 4_000, "{} bytes", out.len());
        assert!(out.contains("frequncy: 5"), "{out}");
        assert!(out.contains(&format!("big.yaml:1:{}", start + 1)), "{out}");
    }

    #[test]
    fn short_lines_render_as_they_are() {
        let text = "checks:\n  x:\n    frequncy: 5\n".to_owned();
        let start = text.find("frequncy").expect("there");
        let out = render(text, start, 8);
        assert!(out.contains("big.yaml:3:5") && out.contains("    frequncy: 5"), "{out}");
    }
}
