//! The model's rules over a resource ([`monform_model::tree::Tree`]: which
//! fields are secrets, a check after its group) run on the interpreter's
//! values, so the input needs no JSON stage. Arrays the group merge makes
//! (a check's tags and its group's) are shared as [`Convert`] shares.

use monform_model::tree::Tree;
use regorus::Value;

use super::convert::Convert;

/// The interpreter's values as a form of the model's rules.
pub(crate) struct Rego<'c>(pub(crate) &'c mut Convert);

/// The entry of `object` whose key is the text `key` (objects are small:
/// a scan, and no key value made to look one up).
fn entry<'a>(object: &'a regorus::value::Object, key: &str) -> Option<(&'a Value, &'a Value)> {
    object
        .iter()
        .find(|(k, _)| matches!(k, Value::String(text) if text.as_ref() == key))
}

/// Whether a value may be shared: not when it holds a number with a
/// fraction part (as [`Convert`]: 1.5 could be shown as another value's
/// text; a float without one is shown as the integer it equals).
fn exact(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_integer(),
        Value::Array(items) => items.iter().all(exact),
        Value::Object(object) => object.values().all(exact),
        _ => true,
    }
}

impl Tree for Rego<'_> {
    type Node = Value;

    fn get<'a>(&self, node: &'a Value, key: &str) -> Option<&'a Value> {
        match node {
            Value::Object(object) => entry(object, key).map(|(_, v)| v),
            _ => None,
        }
    }
    fn item<'a>(&self, node: &'a Value, index: usize) -> Option<&'a Value> {
        match node {
            Value::Array(items) => items.get(index),
            _ => None,
        }
    }
    fn items_len(&self, node: &Value) -> Option<usize> {
        match node {
            Value::Array(items) => Some(items.len()),
            _ => None,
        }
    }
    fn as_str<'a>(&self, node: &'a Value) -> Option<&'a str> {
        match node {
            Value::String(text) => Some(text.as_ref()),
            _ => None,
        }
    }
    fn as_bool(&self, node: &Value) -> Option<bool> {
        match node {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self, node: &Value) -> bool {
        matches!(node, Value::Null)
    }
    fn is_object(&self, node: &Value) -> bool {
        matches!(node, Value::Object(_))
    }
    fn any_child(&self, node: &Value, test: &mut dyn FnMut(&Value) -> bool) -> bool {
        match node {
            Value::Array(items) => items.iter().any(test),
            Value::Object(object) => object.values().any(test),
            _ => false,
        }
    }

    fn set(&mut self, node: &mut Value, key: &str, value: Value) {
        if matches!(node, Value::Null) {
            *node = Value::from_entries(Vec::new());
        }
        let Value::Object(object) = node else {
            // serde_json panics here; the model's rules set fields of
            // objects only.
            return;
        };
        match entry(object, key) {
            // The same value (a merge that added nothing): the object, maybe
            // shared, is not copied to write it.
            Some((_, old)) if *old == value => {}
            // In place: the compact storage stays as it is.
            Some((known, _)) => {
                let known = known.clone();
                regorus::Rc::make_mut(object).insert(known, value);
            }
            // A new key: made again at once in compact storage (an insert
            // would turn it into a B-tree).
            None => {
                let mut entries = self.0.entry_buffer();
                entries.extend(object.iter().map(|(k, v)| (k.clone(), v.clone())));
                entries.push((self.0.key(key), value));
                *node = self.0.object(entries);
            }
        }
    }
    fn take(&mut self, node: &mut Value, key: &str) -> Option<Value> {
        // Left in place (values are shared: taking one out would copy the
        // object holding it); the merge sets it again.
        self.get(node, key).cloned()
    }
    fn items_of(&mut self, node: Value) -> Vec<Value> {
        match node {
            Value::Array(items) => {
                regorus::Rc::try_unwrap(items).map_or_else(|items| items.to_vec(), |items| items.into_vec())
            }
            _ => Vec::new(),
        }
    }
    fn array(&mut self, items: Vec<Value>) -> Value {
        let shareable = items.iter().all(exact);
        // At its exact size (the merge grew it by pushes).
        let array = self.0.array(items);
        match shareable {
            true => self.0.shared(array),
            false => array,
        }
    }
    fn bool(&mut self, value: bool) -> Value {
        Value::from(value)
    }
}
