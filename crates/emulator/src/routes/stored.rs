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
//! checked in one pass over the bytes ([`scan`]), not built. A body the
//! round trip could change is presented the slow way, as before: one that
//! is not canonical compact JSON (whitespace between tokens, an escape
//! `serde_json` would not write, a number it would write otherwise: `-0`,
//! `1e3`, `1.50`, an integer past 64 bits; a key twice in any object),
//! one with a field the presentation replaces in place, and the kinds
//! whose presentation is more than added fields
//! ([`present::added_fields`]). A float is kept when `serde_json` writes
//! back its very digits (what it wrote itself, such as an ICMP check's
//! `25.0`, always is).

use axum::response::Response;
use monform_model::Kind;
use serde_json::Value;

use super::params::{Paging, paged_json};
use super::present::{self, Context, Fields};

mod scan;

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
/// parsing and serialising again would give back byte for byte
/// ([`scan::object`]).
pub fn head(text: &str) -> Option<Head> {
    let mut head = Head::default();
    scan::object(text, |key, value| {
        // A key is never there twice: `scan` refuses that.
        if let Some(index) = FIELDS.iter().position(|f| *f == key) {
            head.present[index] = true;
            if index < READ {
                head.values[index] = serde_json::from_str(&text[value]).ok()?;
            }
        }
        Some(())
    })?;
    Some(head)
}

#[cfg(test)]
mod tests;
