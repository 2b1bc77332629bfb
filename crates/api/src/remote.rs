//! An object as the API returns it, kept as its compact JSON text.
//!
//! Parsed into a `serde_json::Value`, a check of 850 bytes takes about ten
//! times that (a map entry, a hash slot and an allocation per key), and a
//! large account's bodies were most of a plan's memory: 1.5 GB at 100,000
//! checks (issue 18). The text is parsed when it is read: whole with
//! [`Remote::body`], or one top-level field with [`Remote::field`], which
//! skips the rest without building it.

use std::fmt;

use monform_model::pick::{Fields, Iter, objects_in};
use monform_model::{Kind, ownership_in_tags};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

#[derive(Clone)]
pub struct Remote {
    pub kind: Kind,
    pub id: String,
    /// The body's id is a JSON number (groups, alert channels...), not a string.
    numeric_id: bool,
    /// `<project>/<logical-id>` of its ownership tag, read with the id:
    /// a plan asks for it several times per object (claiming, owners,
    /// moves), and each read scanned the whole text.
    owner: Owner,
    text: Box<str>,
    /// Where its top-level fields are in `text`: found once, when the
    /// object is read, and sliced by every reader of a field after.
    fields: Fields,
}

/// Where the owner is: most often in the text itself (the tag's text
/// after `monform:`), held as its place; as its own text when the tag
/// was written with escapes.
#[derive(Clone)]
enum Owner {
    /// Its bytes in the text; an empty range: no ownership tag.
    At(u32, u32),
    Text(Box<str>),
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
        Remote::from_listed(kind, Listed::from_raw(text))
    }

    /// An object of a list page, its fields found with it ([`listed`]).
    pub(crate) fn from_listed(kind: Kind, listed: Listed) -> Remote {
        let Listed { text, fields } = listed;
        let id_field = kind.id_field();
        // Of a key given twice, the last, as `Fields` reads it.
        let (mut id_at, mut tags_at) = (None, None);
        for (key, value) in fields.iter(&text) {
            if key == id_field {
                id_at = Some(value);
            } else if key == "tags" {
                tags_at = Some(value);
            }
        }
        let (numeric_id, id, owner) = identity(&text, id_at, tags_at);
        Remote {
            kind,
            numeric_id,
            id,
            owner,
            text,
            fields,
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
        match &self.owner {
            Owner::At(start, end) => self.text.get(*start as usize..*end as usize)?.split_once('/'),
            Owner::Text(owner) => owner.split_once('/'),
        }
    }

    /// The whole body, parsed.
    pub fn body(&self) -> Value {
        // The text was valid JSON when it was stored.
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// The whole body as its compact JSON text, unparsed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// One top-level field of the body, parsed alone.
    pub fn field(&self, name: &str) -> Option<Value> {
        serde_json::from_str(self.fields.get(&self.text, name)?).ok()
    }

    /// Some top-level fields of the body, parsed alone (those it has).
    pub fn fields<S: AsRef<str>>(&self, names: &[S]) -> Map<String, Value> {
        self.field_texts(names)
            .into_iter()
            .filter_map(|(name, text)| Some((name.to_owned(), serde_json::from_str(text).ok()?)))
            .collect()
    }

    /// Some top-level fields of the body as their texts, unparsed (those
    /// it has, in the body's order; a key given twice as
    /// [`Fields::wanted`] reads it).
    pub fn field_texts<'n, S: AsRef<str>>(&self, names: &'n [S]) -> Vec<(&'n str, &str)> {
        self.fields.wanted(&self.text, names)
    }

    /// Every top-level field of the body, in order: its key and its
    /// value's text, unparsed (a view of the body that parses only the
    /// fields it reads). Sliced from where they were found when the object
    /// was read: nothing is scanned again.
    pub fn top_fields(&self) -> Iter<'_, '_> {
        self.fields.iter(&self.text)
    }

    /// `updated_at`: changes on every update, so it serves as a version.
    pub fn version(&self) -> Option<String> {
        match self.field("updated_at")? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// An object's id (whether a number, its text) and owner, from the texts
/// of its id and tags fields (parts of `text`).
fn identity(text: &str, id_at: Option<&str>, tags_at: Option<&str>) -> (bool, String, Owner) {
    let id = id_at.and_then(|t| serde_json::from_str::<Value>(t).ok());
    let owner = tags_at.map_or(Owner::At(0, 0), |tags| owner_in(text, tags));
    (
        id.as_ref().is_some_and(Value::is_number),
        id.as_ref().map(id_text).unwrap_or_default(),
        owner,
    )
}

/// A listed object not yet told its kind: its text and where its fields
/// are in it.
pub(crate) struct Listed {
    text: Box<str>,
    fields: Fields,
}

impl Listed {
    /// An object given alone (a cursor listing's entry): its fields found.
    pub(crate) fn from_raw(raw: Box<RawValue>) -> Listed {
        let text: Box<str> = raw.into();
        Listed {
            fields: Fields::of(&text),
            text,
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

/// The objects of a list page, a JSON array of objects: validated, each
/// found and its fields found in one pass (`monform_model::pick::objects_in`);
/// a page was parsed to find its items and each item scanned again.
pub(crate) fn listed(page: &[u8]) -> Result<Vec<Listed>, serde_json::Error> {
    let page = std::str::from_utf8(page).map_err(<serde_json::Error as serde::de::Error>::custom)?;
    Ok(objects_in(page)?
        .into_iter()
        .map(|(range, fields)| Listed {
            text: page.get(range).unwrap_or("null").into(),
            fields,
        })
        .collect())
}

/// Where the owner named by the first ownership tag of `tags` (a part of
/// `text`) is, by the model's rule (`ownership_in_tags`).
fn owner_in(text: &str, tags: &str) -> Owner {
    let Ok(tags) = serde_json::from_str::<Vec<&RawValue>>(tags) else {
        return Owner::At(0, 0);
    };
    for tag in tags {
        let quoted = tag.get();
        let Some(inner) = quoted.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
            continue;
        };
        if !inner.contains('\\') {
            if let Some((project, id)) = ownership_in_tags([inner]) {
                let start = project.as_ptr() as usize - text.as_ptr() as usize;
                let end = start + project.len() + 1 + id.len();
                return match (u32::try_from(start), u32::try_from(end)) {
                    (Ok(start), Ok(end)) => Owner::At(start, end),
                    _ => Owner::Text(format!("{project}/{id}").into_boxed_str()),
                };
            }
        } else if let Ok(tag) = serde_json::from_str::<String>(quoted)
            && let Some((project, id)) = ownership_in_tags([tag.as_str()])
        {
            return Owner::Text(format!("{project}/{id}").into_boxed_str());
        }
    }
    Owner::At(0, 0)
}

impl PartialEq for Remote {
    fn eq(&self, other: &Remote) -> bool {
        self.kind == other.kind && self.id == other.id && self.text == other.text
    }
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote")
            .field("kind", &self.kind)
            .field("id", &self.id)
            .field("body", &&*self.text)
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

    /// An ownership tag written with escapes is read as its text says.
    #[test]
    fn an_escaped_ownership_tag_names_its_owner() {
        let text =
            RawValue::from_string(r#"{"id":"c","tags":["x","monform:p\/q\u002dr","monform:s/t"]}"#.to_owned()).unwrap();
        assert_eq!(Remote::from_text(Kind::Check, text).owner(), Some(("p", "q-r")));
        let text =
            RawValue::from_string(r#"{"id":"c","tags":["monform:p/q"],"tags":["monform:s/t"]}"#.to_owned()).unwrap();
        let remote = Remote::from_text(Kind::Check, text);
        assert_eq!(remote.owner(), Some(("s", "t")), "of tags given twice, the last");
        assert_eq!(remote.field("tags"), remote.body().get("tags").cloned());
    }

    /// Every reader of a field reads it from where the object's read found
    /// it, a key given twice as its last (as `body` reads it).
    #[test]
    fn fields_are_read_as_the_parsed_body_reads_them() {
        let text = r#"{"id":1,"frequency":5,"name":"a","frequency":10,"locations":["x"]}"#;
        let remote = Remote::from_text(Kind::Group, RawValue::from_string(text.to_owned()).unwrap());
        assert_eq!(remote.id_value(), json!(1));
        assert_eq!(
            remote.field_texts(&["locations", "frequency"]),
            [("frequency", "10"), ("locations", r#"["x"]"#)]
        );
        assert_eq!(Value::Object(remote.fields(&["frequency"])), json!({"frequency": 10}));
        let keys: Vec<String> = remote.top_fields().map(|(key, _)| key.into_owned()).collect();
        assert_eq!(keys, ["id", "frequency", "name", "frequency", "locations"]);
        let cut = Remote::from_text(Kind::Group, RawValue::from_string("[1]".to_owned()).unwrap());
        assert_eq!((cut.id.as_str(), cut.top_fields().count()), ("", 0));
    }

    #[test]
    fn escaped_keys_are_found() {
        let text = RawValue::from_string(r#"{"id":"a","updated\u005fat":"v1"}"#.to_owned()).unwrap();
        let remote = Remote::from_text(Kind::Check, text);
        assert_eq!(remote.version().as_deref(), Some("v1"));
        assert_eq!(remote.id_value(), json!("a"));
    }
}
