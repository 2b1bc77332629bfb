//! Assertions: `{source, property, comparison, target}` evaluated against
//! what a run observed (spec 2.1; sources and comparisons of the model's
//! `ApiAssertion`, `TcpAssertion`, `DnsAssertion`, `IcmpAssertion`).
//!
//! Choices:
//! - `property` of `JSON_BODY`, `JSON_ANSWER` and `JSON_RESPONSE` is a simple
//!   path: `$.a.b`, `$.items[0].id`, `a.b` (no filters or wildcards).
//! - `property` of `HEADERS` names the header (case-insensitive); without
//!   one, `HAS_KEY`/`NOT_HAS_KEY` test the header named by `target`.
//! - Numbers compare numerically when both sides parse as numbers, text
//!   otherwise. `regex` is not applied (reported in the result).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One assertion and how it turned out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssertionResult {
    pub source: String,
    pub property: String,
    pub comparison: String,
    pub target: String,
    /// The value observed (null when absent).
    pub actual: Value,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl AssertionResult {
    /// A one-line description for error messages.
    pub fn describe(&self) -> String {
        let property = if self.property.is_empty() {
            String::new()
        } else {
            format!(" {}", self.property)
        };
        format!(
            "assertion {}{property} {} {:?} failed (actual: {})",
            self.source,
            self.comparison,
            self.target,
            text(&self.actual).unwrap_or_else(|| "none".to_owned())
        )
    }
}

/// Evaluates `assertions` (the stored API form) with `observe` giving the
/// value of a source for a property (`None`: absent).
pub fn evaluate(assertions: &Value, observe: impl Fn(&str, &str) -> Option<Value>) -> Vec<AssertionResult> {
    assertions
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let field = |k: &str| a[k].as_str().unwrap_or_default().to_owned();
            let (source, property, comparison, target) =
                (field("source"), field("property"), field("comparison"), field("target"));
            let actual = observe(&source, &property);
            let passed = compare(&comparison, actual.as_ref(), &target);
            let note = a["regex"]
                .as_str()
                .filter(|r| !r.is_empty())
                .map(|_| "regex is not applied by the local runner".to_owned());
            AssertionResult {
                source,
                property,
                comparison,
                target,
                actual: actual.unwrap_or(Value::Null),
                passed,
                note,
            }
        })
        .collect()
}

/// A value as text: strings as they are, null as `None`, others as JSON.
pub fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn equals(actual: &Value, target: &str) -> bool {
    match (number(actual), target.trim().parse::<f64>()) {
        (Some(a), Ok(b)) => a == b,
        _ => text(actual).as_deref() == Some(target),
    }
}

fn is_empty(actual: Option<&Value>) -> bool {
    match actual {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(_) => false,
    }
}

/// Whether `actual` satisfies `comparison` against `target`.
pub fn compare(comparison: &str, actual: Option<&Value>, target: &str) -> bool {
    let present = actual.filter(|v| !v.is_null());
    match comparison {
        "EQUALS" => present.is_some_and(|a| equals(a, target)),
        "NOT_EQUALS" => !present.is_some_and(|a| equals(a, target)),
        "GREATER_THAN" | "LESS_THAN" => {
            let (Some(a), Ok(b)) = (present.and_then(number), target.trim().parse::<f64>()) else {
                return false;
            };
            if comparison == "GREATER_THAN" { a > b } else { a < b }
        }
        "CONTAINS" => present.and_then(text).is_some_and(|a| a.contains(target)),
        "NOT_CONTAINS" => !present.and_then(text).is_some_and(|a| a.contains(target)),
        "IS_EMPTY" => is_empty(actual),
        "NOT_EMPTY" => !is_empty(actual),
        "IS_NULL" => present.is_none(),
        "NOT_NULL" => present.is_some(),
        "HAS_KEY" => has_key(present, target),
        "NOT_HAS_KEY" => !has_key(present, target),
        "HAS_VALUE" => has_value(present, target),
        "NOT_HAS_VALUE" => !has_value(present, target),
        _ => false,
    }
}

fn has_key(actual: Option<&Value>, key: &str) -> bool {
    match actual {
        Some(Value::Object(o)) => o.keys().any(|k| k == key || k.eq_ignore_ascii_case(key)),
        _ => false,
    }
}

fn has_value(actual: Option<&Value>, target: &str) -> bool {
    match actual {
        Some(Value::Array(items)) => items.iter().any(|v| equals(v, target)),
        Some(Value::Object(o)) => o.values().any(|v| equals(v, target)),
        Some(other) => equals(other, target),
        None => false,
    }
}

/// Follows a simple JSON path (`$.a.b[0]`, `a.b`, `$`) into `value`.
pub fn json_path(value: &Value, path: &str) -> Option<Value> {
    let path = path.trim();
    let path = path.strip_prefix('$').unwrap_or(path);
    let mut current = value;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (name, mut rest) = match segment.find('[') {
            Some(i) => (&segment[..i], &segment[i..]),
            None => (segment, ""),
        };
        if !name.is_empty() {
            current = current.get(name)?;
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']')?;
            let index = inner[..close].trim().trim_matches(['"', '\'']);
            current = match index.parse::<usize>() {
                Ok(i) => current.get(i)?,
                Err(_) => current.get(index)?,
            };
            rest = &inner[close + 1..];
        }
    }
    Some(current.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_comparisons() {
        let body = json!({"a": {"b": [1, {"c": "x"}]}, "n": 5});
        assert_eq!(json_path(&body, "$.a.b[1].c"), Some(json!("x")));
        assert_eq!(json_path(&body, "n"), Some(json!(5)));
        assert_eq!(json_path(&body, "$.missing"), None);
        assert!(compare("EQUALS", Some(&json!(200)), "200"));
        assert!(compare("GREATER_THAN", Some(&json!("7")), "5"));
        assert!(compare("LESS_THAN", Some(&json!(3)), "5"));
        assert!(compare("CONTAINS", Some(&json!("hello world")), "world"));
        assert!(compare("NOT_CONTAINS", None, "x"));
        assert!(compare("IS_EMPTY", Some(&json!("")), ""));
        assert!(compare("IS_NULL", None, ""));
        assert!(compare("HAS_KEY", Some(&json!({"k": 1})), "k"));
        assert!(compare("HAS_VALUE", Some(&json!([1, 2])), "2"));
        assert!(!compare("EQUALS", None, ""));
        assert!(compare("NOT_EQUALS", Some(&json!(500)), "200"));
    }
}
