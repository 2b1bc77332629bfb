//! YAML to `Node`, built straight from yaml-rust2's event stream: no serde
//! layer and no intermediate tree (the serde-saphyr path was the loader's
//! biggest cost). yaml-rust2 marks only where an event starts, in
//! characters; byte offsets and scalar ends are worked out from the text.
//!
//! Resolution keeps what the loader did with serde-saphyr: the YAML 1.2 core
//! schema with strict booleans, non-finite floats rejected, keys taken as
//! the text of their resolved value, merge keys (`<<`), and aliases expanded
//! with every span pointing at the alias.

use std::collections::{HashMap, HashSet};

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use super::{Entry, Node, NodeValue, SyntaxError};
use crate::source::{FileId, Span, floor_char_boundary};

/// The deepest nesting of lists and maps a YAML file may have. Real files
/// need fewer than ten levels; the limit also bounds the recursion in
/// `respan`.
pub(crate) const MAX_YAML_DEPTH: usize = 32;

/// Values (keys included) one YAML file may hold: a file of 20,000 checks
/// fits. The limit stops alias-expansion bombs, not real projects.
pub(crate) const MAX_YAML_NODES: usize = 4_000_000;

/// Maps with more entries than this look duplicates up in a hash set.
const LINEAR_KEYS: usize = 16;

const CORE_TAG: &str = "tag:yaml.org,2002:";

/// Parses a YAML document. An empty document is an empty map.
pub fn parse_yaml(file: FileId, text: &str) -> Result<Node, SyntaxError> {
    if text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---"
    }) {
        return Ok(Node {
            span: Span::new(file, 0, 0),
            value: NodeValue::Map(Vec::new()),
        });
    }
    // yaml-rust2 takes a NUL for the end of the text, and lets other
    // characters YAML forbids through.
    if let Some((at, c)) = unprintable(text) {
        return Err(SyntaxError {
            message: format!("unexpected character {c:?}"),
            span: Some(Span::new(file, at, c.len_utf8())),
        });
    }
    // yaml-rust2 does not skip a byte-order mark.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let base = text.len() - body.len();
    let mut patched: Option<String> = None;
    for _ in 0..MAX_PATCHES {
        let source = patched.as_deref().unwrap_or(body);
        let mut builder = Builder {
            file,
            text: source,
            base,
            end: text.len(),
            chars: CharIndex::new(source),
            stack: Vec::new(),
            anchors: HashMap::new(),
            nodes: 0,
        };
        let error = match builder.run() {
            Ok(node) => return Ok(node),
            Err(error) => error,
        };
        let at = error.span.map_or(0, |s| s.start - base);
        match patch(source, &error.message, at) {
            Some(fixed) => patched = Some(fixed),
            None => return Err(error),
        }
    }
    Err(SyntaxError {
        message: "tabs are not allowed after `:` or `?` here".to_owned(),
        span: Some(Span::new(file, 0, 0)),
    })
}

/// Times `parse_yaml` may patch the text before giving up.
const MAX_PATCHES: usize = 64;

/// yaml-rust2 rejects some valid YAML that serde-saphyr took: a tab after
/// `:` or `?`, and a `?` at the very end. Both patches keep every offset.
fn patch(text: &str, message: &str, at: usize) -> Option<String> {
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
fn unprintable(text: &str) -> Option<(usize, char)> {
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

/// A value an alias may name, with what copying it costs.
struct Anchored {
    node: Node,
    nodes: usize,
    height: usize,
}

/// An open list or map.
struct Frame {
    span: Span,
    anchor: usize,
    nodes_before: usize,
    /// Levels of lists and maps below this one.
    child_height: usize,
    items: Items,
}

enum Items {
    Seq(Vec<Node>),
    Map {
        entries: Vec<Entry>,
        /// The key waiting for its value; `true` for a merge key (`<<`).
        key: Option<(String, Span, bool)>,
        merges: Vec<Node>,
        /// The keys of `entries`, once there are too many to scan.
        index: Option<HashSet<String>>,
    },
}

struct Builder<'t> {
    file: FileId,
    text: &'t str,
    /// Bytes before `text` in the file (a byte-order mark).
    base: usize,
    /// The file's length: `text` may have been patched longer.
    end: usize,
    chars: CharIndex,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    nodes: usize,
}

impl Builder<'_> {
    fn run(&mut self) -> Result<Node, SyntaxError> {
        let mut parser = Parser::new_from_str(self.text);
        let mut root = None;
        let mut documents = 0;
        loop {
            let (event, mark) = parser.next_token().map_err(|e| self.scan_error(&e))?;
            let at = self.offset(&mark);
            let placed = match event {
                Event::StreamEnd => break,
                Event::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err(self.error("the file holds more than one YAML document", at, 0));
                    }
                    None
                }
                Event::Scalar(value, style, anchor, tag) => {
                    let end = scalar_end(self.text, at, &value, style);
                    let span = self.span(at, end - at);
                    count(&mut self.nodes, 1, span)?;
                    let merge = style == TScalarStyle::Plain && tag.is_none() && value == "<<";
                    let value = resolve(value, style, tag.as_ref()).map_err(|m| SyntaxError {
                        message: m,
                        span: Some(span),
                    })?;
                    let node = Node { span, value };
                    self.anchor(anchor, &node, 1, 0);
                    self.place(node, 0, merge)?
                }
                Event::Alias(id) => {
                    let span = self.span(at, alias_len(self.text, at));
                    let Some(anchored) = self.anchors.get(&id) else {
                        return Err(self.error("alias references unknown anchor", at, span.len));
                    };
                    let height = anchored.height;
                    if self.stack.len() + height > MAX_YAML_DEPTH {
                        return Err(depth_error(span));
                    }
                    count(&mut self.nodes, anchored.nodes, span)?;
                    let mut node = anchored.node.clone();
                    respan(&mut node, span);
                    self.place(node, height, false)?
                }
                Event::SequenceStart(anchor, tag) => self.open(at, anchor, tag, Items::Seq(Vec::new()))?,
                Event::MappingStart(anchor, tag) => {
                    let items = Items::Map {
                        entries: Vec::new(),
                        key: None,
                        merges: Vec::new(),
                        index: None,
                    };
                    self.open(at, anchor, tag, items)?
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(frame) = self.stack.pop() else {
                        return Err(self.error("unbalanced YAML collection", at, 0));
                    };
                    let (anchor, height) = (frame.anchor, frame.child_height + 1);
                    let nodes = self.nodes - frame.nodes_before;
                    let node = close(frame);
                    self.anchor(anchor, &node, nodes, height);
                    self.place(node, height, false)?
                }
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => None,
            };
            root = placed.or(root);
        }
        Ok(root.unwrap_or(Node {
            span: self.span(0, 0),
            value: NodeValue::Map(Vec::new()),
        }))
    }

    fn open(&mut self, at: usize, anchor: usize, tag: Option<Tag>, items: Items) -> Result<Option<Node>, SyntaxError> {
        // A flow collection is spanned by its bracket, a block one by nothing.
        let len = usize::from(matches!(self.text.as_bytes().get(at), Some(b'[' | b'{')));
        let span = self.span(at, len);
        if let Some(tag) = tag.filter(|t| t.handle == CORE_TAG) {
            let expected = if matches!(items, Items::Seq(_)) { "seq" } else { "map" };
            if tag.suffix != expected {
                return Err(SyntaxError {
                    message: format!("unsupported tag `!!{}`", tag.suffix),
                    span: Some(span),
                });
            }
        }
        if self.stack.len() >= MAX_YAML_DEPTH {
            return Err(depth_error(span));
        }
        count(&mut self.nodes, 1, span)?;
        self.stack.push(Frame {
            span,
            anchor,
            nodes_before: self.nodes - 1,
            child_height: 0,
            items,
        });
        Ok(None)
    }

    /// Puts a finished value into the open collection, as an item, a key
    /// or a key's value; with none open it is the document, returned.
    fn place(&mut self, node: Node, height: usize, merge: bool) -> Result<Option<Node>, SyntaxError> {
        let Some(frame) = self.stack.last_mut() else {
            return Ok(Some(node));
        };
        frame.child_height = frame.child_height.max(height);
        let (entries, key, merges, index) = match &mut frame.items {
            Items::Seq(items) => {
                items.push(node);
                return Ok(None);
            }
            Items::Map {
                entries,
                key,
                merges,
                index,
            } => (entries, key, merges, index),
        };
        match key.take() {
            Some((_, _, true)) => {
                let maps = match &node.value {
                    NodeValue::Seq(items) => items.iter().all(|n| n.as_map().is_some()),
                    value => matches!(value, NodeValue::Map(_) | NodeValue::Null),
                };
                if !maps {
                    return Err(SyntaxError {
                        message: "a merge key's value must be a map or a list of maps".to_owned(),
                        span: Some(node.span),
                    });
                }
                merges.push(node);
            }
            Some((key, key_span, false)) => {
                let mut node = node;
                // An empty value is marked at what follows; point at the `:`.
                if node.span.len == 0 && node.value == NodeValue::Null {
                    let after = key_span.start + key_span.len - self.base;
                    let blanks = self.text.as_bytes()[after.min(self.text.len())..]
                        .iter()
                        .take_while(|b| matches!(b, b' ' | b'\t'))
                        .count();
                    node.span.start = (self.base + after + blanks).min(self.end);
                }
                entries.push(Entry {
                    key,
                    key_span,
                    value: node,
                });
            }
            None => {
                let text = match node.value {
                    NodeValue::Null => "null".to_owned(),
                    NodeValue::Bool(b) => b.to_string(),
                    NodeValue::Int(i) => i.to_string(),
                    NodeValue::Float(f) => f.to_string(),
                    NodeValue::Str(s) => s,
                    NodeValue::Seq(_) | NodeValue::Map(_) => {
                        return Err(SyntaxError {
                            message: format!("a map key must be a scalar, not {}", node.type_name()),
                            span: Some(node.span),
                        });
                    }
                };
                if !merge && contains(entries, index, &text) {
                    return Err(SyntaxError {
                        message: format!("duplicate key `{text}`"),
                        span: Some(node.span),
                    });
                }
                // A block map's start event marks its first `:`; the map
                // starts at its first key.
                if entries.is_empty() && frame.span.len == 0 {
                    frame.span.start = node.span.start;
                }
                *key = Some((text, node.span, merge));
            }
        }
        Ok(None)
    }

    /// yaml-rust2's error, but an unclosed bracket is reported where it
    /// opens rather than at the end of the file.
    fn scan_error(&self, error: &ScanError) -> SyntaxError {
        let at = self.offset(error.marker());
        let unclosed = self.text[at.min(self.text.len())..].trim().is_empty();
        let open = self.stack.iter().rev().find(|f| f.span.len == 1);
        match open {
            Some(frame) if unclosed => {
                let bracket = self.text[frame.span.start - self.base..].chars().next().unwrap_or('[');
                SyntaxError {
                    message: format!("unclosed bracket `{bracket}`"),
                    span: Some(frame.span),
                }
            }
            _ => self.error(error.info().trim_end_matches('.'), at, 0),
        }
    }

    fn anchor(&mut self, anchor: usize, node: &Node, nodes: usize, height: usize) {
        if anchor > 0 {
            let node = node.clone();
            self.anchors.insert(anchor, Anchored { node, nodes, height });
        }
    }

    fn offset(&self, mark: &Marker) -> usize {
        self.chars.byte(self.text, mark.index())
    }

    fn span(&self, start: usize, len: usize) -> Span {
        let start = (self.base + start).min(self.end);
        Span::new(self.file, start, len.min(self.end - start))
    }

    fn error(&self, message: &str, at: usize, len: usize) -> SyntaxError {
        SyntaxError {
            message: message.to_owned(),
            span: Some(self.span(at, len)),
        }
    }
}

/// Adds `nodes` to the file's `total`, within `MAX_YAML_NODES`.
fn count(total: &mut usize, nodes: usize, span: Span) -> Result<(), SyntaxError> {
    *total = total.saturating_add(nodes);
    if *total > MAX_YAML_NODES {
        return Err(SyntaxError {
            message: format!("the file has more than {MAX_YAML_NODES} values; split it into several files"),
            span: Some(span),
        });
    }
    Ok(())
}

fn depth_error(span: Span) -> SyntaxError {
    SyntaxError {
        message: format!("lists and maps are nested more than {MAX_YAML_DEPTH} levels deep"),
        span: Some(span),
    }
}

/// Whether `entries` has `key`, keeping `index` up to date for long maps.
fn contains(entries: &[Entry], index: &mut Option<HashSet<String>>, key: &str) -> bool {
    if entries.len() < LINEAR_KEYS {
        return entries.iter().any(|e| e.key == key);
    }
    let index = index.get_or_insert_with(HashSet::new);
    // Entries added since the last look (at most the one just finished).
    for entry in &entries[index.len().min(entries.len())..] {
        index.insert(entry.key.clone());
    }
    index.contains(key)
}

/// The finished collection; merged entries come after the map's own, with
/// the span of the merge value (as serde-saphyr gave them).
fn close(frame: Frame) -> Node {
    let value = match frame.items {
        Items::Seq(items) => NodeValue::Seq(items),
        Items::Map {
            mut entries,
            merges,
            mut index,
            ..
        } => {
            for merge in merges {
                let span = merge.span;
                let maps = match merge.value {
                    NodeValue::Seq(items) => items,
                    value => vec![Node { span, value }],
                };
                for map in maps {
                    let NodeValue::Map(merged) = map.value else { continue };
                    for mut entry in merged {
                        if !contains(&entries, &mut index, &entry.key) {
                            entry.key_span = span;
                            respan(&mut entry.value, span);
                            entries.push(entry);
                        }
                    }
                }
            }
            NodeValue::Map(entries)
        }
    };
    Node {
        span: frame.span,
        value,
    }
}

/// Points `node` and everything in it at `span` (an alias or a merge).
/// Recursion is bounded by `MAX_YAML_DEPTH`.
fn respan(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        NodeValue::Seq(items) => items.iter_mut().for_each(|n| respan(n, span)),
        NodeValue::Map(entries) => entries.iter_mut().for_each(|e| {
            e.key_span = span;
            respan(&mut e.value, span);
        }),
        _ => {}
    }
}

// ---- scalars ----

/// The value of a scalar: the core schema for plain ones, strings for quoted
/// and block ones, and what a core tag (`!!int`…) asks for. Other tags are
/// ignored, as serde-saphyr did.
fn resolve(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Result<NodeValue, String> {
    let tag = tag.filter(|t| t.handle == CORE_TAG).map(|t| t.suffix.as_str());
    match tag {
        None if style == TScalarStyle::Plain => plain(text),
        None | Some("str") => Ok(NodeValue::Str(text)),
        Some("null") => Ok(NodeValue::Null),
        Some("bool") => match boolean(&text) {
            Some(b) => Ok(NodeValue::Bool(b)),
            None => Err(format!("`{text}` is not a boolean (true or false)")),
        },
        Some("int") => integer(&text).ok_or_else(|| format!("`{text}` is not an integer")),
        Some("float") => match integer(&text).or_else(|| float(&text)) {
            Some(NodeValue::Int(i)) => Ok(NodeValue::Float(i as f64)),
            Some(NodeValue::Float(f)) if !f.is_finite() => Err(non_finite(&text)),
            Some(value) => Ok(value),
            None => Err(format!("`{text}` is not a number")),
        },
        Some(kind @ ("map" | "seq")) => Err(format!("unsupported tag `!!{kind}`")),
        Some(_) if style == TScalarStyle::Plain => plain(text),
        Some(_) => Ok(NodeValue::Str(text)),
    }
}

fn plain(text: String) -> Result<NodeValue, String> {
    // Most scalars are words: skip the number and keyword checks for them.
    let Some(&first) = text.as_bytes().first() else {
        return Ok(NodeValue::Null);
    };
    if first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.') {
        if let Some(value) = integer(&text).or_else(|| float(&text)) {
            return match value {
                NodeValue::Float(f) if !f.is_finite() => Err(non_finite(&text)),
                value => Ok(value),
            };
        }
    } else if matches!(first, b'~' | b'n' | b'N') && matches!(text.as_str(), "~" | "null" | "Null" | "NULL") {
        return Ok(NodeValue::Null);
    } else if let Some(b) = boolean(&text) {
        return Ok(NodeValue::Bool(b));
    }
    Ok(NodeValue::Str(text))
}

fn non_finite(text: &str) -> String {
    format!("`{text}` is not a finite number")
}

/// YAML 1.2 booleans only: `yes`, `no`, `on`, `off` stay strings.
fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Decimal (with `_` separators), `0x`, `0o` or `0b`, signed; past `i64`,
/// or with a leading zero, a float.
fn integer(text: &str) -> Option<NodeValue> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let radix = match unsigned.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => 10,
    };
    let magnitude = if radix == 10 {
        let bytes = unsigned.as_bytes();
        let valid = bytes.first().is_some_and(u8::is_ascii_digit)
            && bytes.last().is_some_and(u8::is_ascii_digit)
            && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'_')
            && !unsigned.contains("__");
        if !valid {
            return None;
        }
        let digits = unsigned.replace('_', "");
        if digits.len() > 1 && digits.starts_with('0') {
            return float(&digits).map(|v| negate(v, negative));
        }
        match digits.parse::<u64>() {
            Ok(m) => m,
            Err(_) => return float(&digits).map(|v| negate(v, negative)),
        }
    } else {
        let digits = &unsigned[2..];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(digits, radix).ok()?
    };
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    Some(value.map_or_else(
        || {
            NodeValue::Float(if negative {
                -(magnitude as f64)
            } else {
                magnitude as f64
            })
        },
        NodeValue::Int,
    ))
}

fn negate(value: NodeValue, negative: bool) -> NodeValue {
    match value {
        NodeValue::Float(f) if negative => NodeValue::Float(-f),
        value => value,
    }
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `.inf`, `.nan`.
fn float(text: &str) -> Option<NodeValue> {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        let negative = text.starts_with('-');
        return Some(NodeValue::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }));
    }
    if matches!(unsigned, ".nan" | ".NaN" | ".NAN") {
        return Some(NodeValue::Float(f64::NAN));
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let valid = digits(whole)
        && digits(fraction)
        && (!whole.is_empty() || !fraction.is_empty())
        && exponent.is_none_or(|e| {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && digits(e)
        });
    valid.then(|| text.parse().ok().map(NodeValue::Float))?
}

/// Where a scalar that starts at byte `start` ends in `text`.
fn scalar_end(text: &str, start: usize, value: &str, style: TScalarStyle) -> usize {
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
fn alias_len(text: &str, start: usize) -> usize {
    let rest = text.as_bytes().get(start + 1..).unwrap_or_default();
    let name = rest
        .iter()
        .take_while(|b| !b.is_ascii_whitespace() && !matches!(b, b',' | b'[' | b']' | b'{' | b'}'))
        .count();
    floor_char_boundary(text, (start + 1 + name).min(text.len())) - start
}

/// Character index to byte offset: the identity for ASCII text, else a
/// checkpoint every `STRIDE` characters and a short walk from it.
struct CharIndex {
    checkpoints: Option<Vec<usize>>,
}

const STRIDE: usize = 64;

impl CharIndex {
    fn new(text: &str) -> CharIndex {
        let checkpoints = (!text.is_ascii()).then(|| text.char_indices().step_by(STRIDE).map(|(i, _)| i).collect());
        CharIndex { checkpoints }
    }

    fn byte(&self, text: &str, index: usize) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json(text: &str) -> serde_json::Value {
        parse_yaml(0, text).unwrap().to_json()
    }

    fn error(text: &str) -> SyntaxError {
        parse_yaml(0, text).unwrap_err()
    }

    fn spanned(text: &str, span: Span) -> &str {
        &text[span.start..span.start + span.len]
    }

    #[test]
    fn core_schema_scalars() {
        let text = "a: true\nb: FALSE\nc: yes\nd: off\ne: n\nf: ~\ng: Null\nh:\ni: 0x1F\nj: -0o17\nk: +12\n\
                    l: 1_000\nm: 1.5e3\nn: .5\no: 9223372036854775808\np: 012\nq: 0x_1\nr: nULL\n";
        assert_eq!(
            json(text),
            json!({"a": true, "b": false, "c": "yes", "d": "off", "e": "n", "f": null, "g": null, "h": null,
                   "i": 31, "j": -15, "k": 12, "l": 1000, "m": 1500.0, "n": 0.5, "o": 9223372036854775808.0,
                   "p": 12.0, "q": "0x_1", "r": "nULL"})
        );
        for text in ["a: .inf", "a: -.Inf", "a: .nan", "a: 1e999"] {
            assert!(error(text).message.contains("not a finite number"), "{text}");
        }
    }

    #[test]
    fn quoted_and_block_scalars_are_strings() {
        let text = "a: \"true\"\nb: '5'\nc: |\n  x: 1\n  y\nd: >-\n  folded\n  line\ne: \"it\\\"s\"\nf: 'it''s'\n";
        assert_eq!(
            json(text),
            json!({"a": "true", "b": "5", "c": "x: 1\ny\n", "d": "folded line", "e": "it\"s", "f": "it's"})
        );
        let root = parse_yaml(0, text).unwrap();
        let spans: Vec<&str> = root
            .as_map()
            .unwrap()
            .iter()
            .map(|e| spanned(text, e.value.span))
            .collect();
        assert_eq!(
            spans,
            [
                "\"true\"",
                "'5'",
                "x: 1\n  y",
                "folded\n  line",
                "\"it\\\"s\"",
                "'it''s'"
            ]
        );
    }

    #[test]
    fn tags() {
        let text =
            "a: !!str 5\nb: !!int \"5\"\nc: !!float 3\nd: !!bool \"true\"\ne: !!null x\nf: !custom 1\ng: !!map {}\n";
        assert_eq!(
            json(text),
            json!({"a": "5", "b": 5, "c": 3.0, "d": true, "e": null, "f": 1, "g": {}})
        );
        assert!(error("a: !!int abc").message.contains("not an integer"));
        assert!(error("a: !!bool yes").message.contains("not a boolean"));
        assert!(error("a: !!str [1]").message.contains("unsupported tag `!!str`"));
    }

    #[test]
    fn keys_are_the_text_of_their_value() {
        assert_eq!(
            json("1.0: a\n0x1F: b\nTrue: c\n~: d\n\"x y\": e\n"),
            json!({"1": "a", "31": "b", "true": "c", "null": "d", "x y": "e"})
        );
        assert!(error("[a]: 1").message.contains("must be a scalar"));
        let dup = parse_yaml(0, "a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(dup.message, "duplicate key `a`");
        assert_eq!(dup.span, Some(Span::new(0, 10, 1)));
        // Long maps look keys up in a set.
        let long: String = (0..40).map(|i| format!("k{i}: {i}\n")).collect();
        assert!(parse_yaml(0, &long).is_ok());
        assert_eq!(error(&format!("{long}k7: x\n")).message, "duplicate key `k7`");
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let text = "base: &b {x: 1, y: 2}\ncopy: *b\nmerged:\n  <<: *b\n  y: 3\nlist: [&s one, *s]\n";
        assert_eq!(
            json(text),
            json!({"base": {"x": 1, "y": 2}, "copy": {"x": 1, "y": 2}, "merged": {"y": 3, "x": 1},
                   "list": ["one", "one"]})
        );
        // A copy points at the alias, everywhere in it.
        let root = parse_yaml(0, text).unwrap();
        let copy = &root.get("copy").unwrap().value;
        assert_eq!(spanned(text, copy.span), "*b");
        assert_eq!(spanned(text, copy.as_map().unwrap()[1].key_span), "*b");
        assert!(error("<<: 1").message.contains("merge"));
        assert!(error("a: *nope").message.contains("unknown anchor"));
    }

    #[test]
    fn spans_are_bytes_after_non_ascii_text() {
        let text = "é: \"ü\"\nnäme: wört\nlist: [ä, 😀]\nz: 1\n";
        let root = parse_yaml(0, text).unwrap();
        let entries = root.as_map().unwrap();
        let got: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (spanned(text, e.key_span), spanned(text, e.value.span)))
            .collect();
        assert_eq!(got, [("é", "\"ü\""), ("näme", "wört"), ("list", "["), ("z", "1")]);
        let NodeValue::Seq(items) = &entries[2].value.value else {
            panic!()
        };
        assert_eq!(spanned(text, items[1].span), "😀");
        // A byte-order mark is skipped, and spans still count it.
        let text = "\u{feff}a: 1";
        let root = parse_yaml(0, text).unwrap();
        assert_eq!(spanned(text, root.as_map().unwrap()[0].key_span), "a");
    }

    #[test]
    fn empty_values_point_at_the_colon() {
        let text = "a:\nb: 1";
        let root = parse_yaml(0, text).unwrap();
        assert_eq!(root.get("a").unwrap().value.span, Span::new(0, 1, 0));
    }

    #[test]
    fn documents() {
        for text in ["", "# only a comment\n", "---\n", "  \n"] {
            assert_eq!(json(text), json!({}), "{text:?}");
        }
        assert_eq!(json("--- a\n...\n"), json!("a"));
        assert!(
            error("a: 1\n---\nb: 2\n")
                .message
                .contains("more than one YAML document")
        );
    }

    #[test]
    fn what_yaml_rust2_rejects_but_serde_saphyr_took() {
        assert_eq!(json("a:\tb\nc: d"), json!({"a": "b", "c": "d"}));
        assert_eq!(json("? \tx"), json!({"x": null}));
        assert_eq!(json("?"), json!({"null": null}));
    }

    #[test]
    fn node_budget_stops_alias_bombs() {
        // Each level doubles: 2^25 values from a few hundred bytes.
        let mut text = String::from("a0: &a0 [x, x]\n");
        for i in 1..26 {
            text.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}]\n", p = i - 1));
        }
        let failure = error(&text);
        assert_eq!(
            failure.message,
            format!("the file has more than {MAX_YAML_NODES} values; split it into several files")
        );
        assert!(failure.span.is_some());
    }

    #[test]
    fn aliases_count_towards_depth() {
        let deep = format!(
            "a: &d {}1{}\nb: {}*d{}",
            "[".repeat(20),
            "]".repeat(20),
            "[".repeat(20),
            "]".repeat(20)
        );
        assert!(error(&deep).message.contains("nested more than 32 levels"));
    }

    #[test]
    fn syntax_errors_are_one_line_at_the_position() {
        let text = "a: 1\nb: \"x\u{1}\"\n";
        assert_eq!(error(text).span, Some(Span::new(0, 10, 1)));
        assert_eq!(error("a: [1, 2\n").message, "unclosed bracket `[`");
        assert_eq!(error("a: [1, 2\n").span, Some(Span::new(0, 3, 1)));
        for text in ["a: [1, 2", "a: b: c", "- a\nb: 1", "a: 'x"] {
            let failure = error(text);
            assert!(
                !failure.message.contains('\n') && !failure.message.contains("line"),
                "{failure:?}"
            );
            let span = failure.span.unwrap();
            assert!(span.start + span.len <= text.len(), "{text:?}: {failure:?}");
        }
    }
}
