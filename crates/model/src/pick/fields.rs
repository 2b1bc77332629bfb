//! Where an object's top-level fields are in its JSON text, found by one
//! scan of its bytes and kept compact ([`Fields`]), so that every later
//! reader of a field (an id, a tag, a check's schedule, a text compared
//! whole) slices the text instead of scanning it again. A listed object
//! was scanned three times (its id and owner tag, the run budget's
//! schedule, the differ's view), a tenth of a no-op plan's instructions.
//!
//! The rule for a key given twice is defined here once, as serde_json's
//! `Value` reads one (the service's contract is silent): its LAST value,
//! at its FIRST place.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The top-level fields of one object's JSON text: where each value ends,
/// as the distance from the previous field's value end (LEB128, one byte
/// for a value under 128 bytes: about a byte a field). A key and where its
/// value starts are found again from there, a few bytes each, when read.
/// Empty when the text is not an object (or was cut short).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    ends: Box<[u8]>,
}

impl Fields {
    /// The fields of the object in `text` (valid JSON: strings are
    /// skipped with `memchr`, nothing is parsed or validated).
    pub fn of(text: &str) -> Fields {
        Fields::read(text, |_, _| ())
    }

    /// [`Fields::of`], showing `each` every field as it is found (its key
    /// and its value's text, in order): what a reader of a few fields
    /// needs when the object is read, without walking them again. When
    /// the text is not a whole object the fields found are empty, and
    /// what `each` was shown before the cut is to be disregarded.
    pub fn read<'t>(text: &'t str, mut each: impl FnMut(Cow<'t, str>, &'t str)) -> Fields {
        let mut ends = Vec::with_capacity(32);
        let mut last = 0;
        let complete = scan(text.as_bytes(), |key_at, key_end, escaped, value_at, value_end| {
            push_varint(&mut ends, value_end - last);
            last = value_end;
            if let Some((key, value)) = field_at(text, key_at, key_end, escaped, value_at, value_end) {
                each(key, value);
            }
        });
        Fields {
            ends: if complete {
                ends.into_boxed_slice()
            } else {
                Box::default()
            },
        }
    }

    /// No fields: not an object, or an empty one.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every top-level field of `text` (the text these fields were found
    /// in), in order: its key (unescaped) and its value's text.
    pub fn iter<'f, 't>(&'f self, text: &'t str) -> Iter<'f, 't> {
        Iter {
            ends: &self.ends,
            at: 0,
            text,
            last: None,
        }
    }

    /// The text of field `name`: of a key given twice, the last.
    pub fn get<'t>(&self, text: &'t str, name: &str) -> Option<&'t str> {
        self.iter(text)
            .filter(|(key, _)| key == name)
            .last()
            .map(|(_, value)| value)
    }

    /// The texts of the fields of `names` the object has, each at the
    /// place of its key's first occurrence and with its last value (as a
    /// parsed body holds them), in the text's order.
    pub fn wanted<'n, 't, S: AsRef<str>>(&self, text: &'t str, names: &'n [S]) -> Vec<(&'n str, &'t str)> {
        let mut found: Vec<(&'n str, &'t str)> = Vec::new();
        for (key, value) in self.iter(text) {
            let Some(name) = names.iter().map(AsRef::as_ref).find(|name| *name == key) else {
                continue;
            };
            match found.iter_mut().find(|(n, _)| *n == name) {
                Some(seen) => seen.1 = value,
                None => found.push((name, value)),
            }
        }
        found
    }

    /// How many bytes the index holds (for tests of its size).
    pub fn index_len(&self) -> usize {
        self.ends.len()
    }
}

/// The fields of a [`Fields`], in the text's order.
pub struct Iter<'f, 't> {
    ends: &'f [u8],
    /// Where the next field's end is in `ends`.
    at: usize,
    text: &'t str,
    /// The previous field's value end in `text` (`None`: before the first).
    last: Option<usize>,
}

impl<'t> Iterator for Iter<'_, 't> {
    type Item = (Cow<'t, str>, &'t str);

    fn next(&mut self) -> Option<Self::Item> {
        let delta = read_varint(self.ends, &mut self.at)?;
        let bytes = self.text.as_bytes();
        // Just past the `{`, or the `,` after the previous value.
        let after = skip_space(bytes, self.last.unwrap_or(0)) + 1;
        let end = self.last.unwrap_or(0) + delta;
        self.last = Some(end);
        let key_at = skip_space(bytes, after);
        let (key_end, escaped) = key_end(bytes, key_at)?;
        let value_at = skip_space(bytes, skip_space(bytes, key_end) + 1);
        field_at(self.text, key_at, key_end, escaped, value_at, end)
    }
}

/// A field's key (unescaped) and value text, from where they are.
fn field_at(
    text: &str,
    key_at: usize,
    key_end: usize,
    escaped: bool,
    value_at: usize,
    value_end: usize,
) -> Option<(Cow<'_, str>, &str)> {
    let value = text.get(value_at..value_end)?;
    let key = if escaped {
        Cow::Owned(serde_json::from_str::<String>(text.get(key_at..key_end)?).ok()?)
    } else {
        Cow::Borrowed(text.get(key_at + 1..key_end.checked_sub(1)?)?)
    };
    Some((key, value))
}

/// Just past the key starting (with its quote) at `at`, and whether it
/// holds an escape: a key is a few bytes, read a byte at a time.
fn key_end(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut at = at + 1;
    let mut escaped = false;
    loop {
        match bytes.get(at)? {
            b'"' => return Some((at + 1, escaped)),
            b'\\' => {
                escaped = true;
                at += 2;
            }
            _ => at += 1,
        }
    }
}

/// The objects of a JSON array's text (a list page) and their fields, in
/// one pass of serde_json's validating parser: each object's place in
/// `page` and where its top-level fields are in it, as [`Fields::of`]
/// finds them in its text alone (an item that is not an object is kept,
/// without fields).
pub fn objects_in(page: &str) -> Result<Vec<(Range<usize>, Fields)>, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_str(page);
    let objects = Page { page }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(objects)
}

/// A list page: its objects, each found past the previous one.
struct Page<'p> {
    page: &'p str,
}

impl<'de> DeserializeSeed<'de> for Page<'de> {
    type Value = Vec<(Range<usize>, Fields)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Page<'de> {
    type Value = Vec<(Range<usize>, Fields)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut objects = Vec::with_capacity(seq.size_hint().unwrap_or(100));
        let bytes = self.page.as_bytes();
        // Just past the `[`, then past each object.
        let mut after = skip_space(bytes, 0) + 1;
        let mut ends = Vec::with_capacity(32);
        while let Some(item) = seq.next_element_seed(Object {
            page: self.page,
            ends: &mut ends,
        })? {
            // The text was valid JSON up to here: `,` and space, then the item.
            let mut start = skip_space(bytes, after);
            if bytes.get(start) == Some(&b',') {
                start = skip_space(bytes, start + 1);
            }
            let (end, fields) = match item {
                Item::Object(last_end) => {
                    let end = skip_space(bytes, last_end.unwrap_or(start + 1)) + 1;
                    // The ends were found from the page's start: from the object's.
                    let mut fields = Vec::with_capacity(ends.len());
                    let mut last = start;
                    for &value_end in &ends {
                        push_varint(&mut fields, value_end - last);
                        last = value_end;
                    }
                    ends.clear();
                    let fields = Fields {
                        ends: fields.into_boxed_slice(),
                    };
                    (end, fields)
                }
                // Kept, without fields, as a text alone would be.
                Item::Other => (value_end(bytes, start).unwrap_or(start), Fields::default()),
            };
            objects.push((start..end, fields));
            after = end;
        }
        Ok(objects)
    }
}

/// One item of a page: an object's field value ends (from the page's
/// start) into `ends`.
struct Object<'p, 'e> {
    page: &'p str,
    ends: &'e mut Vec<usize>,
}

/// What an item of a page was.
enum Item {
    /// An object; where its last field's value ends, if it has fields.
    Object(Option<usize>),
    /// Anything else.
    Other,
}

impl<'de> DeserializeSeed<'de> for Object<'de, '_> {
    type Value = Item;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Object<'de, '_> {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let base = self.page.as_ptr() as usize;
        let mut last = None;
        while map.next_key::<IgnoredAny>()?.is_some() {
            let value: &'de RawValue = map.next_value()?;
            let end = value.get().as_ptr() as usize - base + value.get().len();
            self.ends.push(end);
            last = Some(end);
        }
        Ok(Item::Object(last))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Item::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Item::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Item::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Item::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Item::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Item::Other)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Item::Other)
    }
}

fn push_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let byte = *bytes.get(*at)?;
        *at += 1;
        n |= usize::from(byte & 0x7f).checked_shl(shift)?;
        if byte < 0x80 {
            return Some(n);
        }
        shift += 7;
    }
}

/// Calls `each` with where every top-level field of the object in
/// `bytes` is, in order: its key's start and end (quotes included),
/// whether the key holds an escape, its value's start and end. False when
/// it is not an object or is cut short.
fn scan(bytes: &[u8], mut each: impl FnMut(usize, usize, bool, usize, usize)) -> bool {
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return false;
    }
    at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return true;
    }
    loop {
        let key_at = at;
        let Some((key_end, escaped)) = key_end(bytes, at) else {
            return false;
        };
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return false;
        }
        at = skip_space(bytes, at + 1);
        let value_at = at;
        let Some(value_end) = value_end(bytes, at) else {
            return false;
        };
        each(key_at, key_end, escaped, value_at, value_end);
        at = skip_space(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return true,
            _ => return false,
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// Just past the string starting (with its quote) at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut at = at + 1;
    loop {
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes[at] {
            b'\\' => at += 2,
            _ => return Some(at + 1),
        }
    }
}

/// Just past the value starting at `at`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                // `[`, `]` are `{`, `}` but for bit 0x20.
                match bytes.get(at)? | 0x20 {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let mut end = at;
            while let Some(byte) = bytes.get(end) {
                if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                end += 1;
            }
            (end > at).then_some(end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Vec<(String, &str)> {
        Fields::of(text)
            .iter(text)
            .map(|(key, value)| (key.into_owned(), value))
            .collect()
    }

    /// The fields serde_json reads, each value's text as its `RawValue` would be.
    #[test]
    fn finds_the_fields_serde_json_finds() {
        let long = format!(
            r#"{{"a":"{}","b":[{}1],"c":2}}"#,
            "x".repeat(70_000),
            "[0],".repeat(200)
        );
        let texts = [
            r#"{"id":"c1","n":-1.5e3,"t":true,"z":null,"s":"a \"q\" \\ {[","o":{"a":[1,{"b":"}"}]},"l":[[],{}],"e":"","u\u005fk":"é"}"#,
            " { \"a\" : [ 1 , 2 ] , \"b\" : { } , \"c\" : 7 } ",
            "{}",
            "{\"only\":{\"x\":\"]\"}}",
            "{\"w\":[\"[\",\"{\",{\"]\":\"}\"}]}",
            &long,
        ];
        for text in texts {
            let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
            let found = fields(text);
            assert_eq!(found.len(), parsed.len(), "{text}");
            for (key, value) in &found {
                let raw: &serde_json::value::RawValue = serde_json::from_str(value).unwrap();
                assert_eq!(raw.get(), *value);
                assert_eq!(
                    serde_json::from_str::<serde_json::Value>(value).unwrap(),
                    parsed[key],
                    "{text}: {key}"
                );
            }
        }
        assert_eq!(fields(r#"{"u\u005fk":1}"#), [("u_k".to_owned(), "1")]);
        for text in texts {
            let mut seen = Vec::new();
            let index = Fields::read(text, |key, value| seen.push((key.into_owned(), value)));
            assert_eq!(seen, fields(text), "{text}");
            assert_eq!(index, Fields::of(text));
        }
        assert!(
            Fields::read("{\"a\":1,", |_, _| ()).is_empty(),
            "a text cut short has no fields"
        );
    }

    #[test]
    fn anything_but_a_whole_object_has_no_fields() {
        for text in [
            "null",
            "[1]",
            "\"x\"",
            "",
            "{\"a\":1",
            "{\"a\" 1}",
            "{\"a\":\"x}",
            "{\"a\":[1}",
        ] {
            assert!(fields(text).is_empty(), "{text}");
        }
    }

    /// A page's objects and their fields are found as in each one's text.
    #[test]
    fn a_pages_objects_are_read_as_each_alone() {
        let objects = [
            r#"{"id":"c1","o":{"a":[1,{"b":"}"}]},"s":"a \"q\" ,{["}"#,
            "{}",
            "{ \"a\" : [ 1 , 2 ] , \"u\\u005fk\" : { } }",
            r#"{"id":2,"id":3}"#,
        ];
        for page in [
            format!("[{}]", objects.join(",")),
            format!(" [ {} ] ", objects.join(" ,\n ")),
        ] {
            let found = objects_in(&page).unwrap();
            assert_eq!(found.len(), objects.len());
            for ((range, index), object) in found.into_iter().zip(objects) {
                assert_eq!(&page[range.clone()], object);
                assert_eq!(index, Fields::of(object), "{object}");
            }
        }
        assert!(objects_in("[]").unwrap().is_empty());
        let page = r#"[7, null ,"s",[1,{"a":"]"}],{"a":1},true,-1.5e3]"#;
        let found = objects_in(page).unwrap();
        let texts: Vec<&str> = found.iter().map(|(range, _)| &page[range.clone()]).collect();
        let with_fields: Vec<usize> = found.iter().map(|(_, index)| index.index_len()).collect();
        assert_eq!(with_fields, [0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(
            texts,
            [
                "7",
                "null",
                r#""s""#,
                r#"[1,{"a":"]"}]"#,
                r#"{"a":1}"#,
                "true",
                "-1.5e3"
            ]
        );
        for bad in ["[{\"a\":}]", "{}", "[{}", "[{}] x", "[{\"a\":1}{}]"] {
            assert!(objects_in(bad).is_err(), "{bad}");
        }
    }

    /// A key given twice reads as serde_json's `Value` reads it: its last
    /// value, at its first place.
    #[test]
    fn a_key_given_twice_is_its_last_value_at_its_first_place() {
        let text = r#"{"name":"a","id":1,"nested":{"name":"no"},"name":"b"}"#;
        let index = Fields::of(text);
        assert_eq!(index.get(text, "name"), Some(r#""b""#));
        assert_eq!(index.get(text, "id"), Some("1"));
        assert_eq!(index.get(text, "missing"), None);
        assert_eq!(index.wanted(text, &["id", "name"]), [("name", r#""b""#), ("id", "1")]);
        let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
        let order: Vec<&String> = parsed.as_object().unwrap().keys().collect();
        assert_eq!(order, ["name", "id", "nested"]);
        assert_eq!(parsed["name"], "b");
    }

    /// About a byte a field: a listed check's 21 fields in 23 bytes.
    #[test]
    fn the_index_is_a_byte_or_two_a_field() {
        let text = r#"{"checkType":"API","name":"api check 7501","activated":true,"request":{"url":"REPLACE"},"id":"a24412c5"}"#
            .replace("REPLACE", &"u".repeat(300));
        let index = Fields::of(&text);
        assert_eq!(index.iter(&text).count(), 5);
        assert_eq!(index.index_len(), 6);
        for n in [0, 1, 127, 128, 16_383, 16_384, 1 << 30] {
            let mut out = Vec::new();
            push_varint(&mut out, n);
            let mut at = 0;
            assert_eq!(read_varint(&out, &mut at), Some(n));
            assert_eq!(at, out.len());
        }
    }
}
