//! Text from elsewhere (the service) written into the files as a literal:
//! the one escape every writer uses (`export`, `import --all-unmanaged`,
//! `codify`, the reconciler's `codify` drift policy).
//!
//! The loader substitutes `${env:}`, `${var:}` and `${each}` in every
//! string of a resource file and of monform.toml (`crate::interpolate`),
//! and reads `$${` as a literal `${`. A check named `x ${env:GITHUB_TOKEN}`
//! in the service, written as is, would make the next `apply` in CI send
//! the token to the service; written with every `${` as `$${`, it reads
//! back as the service's text, whatever that holds (`$${` too: `$$${`
//! reads back as `$${`).
//!
//! Map keys are never substituted and so are written as they are; neither
//! are the items of an inline `forEach` (they are substituted into the
//! resource as values, not read again), nor files read by `{ file: }`.

use std::borrow::Cow;

use serde_json::Value;

/// `text` as a string of a resource file must say it to read back as
/// `text`: every `${` written `$${`.
pub fn escape(text: &str) -> Cow<'_, str> {
    if text.contains("${") {
        Cow::Owned(text.replace("${", "$${"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The inverse of [`escape`]: the text an escaped string reads back as
/// (for a value moved out of the files into a file read as is, such as a
/// script). Every `$${` in escaped text was a `${`.
pub fn unescape(text: &str) -> Cow<'_, str> {
    if text.contains("$${") {
        Cow::Owned(text.replace("$${", "${"))
    } else {
        Cow::Borrowed(text)
    }
}

/// [`escape`] of every string in `value`, in lists and maps at any depth
/// (not map keys, which the loader reads as they are).
pub fn escape_value(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(escaped) = escape(s) {
                *s = escaped;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(escape_value),
        Value::Object(map) => map.values_mut().for_each(escape_value),
        _ => {}
    }
}

/// `value` with [`escape_value`] applied, copied only when it has
/// something to escape.
pub fn escaped(value: &Value) -> Cow<'_, Value> {
    if needs_escape(value) {
        let mut copy = value.clone();
        escape_value(&mut copy);
        Cow::Owned(copy)
    } else {
        Cow::Borrowed(value)
    }
}

fn needs_escape(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("${"),
        Value::Array(items) => items.iter().any(needs_escape),
        Value::Object(map) => map.values().any(needs_escape),
        _ => false,
    }
}

/// Whether `text`, as written in a file, holds a substitution: a `${` not
/// escaped (`$${`, which reads as a literal `${`).
pub fn has_substitution(text: &str) -> bool {
    text.match_indices("${").any(|(at, _)| !text[..at].ends_with('$'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::interpolate::{EnvPolicy, Scope, interpolate};
    use crate::source::Span;
    use serde_json::json;

    /// What the loader reads `text` as, with every variable set to `LEAKED`.
    fn read_back(text: &str) -> String {
        let env = |_: &str| Some("LEAKED".to_owned());
        let policy = EnvPolicy::default();
        let budget = Budget::default();
        let scope = Scope {
            env: &env,
            policy: &policy,
            vars: Some(&[]),
            each: None,
            budget: &budget,
        };
        interpolate(text, Span::new(0, 0, 0), &scope, 0)
            .map(|(text, _)| text)
            .unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    #[test]
    fn escaped_text_reads_back_as_itself() {
        for text in [
            "x ${env:GITHUB_TOKEN}",
            "${env:A}${env:B}",
            "already $${env:A}",
            "$$${env:A} and $$$${var:b}",
            "${var:nope} ${each.key} ${unknown} `${js}`",
            "${env:A:-${env:B}}",
            "$",
            "ends with $",
            "{ $ { $} ${",
            "plain",
            "",
        ] {
            let escaped = escape(text);
            assert_eq!(read_back(&escaped), text, "{escaped}");
            assert!(!has_substitution(&escaped), "{escaped}");
            assert_eq!(unescape(&escaped), text);
        }
    }

    #[test]
    fn substitutions_are_told_from_escapes() {
        assert!(has_substitution("a ${env:X}"));
        assert!(has_substitution("$${env:X} ${var:y}"));
        assert!(!has_substitution("$${env:X}"));
        assert!(!has_substitution("no dollar {brace}"));
    }

    #[test]
    fn every_string_of_a_value_is_escaped_but_not_keys() {
        let value = json!({"name": "x ${env:T}", "n": 5, "tags": ["${env:T}", "ok"],
            "nested": {"${key}": [{"v": "$${a}"}]}});
        let out = escaped(&value).into_owned();
        assert_eq!(
            out,
            json!({"name": "x $${env:T}", "n": 5, "tags": ["$${env:T}", "ok"],
                "nested": {"${key}": [{"v": "$$${a}"}]}})
        );
        let plain = json!({"name": "a", "tags": ["b"]});
        assert!(matches!(escaped(&plain), Cow::Borrowed(_)));
    }
}
