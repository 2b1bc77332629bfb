use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

/// Whether `scan` keeps `text`.
fn kept(text: &str) -> bool {
    object(text, |_, _| Some(())).is_some()
}

/// What the slow way writes for `text`: parsed into a `Value`, written again.
fn round_trip(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text).ok().map(|value| value.to_string())
}

fn values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z\"\\\\/\u{0}-\u{1f}\u{7f}é✓😀 ]{0,40}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c\"\\\\\n]{0,3}", inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A body's text with a few bytes changed into JSON's punctuation, digits,
/// escapes and whitespace.
fn edited() -> impl Strategy<Value = String> {
    let edit = (
        any::<prop::sample::Index>(),
        0..3u8,
        prop::sample::select(vec![
            "", "\"", "\\", ",", ":", "{", "}", "[", "]", " ", "0", "-", ".", "e", "1", "u", "t", "\\u00", "\n",
            "\u{1}",
        ]),
    );
    (values(), prop::collection::vec(edit, 1..4)).prop_map(|(value, edits)| {
        let mut text = json!({ "id": "x", "body": value }).to_string();
        for (at, how, with) in edits {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match how {
                0 => text.insert_str(at, with),
                1 if at < text.len() => {
                    text.remove(at);
                }
                _ => {
                    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
                    text.replace_range(at..end, with);
                }
            }
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// What serde_json wrote is kept exactly when reading and writing it
    /// again gives the same text (a float whose digits change is not).
    #[test]
    fn what_serde_json_writes_is_kept_when_it_writes_it_back(value in values()) {
        let text = json!({ "a": value, "b": [value] }).to_string();
        let written = round_trip(&text);
        prop_assert_eq!(kept(&text), written.as_deref() == Some(text.as_str()), "{}", text);
    }

    /// Whatever is kept, the slow way writes byte for byte (it parses).
    #[test]
    fn what_is_kept_the_round_trip_gives_back(text in edited()) {
        if kept(&text) {
            let written = round_trip(&text);
            prop_assert_eq!(written.as_deref(), Some(text.as_str()));
        }
    }
}

#[test]
fn top_level_fields_come_with_their_values_spans() {
    let text = r#"{"a":[1,{"b":2}],"c\n":"x","d":{}}"#;
    let mut fields = Vec::new();
    assert!(
        object(text, |key, span| {
            fields.push((key.to_owned(), text[span].to_owned()));
            Some(())
        })
        .is_some()
    );
    let expected = [("a", r#"[1,{"b":2}]"#), ("c\\n", r#""x""#), ("d", "{}")];
    assert_eq!(fields, expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
    // A field may refuse the text.
    assert!(object(text, |key, _| (key != "d").then_some(())).is_none());
}

#[test]
fn what_the_round_trip_changes_or_refuses_is_not_kept() {
    for text in [
        r#"{"a":1,"a":2}"#,
        r#"{"o":{"k":[{"x":1,"x":1}]}}"#,
        r#"{"a":"\u0061"}"#,
        r#"{"a":"\/"}"#,
        "{\"a\":\"\u{1f}\"}",
        r#"{"a":1.0e1}"#,
        r#"{"a":-0}"#,
        r#"{"a":1,}"#,
        r#"{"a" :1}"#,
        r#"{"a":nul}"#,
        r#"{"a":[}"#,
        r#"{"a":1}}"#,
        r#"[{"a":1}]"#,
        r#""#,
    ] {
        assert!(!kept(text), "{text}");
    }
    // In each of the eight bytes of a word, and in the bytes after the last whole word.
    for at in [0, 1, 6, 7, 8, 9, 15, 16, 17, 40] {
        let long = "x".repeat(at);
        assert!(!kept(&format!("{{\"a\":\"{long}\u{1}y\"}}")), "raw control at {at}");
        assert!(!kept(&format!("{{\"a\":\"{long}\\/\"}}")), "escape at {at}");
        assert!(!kept(&format!("{{\"a\":\"{long}")), "unterminated at {at}");
        assert!(kept(&format!("{{\"a\":\"{long}\\u001f\\\"\"}}")), "escapes at {at}");
    }
    let deep = format!("{{\"a\":{}1{}}}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(!kept(&deep));
    let shallow = format!("{{\"a\":{}1{}}}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
    assert!(kept(&shallow));
    assert!(kept(
        r#"{"":{"":[]},"a":"\u001f\t\"\\","b":-1.5e-7,"c":[true,false,null]}"#
    ));
}

#[test]
fn a_stretch_ends_at_the_first_quote_backslash_or_control_character() {
    for length in 0..40 {
        for at in 0..length {
            for stop_byte in [b'"', b'\\', 0x00, 0x1f] {
                let mut rest = vec![b'a'; length];
                // Bytes that must not stop it, around the one that does.
                for (i, b) in rest.iter_mut().enumerate() {
                    *b = [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff, b'a'][i % 9];
                }
                rest[at] = stop_byte;
                if at + 1 < length {
                    rest[at + 1] = 0x00;
                }
                assert_eq!(stop(&rest), Some(at), "{length} {at} {stop_byte}");
            }
        }
        let plain: Vec<u8> = (0..length)
            .map(|i| [b' ', b'!', b'#', 0x7f, 0x80, 0xff, b'a'][i % 7])
            .collect();
        assert_eq!(stop(&plain), None);
    }
}
