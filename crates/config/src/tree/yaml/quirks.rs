//! What yaml-rust2 gets wrong about a text, made up for before it parses:
//! characters YAML forbids that it lets through, and valid YAML it rejects
//! (patched in place, every offset kept).

/// Times `parse_yaml` may patch the text before giving up.
pub(super) const MAX_PATCHES: usize = 64;

/// yaml-rust2 rejects some valid YAML that serde-saphyr took: a tab after
/// `:` or `?`, and a `?` at the very end. Both patches keep every offset.
pub(super) fn patch(text: &str, message: &str, at: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let mut fixed = text.to_owned().into_bytes();
    match message {
        // Marked at the value, after the tabs.
        "':' must be followed by a valid YAML whitespace" => {
            let from = bytes[..at.min(bytes.len())].iter().rposition(|&b| b == b':')?;
            fixed[from..at]
                .iter_mut()
                .filter(|b| **b == b'\t')
                .for_each(|b| *b = b' ');
        }
        // Marked at the tab.
        "tabs disallowed in this context" if bytes.get(at) == Some(&b'\t') => {
            let tabs = bytes[at..].iter().take_while(|&&b| b == b'\t').count();
            fixed[at..at + tabs].fill(b' ');
        }
        "expected whitespace" if at >= text.len() => fixed.push(b'\n'),
        _ => return None,
    }
    String::from_utf8(fixed).ok()
}

/// The first character YAML does not allow in a file, and where it is.
pub(super) fn unprintable(text: &str) -> Option<(usize, char)> {
    let printable = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
            || c >= '\u{10000}'
    };
    // Most text is printable ASCII: look at bytes until something else.
    let from = text
        .bytes()
        .position(|b| !matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~'))?;
    text[from..]
        .char_indices()
        .find(|&(_, c)| !printable(c))
        .map(|(i, c)| (from + i, c))
}
