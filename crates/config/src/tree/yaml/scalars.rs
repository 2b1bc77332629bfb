//! Scalars: the YAML 1.2 core schema with strict booleans.

use yaml_rust2::parser::Tag;
use yaml_rust2::scanner::TScalarStyle;

use crate::tree::NodeValue;

use super::CORE_TAG;

/// The value of a scalar: the core schema for plain ones, strings for quoted
/// and block ones, and what a core tag (`!!int`…) asks for. Other tags are
/// ignored, as serde-saphyr did.
pub(super) fn resolve(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Result<NodeValue, String> {
    let tag = tag.filter(|t| t.handle == CORE_TAG).map(|t| t.suffix.as_str());
    match tag {
        None if style == TScalarStyle::Plain => plain(text),
        None | Some("str") => Ok(NodeValue::Str(text)),
        Some("null") => Ok(NodeValue::Null),
        Some("bool") => match boolean(&text) {
            Some(b) => Ok(NodeValue::Bool(b)),
            None => Err(format!("`{text}` is not a boolean (true or false)")),
        },
        Some("int") => integer(&text).ok_or_else(|| format!("`{text}` is not an integer")),
        Some("float") => match integer(&text).or_else(|| float(&text)) {
            Some(NodeValue::Int(i)) => Ok(NodeValue::Float(i as f64)),
            Some(NodeValue::Float(f)) if !f.is_finite() => Err(non_finite(&text)),
            Some(value) => Ok(value),
            None => Err(format!("`{text}` is not a number")),
        },
        Some(kind @ ("map" | "seq")) => Err(format!("unsupported tag `!!{kind}`")),
        Some(_) if style == TScalarStyle::Plain => plain(text),
        Some(_) => Ok(NodeValue::Str(text)),
    }
}

fn plain(text: String) -> Result<NodeValue, String> {
    // Most scalars are words: skip the number and keyword checks for them.
    let Some(&first) = text.as_bytes().first() else {
        return Ok(NodeValue::Null);
    };
    if first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.') {
        if let Some(value) = integer(&text).or_else(|| float(&text)) {
            return match value {
                NodeValue::Float(f) if !f.is_finite() => Err(non_finite(&text)),
                value => Ok(value),
            };
        }
    } else if matches!(first, b'~' | b'n' | b'N') && matches!(text.as_str(), "~" | "null" | "Null" | "NULL") {
        return Ok(NodeValue::Null);
    } else if let Some(b) = boolean(&text) {
        return Ok(NodeValue::Bool(b));
    }
    Ok(NodeValue::Str(text))
}

fn non_finite(text: &str) -> String {
    format!("`{text}` is not a finite number")
}

/// YAML 1.2 booleans only: `yes`, `no`, `on`, `off` stay strings.
fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Decimal (with `_` separators), `0x`, `0o` or `0b`, signed; past `i64`,
/// or with a leading zero, a float.
fn integer(text: &str) -> Option<NodeValue> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let radix = match unsigned.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => 10,
    };
    let magnitude = if radix == 10 {
        let bytes = unsigned.as_bytes();
        let valid = bytes.first().is_some_and(u8::is_ascii_digit)
            && bytes.last().is_some_and(u8::is_ascii_digit)
            && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'_')
            && !unsigned.contains("__");
        if !valid {
            return None;
        }
        // Most numbers have no separators: no copy for them.
        let digits = if unsigned.contains('_') {
            std::borrow::Cow::Owned(unsigned.replace('_', ""))
        } else {
            std::borrow::Cow::Borrowed(unsigned)
        };
        if digits.len() > 1 && digits.starts_with('0') {
            return float(&digits).map(|v| negate(v, negative));
        }
        match digits.parse::<u64>() {
            Ok(m) => m,
            Err(_) => return float(&digits).map(|v| negate(v, negative)),
        }
    } else {
        let digits = &unsigned[2..];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(digits, radix).ok()?
    };
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    Some(value.map_or_else(
        || {
            NodeValue::Float(if negative {
                -(magnitude as f64)
            } else {
                magnitude as f64
            })
        },
        NodeValue::Int,
    ))
}

fn negate(value: NodeValue, negative: bool) -> NodeValue {
    match value {
        NodeValue::Float(f) if negative => NodeValue::Float(-f),
        value => value,
    }
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `.inf`, `.nan`.
fn float(text: &str) -> Option<NodeValue> {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        let negative = text.starts_with('-');
        return Some(NodeValue::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }));
    }
    if matches!(unsigned, ".nan" | ".NaN" | ".NAN") {
        return Some(NodeValue::Float(f64::NAN));
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let valid = digits(whole)
        && digits(fraction)
        && (!whole.is_empty() || !fraction.is_empty())
        && exponent.is_none_or(|e| {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && digits(e)
        });
    valid.then(|| text.parse().ok().map(NodeValue::Float))?
}
