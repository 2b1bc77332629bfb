//! The source a rendered diagnostic shows: the lines around its span, not
//! the file. miette finds a span's line by reading the text from its
//! start, so a whole file per diagnostic made 130,000 policy findings in
//! files of a few hundred lines take 18 s to render; a window of lines
//! takes the same time in any file. A line of a minified or
//! machine-written file can be 100 KB long: rendered whole it floods the
//! terminal, and past column 65,535 miette's renderer panics (a format
//! width out of range). Lines longer than [`MAX_LINE`] are cut to a window
//! around the span, with line numbers and the reported column kept true.

use std::ops::Range;
use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use crate::source::{floor_char_boundary, newlines};

/// The longest line shown whole, in bytes.
pub const MAX_LINE: usize = 240;
/// How much of a long line is shown before the span.
const BEFORE: usize = 80;
/// The lines shown before and after a span's lines: what the renderer
/// asks for (`GraphicalReportHandler::with_context_lines`), and so what
/// an excerpt holds.
pub const CONTEXT_LINES: usize = 1;

/// A file's text as a diagnostic shows it: the span's lines and
/// [`CONTEXT_LINES`] on each side.
#[derive(Debug)]
pub struct Excerpt {
    name: String,
    language: &'static str,
    /// The shown lines are `text[shown]`; spans are relative to its start.
    text: Arc<str>,
    shown: Range<usize>,
    /// The (0-based) line of the file `shown` starts at.
    first_line: usize,
    /// Bytes cut from the start of the span's line, to add back to columns.
    cut: usize,
    /// The (0-based) line of the span.
    line: usize,
}

impl Excerpt {
    /// The source for a span of `text`, and the span inside it.
    pub fn new(name: String, language: &'static str, text: &Arc<str>, span: SourceSpan) -> (Excerpt, SourceSpan) {
        let start = floor_char_boundary(text, span.offset().min(text.len()));
        let end = floor_char_boundary(text, (start + span.len()).min(text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line = newlines(&text[..line_start]);
        // Whole lines: CONTEXT_LINES before the span's first, and after its last.
        let mut from = line_start;
        let mut first_line = line;
        while first_line + CONTEXT_LINES > line && from > 0 {
            from = text[..from - 1].rfind('\n').map_or(0, |i| i + 1);
            first_line -= 1;
        }
        let mut to = text[end..].find('\n').map_or(text.len(), |i| end + i);
        for _ in 0..CONTEXT_LINES {
            if to == text.len() {
                break;
            }
            to = text[to + 1..].find('\n').map_or(text.len(), |i| to + 1 + i);
        }
        // With the newline that ends the last line: an empty last line
        // would otherwise be no line at all.
        if to < text.len() {
            to += 1;
        }
        let window = &text[from..to];
        let near = line - first_line;
        let in_window = SourceSpan::new((start - from).into(), end - start);
        if window.split('\n').all(|l| l.len() <= MAX_LINE) {
            let excerpt = Excerpt {
                name,
                language,
                text: Arc::clone(text),
                shown: from..to,
                first_line,
                cut: 0,
                line,
            };
            return (excerpt, in_window);
        }
        let (start, line_start) = (start - from, line_start - from);
        let mut out = String::with_capacity(window.len().min(4 * MAX_LINE));
        let (mut cut, mut new_start) = (0, start);
        for (i, current) in window.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if current.len() <= MAX_LINE {
                if i == near {
                    new_start = out.len() + (start - line_start);
                }
                out.push_str(current);
                continue;
            }
            let from = if i == near {
                floor_char_boundary(current, (start - line_start).saturating_sub(BEFORE))
            } else {
                0
            };
            let to = floor_char_boundary(current, (from + MAX_LINE).min(current.len()));
            if from > 0 {
                out.push('…');
            }
            if i == near {
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
            shown: 0..out.len(),
            text: Arc::from(out),
            first_line,
            cut: cut.saturating_sub('…'.len_utf8()),
            line,
        };
        (excerpt, SourceSpan::new(new_start.into(), len))
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text[self.shown.clone()].read_span(span, before, after)?;
        let line = self.first_line + inner.line();
        let column = if line == self.line && self.cut > 0 {
            inner.column() + self.cut
        } else {
            inner.column()
        };
        let contents = MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            line,
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
            .with_context_lines(super::CONTEXT_LINES)
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

    /// What miette renders given the whole file.
    fn render_whole(text: &str, start: usize, len: usize) -> String {
        let diagnostic = miette::MietteDiagnostic::new("unknown field `frequncy`")
            .with_code("monform::unknown-field")
            .with_label(miette::LabeledSpan::new_primary_with_span(
                Some("not a field of URL checks".into()),
                (start, len),
            ));
        let report = miette::Report::new(diagnostic)
            .with_source_code(miette::NamedSource::new("big.yaml", text.to_owned()).with_language("yaml"));
        let mut out = String::new();
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(100)
            .with_context_lines(super::CONTEXT_LINES)
            .render_report(&mut out, report.as_ref())
            .expect("renders");
        out
    }

    #[test]
    fn a_window_of_lines_renders_as_the_whole_file() {
        let text: String = (0..40).map(|i| format!("  key{i}:\n    value: {i}\n")).collect();
        let mut spans = vec![(0, 2), (text.len() - 3, 2), (text.len() - 1, 1), (text.len(), 0)];
        for (at, _) in text.match_indices("key") {
            spans.push((at, 3));
            // Over the end of its line into the next.
            spans.push((at, 14));
        }
        spans.extend([(text.len() - 14, 3), (5, 1)]);
        for text in [
            text.clone(),
            text.trim_end().to_owned(),
            "one line".to_owned(),
            "a: 1\nb: 2\n".to_owned(),
            "a: 1\nb: 2\n\nc: 3\n".to_owned(),
        ] {
            for &(start, len) in &spans {
                if start + len > text.len() {
                    continue;
                }
                let (ours, whole) = (render(text.clone(), start, len), render_whole(&text, start, len));
                assert_eq!(ours, whole, "span {start}+{len}");
            }
        }
    }

    #[test]
    fn short_lines_render_as_they_are() {
        let text = "checks:\n  x:\n    frequncy: 5\n".to_owned();
        let start = text.find("frequncy").expect("there");
        let out = render(text, start, 8);
        assert!(out.contains("big.yaml:3:5") && out.contains("    frequncy: 5"), "{out}");
    }
}
