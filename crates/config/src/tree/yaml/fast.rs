//! The events of the YAML that monitor files are written in, scanned from
//! bytes: block maps and lists, one-line plain and quoted scalars and flow
//! collections, literal `|` blocks, comments. yaml-rust2's scanner decodes
//! each character into a queue of its own and was a third of a cold load's
//! CPU; this takes about an eighth of its time. No Rust YAML parser that gives
//! positions is faster (serde-saphyr's and saphyr's scan as yaml-rust2 does).
//!
//! It never decides what YAML means or what is wrong with a file: anything
//! outside that subset (anchors, tags, folded blocks, blocks with an
//! indentation indicator, scalars over several lines, escapes other than
//! JSON's short ones, tabs, CR, documents, directives…), and any problem,
//! is [`Unsupported`], and yaml-rust2 parses the file instead. Its events
//! are yaml-rust2's, at the same places: `tests` compares the two trees,
//! spans included, on every YAML file of the repository and on generated
//! and randomly edited texts. (Where yaml-rust2's places are off by a
//! character, after a non-ASCII one in a literal block, this counts bytes
//! and is right.)

use yaml_rust2::parser::Event;
use yaml_rust2::scanner::TScalarStyle;

/// The text is outside the subset (or the tree builder refused an event).
#[derive(Debug)]
pub(super) struct Unsupported;

type Sink<'s> = dyn FnMut(Event, usize) -> Result<(), Unsupported> + 's;

/// Longest key taken: yaml-rust2 stops looking for a key's `:` after 1,024
/// characters.
const MAX_KEY: usize = 512;

/// Sends the events of `text` (a document whose root is a block map) to
/// `sink`, each with the byte where yaml-rust2 marks it.
pub(super) fn scan(text: &str, sink: &mut Sink<'_>) -> Result<(), Unsupported> {
    let bytes = text.as_bytes();
    // Line breaks and characters yaml-rust2 treats apart, and the last line
    // without its break, are left to it.
    if !bytes.ends_with(b"\n") || bytes.iter().any(|&b| matches!(b, b'\t' | b'\r')) {
        return Err(Unsupported);
    }
    if !text.is_ascii() && text.contains(['\u{85}', '\u{2028}', '\u{2029}', '\u{feff}']) {
        return Err(Unsupported);
    }
    let mut scanner = Scanner {
        text,
        bytes,
        pos: 0,
        sink,
    };
    scanner.emit(Event::StreamStart, 0)?;
    let Some(line) = scanner.peek_line() else {
        return Err(Unsupported);
    };
    if line.indent != 0 {
        return Err(Unsupported);
    }
    scanner.emit(Event::DocumentStart, line.content)?;
    scanner.mapping(0, line.content)?;
    if scanner.peek_line().is_some() {
        return Err(Unsupported);
    }
    scanner.emit(Event::DocumentEnd, bytes.len())?;
    scanner.emit(Event::StreamEnd, bytes.len())
}

struct Scanner<'t, 's, 'k> {
    /// The text, sliced for plain scalars (at ASCII bytes: no second
    /// UTF-8 check), and its bytes.
    text: &'t str,
    bytes: &'t [u8],
    /// The start of the line not yet read, or of a compact map's first key
    /// within a list item's line.
    pos: usize,
    sink: &'k mut Sink<'s>,
}

/// A line with content: its indentation and where its content starts.
#[derive(Clone, Copy)]
struct Line {
    indent: usize,
    content: usize,
}

impl Scanner<'_, '_, '_> {
    fn emit(&mut self, event: Event, at: usize) -> Result<(), Unsupported> {
        (self.sink)(event, at)
    }

    /// The next line with something other than a comment, from `pos`
    /// (at a line's start); blank and comment lines before it are skipped.
    fn peek_line(&mut self) -> Option<Line> {
        let bytes = self.bytes;
        let mut at = self.pos;
        while at < bytes.len() {
            let indent = skip_spaces(bytes, at) - at;
            let content = at + indent;
            match bytes.get(content) {
                Some(b'\n') => at = content + 1,
                Some(b'#') => at = line_end(bytes, content) + 1,
                Some(_) => return Some(Line { indent, content }),
                None => return None,
            }
        }
        None
    }

    /// A block map whose first key starts at `first`, in column `indent`;
    /// its other keys are on lines of their own at the same indentation.
    fn mapping(&mut self, indent: usize, first: usize) -> Result<(), Unsupported> {
        self.emit(Event::MappingStart(0, None), first)?;
        let mut key_at = first;
        let end = loop {
            let colon = self.key(key_at)?;
            let value = skip_spaces(self.bytes, colon + 1);
            match self.bytes[value] {
                b'\n' => {
                    self.pos = value + 1;
                    self.nested_value(indent)?;
                }
                b'#' if value > colon + 1 => {
                    self.pos = line_end(self.bytes, value) + 1;
                    self.nested_value(indent)?;
                }
                _ => self.inline_value(indent, value)?,
            }
            match self.peek_line() {
                Some(line) if line.indent == indent && !is_entry(self.bytes, line.content) => key_at = line.content,
                // A list at the map's indentation is only a key's value.
                Some(line) if line.indent >= indent => return Err(Unsupported),
                next => break next,
            }
        };
        self.emit(Event::MappingEnd, end.map_or(self.bytes.len(), |l| l.content))
    }

    /// A key that starts at `at` (plain, on one line, of the usual
    /// characters), sent; returns where its `:` is.
    fn key(&mut self, at: usize) -> Result<usize, Unsupported> {
        let colon = at + key_length(self.bytes, at).ok_or(Unsupported)?;
        let key = self.text.get(at..colon).ok_or(Unsupported)?.to_owned();
        self.emit(Event::Scalar(key, TScalarStyle::Plain, 0, None), at)?;
        Ok(colon)
    }

    /// The value of a key (of a map in column `indent`) on the lines after
    /// it: a map or a list more indented, a list at the same indentation,
    /// or nothing (null).
    fn nested_value(&mut self, indent: usize) -> Result<(), Unsupported> {
        let line = self.peek_line();
        match line {
            Some(line) if line.indent > indent && !is_entry(self.bytes, line.content) => {
                self.pos = line.content;
                self.mapping(line.indent, line.content)
            }
            Some(line) if line.indent >= indent && is_entry(self.bytes, line.content) => {
                self.list(line, line.indent == indent)
            }
            // yaml-rust2 marks the empty value at what follows it.
            _ => {
                let at = line.map_or(self.bytes.len(), |l| l.content);
                self.emit(Event::Scalar("~".to_owned(), TScalarStyle::Plain, 0, None), at)
            }
        }
    }

    /// A block list whose first `-` starts `line`; its other items are on
    /// lines of their own at the same indentation.
    fn list(&mut self, first: Line, indentless: bool) -> Result<(), Unsupported> {
        let indent = first.indent;
        // yaml-rust2 marks a list at its `-`, one at its key's indentation
        // at its first item.
        let mark = if indentless {
            skip_spaces(self.bytes, first.content + 1)
        } else {
            first.content
        };
        self.emit(Event::SequenceStart(0, None), mark)?;
        let mut line = first;
        let end = loop {
            let item = skip_spaces(self.bytes, line.content + 1);
            match self.bytes[item] {
                // Empty items, nested lists and comments after `-` are left
                // to yaml-rust2.
                b'\n' | b'-' | b'#' => return Err(Unsupported),
                _ if key_length(self.bytes, item).is_some() => {
                    self.pos = item;
                    self.mapping(item - line_start(self.bytes, item), item)?;
                }
                _ => self.inline_value(indent, item)?,
            }
            match self.peek_line() {
                Some(next) if next.indent == indent && is_entry(self.bytes, next.content) => line = next,
                Some(next) if next.indent > indent => return Err(Unsupported),
                next => break next,
            }
        };
        self.emit(Event::SequenceEnd, end.map_or(self.bytes.len(), |l| l.content))
    }

    /// A scalar that starts at `at` on its key's or item's line (in a
    /// collection in column `indent`), sent; `pos` moves past it.
    fn inline_value(&mut self, indent: usize, at: usize) -> Result<(), Unsupported> {
        let bytes = self.bytes;
        let end = line_end(bytes, at);
        let after = match bytes[at] {
            b'|' => return self.literal(indent, at),
            b'[' | b'{' => self.flow(at, end)?,
            _ => self.scalar(at, end, block_plain_end)?,
        };
        // Only a comment may follow, after a space.
        let rest = skip_spaces(bytes, after);
        if rest != end && !(bytes[rest] == b'#' && rest > after) {
            return Err(Unsupported);
        }
        self.pos = end + 1;
        Ok(())
    }

    /// A plain (ending where `plain` says) or quoted scalar at `at`, before
    /// `end`, sent; returns where it ends.
    fn scalar(
        &mut self,
        at: usize,
        end: usize,
        plain: fn(&[u8], usize, usize) -> Result<usize, Unsupported>,
    ) -> Result<usize, Unsupported> {
        let bytes = self.bytes;
        if at >= end {
            return Err(Unsupported);
        }
        let (value, style, after) = match bytes[at] {
            b'"' | b'\'' => quoted(bytes, at, end)?,
            // `-` starts a plain scalar when a word follows (`-1`, `-x`).
            b'-' if !bytes[at + 1].is_ascii_alphanumeric() && bytes[at + 1] != b'.' => return Err(Unsupported),
            first if first != b'-' && is_indicator(first) => return Err(Unsupported),
            _ => {
                let stop = plain(bytes, at, end)?;
                let value = self.text.get(at..stop).ok_or(Unsupported)?.to_owned();
                (value, TScalarStyle::Plain, stop)
            }
        };
        self.emit(Event::Scalar(value, style, 0, None), at)?;
        Ok(after)
    }

    /// A flow list or map that opens at `at` and closes on the same line
    /// (before `end`), sent; returns where it ends. Its items are scalars
    /// or flow collections, a map's keys plain words followed by `: `.
    fn flow(&mut self, at: usize, end: usize) -> Result<usize, Unsupported> {
        let bytes = self.bytes;
        let map = bytes[at] == b'{';
        let close = if map { b'}' } else { b']' };
        self.emit(
            if map {
                Event::MappingStart(0, None)
            } else {
                Event::SequenceStart(0, None)
            },
            at,
        )?;
        let mut i = skip_spaces(bytes, at + 1);
        while i < end && bytes[i] != close {
            if map {
                let colon = self.key(i)?;
                i = skip_spaces(bytes, colon + 1);
            }
            i = match bytes[i] {
                b'[' | b'{' => self.flow(i, end)?,
                _ => self.scalar(i, end, flow_plain_end)?,
            };
            i = skip_spaces(bytes, i);
            match bytes[i] {
                b',' => i = skip_spaces(bytes, i + 1),
                b if b == close => {}
                _ => return Err(Unsupported),
            }
        }
        if i >= end {
            return Err(Unsupported);
        }
        self.emit(if map { Event::MappingEnd } else { Event::SequenceEnd }, i)?;
        Ok(i + 1)
    }

    /// A literal block (`|`, `|-` or `|+` and nothing else on its line) at
    /// `at`, in a collection in column `indent`; marked, as yaml-rust2
    /// does, at its first line's content.
    fn literal(&mut self, indent: usize, at: usize) -> Result<(), Unsupported> {
        let bytes = self.bytes;
        let header_end = line_end(bytes, at);
        let chomp = match &bytes[at + 1..header_end] {
            b"" => Chomp::Clip,
            b"-" => Chomp::Strip,
            b"+" => Chomp::Keep,
            _ => return Err(Unsupported),
        };
        let first = header_end + 1;
        let content_indent = skip_spaces(bytes, first) - first;
        // Empty first lines, and blocks no more indented than their key,
        // are left to yaml-rust2.
        if content_indent <= indent || matches!(bytes.get(first + content_indent), Some(b'\n') | None) {
            return Err(Unsupported);
        }
        let mut value = Vec::new();
        let mut breaks = 0;
        let mut line = first;
        while line < bytes.len() {
            let spaces = skip_spaces(bytes, line) - line;
            let end = line_end(bytes, line);
            if line + spaces == end {
                // A blank line: spaces past the block's indentation would be content.
                if spaces > content_indent {
                    return Err(Unsupported);
                }
                breaks += 1;
                line = end + 1;
                continue;
            }
            if spaces < content_indent {
                // A comment ending the block is left to yaml-rust2.
                if bytes[line + spaces] == b'#' {
                    return Err(Unsupported);
                }
                break;
            }
            value.extend(std::iter::repeat_n(b'\n', breaks));
            breaks = 0;
            value.extend_from_slice(&bytes[line + content_indent..end]);
            value.push(b'\n');
            line = end + 1;
        }
        match chomp {
            Chomp::Clip => {}
            Chomp::Strip => {
                value.pop();
            }
            Chomp::Keep => value.extend(std::iter::repeat_n(b'\n', breaks)),
        }
        let value = String::from_utf8(value).map_err(|_| Unsupported)?;
        // Blank lines after the block belong to it: the next line is where
        // the next event is looked for.
        self.pos = line;
        self.emit(
            Event::Scalar(value, TScalarStyle::Literal, 0, None),
            first + content_indent,
        )
    }
}

enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// The index of the line break that ends the line holding `at`.
fn line_end(bytes: &[u8], at: usize) -> usize {
    // The text ends with a line break (`scan`).
    at + bytes[at..].iter().position(|&b| b == b'\n').unwrap_or(bytes.len() - at)
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

fn skip_spaces(bytes: &[u8], at: usize) -> usize {
    at + bytes[at..].iter().take_while(|&&b| b == b' ').count()
}

/// A list item's `-` at `at`: followed by a space or the line's end.
fn is_entry(bytes: &[u8], at: usize) -> bool {
    bytes[at] == b'-' && matches!(bytes.get(at + 1), Some(b' ' | b'\n'))
}

/// Characters that give a scalar's first character a meaning of its own.
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

/// The length of a key at `at` followed by `:` and a space or the line's
/// end: word characters, and single spaces between words.
fn key_length(bytes: &[u8], at: usize) -> Option<usize> {
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'$');
    if !bytes[at].is_ascii_alphanumeric() && !matches!(bytes[at], b'_' | b'$' | b'/') {
        return None;
    }
    let mut i = at;
    while i - at < MAX_KEY {
        match bytes[i] {
            b if word(b) => i += 1,
            b' ' if bytes.get(i + 1).is_some_and(|&b| word(b)) => i += 1,
            b':' if matches!(bytes.get(i + 1), Some(b' ' | b'\n')) => return Some(i - at),
            _ => return None,
        }
    }
    None
}

/// Where a plain scalar of a block, starting at `at`, ends before `end`
/// (the line's end): before a comment and trailing spaces. A `: ` or a
/// final `:` in it would make it a key: not in the subset.
fn block_plain_end(bytes: &[u8], at: usize, end: usize) -> Result<usize, Unsupported> {
    let mut stop = end;
    for i in at..end {
        match bytes[i] {
            b'#' if bytes[i - 1] == b' ' => {
                stop = i;
                break;
            }
            b':' if matches!(bytes[i + 1], b' ' | b'\n') => return Err(Unsupported),
            _ => {}
        }
    }
    while bytes[stop - 1] == b' ' {
        stop -= 1;
    }
    Ok(stop)
}

/// Where a plain scalar in a flow collection, starting at `at`, ends
/// before `end`: at a `,` or a bracket, before trailing spaces. A `:` that
/// could make it a key, a comment, or what yaml-rust2 refuses is not in the
/// subset.
fn flow_plain_end(bytes: &[u8], at: usize, end: usize) -> Result<usize, Unsupported> {
    let mut stop = end;
    for i in at..end {
        match bytes[i] {
            b',' | b'[' | b']' | b'{' | b'}' => {
                stop = i;
                break;
            }
            b'#' if bytes[i - 1] == b' ' => return Err(Unsupported),
            b':' if matches!(bytes[i + 1], b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}') => return Err(Unsupported),
            // yaml-rust2 refuses a word of `-` and a bracket or comma (`x -]`).
            b'-' if bytes[i - 1] == b' ' && matches!(bytes[i + 1], b',' | b'[' | b']' | b'{' | b'}') => {
                return Err(Unsupported);
            }
            _ => {}
        }
    }
    while bytes[stop - 1] == b' ' {
        stop -= 1;
    }
    Ok(stop)
}

/// A quoted scalar on one line: single-quoted (`''` for a quote) or
/// double-quoted with the escapes of JSON's short forms only; its text, and
/// where it ends.
fn quoted(bytes: &[u8], at: usize, end: usize) -> Result<(String, TScalarStyle, usize), Unsupported> {
    let quote = bytes[at];
    let style = match quote {
        b'"' => TScalarStyle::DoubleQuoted,
        _ => TScalarStyle::SingleQuoted,
    };
    let mut value = Vec::with_capacity(end - at);
    let mut i = at + 1;
    while i < end {
        let (byte, width) = match (quote, bytes[i], bytes[i + 1]) {
            (b'\'', b'\'', b'\'') => (b'\'', 2),
            (b'"', b'\\', escaped) => {
                let byte = match escaped {
                    b'"' | b'\\' | b'/' => escaped,
                    b'n' => b'\n',
                    b't' => b'\t',
                    _ => return Err(Unsupported),
                };
                (byte, 2)
            }
            (_, byte, _) if byte == quote => {
                let value = String::from_utf8(value).map_err(|_| Unsupported)?;
                return Ok((value, style, i + 1));
            }
            (_, byte, _) => (byte, 1),
        };
        value.push(byte);
        i += width;
    }
    Err(Unsupported)
}

#[cfg(test)]
mod tests;
