//! A JSON value written as YAML or TOML text, in the style of what it
//! replaces: the quoting of a scalar, flow or block for a collection.

use monform_config::tree::{NodeValue, parse_yaml};
use serde_json::Value;

/// How the text being replaced was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    /// `[..]` or `{..}` on one line.
    Flow,
    /// One entry a line, starting at this column.
    Block(usize),
}

impl Style {
    /// The style of `text`, the value as written, starting at `column`.
    pub fn of(text: &str, column: usize) -> Style {
        match text.chars().next() {
            Some('\'') => Style::SingleQuoted,
            Some('"') => Style::DoubleQuoted,
            Some('[' | '{') => Style::Flow,
            Some('-') if text.starts_with("- ") || text == "-" => Style::Block(column),
            _ => Style::Plain,
        }
    }
}

/// `value` as YAML in `style`. A block collection's later lines are
/// indented to its column; its first line starts where the old text did.
pub fn yaml(value: &Value, style: Style) -> String {
    match (value, style) {
        (Value::String(s), Style::SingleQuoted) if !s.contains('\n') => format!("'{}'", s.replace('\'', "''")),
        (Value::String(s), Style::DoubleQuoted) => json_string(s),
        (Value::Array(items), Style::Block(column)) if !items.is_empty() => yaml_block(value, column),
        (Value::Object(map), Style::Block(column)) if !map.is_empty() => yaml_block(value, column),
        _ => yaml_flow(value),
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A scalar or a flow collection on one line.
pub fn yaml_flow(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if plain_is_string(s) => s.clone(),
        Value::String(s) => json_string(s),
        Value::Array(items) => format!("[{}]", items.iter().map(yaml_flow).collect::<Vec<_>>().join(", ")),
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", yaml_key(k), yaml_flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn yaml_key(key: &str) -> String {
    if plain_is_string(key) {
        key.to_owned()
    } else {
        json_string(key)
    }
}

/// Whether `s` written plain reads back as the same string (not a number,
/// boolean or null, and nothing YAML gives a meaning).
fn plain_is_string(s: &str) -> bool {
    if s.is_empty() || s.trim() != s || s.contains(['\n', '\t']) || s.contains(": ") || s.contains(" #") {
        return false;
    }
    if s.starts_with([
        '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
    ]) || s.ends_with(':')
        || s.contains([',', '[', ']', '{', '}'])
    {
        return false;
    }
    matches!(parse_yaml(0, &format!("k: {s}\n")), Ok(node) if matches!(
        node.get("k").map(|e| &e.value.value),
        Some(NodeValue::Str(read)) if read == s
    ))
}

/// A non-empty collection in block style, at `column`.
fn yaml_block(value: &Value, column: usize) -> String {
    let indent = " ".repeat(column);
    let mut lines: Vec<String> = Vec::new();
    match value {
        Value::Array(items) => {
            for item in items {
                let body = match item {
                    Value::Object(map) if !map.is_empty() => yaml_block(item, column + 2),
                    Value::Array(inner) if !inner.is_empty() => yaml_block(item, column + 2),
                    _ => yaml_flow(item),
                };
                lines.push(format!("- {body}"));
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let key = yaml_key(key);
                match item {
                    Value::Object(inner) if !inner.is_empty() => lines.push(format!(
                        "{key}:\n{}{}",
                        " ".repeat(column + 2),
                        yaml_block(item, column + 2)
                    )),
                    Value::Array(inner) if !inner.is_empty() => lines.push(format!(
                        "{key}:\n{}{}",
                        " ".repeat(column + 2),
                        yaml_block(item, column + 2)
                    )),
                    _ => lines.push(format!("{key}: {}", yaml_flow(item))),
                }
            }
        }
        _ => return yaml_flow(value),
    }
    lines.join(&format!("\n{indent}"))
}

/// `value` as a TOML value (inline tables and arrays), or `None` for a
/// null, which TOML cannot write.
pub fn toml(value: &Value, style: Style) -> Option<String> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if style == Style::SingleQuoted && !s.contains(['\'', '\n']) => format!("'{s}'"),
        Value::String(s) => json_string(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|v| toml(v, Style::DoubleQuoted))
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| Some(format!("{} = {}", toml_key(k), toml(v, Style::DoubleQuoted)?)))
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
    })
}

pub fn toml_key(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        key.to_owned()
    } else {
        json_string(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_keep_their_quoting_and_stay_strings() {
        assert_eq!(yaml(&json!("it's"), Style::SingleQuoted), "'it''s'");
        assert_eq!(yaml(&json!("a\"b"), Style::DoubleQuoted), "\"a\\\"b\"");
        assert_eq!(yaml(&json!("Web shop"), Style::Plain), "Web shop");
        // Plain text that would read back as something else is quoted.
        for text in ["true", "10", "null", "a: b", "- x", "", "x #y", "[a]"] {
            assert_eq!(yaml(&json!(text), Style::Plain), json_string(text), "{text}");
        }
        assert_eq!(yaml(&json!(5), Style::Plain), "5");
        assert_eq!(toml(&json!("w"), Style::SingleQuoted).unwrap(), "'w'");
        assert_eq!(toml(&json!(null), Style::Plain), None);
    }

    #[test]
    fn collections_follow_the_style_they_replace() {
        let value = json!([{"source": "STATUS_CODE", "target": "200"}, {"source": "BODY"}]);
        assert_eq!(
            yaml(&value, Style::Block(6)),
            "- source: STATUS_CODE\n        target: \"200\"\n      - source: BODY"
        );
        assert_eq!(yaml(&json!(["a", "b"]), Style::Flow), "[a, b]");
        assert_eq!(yaml(&json!({"a": 1}), Style::Flow), "{ a: 1 }");
        assert_eq!(
            toml(&json!({"x y": [1, 2], "n": null}), Style::Plain).unwrap(),
            "{ \"x y\" = [1, 2] }"
        );
    }
}
