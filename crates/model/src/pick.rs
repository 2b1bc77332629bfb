//! Some top-level fields of a JSON object's text, parsed alone: the rest
//! is skipped without building it. A check's whole body parsed into a
//! `Value` costs a map entry and an allocation per key; a plan that needs
//! a few fields of 100,000 listed checks (their owner tag, their
//! schedule) reads only those.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

mod fields;

pub use fields::{Fields, Iter, objects_in};

/// The fields of `names` that the object in `text` has (a key given twice
/// keeps its last value, as [`Fields`] reads one); empty when `text` is not
/// an object.
pub fn pick<S: AsRef<str>>(text: &str, names: &[S]) -> Map<String, Value> {
    Fields::of(text)
        .wanted(text, names)
        .into_iter()
        .filter_map(|(name, text)| Some((name.to_owned(), serde_json::from_str(text).ok()?)))
        .collect()
}

/// One field of the object in `text`.
pub fn pick_one(text: &str, name: &str) -> Option<Value> {
    pick(text, &[name]).remove(name)
}

/// The texts of the fields of `names` that the object in `text` has, in
/// the text's order (a key given twice as [`Fields::wanted`] reads it),
/// unparsed: what a caller can compare, or use as a key, before parsing
/// any of it. Empty when `text` is not an object.
pub fn pick_texts<'t, 'n, S: AsRef<str>>(text: &'t str, names: &'n [S]) -> Vec<(&'n str, &'t RawValue)> {
    Fields::of(text)
        .wanted(text, names)
        .into_iter()
        .filter_map(|(name, text)| Some((name, serde_json::from_str(text).ok()?)))
        .collect()
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
            json!({"name": "a \"quoted\" name", "tags": ["second"]})
        );
        // As a parsed body reads it.
        let body: Value = serde_json::from_str(text).unwrap();
        assert_eq!(pick_one(text, "tags").as_ref(), body.get("tags"));
        assert_eq!(pick_one(r#"{"updated\u005fat":"v1"}"#, "updated_at"), Some(json!("v1")));
        assert!(pick("[1, 2]", &["id"]).is_empty());
        assert!(pick("not json", &["id"]).is_empty());
        let texts: Vec<(&str, &str)> = pick_texts(text, &["tags", "name", "missing"])
            .into_iter()
            .map(|(name, raw)| (name, raw.get()))
            .collect();
        assert_eq!(texts, [("name", r#""a \"quoted\" name""#), ("tags", r#"["second"]"#)]);
        assert!(pick_texts("[1, 2]", &["id"]).is_empty());
    }
}
