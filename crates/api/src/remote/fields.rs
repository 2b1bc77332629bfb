//! The top-level fields of an object's JSON text, found by scanning its
//! bytes: no value is parsed or built, strings are skipped with `memchr`.
//! A plan reads a few fields of every listed object (its id and owner tag,
//! a check's schedule) and compares the others as text; serde_json's
//! skipping of the values between them was most of that reading.

use std::borrow::Cow;
use std::ops::ControlFlow;

/// Calls `each` with every top-level field of the object in `text`, in
/// order: its key (unescaped) and its value's text, until `each` breaks.
/// False when `text` is not an object (then nothing is visited) or is cut
/// short; the texts given are valid JSON (a stored body was when stored).
pub fn each_field<'t>(text: &'t str, mut each: impl FnMut(Cow<'t, str>, &'t str) -> ControlFlow<()>) -> bool {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return false;
    }
    at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return true;
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return false;
        }
        let Some(key_end) = string_end(bytes, at) else {
            return false;
        };
        let key_at = at;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return false;
        }
        at = skip_space(bytes, at + 1);
        let Some(value_end) = value_end(bytes, at) else {
            return false;
        };
        let (Some(quoted), Some(value)) = (text.get(key_at..key_end), text.get(at..value_end)) else {
            return false;
        };
        let key = &quoted[1..quoted.len() - 1];
        let flow = if key.contains('\\') {
            match serde_json::from_str::<String>(quoted) {
                Ok(key) => each(Cow::Owned(key), value),
                Err(_) => return false,
            }
        } else {
            each(Cow::Borrowed(key), value)
        };
        if flow.is_break() {
            return true;
        }
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
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
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

    fn fields(text: &str) -> Option<Vec<(String, &str)>> {
        let mut found = Vec::new();
        each_field(text, |key, value| {
            found.push((key.into_owned(), value));
            ControlFlow::Continue(())
        })
        .then_some(found)
    }

    /// The fields serde_json reads, each value's text as its `RawValue` would be.
    #[test]
    fn finds_the_fields_serde_json_finds() {
        let texts = [
            r#"{"id":"c1","n":-1.5e3,"t":true,"z":null,"s":"a \"q\" \\ {[","o":{"a":[1,{"b":"}"}]},"l":[[],{}],"e":"","u\u005fk":"é"}"#,
            " { \"a\" : [ 1 , 2 ] , \"b\" : { } , \"c\" : 7 } ",
            "{}",
            "{\"only\":{\"x\":\"]\"}}",
        ];
        for text in texts {
            let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
            let found = fields(text).unwrap();
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
        assert_eq!(fields(r#"{"u\u005fk":1}"#).unwrap(), [("u_k".to_owned(), "1")]);
    }

    #[test]
    fn anything_but_an_object_has_no_fields() {
        for text in ["null", "[1]", "\"x\"", "", "{\"a\":1", "{\"a\" 1}", "{\"a\":\"x}"] {
            assert!(fields(text).is_none_or(|f| f.is_empty()), "{text}");
        }
        assert!(fields("null").is_none());
    }

    #[test]
    fn stops_when_told() {
        let mut seen = Vec::new();
        assert!(each_field(r#"{"a":1,"b":2,"c":3}"#, |key, _| {
            let stop = key == "b";
            seen.push(key.into_owned());
            if stop {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }));
        assert_eq!(seen, ["a", "b"]);
    }
}
