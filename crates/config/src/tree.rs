//! A format-neutral document tree with a span on every key and value, built
//! from YAML (yaml-rust2's events, in `yaml`) or TOML (toml's `DeTable`).
//! Validation runs on its JSON form; spans are looked up again by field path
//! when reporting.

use std::sync::Arc;

use serde_json::{Map, Number, Value};

use crate::source::{FileId, Span};
use monform_model::{FieldPath, Segment};

mod yaml;

pub use yaml::{parse_yaml, parse_yaml_within};

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: NodeValue,
    /// The value holds text substituted from an environment variable that
    /// is not declared public (`[project] public-env`), and which: plans
    /// must not show it, diagnostics name the variable instead. Travels
    /// with the value through `[vars]`, `[defaults]` and `forEach` copies.
    pub sensitive: Option<Sensitive>,
}

/// The environment variables a sensitive value's text came from. Shared
/// (`Arc`): a value is copied into every `forEach` item, and the node
/// stays the size it had with a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sensitive(Arc<Vec<String>>);

impl Sensitive {
    /// Text of `${env:NAME}`.
    pub fn env(name: &str) -> Sensitive {
        Sensitive(Arc::new(vec![name.to_owned()]))
    }

    /// The variables' names, in the order they were first read.
    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// Text made of both (`a-${env:A}-${env:B}`): sensitive when either is.
    pub fn join(a: Option<Sensitive>, b: Option<Sensitive>) -> Option<Sensitive> {
        match (a, b) {
            (Some(a), Some(b)) => {
                let mut names = a.names().to_vec();
                names.extend(b.names().iter().filter(|n| !a.names().contains(n)).cloned());
                Some(Sensitive(Arc::new(names)))
            }
            (a, b) => a.or(b),
        }
    }

    /// What diagnostics name in the value's place.
    pub fn hidden(&self) -> monform_model::sensitive::Hidden {
        monform_model::sensitive::Hidden::Env(self.names().to_vec())
    }
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
    pub fn new(span: Span, value: NodeValue) -> Node {
        Node {
            span,
            value,
            sensitive: None,
        }
    }

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
    Ok(Node::new(
        Span::new(file, span.start, 0),
        toml_table(file, root.into_inner()),
    ))
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
    Node::new(span, value)
}

#[cfg(test)]
mod tests {
    use super::yaml::MAX_YAML_DEPTH;
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
