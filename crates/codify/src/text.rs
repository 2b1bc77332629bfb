//! Where a value's text ends and where a new entry goes. The loader's tree
//! has exact spans for scalars and TOML values; a YAML collection's span
//! marks only its start, so its end is found from its last descendant (a
//! block collection) or its closing bracket (a flow one).

use monform_config::source::Format;
use monform_config::tree::{Node, NodeValue};

/// The byte range `[start, end)` the value of `node` takes in `text`.
pub fn extent(node: &Node, text: &str, format: Format) -> (usize, usize) {
    let start = node.span.start;
    let is_collection = matches!(node.value, NodeValue::Map(_) | NodeValue::Seq(_));
    // An alias's span is the alias (`*name`), whatever it stands for.
    if format == Format::Toml || !is_collection || is_alias(node, text) {
        return (start, start + node.span.len);
    }
    if text[start..].starts_with(['[', '{']) {
        return (start, closing_bracket(text, start).unwrap_or(start + node.span.len));
    }
    (start, last_end(node, text, format).max(start))
}

/// The end of the last value below `node` (a block collection's end).
fn last_end(node: &Node, text: &str, format: Format) -> usize {
    let children: Vec<&Node> = match &node.value {
        NodeValue::Map(entries) => entries.iter().map(|e| &e.value).collect(),
        NodeValue::Seq(items) => items.iter().collect(),
        _ => return extent(node, text, format).1,
    };
    children
        .into_iter()
        .map(|child| extent(child, text, format).1)
        .max()
        .unwrap_or(node.span.start + node.span.len)
}

/// The byte after the bracket closing the one at `open`, skipping quoted text.
fn closing_bracket(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => i = skip_quoted(bytes, i, b'"', true)?,
            b'\'' => i = skip_quoted(bytes, i, b'\'', false)?,
            b'#' if i > 0 && bytes[i - 1].is_ascii_whitespace() => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the one at `open`.
fn skip_quoted(bytes: &[u8], open: usize, quote: u8, escapes: bool) -> Option<usize> {
    let mut i = open + 1;
    while i < bytes.len() {
        if escapes && bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            // YAML's '' inside single quotes is one quote.
            if !escapes && bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The 0-based column of byte `offset`.
pub fn column(text: &str, offset: usize) -> usize {
    offset - text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// The start of the line after the one holding `offset`.
pub fn next_line(text: &str, offset: usize) -> usize {
    text[offset..].find('\n').map_or(text.len(), |i| offset + i + 1)
}

/// Whether `node` is a YAML alias (`*name`).
pub fn is_alias(node: &Node, text: &str) -> bool {
    text[node.span.start..].starts_with('*')
}

/// The anchor written before the value at `start` (`&name`), if any.
pub fn anchor_before(text: &str, start: usize) -> Option<&str> {
    let before = text[..start].trim_end();
    let token = before.rsplit([' ', '\n', '\t']).next()?;
    token.strip_prefix('&')
}

/// Whether `node` is a flow collection (`[..]`, `{..}`) or an inline TOML one.
pub fn is_flow(node: &Node, text: &str) -> bool {
    text[node.span.start..].starts_with(['[', '{'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_config::tree::{parse_toml, parse_yaml};

    #[test]
    fn yaml_collections_end_at_their_last_value_or_bracket() {
        let text = "a:\n  - x\n  - { b: \"}\" , c: [1] }   # }\n# after\nd: [1, [2], '] ''x']\n";
        let root = parse_yaml(0, text).unwrap();
        let a = &root.get("a").unwrap().value;
        let (start, end) = extent(a, text, Format::Yaml);
        assert_eq!(&text[start..end], "- x\n  - { b: \"}\" , c: [1] }");
        let d = &root.get("d").unwrap().value;
        let (start, end) = extent(d, text, Format::Yaml);
        assert_eq!(&text[start..end], "[1, [2], '] ''x']");
        let toml = "x = [1, 2] # c\n";
        let root = parse_toml(0, toml).unwrap();
        let (start, end) = extent(&root.get("x").unwrap().value, toml, Format::Toml);
        assert_eq!(&toml[start..end], "[1, 2]");
    }
}
