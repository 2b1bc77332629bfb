//! The schema, compiled once for walking: `$ref`s resolved, tagged unions
//! indexed by their tag, keywords read into fields. Looking keywords up in
//! the schema's JSON on every value (hashing each key) was the walker's main
//! cost; loading 10,000 checks walks about a million values.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::Kind;
use crate::definitions::{kind_schema, resolve};

/// Index of a node in [`Compiled::nodes`].
pub(crate) type NodeId = usize;

/// Every schema node reachable from the kinds' schemas.
pub(crate) struct Compiled {
    pub nodes: Vec<Node>,
    kinds: Vec<(Kind, NodeId)>,
}

/// One (resolved) schema.
#[derive(Default)]
pub(crate) struct Node {
    /// `x-ref`: the kind referenced, and whether remote-only ids are allowed.
    pub reference: Option<(Kind, bool)>,
    pub script: bool,
    pub alternatives: Alternatives,
    /// JSON types allowed (`type`, or those of `enum`/`const`); empty: any.
    pub types: Vec<&'static str>,
    /// The schema has a `type` keyword (only then is the type checked).
    pub typed: bool,
    pub constant: Option<Value>,
    pub enumeration: Option<Vec<Value>>,
    /// Properties in schema order (for listing), and by name (a fast hash:
    /// the keys are the schema's own).
    pub properties: Vec<(String, NodeId)>,
    pub property_index: FxHashMap<String, NodeId>,
    pub has_properties: bool,
    pub required: Vec<String>,
    pub additional: Additional,
    pub items: Option<NodeId>,
    pub max_items: Option<u64>,
    pub min_items: Option<u64>,
    pub max_length: Option<u64>,
    pub min_length: Option<u64>,
    pub pattern: Option<String>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
}

#[derive(Default)]
pub(crate) enum Alternatives {
    #[default]
    None,
    /// `oneOf`/`anyOf` told apart by the `const` of one property.
    Tagged {
        tag: String,
        /// Each branch's tag value.
        branches: Vec<(Value, NodeId)>,
    },
    /// Told apart by JSON type, else by the fewest violations.
    Untagged(Vec<NodeId>),
}

#[derive(Default)]
pub(crate) enum Additional {
    /// Not said, or `true`: anything goes, unchecked.
    #[default]
    Any,
    Forbidden,
    Schema(NodeId),
}

impl Compiled {
    pub fn new(root: &Value) -> Compiled {
        let mut builder = Builder {
            root,
            nodes: Vec::new(),
            seen: HashMap::new(),
        };
        let kinds = Kind::ALL
            .iter()
            .map(|&kind| (kind, builder.compile(kind_schema(root, kind))))
            .collect();
        Compiled {
            nodes: builder.nodes,
            kinds,
        }
    }

    pub fn kind(&self, kind: Kind) -> NodeId {
        self.kinds.iter().find(|(k, _)| *k == kind).map_or(0, |(_, id)| *id)
    }
}

struct Builder<'s> {
    /// The schema document whose `$ref`s are followed.
    root: &'s Value,
    nodes: Vec<Node>,
    /// Resolved schemas already compiled, by address: `$ref`s to one
    /// definition share its node (and recursive definitions terminate).
    seen: HashMap<*const Value, NodeId>,
}

impl Builder<'_> {
    fn compile(&mut self, schema: &Value) -> NodeId {
        let schema = resolve(self.root, schema);
        if let Some(&id) = self.seen.get(&(schema as *const Value)) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.seen.insert(schema as *const Value, id);
        let node = self.build(schema);
        self.nodes[id] = node;
        id
    }

    fn build(&mut self, schema: &Value) -> Node {
        let number = |key: &str| schema.get(key).and_then(Value::as_f64);
        let count = |key: &str| schema.get(key).and_then(Value::as_u64);
        let mut node = Node {
            reference: schema
                .get("x-ref")
                .and_then(Value::as_str)
                .and_then(Kind::from_section)
                .map(|kind| (kind, schema.get("x-ref-soft").and_then(Value::as_bool).unwrap_or(false))),
            script: schema.get("x-script").is_some(),
            types: type_names(schema),
            typed: schema.get("type").is_some(),
            constant: schema.get("const").cloned(),
            enumeration: schema.get("enum").and_then(Value::as_array).cloned(),
            required: schema
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
            max_items: count("maxItems"),
            min_items: count("minItems"),
            max_length: count("maxLength"),
            min_length: count("minLength"),
            pattern: schema.get("pattern").and_then(Value::as_str).map(str::to_owned),
            minimum: number("minimum"),
            maximum: number("maximum"),
            exclusive_minimum: number("exclusiveMinimum"),
            ..Node::default()
        };
        if let Some(branches) = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
        {
            let resolved: Vec<&Value> = branches.iter().map(|b| resolve(self.root, b)).collect();
            node.alternatives = match discriminator(&resolved) {
                Some(tag) => Alternatives::Tagged {
                    branches: resolved
                        .iter()
                        .map(|b| (b["properties"][tag.as_str()]["const"].clone(), self.compile(b)))
                        .collect(),
                    tag,
                },
                None => Alternatives::Untagged(resolved.iter().map(|b| self.compile(b)).collect()),
            };
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            node.has_properties = true;
            for (name, property) in properties {
                let child = self.compile(property);
                node.properties.push((name.clone(), child));
                node.property_index.insert(name.clone(), child);
            }
        }
        node.additional = match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(extra @ Value::Object(_)) => Additional::Schema(self.compile(extra)),
            _ => Additional::Any,
        };
        node.items = schema.get("items").map(|items| self.compile(items));
        node
    }
}

/// The property whose `const` tells the branches of a tagged union apart.
fn discriminator(branches: &[&Value]) -> Option<String> {
    let first = branches.first()?.get("properties")?.as_object()?;
    first
        .iter()
        .find(|(name, prop)| {
            prop.get("const").is_some()
                && branches
                    .iter()
                    .all(|b| b["properties"][name.as_str()].get("const").is_some())
        })
        .map(|(name, _)| name.clone())
}

fn type_names(schema: &Value) -> Vec<&'static str> {
    match schema.get("type") {
        Some(Value::String(t)) => type_keyword(t).into_iter().collect(),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).filter_map(type_keyword).collect(),
        _ if schema.get("enum").is_some() || schema.get("const").is_some() => {
            let values = schema
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| vec![schema["const"].clone()]);
            let mut names: Vec<&'static str> = values.iter().map(json_type_keyword).collect();
            names.dedup();
            names
        }
        _ => Vec::new(),
    }
}

fn type_keyword(name: &str) -> Option<&'static str> {
    ["null", "boolean", "string", "array", "object", "number", "integer"]
        .into_iter()
        .find(|k| *k == name)
}

pub(crate) fn json_type_keyword(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Node {
    pub fn accepts(&self, value: &Value) -> bool {
        self.types.is_empty()
            || self.types.iter().any(|t| match *t {
                "null" => value.is_null(),
                "boolean" => value.is_boolean(),
                "string" => value.is_string(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                "number" => value.is_number(),
                "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
                _ => false,
            })
    }

    /// "a string or a list", for messages.
    pub fn describe_type(&self) -> String {
        let names: Vec<String> = self
            .types
            .iter()
            .filter(|t| **t != "null")
            .map(|t| match *t {
                "integer" => "an integer".to_owned(),
                "array" => "a list".to_owned(),
                "object" => "a map".to_owned(),
                other => format!("a {other}"),
            })
            .collect();
        if names.is_empty() {
            "a value".to_owned()
        } else {
            crate::suggest::join_or(&names)
        }
    }
}
