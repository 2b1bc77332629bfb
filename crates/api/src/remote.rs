//! An object as the API returns it, kept as its compact JSON text.
//!
//! Parsed into a `serde_json::Value`, a check of 850 bytes takes about ten
//! times that (a map entry, a hash slot and an allocation per key), and a
//! large account's bodies were most of a plan's memory: 1.5 GB at 100,000
//! checks (issue 18). The text is parsed when it is read: whole with
//! [`Remote::body`], or one top-level field with [`Remote::field`], which
//! skips the rest without building it.

use std::borrow::Cow;
use std::fmt;
use std::ops::ControlFlow;

use monform_model::pick::{pick, pick_one, pick_texts};
use monform_model::{Kind, ownership_in_tags};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

mod fields;

#[derive(Clone)]
pub struct Remote {
    pub kind: Kind,
    pub id: String,
    /// The body's id is a JSON number (groups, alert channels...), not a string.
    numeric_id: bool,
    /// `<project>/<logical-id>` of its ownership tag, read with the id:
    /// a plan asks for it several times per object (claiming, owners,
    /// moves), and each read scanned the whole text.
    owner: Option<Box<str>>,
    text: Box<RawValue>,
}

impl Remote {
    /// An object from its body.
    pub fn new(kind: Kind, body: &Value) -> Remote {
        // Serialising a `Value` cannot fail: its keys are strings.
        let text = serde_json::value::to_raw_value(body).unwrap_or_else(|_| null());
        Remote::from_text(kind, text)
    }

    /// An object whose id is given rather than read from its body.
    pub fn with_id(kind: Kind, id: impl Into<String>, body: &Value) -> Remote {
        Remote {
            id: id.into(),
            ..Remote::new(kind, body)
        }
    }

    /// An object from its JSON text, as a listing's item (valid JSON: the
    /// listing was parsed to find its items).
    pub(crate) fn from_text(kind: Kind, text: Box<RawValue>) -> Remote {
        let id_field = kind.id_field();
        // The first of a key given twice, as `pick` reads it.
        let (mut id_at, mut tags_at) = (None, None);
        let object = fields::each_field(text.get(), |key, value| {
            if key == id_field {
                id_at.get_or_insert(value);
            } else if key == "tags" {
                tags_at.get_or_insert(value);
            }
            ControlFlow::Continue(())
        });
        let parse = |text: Option<&str>| {
            text.filter(|_| object)
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
        };
        let id = parse(id_at);
        let tags = parse(tags_at);
        let owner = tags.as_ref().and_then(Value::as_array).and_then(|tags| {
            let (project, logical_id) = ownership_in_tags(tags.iter().filter_map(Value::as_str))?;
            Some(format!("{project}/{logical_id}").into_boxed_str())
        });
        Remote {
            kind,
            numeric_id: id.as_ref().is_some_and(Value::is_number),
            id: id.as_ref().map(id_text).unwrap_or_default(),
            owner,
            text,
        }
    }

    /// The id as the body holds it: a number or a string.
    pub fn id_value(&self) -> Value {
        match self.id.parse::<serde_json::Number>() {
            Ok(number) if self.numeric_id => Value::Number(number),
            _ => Value::String(self.id.clone()),
        }
    }

    /// The (project, logical id) its ownership tag names, if it has one.
    pub fn owner(&self) -> Option<(&str, &str)> {
        self.owner.as_deref()?.split_once('/')
    }

    /// The whole body, parsed.
    pub fn body(&self) -> Value {
        // The text was valid JSON when it was stored.
        serde_json::from_str(self.text.get()).unwrap_or(Value::Null)
    }

    /// The whole body as its compact JSON text, unparsed.
    pub fn text(&self) -> &str {
        self.text.get()
    }

    /// One top-level field of the body, parsed alone.
    pub fn field(&self, name: &str) -> Option<Value> {
        pick_one(self.text.get(), name)
    }

    /// Some top-level fields of the body, parsed alone (those it has).
    pub fn fields<S: AsRef<str>>(&self, names: &[S]) -> Map<String, Value> {
        pick(self.text.get(), names)
    }

    /// Some top-level fields of the body as their texts, unparsed (those
    /// it has, in the body's order).
    pub fn field_texts<'n, S: AsRef<str>>(&self, names: &'n [S]) -> Vec<(&'n str, &RawValue)> {
        pick_texts(self.text.get(), names)
    }

    /// Every top-level field of the body, in order: its key and its
    /// value's text, unparsed (a view of the body that parses only the
    /// fields it reads).
    pub fn each_field<'t>(&'t self, each: impl FnMut(Cow<'t, str>, &'t str) -> ControlFlow<()>) {
        fields::each_field(self.text.get(), each);
    }

    /// `updated_at`: changes on every update, so it serves as a version.
    pub fn version(&self) -> Option<String> {
        match self.field("updated_at")? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl PartialEq for Remote {
    fn eq(&self, other: &Remote) -> bool {
        self.kind == other.kind && self.id == other.id && self.text.get() == other.text.get()
    }
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("kind", &self.kind)
            .field("id", &self.id)
            .field("body", &self.text.get())
            .finish()
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_default()
}

pub(crate) use monform_model::wire::id_text;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_one_field_or_the_whole_body() {
        let body = json!({"id": 7, "name": "a \"quoted\" name", "tags": ["x"], "nested": {"tags": ["no"]}});
        let remote = Remote::new(Kind::Group, &body);
        assert_eq!(remote.id, "7");
        assert_eq!(remote.id_value(), json!(7));
        assert_eq!(remote.field("tags"), Some(json!(["x"])));
        assert_eq!(remote.field("name"), Some(json!("a \"quoted\" name")));
        assert_eq!(remote.field("missing"), None);
        assert_eq!(remote.body(), body);
        assert_eq!(remote.version(), None);
    }

    /// The ownership tag is read with the id: the first `monform:` tag
    /// with a `/`, on any kind.
    #[test]
    fn the_owner_comes_from_the_first_ownership_tag() {
        let body = json!({"id": "c", "tags": ["team", "monform:bad", "monform:p/q/r", "monform:x/y"]});
        assert_eq!(Remote::new(Kind::Check, &body).owner(), Some(("p", "q/r")));
        assert_eq!(
            Remote::new(Kind::Check, &json!({"id": "c", "tags": ["team"]})).owner(),
            None
        );
        assert_eq!(
            Remote::new(Kind::Group, &json!({"id": 1, "tags": "monform:p/q"})).owner(),
            None
        );
    }

    #[test]
    fn escaped_keys_are_found() {
        let text = RawValue::from_string(r#"{"id":"a","updated\u005fat":"v1"}"#.to_owned()).unwrap();
        let remote = Remote::from_text(Kind::Check, text);
        assert_eq!(remote.version().as_deref(), Some("v1"));
        assert_eq!(remote.id_value(), json!("a"));
    }
}
