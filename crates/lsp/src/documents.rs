//! The editor's open documents: their unsaved text, kept from `didOpen` and
//! `didChange` (whole or incremental), and positions in them both ways
//! (LSP counts columns in UTF-16 code units, the loader in bytes).

use std::collections::HashMap;

use lsp_types::{Position, Range, TextDocumentContentChangeEvent, Url};
use monform_config::source::Format;

/// A document's format: YAML unless the file is TOML.
pub(crate) fn format_of(uri: &Url) -> Format {
    match uri.path().ends_with(".toml") {
        true => Format::Toml,
        false => Format::Yaml,
    }
}

/// One open document.
#[derive(Debug, Clone)]
pub struct Document {
    pub text: String,
    pub version: i32,
}

/// Every open document by URI.
#[derive(Debug, Default)]
pub struct Documents {
    open: HashMap<Url, Document>,
}

impl Documents {
    pub fn open(&mut self, uri: Url, text: String, version: i32) {
        self.open.insert(uri, Document { text, version });
    }

    pub fn close(&mut self, uri: &Url) {
        self.open.remove(uri);
    }

    pub fn get(&self, uri: &Url) -> Option<&Document> {
        self.open.get(uri)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Url, &Document)> {
        self.open.iter()
    }

    /// Applies the changes of one `didChange` in order; a change without a
    /// range replaces the whole text. A range past the end is clamped (an
    /// editor and the server never disagree by a panic).
    pub fn change(&mut self, uri: &Url, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        let Some(document) = self.open.get_mut(uri) else {
            return;
        };
        for change in changes {
            match change.range {
                None => document.text = change.text,
                Some(range) => {
                    let index = LineIndex::new(&document.text);
                    let start = index.offset(&document.text, range.start);
                    let end = index.offset(&document.text, range.end).max(start);
                    document.text.replace_range(start..end, &change.text);
                }
            }
        }
        document.version = version;
    }
}

/// Where each line of a text starts, to turn byte offsets into LSP
/// positions (UTF-16 columns) and back.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The LSP position of byte `offset` of `text` (clamped to the text).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_boundary(text, offset.min(text.len()));
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = text[start..offset].encode_utf16().count();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of an LSP position (a column past the line's end is
    /// its end; a line past the text's end is the text's end).
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(text.len(), |next| next - 1);
        let mut units = 0;
        for (i, c) in text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    pub fn range(&self, text: &str, start: usize, len: usize) -> Range {
        Range::new(self.position(text, start), self.position(text, start + len))
    }
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_both_ways() {
        let text = "a: é𝄞x\nb: 2\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        // é is one unit, 𝄞 two.
        assert_eq!(index.position(text, x), Position::new(0, 6));
        assert_eq!(index.offset(text, Position::new(0, 6)), x);
        assert_eq!(index.position(text, text.find('b').unwrap()), Position::new(1, 0));
        assert_eq!(index.offset(text, Position::new(0, 99)), text.find('\n').unwrap());
        assert_eq!(index.offset(text, Position::new(9, 0)), text.len());
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let uri = Url::parse("file:///p/checks.yaml").unwrap();
        let mut documents = Documents::default();
        documents.open(uri.clone(), "checks:\n  a: {}\n".into(), 1);
        let edit = |line, from, to, text: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(line, from), Position::new(line, to))),
            range_length: None,
            text: text.into(),
        };
        documents.change(&uri, 2, vec![edit(1, 2, 3, "home"), edit(1, 9, 9, " name: x ")]);
        assert_eq!(documents.get(&uri).unwrap().text, "checks:\n  home: { name: x }\n");
        assert_eq!(documents.get(&uri).unwrap().version, 2);
    }
}
