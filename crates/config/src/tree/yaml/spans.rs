//! Where things are in the text, in bytes: yaml-rust2 marks only where an
//! event starts, in characters, so the ends of scalars and aliases and the
//! byte offset of a character are worked out here.

use yaml_rust2::scanner::TScalarStyle;

use crate::source::floor_char_boundary;

/// Where a scalar that starts at byte `start` ends in `text`.
pub(super) fn scalar_end(text: &str, start: usize, value: &str, style: TScalarStyle) -> usize {
    let bytes = text.as_bytes();
    let end = match (style, bytes.get(start)) {
        (TScalarStyle::SingleQuoted, Some(b'\'')) => {
            let mut i = start + 1;
            loop {
                match bytes.get(i) {
                    Some(b'\'') if bytes.get(i + 1) == Some(&b'\'') => i += 2,
                    Some(b'\'') => break i + 1,
                    Some(_) => i += 1,
                    None => break i,
                }
            }
        }
        (TScalarStyle::DoubleQuoted, Some(b'"')) => {
            let mut i = start + 1;
            loop {
                match bytes.get(i) {
                    Some(b'\\') => i += 2,
                    Some(b'"') => break i + 1,
                    Some(_) => i += 1,
                    None => break i,
                }
            }
        }
        _ => plain_end(bytes, start, value),
    };
    floor_char_boundary(text, end.min(text.len()))
}

/// A plain or block scalar (marked at its first line of content) is its
/// value as written but for indentation and folded line breaks: match the
/// two, letting any run of white space stand for any other.
fn plain_end(bytes: &[u8], start: usize, value: &str) -> usize {
    let value = value.as_bytes();
    if bytes.get(start..start + value.len()) == Some(value) {
        return start + value.len();
    }
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let (mut i, mut j, mut end) = (start, 0, start);
    while let (Some(s), Some(v)) = (bytes.get(i), value.get(j)) {
        if space(v) {
            j += value[j..].iter().take_while(|b| space(b)).count();
            i += bytes[i..].iter().take_while(|b| space(b)).count();
        } else if s == v {
            i += 1;
            j += 1;
            end = i;
        } else {
            break;
        }
    }
    end
}

/// The length of an alias (`*name`) starting at byte `start`.
pub(super) fn alias_len(text: &str, start: usize) -> usize {
    let rest = text.as_bytes().get(start + 1..).unwrap_or_default();
    let name = rest
        .iter()
        .take_while(|b| !b.is_ascii_whitespace() && !matches!(b, b',' | b'[' | b']' | b'{' | b'}'))
        .count();
    floor_char_boundary(text, (start + 1 + name).min(text.len())) - start
}

/// Character index to byte offset: the identity for ASCII text, else a
/// checkpoint every `STRIDE` characters and a short walk from it.
pub(super) struct CharIndex {
    checkpoints: Option<Vec<usize>>,
}

const STRIDE: usize = 64;

impl CharIndex {
    pub(super) fn new(text: &str) -> CharIndex {
        let checkpoints = (!text.is_ascii()).then(|| text.char_indices().step_by(STRIDE).map(|(i, _)| i).collect());
        CharIndex { checkpoints }
    }

    pub(super) fn byte(&self, text: &str, index: usize) -> usize {
        let Some(checkpoints) = &self.checkpoints else {
            return index.min(text.len());
        };
        let Some(&from) = checkpoints.get(index / STRIDE) else {
            return text.len();
        };
        text[from..]
            .char_indices()
            .nth(index % STRIDE)
            .map_or(text.len(), |(i, _)| from + i)
    }
}
