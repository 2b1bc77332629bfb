//! Substitutions in any string value: `${env:NAME}`, `${var:NAME}`,
//! `${each.key}`, `${each.value}` and `${each.value.PATH}`, each with an
//! optional `:-default`. `$${` writes a literal `${`. Other `${...}`
//! (JavaScript template literals in scripts) are left alone.
//!
//! A string that is one substitution and nothing else takes the value's own
//! type (`frequency: ${each.value.f}` is a number) and its spans, so an
//! error in the value points at the item or variable it came from. An
//! inline default is read as a YAML scalar. Environment variables are
//! always strings.

use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue, parse_yaml};

/// Why a substitution failed.
#[derive(Debug, Clone, PartialEq)]
pub enum InterpolationError {
    /// An environment variable that is not set (and has no default).
    Unset(String),
    Malformed(String),
    /// `${var:NAME}` not in `[vars]`; the names that are.
    UnknownVar {
        name: String,
        known: Vec<String>,
    },
    /// `${var:...}` where there are no variables (in monform.toml).
    NoVars(String),
    /// `${each...}` outside a resource with `forEach` or `forEachFile`.
    NoEach(String),
    /// `${each.value.PATH}` naming nothing in the item, or `${each.other}`.
    UnknownEach(String),
    /// A list or map inside a longer string.
    NotScalar(String),
}

/// The item a resource was expanded from.
#[derive(Debug, Clone)]
pub struct Each {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

/// What substitutions may read.
pub struct Scope<'a> {
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// `None` where `${var:}` is not available (monform.toml itself).
    pub vars: Option<&'a [Entry]>,
    pub each: Option<&'a Each>,
}

/// What one substitution gave.
enum Resolved {
    Text(String),
    Node(Node),
}

/// Substitutes in every string of `node`, reporting each failure with the
/// span of the string it is in.
pub fn interpolate_node(node: &mut Node, scope: &Scope<'_>, errors: &mut Vec<(InterpolationError, Span)>) {
    match &mut node.value {
        NodeValue::Str(text) => {
            // Most strings have nothing to substitute: leave them untouched.
            if !text.contains("${") {
                return;
            }
            if let Some(body) = whole(text) {
                match resolve(body, node.span, scope) {
                    Some(Ok(Resolved::Node(value))) => *node = value,
                    Some(Ok(Resolved::Text(value))) => *text = value,
                    Some(Err(error)) => errors.push((error, node.span)),
                    None => {}
                }
                return;
            }
            match interpolate(text, node.span, scope) {
                Ok(value) => *text = value,
                Err(found) => errors.extend(found.into_iter().map(|e| (e, node.span))),
            }
        }
        NodeValue::Seq(items) => items.iter_mut().for_each(|n| interpolate_node(n, scope, errors)),
        NodeValue::Map(entries) => entries
            .iter_mut()
            .for_each(|e| interpolate_node(&mut e.value, scope, errors)),
        _ => {}
    }
}

/// The body of a string that is exactly one substitution of ours.
fn whole(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("${")?;
    let end = closing(rest)?;
    let body = &rest[..end];
    (end + 1 == rest.len() && is_ours(body)).then_some(body)
}

/// Where the `}` closing a substitution is, past nested ones (a default
/// may be a substitution: `${each.value.f:-${var:f}}`).
fn closing(after: &str) -> Option<usize> {
    let bytes = after.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_ours(body: &str) -> bool {
    body.starts_with("env:") || body.starts_with("var:") || body == "each" || body.starts_with("each.")
}

/// Replaces every substitution of ours in a longer string.
pub fn interpolate(text: &str, span: Span, scope: &Scope<'_>) -> Result<String, Vec<InterpolationError>> {
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        if rest[..start].ends_with('$') {
            // `$${` escapes: emit `${` and go on after it.
            out.push_str(&rest[..start - 1]);
            out.push_str("${");
            rest = &rest[start + 2..];
            continue;
        }
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        if !is_ours(after.split('}').next().unwrap_or_default()) {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(end) = closing(after) else {
            errors.push(InterpolationError::Malformed(rest[start..].to_owned()));
            rest = "";
            break;
        };
        match resolve(&after[..end], span, scope) {
            Some(Ok(Resolved::Text(value))) => out.push_str(&value),
            Some(Ok(Resolved::Node(node))) => match scalar_text(&node) {
                Some(value) => out.push_str(&value),
                None => errors.push(InterpolationError::NotScalar(format!("${{{}}}", &after[..end]))),
            },
            Some(Err(error)) => errors.push(error),
            None => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// Resolves one substitution body (`env:X`, `var:X:-d`, `each.value.a.b`...);
/// `None` when it is not one of ours.
fn resolve(body: &str, span: Span, scope: &Scope<'_>) -> Option<Result<Resolved, InterpolationError>> {
    let (reference, default) = match body.split_once(":-") {
        Some((reference, default)) => (reference, Some(default)),
        None => (body, None),
    };
    let typed_default = || default.and_then(|d| resolve_default(d, span, scope));
    let malformed = || InterpolationError::Malformed(format!("${{{body}}}"));
    if let Some(name) = reference.strip_prefix("env:") {
        if !is_name(name) {
            return Some(Err(malformed()));
        }
        return Some(
            (scope.env)(name)
                .or_else(|| default.map(str::to_owned))
                .map(Resolved::Text)
                .ok_or_else(|| InterpolationError::Unset(name.to_owned())),
        );
    }
    if let Some(name) = reference.strip_prefix("var:") {
        if !is_name(name) {
            return Some(Err(malformed()));
        }
        let Some(vars) = scope.vars else {
            return Some(Err(InterpolationError::NoVars(name.to_owned())));
        };
        let found = vars
            .iter()
            .find(|v| v.key == name)
            .map(|v| Resolved::Node(v.value.clone()));
        return Some(
            found
                .or_else(typed_default)
                .ok_or_else(|| InterpolationError::UnknownVar {
                    name: name.to_owned(),
                    known: vars.iter().map(|v| v.key.clone()).collect(),
                }),
        );
    }
    let path = reference.strip_prefix("each")?;
    let Some(each) = scope.each else {
        return Some(Err(InterpolationError::NoEach(format!("${{{body}}}"))));
    };
    let unknown = || InterpolationError::UnknownEach(format!("${{{body}}}"));
    let found = match path {
        ".key" => Some(Resolved::Node(Node {
            span: each.key_span,
            value: NodeValue::Str(each.key.clone()),
        })),
        ".value" => Some(Resolved::Node(each.value.clone())),
        _ => match path.strip_prefix(".value.") {
            Some(inner) => lookup(&each.value, inner).map(|n| Resolved::Node(n.clone())),
            None => return Some(Err(unknown())),
        },
    };
    Some(found.or_else(typed_default).ok_or_else(unknown))
}

/// An inline default: a substitution itself, a string with some, or a YAML scalar.
fn resolve_default(text: &str, span: Span, scope: &Scope<'_>) -> Option<Resolved> {
    if let Some(body) = whole(text) {
        return resolve(body, span, scope)?.ok();
    }
    if text.contains("${") {
        return interpolate(text, span, scope).ok().map(Resolved::Text);
    }
    Some(Resolved::Node(yaml_scalar(text, span)))
}

/// The value at a dotted path (`a.b`, `items.0`) inside an item.
fn lookup<'n>(node: &'n Node, path: &str) -> Option<&'n Node> {
    path.split('.').try_fold(node, |node, part| match &node.value {
        NodeValue::Map(entries) => entries.iter().find(|e| e.key == part).map(|e| &e.value),
        NodeValue::Seq(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// An inline default read as a YAML scalar (`5` a number, `true` a boolean).
fn yaml_scalar(text: &str, span: Span) -> Node {
    let value = match parse_yaml(span.file, text).map(|n| n.value) {
        Ok(
            value
            @ (NodeValue::Bool(_) | NodeValue::Int(_) | NodeValue::Float(_) | NodeValue::Null | NodeValue::Str(_)),
        ) => value,
        _ => NodeValue::Str(text.to_owned()),
    };
    Node { span, value }
}

fn scalar_text(node: &Node) -> Option<String> {
    match &node.value {
        NodeValue::Str(s) => Some(s.clone()),
        NodeValue::Int(i) => Some(i.to_string()),
        NodeValue::Float(f) => Some(f.to_string()),
        NodeValue::Bool(b) => Some(b.to_string()),
        NodeValue::Null => Some(String::new()),
        NodeValue::Seq(_) | NodeValue::Map(_) => None,
    }
}

/// A variable's name (`${env:}`, `${var:}`): a letter or `_`, then letters,
/// digits, `_` and `-`.
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "HOST").then(|| "example.com".to_owned())
    }

    const SPAN: Span = Span {
        file: 0,
        start: 0,
        len: 0,
    };

    fn scope<'a>(vars: &'a [Entry], each: Option<&'a Each>) -> Scope<'a> {
        Scope {
            env: &env,
            vars: Some(vars),
            each,
        }
    }

    fn text(s: &str) -> Result<String, Vec<InterpolationError>> {
        interpolate(s, SPAN, &scope(&[], None))
    }

    fn node(yaml: &str) -> Node {
        parse_yaml(0, yaml).unwrap()
    }

    #[test]
    fn replaces_set_variables_and_defaults() {
        assert_eq!(text("https://${env:HOST}/x"), Ok("https://example.com/x".into()));
        assert_eq!(text("${env:PORT:-8080}/"), Ok("8080/".into()));
        assert_eq!(text("x${env:PORT:-}"), Ok("x".into()));
    }

    #[test]
    fn leaves_template_literals_and_escapes() {
        assert_eq!(text("`${user.name}`"), Ok("`${user.name}`".into()));
        assert_eq!(text("$${env:HOST} $${each.key}"), Ok("${env:HOST} ${each.key}".into()));
        assert_eq!(text("`${eachItem}`"), Ok("`${eachItem}`".into()));
    }

    #[test]
    fn reports_unset_and_malformed() {
        assert_eq!(
            text("a ${env:NOPE}"),
            Err(vec![InterpolationError::Unset("NOPE".into())])
        );
        assert!(matches!(text("${env:1X} a"), Err(e) if matches!(e[0], InterpolationError::Malformed(_))));
        assert!(matches!(text("a ${env:HOST"), Err(e) if matches!(e[0], InterpolationError::Malformed(_))));
    }

    #[test]
    fn a_whole_scalar_keeps_its_type() {
        let vars = node("base: https://x.example\ncount: 3\n").as_map().unwrap().to_vec();
        let each = Each {
            key: "orders".into(),
            key_span: SPAN,
            value: node("path: /orders\nfrequency: 1\ntags: [a, b]\n"),
        };
        let mut resource = node(concat!(
            "n: ${each.value.frequency}\nd: ${each.value.missing:-5}\nt: ${each.value.tags}\n",
            "u: \"${var:base}${each.value.path}\"\nc: ${var:count}\nk: API ${each.key}\nb: ${var:nope:-true}\n",
            "f: ${each.value.nope:-${var:count}}\ng: x${each.value.nope:-${var:count}}y\n",
        ));
        let mut errors = Vec::new();
        interpolate_node(&mut resource, &scope(&vars, Some(&each)), &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            resource.to_json(),
            serde_json::json!({"n": 1, "d": 5, "t": ["a", "b"], "u": "https://x.example/orders", "c": 3, "k": "API orders", "b": true, "f": 3, "g": "x3y"})
        );
    }

    #[test]
    fn unknown_names_are_errors() {
        let vars = node("base: x\n").as_map().unwrap().to_vec();
        let each = Each {
            key: "a".into(),
            key_span: SPAN,
            value: node("[1]"),
        };
        let mut resource = node("a: ${var:bsae}\nb: ${each.value.x}\nc: ${each.kee}\nd: x ${each.value}\n");
        let mut errors = Vec::new();
        interpolate_node(&mut resource, &scope(&vars, Some(&each)), &mut errors);
        let kinds: Vec<_> = errors.into_iter().map(|(e, _)| e).collect();
        assert!(matches!(&kinds[0], InterpolationError::UnknownVar { name, .. } if name == "bsae"));
        assert!(matches!(&kinds[1], InterpolationError::UnknownEach(_)));
        assert!(matches!(&kinds[2], InterpolationError::UnknownEach(_)));
        assert!(matches!(&kinds[3], InterpolationError::NotScalar(_)));
        let mut outside = node("a: ${each.key}\n");
        let mut errors = Vec::new();
        interpolate_node(&mut outside, &scope(&vars, None), &mut errors);
        assert!(matches!(&errors[0].0, InterpolationError::NoEach(_)));
    }
}
