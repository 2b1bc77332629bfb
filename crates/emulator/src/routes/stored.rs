//! A list page written from the objects' stored text. Every stored body is
//! the compact text `serde_json` wrote (`Objects::insert`, `replace`), so an
//! object whose presentation only adds fields is its stored text with those
//! fields spliced in before the closing brace: byte for byte what parsing it
//! into a `Value`, adding the fields and serialising it again gives, without
//! building the `Value` (parsing 100 checks' bodies into `IndexMap`s and
//! writing them back was a third of the emulator's CPU in a no-op plan at
//! 100,000 checks).
//!
//! Only what the presentation reads is parsed ([`Head`]); the rest is
//! skipped (checked, not built). A body the round trip could change is
//! presented the slow way, as before: one that is not canonical compact
//! JSON (whitespace between tokens, an escape `serde_json` would not
//! write, a number it would write otherwise: `-0`, `1e3`, `1.50`, an
//! integer past 64 bits), one with a field the presentation sets twice or
//! replaces in place, and the kinds whose presentation is more than added
//! fields ([`present::added_fields`]). A float is kept when `serde_json`
//! writes back its very digits (what it wrote itself, such as an ICMP
//! check's `25.0`, always is).

use std::fmt;

use axum::response::Response;
use monform_model::Kind;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::params::{Paging, paged_json};
use super::present::{self, Context, Fields};

/// The top-level fields the presentation looks at: whether each is there,
/// and the values of those it reads (`READ`).
const FIELDS: [&str; 7] = [
    "alertChannelSubscriptions",
    "id",
    "secret",
    "alertChannels",
    "apiCheckDefaults",
    "autoSubscribe",
    "subscriptions",
];
/// How many of `FIELDS`, from the first, have their values kept.
const READ: usize = 3;

static NULL: Value = Value::Null;

/// The fields of `FIELDS` a stored object's text holds, and the values of
/// those read.
#[derive(Debug, Default)]
pub struct Head {
    present: [bool; FIELDS.len()],
    values: [Value; READ],
}

impl Fields for Head {
    fn has(&self, name: &str) -> bool {
        let known = FIELDS.iter().position(|f| *f == name);
        debug_assert!(known.is_some(), "`{name}` is not one of the fields a Head keeps");
        known.is_some_and(|i| self.present[i])
    }
    fn value(&self, name: &str) -> &Value {
        let known = FIELDS[..READ].iter().position(|f| *f == name);
        debug_assert!(known.is_some(), "`{name}` is not one of the values a Head keeps");
        known.map_or(&NULL, |i| &self.values[i])
    }
}

/// A row of a list page: its text kept (`Head`), or parsed (the slow way).
pub enum Listed {
    Text(String, Head),
    Parsed(Value),
}

impl Fields for Listed {
    fn has(&self, name: &str) -> bool {
        match self {
            Listed::Text(_, head) => head.has(name),
            Listed::Parsed(body) => body.has(name),
        }
    }
    fn value(&self, name: &str) -> &Value {
        match self {
            Listed::Text(_, head) => head.value(name),
            Listed::Parsed(body) => body.value(name),
        }
    }
}

impl Listed {
    /// A stored body of `kind`, kept as text when it can be presented so.
    pub fn of(kind: Kind, text: String) -> Listed {
        if present::adds_fields_only(kind)
            && let Some(head) = head(&text)
        {
            return Listed::Text(text, head);
        }
        // As `Objects::page` reads a body it cannot parse.
        Listed::Parsed(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// About how many bytes the object takes in a response.
    fn room(&self) -> usize {
        match self {
            Listed::Text(text, _) => text.len() + 256,
            Listed::Parsed(_) => 1024,
        }
    }

    /// Appends the object as a response shows it to `out`.
    pub fn write(self, kind: Kind, context: &Context, out: &mut Vec<u8>) {
        let body = match self {
            Listed::Text(text, head) => match present::added_fields(kind, &head, context) {
                Some(added) if added.iter().all(|(name, _)| !head.has(name)) => {
                    splice(&text, &added, out);
                    return;
                }
                _ => serde_json::from_str(&text).unwrap_or(Value::Null),
            },
            Listed::Parsed(body) => body,
        };
        let presented = present::present(kind, body, context);
        // Writing a `Value` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, &presented);
    }
}

/// The response for a page of `rows` (of `kind`) of a list of `total`.
pub fn respond(kind: Kind, rows: Vec<Listed>, context: &Context, total: usize, paging: Paging) -> Response {
    let count = rows.len();
    let room: usize = rows.iter().map(Listed::room).sum();
    let mut body = Vec::with_capacity(room + count + 2);
    body.push(b'[');
    for (index, row) in rows.into_iter().enumerate() {
        if index > 0 {
            body.push(b',');
        }
        row.write(kind, context, &mut body);
    }
    body.push(b']');
    paged_json(body, count, total, paging)
}

/// `text` (a compact JSON object) with `added` fields after its own.
fn splice(text: &str, added: &[(&str, String)], out: &mut Vec<u8>) {
    let open = &text[..text.len() - 1];
    out.extend_from_slice(open.as_bytes());
    let mut first = open == "{";
    for (name, value) in added {
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'}');
}

/// The fields of `FIELDS` in `text`, when `text` is a JSON object that
/// parsing and serialising again would give back byte for byte.
pub fn head(text: &str) -> Option<Head> {
    if !(text.starts_with('{') && text.ends_with('}') && canonical(text)) {
        return None;
    }
    serde_json::from_str::<Head>(text).ok()
}

/// Whether `text` (valid JSON or not) has nothing `serde_json`'s compact
/// writer would write otherwise: no whitespace between tokens, only the
/// escapes it makes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00XX`
/// in lower case for the other control characters), and every number as
/// it writes the value read from it ([`writes_back`]).
fn canonical(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // A string, to its closing quote: most of a body's bytes,
                // skipped to the next quote or escape at once.
                i += 1;
                loop {
                    let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                        return false;
                    };
                    i += at;
                    if bytes[i] == b'"' {
                        break;
                    }
                    match escape(&bytes[i + 1..]) {
                        Some(length) => i += 1 + length,
                        None => return false,
                    }
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => return false,
            // Outside strings only a number has these.
            b'-' | b'0'..=b'9' => {
                let length = bytes[i..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(bytes.len() - i);
                if !writes_back(&text[i..i + length]) {
                    return false;
                }
                i += length;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// Whether `serde_json` writes the number it reads from `token` as
/// `token`: at once for an integer of up to 18 digits without a leading
/// zero (it fits 64 bits, and integers are written in full); else by
/// reading and writing it (a float's digits, `-0`, a longer integer).
fn writes_back(token: &str) -> bool {
    let digits = token.strip_prefix('-').unwrap_or(token);
    let plain = (1..=18).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (!digits.starts_with('0') || token == "0");
    plain
        || serde_json::from_str::<Value>(token)
            .and_then(|value| serde_json::to_string(&value))
            .is_ok_and(|written| written == token)
}

/// How long the escape after a backslash (`rest`) is, when it is one
/// `serde_json` writes.
fn escape(rest: &[u8]) -> Option<usize> {
    match rest.first()? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => {
            let [b'0', b'0', high @ (b'0' | b'1'), low] = rest.get(1..5)? else {
                return None;
            };
            let low = match low {
                b'0'..=b'9' => low - b'0',
                b'a'..=b'f' => low - b'a' + 10,
                _ => return None,
            };
            // Those with a short escape are written short.
            let code = (high - b'0') * 16 + low;
            (!matches!(code, 8 | 9 | 10 | 12 | 13)).then_some(5)
        }
        _ => None,
    }
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Head, D::Error> {
        deserializer.deserialize_map(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head::default();
        while let Some(key) = map.next_key::<Key>()? {
            let Key(Some(index)) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            // Parsing keeps the last of two equal keys, in the first's place.
            if std::mem::replace(&mut head.present[index], true) {
                return Err(de::Error::custom("a field twice"));
            }
            if index < READ {
                head.values[index] = map.next_value()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(head)
    }
}

/// A top-level key: its place in `FIELDS`, if there.
struct Key(Option<usize>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(Key(FIELDS.iter().position(|f| *f == name)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests;
