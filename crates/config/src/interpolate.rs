//! Substitutions in any string value: `${env:NAME}`, `${var:NAME}`,
//! `${each.key}`, `${each.value}` and `${each.value.PATH}`, each with an
//! optional `:-default` (itself a substitution, or text with some, up to
//! `MAX_NESTING` deep). `$${` writes a literal `${`. Other `${...}`
//! (JavaScript template literals in scripts) are left alone.
//!
//! A string that is one substitution and nothing else takes the value's own
//! type (`frequency: ${each.value.f}` is a number) and its spans, so an
//! error in the value points at the item or variable it came from. An
//! inline default is read as a YAML scalar. Environment variables are
//! always strings, their defaults too.
//!
//! The files of a pull request are untrusted: `${env:}` never reads
//! monform's own credentials nor a name in `[project] secret-env`, even in
//! a default that is never used, and what it does read marks the value
//! sensitive (`Node::sensitive`) unless `[project] public-env` lists it.

use crate::budget::{Budget, weight};
use crate::diagnostic::Diagnostic;
use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue, Sensitive, parse_yaml};

/// monform's own credentials: no file may read them (`${env:}`), whatever
/// monform.toml says.
pub const CREDENTIAL_ENV: &[&str] = &["MONFORM_API_KEY", "MONFORM_AGENT_KEY", "MONFORM_STATE_URL"];

/// How deep substitutions may nest in defaults (`${var:a:-${var:b:-...}}`).
/// Real files use two or three levels; the limit bounds the recursion.
pub const MAX_NESTING: usize = 16;

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
    /// `${env:NAME}` of a credential (`CREDENTIAL_ENV`, `[project] secret-env`).
    Forbidden(String),
    /// Defaults nested more than `MAX_NESTING` deep.
    TooDeep,
    /// The substitutions made the file expand past its budget.
    TooLarge(crate::budget::Exceeded),
}

/// Which environment variables `${env:}` may read, and which of their
/// values may be shown (`[project] secret-env` and `public-env`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvPolicy {
    /// Never read, besides `CREDENTIAL_ENV`.
    pub secret: Vec<String>,
    /// Values shown in plans as they are; every other one is sensitive.
    pub public: Vec<String>,
}

impl EnvPolicy {
    pub fn is_forbidden(&self, name: &str) -> bool {
        CREDENTIAL_ENV.contains(&name) || self.secret.iter().any(|s| s == name)
    }

    pub fn is_public(&self, name: &str) -> bool {
        self.public.iter().any(|p| p == name)
    }
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
    pub policy: &'a EnvPolicy,
    /// `None` where `${var:}` is not available (monform.toml itself).
    pub vars: Option<&'a [Entry]>,
    pub each: Option<&'a Each>,
    /// The file's: every substituted value is charged to it.
    pub budget: &'a Budget,
}

/// What one substitution gave.
enum Resolved {
    /// Text, and the sensitive environment values it holds.
    Text(String, Option<Sensitive>),
    /// A value (of `[vars]` or the item), with its own spans and marks.
    Node(Node),
}

type Outcome = Option<Result<Resolved, InterpolationError>>;

/// Substitutes in every string of `node`, reporting each failure with the
/// span of the string it is in. A string that reads a forbidden variable
/// anywhere (a default that would not be used too) is reported and left
/// alone.
pub fn interpolate_node(node: &mut Node, scope: &Scope<'_>, errors: &mut Vec<(InterpolationError, Span)>) {
    match &mut node.value {
        NodeValue::Str(text) => {
            // Most strings have nothing to substitute: leave them untouched.
            if !text.contains("${") {
                return;
            }
            // Past the budget the file was reported once; more copies would
            // only cost time and memory.
            if scope.budget.is_spent() {
                return;
            }
            if let Some(name) = forbidden_in(text, scope.policy) {
                errors.push((InterpolationError::Forbidden(name), node.span));
                return;
            }
            if let Some(body) = whole(text) {
                match resolve(body, node.span, scope, 0) {
                    Some(Ok(Resolved::Node(value))) => match charge(scope, weight(&value)) {
                        Ok(()) => *node = value,
                        Err(error) => errors.push((error, node.span)),
                    },
                    Some(Ok(Resolved::Text(value, sensitive))) => match charge(scope, value.len()) {
                        Ok(()) => {
                            *text = value;
                            node.sensitive = Sensitive::join(node.sensitive.take(), sensitive);
                        }
                        Err(error) => errors.push((error, node.span)),
                    },
                    Some(Err(error)) => errors.push((error, node.span)),
                    None => {}
                }
                return;
            }
            match interpolate(text, node.span, scope, 0).and_then(|(value, sensitive)| {
                charge(scope, value.len()).map_err(|e| vec![e])?;
                Ok((value, sensitive))
            }) {
                Ok((value, sensitive)) => {
                    *text = value;
                    node.sensitive = Sensitive::join(node.sensitive.take(), sensitive);
                }
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

fn charge(scope: &Scope<'_>, bytes: usize) -> Result<(), InterpolationError> {
    scope.budget.charge(bytes).map_err(InterpolationError::TooLarge)
}

/// The first variable `text` would read with `${env:NAME` that the policy
/// forbids, wherever it is (in a default that is never used too); `$${`
/// escapes are text, not reads.
fn forbidden_in(text: &str, policy: &EnvPolicy) -> Option<String> {
    let mut from = 0;
    while let Some(at) = text[from..].find("${env:") {
        let start = from + at;
        from = start + 6;
        if text[..start].ends_with('$') {
            continue;
        }
        let name: String = text[from..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        if policy.is_forbidden(&name) {
            return Some(name);
        }
    }
    None
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

/// Replaces every substitution of ours in a longer string; the text, and
/// the sensitive environment values it holds. `depth` is how deep in
/// defaults this string is.
pub fn interpolate(
    text: &str,
    span: Span,
    scope: &Scope<'_>,
    depth: usize,
) -> Result<(String, Option<Sensitive>), Vec<InterpolationError>> {
    let mut out = String::with_capacity(text.len());
    let mut sensitive = None;
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
        match resolve(&after[..end], span, scope, depth) {
            Some(Ok(Resolved::Text(value, marked))) => {
                out.push_str(&value);
                sensitive = Sensitive::join(sensitive, marked);
            }
            Some(Ok(Resolved::Node(node))) => match scalar_text(&node) {
                Some(value) => {
                    out.push_str(&value);
                    sensitive = Sensitive::join(sensitive, node.sensitive);
                }
                None => errors.push(InterpolationError::NotScalar(format!("${{{}}}", &after[..end]))),
            },
            Some(Err(error)) => errors.push(error),
            None => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if errors.is_empty() {
        Ok((out, sensitive))
    } else {
        Err(errors)
    }
}

/// Resolves one substitution body (`env:X`, `var:X:-d`, `each.value.a.b`...);
/// `None` when it is not one of ours.
fn resolve(body: &str, span: Span, scope: &Scope<'_>, depth: usize) -> Outcome {
    if depth > MAX_NESTING {
        return Some(Err(InterpolationError::TooDeep));
    }
    let (reference, default) = match body.split_once(":-") {
        Some((reference, default)) => (reference, Some(default)),
        None => (body, None),
    };
    let malformed = || InterpolationError::Malformed(format!("${{{body}}}"));
    if let Some(name) = reference.strip_prefix("env:") {
        if !is_name(name) {
            return Some(Err(malformed()));
        }
        if scope.policy.is_forbidden(name) {
            return Some(Err(InterpolationError::Forbidden(name.to_owned())));
        }
        if let Some(value) = (scope.env)(name) {
            let sensitive = (!scope.policy.is_public(name)).then(|| Sensitive::env(name));
            return Some(Ok(Resolved::Text(value, sensitive)));
        }
        return Some(match default {
            Some(default) => env_default(default, span, scope, depth + 1),
            None => Err(InterpolationError::Unset(name.to_owned())),
        });
    }
    if let Some(name) = reference.strip_prefix("var:") {
        if !is_name(name) {
            return Some(Err(malformed()));
        }
        let Some(vars) = scope.vars else {
            return Some(Err(InterpolationError::NoVars(name.to_owned())));
        };
        if let Some(var) = vars.iter().find(|v| v.key == name) {
            return Some(Ok(Resolved::Node(var.value.clone())));
        }
        return Some(match default {
            Some(default) => resolve_default(default, span, scope, depth + 1),
            None => Err(InterpolationError::UnknownVar {
                name: name.to_owned(),
                known: vars.iter().map(|v| v.key.clone()).collect(),
            }),
        });
    }
    let path = reference.strip_prefix("each")?;
    let Some(each) = scope.each else {
        return Some(Err(InterpolationError::NoEach(format!("${{{body}}}"))));
    };
    let found = match path {
        ".key" => Some(Node::new(each.key_span, NodeValue::Str(each.key.clone()))),
        ".value" => Some(each.value.clone()),
        _ => match path.strip_prefix(".value.") {
            Some(inner) => lookup(&each.value, inner).cloned(),
            None => return Some(Err(InterpolationError::UnknownEach(format!("${{{body}}}")))),
        },
    };
    Some(match (found, default) {
        (Some(node), _) => Ok(Resolved::Node(node)),
        (None, Some(default)) => resolve_default(default, span, scope, depth + 1),
        (None, None) => Err(InterpolationError::UnknownEach(format!("${{{body}}}"))),
    })
}

/// An inline default of `${var:}` or `${each}`: a substitution itself, a
/// string with some, or a YAML scalar. Its errors are the substitution's.
fn resolve_default(text: &str, span: Span, scope: &Scope<'_>, depth: usize) -> Result<Resolved, InterpolationError> {
    if let Some(body) = whole(text) {
        return resolve(body, span, scope, depth).unwrap_or_else(|| Ok(Resolved::Text(text.to_owned(), None)));
    }
    if text.contains("${") {
        return interpolate(text, span, scope, depth)
            .map(|(text, sensitive)| Resolved::Text(text, sensitive))
            .map_err(first);
    }
    Ok(Resolved::Node(yaml_scalar(text, span)))
}

/// The default of `${env:}`: as `resolve_default`, but always text, as an
/// environment variable's value is (`${env:PORT:-8080}` is the string).
fn env_default(text: &str, span: Span, scope: &Scope<'_>, depth: usize) -> Result<Resolved, InterpolationError> {
    if !text.contains("${") {
        return Ok(Resolved::Text(text.to_owned(), None));
    }
    match resolve_default(text, span, scope, depth)? {
        Resolved::Text(text, sensitive) => Ok(Resolved::Text(text, sensitive)),
        Resolved::Node(node) => match scalar_text(&node) {
            Some(text) => Ok(Resolved::Text(text, node.sensitive)),
            None => Err(InterpolationError::NotScalar(text.to_owned())),
        },
    }
}

/// The error reported for a default: its first (a default is one value).
fn first(mut errors: Vec<InterpolationError>) -> InterpolationError {
    errors.swap_remove(0)
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
    Node::new(span, value)
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
/// digits, `_` and `-`. The schema's form of [`is_name`]; a test keeps them in step.
pub(crate) const NAME_PATTERN: &str = r"^[A-Za-z_][A-Za-z0-9_-]*$";

/// Whether `name` matches [`NAME_PATTERN`] (written out: no regex per variable).
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The diagnostic of a failed substitution at `span`.
pub fn interpolation_diagnostic(error: InterpolationError, span: Span) -> Diagnostic {
    match error {
        InterpolationError::Unset(name) => {
            Diagnostic::new("monform::env", format!("environment variable `{name}` is not set"))
                .at(span, format!("uses ${{env:{name}}}"))
                .help(format!("set {name}, or give a default: ${{env:{name}:-value}}"))
        }
        InterpolationError::Malformed(text) => Diagnostic::new(
            "monform::interpolation",
            format!("malformed substitution `{text}`"),
        )
        .at(span, "here")
        .help("write ${env:NAME}, ${var:NAME}, ${each.key} or ${each.value.PATH}, with an optional :-default; $${ writes a literal ${"),
        InterpolationError::UnknownVar { name, known } => {
            let diagnostic = Diagnostic::new("monform::var", format!("unknown variable `{name}`"))
                .at(span, format!("uses ${{var:{name}}}"));
            match crate::suggest(&name, known.iter().map(String::as_str)) {
                Some(s) => diagnostic.help(format!("did you mean `{s}`?")),
                None if known.is_empty() => {
                    diagnostic.help(format!("monform.toml has no [vars]; add `{name} = ...` there, or give a default"))
                }
                None => diagnostic.help(format!("variables are {}", known.join(", "))),
            }
        }
        InterpolationError::NoVars(name) => {
            Diagnostic::new("monform::var", format!("`${{var:{name}}}` cannot be used in monform.toml"))
                .at(span, "here")
                .help("variables are for resource files; use ${env:NAME} here")
        }
        InterpolationError::NoEach(text) => Diagnostic::new(
            "monform::each",
            format!("`{text}` is only defined in a resource with forEach or forEachFile"),
        )
        .at(span, "here")
        .help("add forEach or forEachFile to this resource, or write $${ for a literal ${"),
        InterpolationError::UnknownEach(text) => Diagnostic::new("monform::each", format!("unknown item value `{text}`"))
            .at(span, "names nothing in the item")
            .help("use ${each.key}, ${each.value} or ${each.value.FIELD} naming a field the item has, or give a default: ${each.value.FIELD:-value}"),
        InterpolationError::Forbidden(name) => {
            let builtin = crate::interpolate::CREDENTIAL_ENV.contains(&name.as_str());
            let why = if builtin {
                "it is one of monform's own credentials".to_owned()
            } else {
                "monform.toml lists it in [project] secret-env".to_owned()
            };
            Diagnostic::new("monform::forbidden-env", format!("`${{env:{name}}}` may not be read: {why}"))
                .at(span, "reads it")
                .help("the files of a project are untrusted input (a pull request's): they never read credentials; give the value another way, or drop it")
        }
        InterpolationError::TooDeep => Diagnostic::new(
            "monform::interpolation",
            format!("substitutions are nested more than {MAX_NESTING} deep"),
        )
        .at(span, "here")
        .help("a default may be a substitution, whose default may be one..., up to this depth"),
        InterpolationError::TooLarge(exceeded) => Diagnostic::new("monform::too-large", exceeded.message())
            .at(span, "this substitution went over")
            .help("substitute a large value in fewer places, or split the file"),
        InterpolationError::NotScalar(text) => Diagnostic::new(
            "monform::interpolation",
            format!("`{text}` is a list or map and cannot be part of a longer string"),
        )
        .at(span, "here")
        .help("a list or map can only be the whole value: field: ${each.value.list}"),
    }
}

#[cfg(test)]
mod tests;
