//! YAML to `Node`, built straight from an event stream: no serde layer and
//! no intermediate tree (the serde-saphyr path was the loader's biggest
//! cost). The events are `fast`'s for the YAML monitor files are written
//! in, yaml-rust2's for any other text and for every error. yaml-rust2
//! marks only where an event starts, in characters; byte offsets and
//! scalar ends are worked out from the text (`spans`), and what yaml-rust2
//! gets wrong about a text is made up for first (`quirks`).
//!
//! Resolution keeps what the loader did with serde-saphyr: the YAML 1.2 core
//! schema with strict booleans, non-finite floats rejected, keys taken as
//! the text of their resolved value, merge keys (`<<`), and aliases expanded
//! with every span pointing at the alias.

use std::collections::{HashMap, HashSet};

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use super::{Entry, Node, NodeValue, SyntaxError};
use crate::budget::{Budget, VALUE_BYTES};
use crate::source::{FileId, Span};

/// The deepest nesting of lists and maps a YAML file may have. Real files
/// need fewer than ten levels; the limit also bounds the recursion in
/// `respan`.
pub(crate) const MAX_YAML_DEPTH: usize = 32;

/// Maps with more entries than this look duplicates up in a hash set.
const LINEAR_KEYS: usize = 16;

mod fast;
mod quirks;
mod scalars;
mod spans;
use quirks::{MAX_PATCHES, patch, unprintable};
use scalars::resolve;
use spans::{CharIndex, alias_len, scalar_end};

const CORE_TAG: &str = "tag:yaml.org,2002:";

/// Parses a YAML document. An empty document is an empty map.
pub fn parse_yaml(file: FileId, text: &str) -> Result<Node, SyntaxError> {
    parse_yaml_within(file, text, &Budget::default())
}

/// Parses a YAML document, charging what it expands to (aliases by what
/// they repeat) to `budget`: past it, the error points at the value that
/// went over.
pub fn parse_yaml_within(file: FileId, text: &str, budget: &Budget) -> Result<Node, SyntaxError> {
    if text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---"
    }) {
        return Ok(Node::new(Span::new(file, 0, 0), NodeValue::Map(Vec::new())));
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
    let mut fast = Builder::new(file, body, base, text.len(), budget);
    if let Some(node) = fast.run_fast() {
        // Within the allowance: cannot fail.
        let _ = budget.charge(fast.bytes);
        return Ok(node);
    }
    let mut patched: Option<String> = None;
    for _ in 0..MAX_PATCHES {
        let source = patched.as_deref().unwrap_or(body);
        let mut builder = Builder::new(file, source, base, text.len(), budget);
        let error = match builder.run() {
            Ok(node) => {
                // Within the allowance: cannot fail.
                let _ = budget.charge(builder.bytes);
                return Ok(node);
            }
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

/// A value an alias may name, with what copying it costs.
struct Anchored {
    node: Node,
    bytes: usize,
    height: usize,
}

/// An open list or map.
struct Frame {
    span: Span,
    anchor: usize,
    bytes_before: usize,
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
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    /// What the document expands to so far (`crate::budget`).
    bytes: usize,
    /// What the file's budget had left when parsing began.
    allowance: usize,
    limit: usize,
    spare: Spare,
}

/// Emptied lists of the collections closed so far, one per level reused:
/// a collection's items gather in one and are copied out at its close into
/// a list of their exact size, rather than a list grown (and copied) by
/// doubling as each item comes (3% of a cold load's CPU).
#[derive(Default)]
struct Spare {
    items: Vec<Vec<Node>>,
    entries: Vec<Vec<Entry>>,
}

impl<'t> Builder<'t> {
    /// A builder of `text`, which starts `base` bytes into a file of `end` bytes.
    fn new(file: FileId, text: &'t str, base: usize, end: usize, budget: &Budget) -> Builder<'t> {
        Builder {
            file,
            text,
            base,
            end,
            stack: Vec::new(),
            anchors: HashMap::new(),
            spare: Spare::default(),
            bytes: 0,
            allowance: budget.remaining(),
            limit: budget.limit(),
        }
    }

    fn run(&mut self) -> Result<Node, SyntaxError> {
        let mut parser = Parser::new_from_str(self.text);
        // yaml-rust2 marks in characters; `fast` gives bytes and needs none.
        let chars = CharIndex::new(self.text);
        let mut root = None;
        let mut documents = 0;
        loop {
            let (event, mark) = parser.next_token().map_err(|e| self.scan_error(&chars, &e))?;
            let at = self.offset(&chars, &mark);
            match event {
                Event::StreamEnd => break,
                Event::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err(self.error("the file holds more than one YAML document", at, 0));
                    }
                }
                event => {
                    if let Some(placed) = self.event(event, at)? {
                        root = Some(placed);
                    }
                }
            }
        }
        Ok(root.unwrap_or(Node::new(self.span(0, 0), NodeValue::Map(Vec::new()))))
    }

    /// The document as `fast` scans it, or `None` when it cannot (the text
    /// is outside its subset) or the tree is in error: yaml-rust2 then
    /// parses it afresh, and says what the error is.
    fn run_fast(&mut self) -> Option<Node> {
        let mut root = None;
        let text = self.text;
        fast::scan(text, &mut |event, at| {
            if let Some(placed) = self.event(event, at).map_err(|_| fast::Unsupported)? {
                root = Some(placed);
            }
            Ok(())
        })
        .ok()?;
        root
    }

    /// One event of the document (not the stream's or a document's start
    /// or end) at byte `at`; the document's root once it is complete.
    fn event(&mut self, event: Event, at: usize) -> Result<Option<Node>, SyntaxError> {
        match event {
            Event::Scalar(value, style, anchor, tag) => {
                let end = scalar_end(self.text, at, &value, style);
                let span = self.span(at, end - at);
                let bytes = VALUE_BYTES + value.len();
                self.count(bytes, span)?;
                let merge = style == TScalarStyle::Plain && tag.is_none() && value == "<<";
                let value = resolve(value, style, tag.as_ref()).map_err(|m| SyntaxError {
                    message: m,
                    span: Some(span),
                })?;
                let node = Node::new(span, value);
                self.anchor(anchor, &node, bytes, 0);
                self.place(node, 0, merge)
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
                let bytes = anchored.bytes;
                self.count(bytes, span)?;
                let Some(anchored) = self.anchors.get(&id) else {
                    return Err(self.error("alias references unknown anchor", at, span.len));
                };
                let mut node = anchored.node.clone();
                respan(&mut node, span);
                self.place(node, height, false)
            }
            Event::SequenceStart(anchor, tag) => {
                let items = Items::Seq(self.spare.items.pop().unwrap_or_default());
                self.open(at, anchor, tag, items)
            }
            Event::MappingStart(anchor, tag) => {
                let items = Items::Map {
                    entries: self.spare.entries.pop().unwrap_or_default(),
                    key: None,
                    merges: Vec::new(),
                    index: None,
                };
                self.open(at, anchor, tag, items)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = self.stack.pop() else {
                    return Err(self.error("unbalanced YAML collection", at, 0));
                };
                let (anchor, height) = (frame.anchor, frame.child_height + 1);
                let bytes = self.bytes - frame.bytes_before;
                let node = close(frame, &mut self.spare);
                self.anchor(anchor, &node, bytes, height);
                self.place(node, height, false)
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart | Event::DocumentEnd | Event::Nothing => {
                Ok(None)
            }
        }
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
        self.count(VALUE_BYTES, span)?;
        self.stack.push(Frame {
            span,
            anchor,
            bytes_before: self.bytes - VALUE_BYTES,
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
    fn scan_error(&self, chars: &CharIndex, error: &ScanError) -> SyntaxError {
        let at = self.offset(chars, error.marker());
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

    fn anchor(&mut self, anchor: usize, node: &Node, bytes: usize, height: usize) {
        if anchor > 0 {
            let node = node.clone();
            self.anchors.insert(anchor, Anchored { node, bytes, height });
        }
    }

    /// Adds `bytes` to what the document expands to, within the file's
    /// budget; past it, the error points at `span` (the alias or value that
    /// went over).
    fn count(&mut self, bytes: usize, span: Span) -> Result<(), SyntaxError> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.allowance {
            return Err(SyntaxError {
                message: crate::budget::Exceeded { limit: self.limit }.message(),
                span: Some(span),
            });
        }
        Ok(())
    }

    fn offset(&self, chars: &CharIndex, mark: &Marker) -> usize {
        chars.byte(self.text, mark.index())
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
fn close(frame: Frame, spare: &mut Spare) -> Node {
    let value = match frame.items {
        Items::Seq(mut gathered) => {
            let mut items = Vec::with_capacity(gathered.len());
            items.append(&mut gathered);
            spare.items.push(gathered);
            NodeValue::Seq(items)
        }
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
                    value => vec![Node::new(span, value)],
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
            let mut exact = Vec::with_capacity(entries.len());
            exact.append(&mut entries);
            spare.entries.push(entries);
            NodeValue::Map(exact)
        }
    };
    Node::new(frame.span, value)
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

#[cfg(test)]
mod tests;
