//! A resource's values in whichever form a caller holds them: the rules
//! that read and merge them (which fields are secrets, a check after its
//! group) are written once, generic over [`Tree`], and run on serde_json's
//! values ([`Json`], every caller but one) and on the policies' interpreter
//! values (the policies' input builds 100,000 checks without a JSON stage).
//!
//! A form is a value of its own (not a trait on the node type) so that a
//! crate can implement it for another crate's values, and so that a form
//! may keep state across calls (the policies' form shares equal arrays).

use serde_json::Value;

/// A form of JSON-like values: how a rule reads a node and, for the group
/// merge, how it writes one. Writing follows serde_json's indexing: `set`
/// on an object replaces or adds the key (a new key last), on `null` makes
/// an object of it.
pub trait Tree {
    type Node: Clone + PartialEq;

    /// An object's field.
    fn get<'a>(&self, node: &'a Self::Node, key: &str) -> Option<&'a Self::Node>;
    /// An array's item.
    fn item<'a>(&self, node: &'a Self::Node, index: usize) -> Option<&'a Self::Node>;
    /// An array's length; `None` for anything else.
    fn items_len(&self, node: &Self::Node) -> Option<usize>;
    fn as_str<'a>(&self, node: &'a Self::Node) -> Option<&'a str>;
    fn as_bool(&self, node: &Self::Node) -> Option<bool>;
    fn is_null(&self, node: &Self::Node) -> bool;
    fn is_object(&self, node: &Self::Node) -> bool;
    /// Whether `test` holds for any item of an array or value of an object.
    fn any_child(&self, node: &Self::Node, test: &mut dyn FnMut(&Self::Node) -> bool) -> bool;

    /// Sets an object's field.
    fn set(&mut self, node: &mut Self::Node, key: &str, value: Self::Node);
    /// An object's field taken out to be set again (serde_json's leaves
    /// `null`; a form of shared values may leave it in place and copy it),
    /// if it has it.
    fn take(&mut self, node: &mut Self::Node, key: &str) -> Option<Self::Node>;
    /// An array's items (none for anything else).
    fn items_of(&mut self, node: Self::Node) -> Vec<Self::Node>;
    fn array(&mut self, items: Vec<Self::Node>) -> Self::Node;
    fn bool(&mut self, value: bool) -> Self::Node;
}

/// The form of serde_json's values.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Tree for Json {
    type Node = Value;

    fn get<'a>(&self, node: &'a Value, key: &str) -> Option<&'a Value> {
        node.get(key)
    }
    fn item<'a>(&self, node: &'a Value, index: usize) -> Option<&'a Value> {
        node.get(index)
    }
    fn items_len(&self, node: &Value) -> Option<usize> {
        node.as_array().map(Vec::len)
    }
    fn as_str<'a>(&self, node: &'a Value) -> Option<&'a str> {
        node.as_str()
    }
    fn as_bool(&self, node: &Value) -> Option<bool> {
        node.as_bool()
    }
    fn is_null(&self, node: &Value) -> bool {
        node.is_null()
    }
    fn is_object(&self, node: &Value) -> bool {
        node.is_object()
    }
    fn any_child(&self, node: &Value, test: &mut dyn FnMut(&Value) -> bool) -> bool {
        match node {
            Value::Array(items) => items.iter().any(test),
            Value::Object(map) => map.values().any(test),
            _ => false,
        }
    }

    fn set(&mut self, node: &mut Value, key: &str, value: Value) {
        node[key] = value;
    }
    fn take(&mut self, node: &mut Value, key: &str) -> Option<Value> {
        node.get_mut(key).map(Value::take)
    }
    fn items_of(&mut self, node: Value) -> Vec<Value> {
        match node {
            Value::Array(items) => items,
            _ => Vec::new(),
        }
    }
    fn array(&mut self, items: Vec<Value>) -> Value {
        Value::Array(items)
    }
    fn bool(&mut self, value: bool) -> Value {
        Value::Bool(value)
    }
}

/// The node at `path` below `node`.
pub fn get_at<'a, T: Tree>(form: &T, node: &'a T::Node, path: &crate::FieldPath) -> Option<&'a T::Node> {
    path.segments().iter().try_fold(node, |current, segment| match segment {
        crate::Segment::Key(key) => form.get(current, key),
        crate::Segment::Index(index) => form.item(current, *index),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// serde_json's form reads and writes as serde_json's indexing does.
    #[test]
    fn the_json_form_reads_and_writes_as_indexing_does() {
        let mut form = Json;
        let mut value = json!({"a": [{"b": "x"}, 2], "c": null});
        let path = crate::FieldPath::parse("a[0].b");
        assert_eq!(get_at(&form, &value, &path), Some(&json!("x")));
        assert!(form.any_child(&value, &mut |item| item.is_array()));
        assert!(!form.any_child(&json!({"a": 1}), &mut |item| item.is_string()));
        assert_eq!(
            form.take(&mut value, "a").and_then(|v| form.items_of(v).pop()),
            Some(json!(2))
        );
        assert_eq!(value["a"], Value::Null);
        form.set(&mut value, "d", json!(true));
        let mut null = Value::Null;
        form.set(&mut null, "k", json!(1));
        assert_eq!((value["d"].clone(), null), (json!(true), json!({"k": 1})));
    }
}
