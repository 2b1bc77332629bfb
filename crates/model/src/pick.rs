//! Some top-level fields of a JSON object's text, parsed alone: the rest
//! is skipped without building it. A check's whole body parsed into a
//! `Value` costs a map entry and an allocation per key; a plan that needs
//! a few fields of 100,000 listed checks (their owner tag, their
//! schedule) reads only those.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The fields of `names` that the object in `text` has (a key given twice
/// keeps its first value); empty when `text` is not an object.
pub fn pick<S: AsRef<str>>(text: &str, names: &[S]) -> Map<String, Value> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let found: Vec<(&str, Value)> = Pick::new(names).deserialize(&mut reader).unwrap_or_default();
    found
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}

/// One field of the object in `text`.
pub fn pick_one(text: &str, name: &str) -> Option<Value> {
    pick(text, &[name]).remove(name)
}

/// The texts of the fields of `names` that the object in `text` has, in
/// the text's order (a key given twice keeps its first), unparsed: what a
/// caller can compare, or use as a key, before parsing any of it. Empty
/// when `text` is not an object.
pub fn pick_texts<'t, 'n, S: AsRef<str>>(text: &'t str, names: &'n [S]) -> Vec<(&'n str, &'t RawValue)> {
    let mut reader = serde_json::Deserializer::from_str(text);
    Pick::new(names).deserialize(&mut reader).unwrap_or_default()
}

/// The wanted fields of an object, each read as a `V` (a parsed `Value`,
/// or its unparsed text), the others skipped.
struct Pick<'n, S, V> {
    names: &'n [S],
    value: PhantomData<V>,
}

impl<'n, S, V> Pick<'n, S, V> {
    fn new(names: &'n [S]) -> Self {
        Pick {
            names,
            value: PhantomData,
        }
    }
}

impl<'de, 'n, S: AsRef<str>, V: Deserialize<'de>> DeserializeSeed<'de> for Pick<'n, S, V> {
    type Value = Vec<(&'n str, V)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, 'n, S: AsRef<str>, V: Deserialize<'de>> Visitor<'de> for Pick<'n, S, V> {
    type Value = Vec<(&'n str, V)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found: Vec<(&'n str, V)> = Vec::new();
        while let Some(wanted) = map.next_key_seed(Wanted(self.names))? {
            match wanted {
                Some(name) if !found.iter().any(|(n, _)| *n == name) => {
                    found.push((name, map.next_value::<V>()?));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// Which wanted name a key is, compared without allocating it.
struct Wanted<'n, S>(&'n [S]);

impl<'de, 'n, S: AsRef<str>> DeserializeSeed<'de> for Wanted<'n, S> {
    type Value = Option<&'n str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'n, S: AsRef<str>> Visitor<'de> for Wanted<'n, S> {
    type Value = Option<&'n str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().map(AsRef::as_ref).find(|name| *name == key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn picks_top_level_fields_only_and_skips_the_rest() {
        let text = r#"{"id":7,"name":"a \"quoted\" name","nested":{"tags":["no"]},"tags":["x"],"tags":["second"]}"#;
        let picked = pick(text, &["tags", "name", "missing"]);
        assert_eq!(
            Value::Object(picked),
            json!({"name": "a \"quoted\" name", "tags": ["x"]})
        );
        assert_eq!(pick_one(r#"{"updated\u005fat":"v1"}"#, "updated_at"), Some(json!("v1")));
        assert!(pick("[1, 2]", &["id"]).is_empty());
        assert!(pick("not json", &["id"]).is_empty());
        let texts: Vec<(&str, &str)> = pick_texts(text, &["tags", "name", "missing"])
            .into_iter()
            .map(|(name, raw)| (name, raw.get()))
            .collect();
        assert_eq!(texts, [("name", r#""a \"quoted\" name""#), ("tags", r#"["x"]"#)]);
        assert!(pick_texts("[1, 2]", &["id"]).is_empty());
    }
}
