//! A format-neutral document tree with a span on every key and value, built
//! from YAML (serde-saphyr) or TOML (toml's `DeTable`). Validation runs on
//! its JSON form; spans are looked up again by field path when reporting.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::source::{FileId, Span, floor_char_boundary};
use monform_model::{FieldPath, Segment};

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: NodeValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

/// A syntax error with where it is, if known.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub message: String,
    pub span: Option<Span>,
}

impl Node {
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            NodeValue::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().find(|e| e.key == key)
    }

    pub fn type_name(&self) -> &'static str {
        match self.value {
            NodeValue::Null => "null",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Int(_) | NodeValue::Float(_) => "a number",
            NodeValue::Str(_) => "a string",
            NodeValue::Seq(_) => "a list",
            NodeValue::Map(_) => "a map",
        }
    }

    pub fn to_json(&self) -> Value {
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Int(i) => Value::Number((*i).into()),
            NodeValue::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            NodeValue::Str(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The span to point at for `path`: the value, or the key when asked
    /// (or when the value is a collection, whose own span is less telling).
    /// Falls back to the nearest ancestor that exists.
    pub fn locate(&self, path: &FieldPath, prefer_key: bool) -> Span {
        let mut node = self;
        let mut key_span = None;
        for segment in path.segments() {
            let next = match (segment, &node.value) {
                (Segment::Key(k), NodeValue::Map(entries)) => entries
                    .iter()
                    .find(|e| &e.key == k)
                    .map(|e| (Some(e.key_span), &e.value)),
                (Segment::Index(i), NodeValue::Seq(items)) => items.get(*i).map(|n| (None, n)),
                _ => None,
            };
            match next {
                Some((k, n)) => {
                    key_span = k;
                    node = n;
                }
                None => break,
            }
        }
        let is_collection = matches!(node.value, NodeValue::Map(_) | NodeValue::Seq(_));
        match key_span {
            Some(k) if prefer_key || is_collection => k,
            _ => node.span,
        }
    }

    /// Visits every string value mutably (for interpolation).
    pub fn for_each_string_mut(&mut self, f: &mut impl FnMut(&mut String, Span)) {
        let span = self.span;
        match &mut self.value {
            NodeValue::Str(s) => f(s, span),
            NodeValue::Seq(items) => items.iter_mut().for_each(|n| n.for_each_string_mut(f)),
            NodeValue::Map(entries) => entries.iter_mut().for_each(|e| e.value.for_each_string_mut(f)),
            _ => {}
        }
    }
}

// ---- YAML ----

/// Parses a YAML document. An empty document is an empty map.
pub fn parse_yaml(file: FileId, text: &str) -> Result<Node, SyntaxError> {
    if text.trim().is_empty()
        || text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#') || l.trim() == "---")
    {
        return Ok(Node {
            span: Span::new(file, 0, 0),
            value: NodeValue::Map(Vec::new()),
        });
    }
    let parsed: Result<serde_saphyr::Spanned<YamlNode>, _> = serde_saphyr::from_str_with_options(text, yaml_options());
    match parsed {
        Ok(root) => Ok(from_yaml(file, text, root)),
        Err(error) => {
            let span = error.location().and_then(|l| yaml_span(file, text, &l));
            Err(SyntaxError {
                message: yaml_message(&error),
                span,
            })
        }
    }
}

/// The deepest nesting of lists and maps a YAML file may have. Real files
/// need fewer than ten levels. The deserializer recurses once per level,
/// and a level takes about 40 KiB of stack in a debug build: serde-saphyr's
/// default of 64 overflows a 2 MiB thread stack (a test thread's) there.
const MAX_YAML_DEPTH: usize = 32;

/// Values one YAML file may hold: a file of 20,000 checks fits. The limit
/// stops alias-expansion bombs, not real projects.
const MAX_YAML_NODES: usize = 4_000_000;

fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_YAML_DEPTH;
    budget.max_nodes = MAX_YAML_NODES;
    budget.max_events = 4 * MAX_YAML_NODES;
    // YAML 1.2 booleans only: `no`, `off`, `N` stay strings (country codes, keys).
    serde_saphyr::options! { budget: Some(budget), strict_booleans: true }
}

fn yaml_message(error: &serde_saphyr::Error) -> String {
    use serde_saphyr::budget::BudgetBreach;
    if let serde_saphyr::Error::Budget { breach, .. } = error.without_snippet() {
        match breach {
            BudgetBreach::Depth { .. } => {
                return format!("lists and maps are nested more than {MAX_YAML_DEPTH} levels deep");
            }
            BudgetBreach::Nodes { nodes } => {
                return format!(
                    "the file has more than {} values; split it into several files",
                    nodes.saturating_sub(1)
                );
            }
            _ => {}
        }
    }
    let full = error.to_string();
    // The rendered error repeats the location and a snippet; keep the first line.
    let first = full.lines().next().unwrap_or("invalid YAML").trim();
    let first = first.split(" at line ").next().unwrap_or(first);
    // The location is shown by the diagnostic itself.
    static PREFIX: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"^(error: )?(line \d+ column \d+: )?").expect("valid pattern"));
    PREFIX.replace(first, "").trim_end_matches('.').to_owned()
}

fn yaml_span(file: FileId, text: &str, location: &serde_saphyr::Location) -> Option<Span> {
    if location.line() == 0 {
        return None;
    }
    let span = location.span();
    let start = match span.byte_offset() {
        Some(offset) => offset as usize,
        None => offset_of(text, location.line() as usize, location.column() as usize),
    };
    let start = floor_char_boundary(text, start.min(text.len()));
    let len = span.byte_len().map_or(0, |l| l as usize).min(text.len() - start);
    Some(Span::new(file, start, floor_char_boundary(text, start + len) - start))
}

fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = &text[line_start.min(text.len())..];
    line_start
        + rest
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i)
}

fn from_yaml(file: FileId, text: &str, node: serde_saphyr::Spanned<YamlNode>) -> Node {
    let span = yaml_span(file, text, &node.referenced).unwrap_or(Span::new(file, 0, 0));
    let value = match node.value {
        YamlNode::Null => NodeValue::Null,
        YamlNode::Bool(b) => NodeValue::Bool(b),
        YamlNode::Int(i) => NodeValue::Int(i),
        YamlNode::Float(f) => NodeValue::Float(f),
        YamlNode::Str(s) => NodeValue::Str(s),
        YamlNode::Seq(items) => NodeValue::Seq(items.into_iter().map(|n| from_yaml(file, text, n)).collect()),
        YamlNode::Map(entries) => NodeValue::Map(
            entries
                .into_iter()
                .map(|(key, value)| {
                    // The key as written: an alias (`*a`) or an empty key is
                    // shorter than its text, and may end the file.
                    let key_span = yaml_span(file, text, &key.referenced).unwrap_or(span);
                    Entry {
                        key: key.value,
                        key_span,
                        value: from_yaml(file, text, value),
                    }
                })
                .collect(),
        ),
    };
    Node { span, value }
}

/// What serde-saphyr hands us: a recursive value whose children are spanned.
enum YamlNode {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<serde_saphyr::Spanned<YamlNode>>),
    Map(Vec<(serde_saphyr::Spanned<String>, serde_saphyr::Spanned<YamlNode>)>),
}

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = YamlNode;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<YamlNode, E> {
        Ok(YamlNode::Null)
    }
    fn visit_none<E>(self) -> Result<YamlNode, E> {
        Ok(YamlNode::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YamlNode, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E>(self, v: bool) -> Result<YamlNode, E> {
        Ok(YamlNode::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<YamlNode, E> {
        Ok(YamlNode::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<YamlNode, E> {
        Ok(i64::try_from(v).map_or(YamlNode::Float(v as f64), YamlNode::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<YamlNode, E> {
        Ok(YamlNode::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<YamlNode, E> {
        Ok(YamlNode::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<YamlNode, E> {
        Ok(YamlNode::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(YamlNode::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlNode, A::Error> {
        let mut entries: Vec<(serde_saphyr::Spanned<String>, serde_saphyr::Spanned<YamlNode>)> = Vec::new();
        while let Some(key) = map.next_key::<serde_saphyr::Spanned<KeyText>>()? {
            let key = serde_saphyr::Spanned::new(key.value.0, key.referenced, key.defined);
            if entries.iter().any(|(k, _)| k.value == key.value) {
                return Err(de::Error::custom(format!("duplicate key `{}`", key.value)));
            }
            entries.push((key, map.next_value()?));
        }
        Ok(YamlNode::Map(entries))
    }
}

/// A mapping key: scalars are taken as their text, as YAML users expect.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeyText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_owned()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_owned()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

// ---- TOML ----

/// Parses a TOML document, reporting every syntax error it can recover from.
pub fn parse_toml(file: FileId, text: &str) -> Result<Node, Vec<SyntaxError>> {
    let (root, errors) = toml::de::DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        return Err(errors
            .into_iter()
            .map(|e| SyntaxError {
                message: e.message().trim_end_matches('.').to_owned(),
                span: e.span().map(|r| Span::new(file, r.start, r.len())),
            })
            .collect());
    }
    let span = root.span();
    Ok(Node {
        span: Span::new(file, span.start, 0),
        value: toml_table(file, root.into_inner()),
    })
}

fn toml_table(file: FileId, table: toml::de::DeTable<'_>) -> NodeValue {
    NodeValue::Map(
        table
            .into_iter()
            .map(|(key, value)| {
                let key_span = key.span();
                Entry {
                    key: key.into_inner().into_owned(),
                    key_span: Span::new(file, key_span.start, key_span.len()),
                    value: toml_value(file, value),
                }
            })
            .collect(),
    )
}

fn toml_value(file: FileId, value: toml::Spanned<toml::de::DeValue<'_>>) -> Node {
    use toml::de::DeValue;
    let range = value.span();
    let span = Span::new(file, range.start, range.len());
    let value = match value.into_inner() {
        DeValue::String(s) => NodeValue::Str(s.into_owned()),
        DeValue::Integer(i) => {
            let digits = i.as_str().replace('_', "");
            match i64::from_str_radix(
                digits
                    .trim_start_matches("0x")
                    .trim_start_matches("0o")
                    .trim_start_matches("0b"),
                i.radix(),
            ) {
                Ok(n) => NodeValue::Int(n),
                Err(_) => NodeValue::Str(i.as_str().to_owned()),
            }
        }
        DeValue::Float(f) => f
            .as_str()
            .replace('_', "")
            .parse()
            .map_or_else(|_| NodeValue::Str(f.as_str().to_owned()), NodeValue::Float),
        DeValue::Boolean(b) => NodeValue::Bool(b),
        DeValue::Datetime(d) => NodeValue::Str(d.to_string()),
        DeValue::Array(items) => NodeValue::Seq(items.into_iter().map(|v| toml_value(file, v)).collect()),
        DeValue::Table(table) => toml_table(file, table),
    };
    Node { span, value }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_spans_point_at_keys_and_values() {
        let text = "checks:\n  web:\n    frequency: 5\n";
        let root = parse_yaml(0, text).unwrap();
        let path = FieldPath::parse("checks.web.frequency");
        let value = root.locate(&path, false);
        assert_eq!(&text[value.start..value.start + value.len], "5");
        let key = root.locate(&path, true);
        assert_eq!(&text[key.start..key.start + key.len], "frequency");
    }

    #[test]
    fn toml_spans_point_at_keys_and_values() {
        let text = "[checks.web]\nfrequency = 5\nname = \"Web\"\n";
        let root = parse_toml(0, text).unwrap();
        let value = root.locate(&FieldPath::parse("checks.web.name"), false);
        assert_eq!(&text[value.start..value.start + value.len], "\"Web\"");
        assert_eq!(root.to_json()["checks"]["web"]["frequency"], 5);
    }

    #[test]
    fn yaml_1_1_booleans_stay_strings() {
        let root = parse_yaml(0, "a: N\nb: no\nc: true\n").unwrap();
        assert_eq!(root.to_json(), serde_json::json!({"a": "N", "b": "no", "c": true}));
    }

    #[test]
    fn yaml_duplicate_keys_are_errors() {
        let error = parse_yaml(0, "a: 1\na: 2\n").unwrap_err();
        assert!(error.message.contains("duplicate"), "{}", error.message);
        assert!(error.span.is_some());
    }

    /// A key's span is the key as written: for an alias, `*x` (not the
    /// length of the text it stands for); for an empty key, nothing. Both
    /// once reached past the end of the file.
    #[test]
    fn yaml_key_spans_stay_inside_the_text() {
        let text = "a: &x a-rather-long-key\n*x : 1";
        let root = parse_yaml(0, text).unwrap();
        let key = root.as_map().unwrap()[1].key_span;
        assert_eq!(&text[key.start..key.start + key.len], "*x");
        for text in ["?", "? ", "{? }", "checks:\n  ?"] {
            let root = parse_yaml(0, text).unwrap();
            let mut entries = root.as_map().unwrap().to_vec();
            while let Some(entry) = entries.pop() {
                assert!(
                    entry.key_span.start + entry.key_span.len <= text.len(),
                    "{text:?}: {entry:?}"
                );
                entries.extend(entry.value.as_map().unwrap_or_default().iter().cloned());
            }
        }
    }

    /// Runs on a test thread's 2 MiB stack: deep nesting must be an error,
    /// not a stack overflow, in a debug build too.
    #[test]
    fn yaml_deep_nesting_is_an_error() {
        let nested = |depth: usize| -> String { (0..depth).map(|i| format!("{}-\n", " ".repeat(2 * i))).collect() };
        assert!(parse_yaml(0, &nested(MAX_YAML_DEPTH)).is_ok());
        for depth in [MAX_YAML_DEPTH + 1, 1000] {
            let error = parse_yaml(0, &nested(depth)).unwrap_err();
            assert!(
                error.message.contains("nested more than 32 levels"),
                "{}",
                error.message
            );
            assert!(error.span.is_some());
        }
        let flow = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert!(parse_yaml(0, &flow).is_err());
    }

    #[test]
    fn yaml_syntax_errors_have_a_location() {
        let error = parse_yaml(0, "checks:\n  web: [1, 2\n").unwrap_err();
        assert!(error.span.is_some(), "{error:?}");
    }
}
