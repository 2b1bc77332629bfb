//! Terraform expressions as monform values: literals as they are, `var.X`
//! as `${var:X}`, `each.key` / `each.value.PATH` / `count.index` as
//! `${each...}`, a reference to another resource as its logical id, string
//! templates spliced, `file()` read. Anything else (conditionals,
//! arithmetic, most functions, `for` expressions, data sources) is
//! untranslatable: the caller reports it with its file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hcl_edit::expr::{Expression, ObjectKey, TraversalOperator};
use hcl_edit::template::{Element, Template};
use serde_json::{Map, Value};

/// The key of the object `file()` becomes: its text, and the path it was
/// read from (a script field keeps it as a file of its own).
pub const FILE_MARKER: &str = "$migrate-file";

/// What a name (`var.X`, `local.X`, a module's output) stands for.
#[derive(Debug, Clone)]
pub enum Bound {
    /// A monform value, possibly a substitution (`"${var:base}"`); `literal`
    /// is its value when known, for traversals into it (`var.m["k"].path`).
    Value { value: Value, literal: Option<Value> },
    /// Not translatable, and why.
    Fail(String),
}

impl Bound {
    pub fn literal(value: Value) -> Bound {
        Bound::Value {
            literal: Some(value.clone()),
            value,
        }
    }
}

/// How `each` and `count` read inside a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    None,
    ForEach,
    Count,
}

/// What a resource address of this module stands for: the logical id the
/// migration gave it, and whether it is repeated (so `x["k"]` names an item).
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub repeated: bool,
}

/// The names an expression can use.
#[derive(Debug, Default)]
pub struct Scope {
    pub vars: BTreeMap<String, Bound>,
    pub locals: BTreeMap<String, Bound>,
    /// `(type, name)` to the resource's logical id.
    pub resources: BTreeMap<(String, String), Target>,
    /// Module call name to its outputs.
    pub modules: BTreeMap<String, BTreeMap<String, Bound>>,
    pub repeat: Option<Repeat>,
    /// The module's folder, for `file("${path.module}/x.js")`.
    pub dir: PathBuf,
    /// The migrated root folder (`path.root`).
    pub root: PathBuf,
}

type Result<T> = std::result::Result<T, String>;

/// Translates `expr` in `scope`.
pub fn translate(expr: &Expression, scope: &Scope) -> Result<Value> {
    match expr {
        Expression::Null(_) => Ok(Value::Null),
        Expression::Bool(b) => Ok(Value::Bool(*b.value())),
        Expression::Number(n) => number(n.value()),
        Expression::String(s) => Ok(Value::String(monform_config::literal::escape(s.value()).into_owned())),
        Expression::Array(items) => items
            .iter()
            .map(|e| translate(e, scope))
            .collect::<Result<Vec<_>>>()
            .map(Value::Array),
        Expression::Object(object) => {
            let mut map = Map::new();
            for (key, value) in object.iter() {
                let key = match key {
                    ObjectKey::Ident(ident) => ident.as_str().to_owned(),
                    ObjectKey::Expression(Expression::String(s)) => s.value().clone(),
                    ObjectKey::Expression(_) => return Err("an object key that is an expression".into()),
                };
                map.insert(key, translate(value.expr(), scope)?);
            }
            Ok(Value::Object(map))
        }
        Expression::StringTemplate(template) => {
            let mut text = String::new();
            for element in template.iter() {
                splice_element(element, scope, &mut text)?;
            }
            Ok(Value::String(text))
        }
        Expression::HeredocTemplate(heredoc) => {
            let mut heredoc = heredoc.as_ref().clone();
            heredoc.dedent();
            Ok(Value::String(template_text(&heredoc.template, scope)?))
        }
        Expression::Parenthesis(inner) => translate(inner.inner(), scope),
        Expression::Variable(name) => Err(format!("`{}` alone names no value monform has", name.as_str())),
        Expression::Traversal(traversal) => traverse(&traversal.expr, &traversal.operators, scope),
        Expression::FuncCall(call) => function(call, scope),
        Expression::Conditional(_) => Err("a conditional expression".into()),
        Expression::UnaryOp(_) | Expression::BinaryOp(_) => Err("an operation".into()),
        Expression::ForExpr(_) => Err("a `for` expression".into()),
    }
}

fn number(n: &hcl_edit::Number) -> Result<Value> {
    if let Some(u) = n.as_u64() {
        return Ok(Value::from(u));
    }
    if let Some(i) = n.as_i64() {
        return Ok(Value::from(i));
    }
    n.as_f64()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .ok_or_else(|| "a number JSON cannot hold".into())
}

fn template_text(template: &Template, scope: &Scope) -> Result<String> {
    let mut text = String::new();
    for element in template.iter() {
        splice_element(element, scope, &mut text)?;
    }
    Ok(text)
}

fn splice_element(element: &Element, scope: &Scope, text: &mut String) -> Result<()> {
    match element {
        Element::Literal(literal) => text.push_str(&monform_config::literal::escape(literal.value())),
        Element::Interpolation(interpolation) => text.push_str(&splice(&translate(&interpolation.expr, scope)?)?),
        Element::Directive(_) => return Err("a template directive (`%{ if }` or `%{ for }`)".into()),
    }
    Ok(())
}

/// A value as part of a string.
fn splice(value: &Value) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Object(map) if map.contains_key(FILE_MARKER) => Ok(map
            .get("text")
            .and_then(Value::as_str)
            .map(|t| monform_config::literal::escape(t).into_owned())
            .unwrap_or_default()),
        _ => Err("a list or map inside a string".into()),
    }
}

/// The name of a root traversal and its attribute operators.
fn traverse(root: &Expression, operators: &[hcl_edit::Decorated<TraversalOperator>], scope: &Scope) -> Result<Value> {
    let Expression::Variable(root) = root else {
        let base = translate(root, scope)?;
        return navigate_literal(&base, operators);
    };
    let name = root.as_str();
    let attr = |i: usize| -> Option<&str> {
        match operators.get(i).map(|o| o.value()) {
            Some(TraversalOperator::GetAttr(ident)) => Some(ident.as_str()),
            _ => None,
        }
    };
    match name {
        "var" | "local" => {
            let key = attr(0).ok_or_else(|| format!("`{name}` without a name"))?;
            let table = if name == "var" { &scope.vars } else { &scope.locals };
            let bound = table
                .get(key)
                .ok_or_else(|| format!("`{name}.{key}` is not declared"))?;
            bound_with(bound, &operators[1..], &format!("{name}.{key}"))
        }
        "each" => {
            if scope.repeat != Some(Repeat::ForEach) {
                return Err("`each` outside a `for_each` resource".into());
            }
            let mut path = String::from("each");
            for operator in operators {
                path.push('.');
                path.push_str(&step(operator.value())?);
            }
            if path == "each" {
                return Err("`each` alone".into());
            }
            Ok(Value::String(format!("${{{path}}}")))
        }
        "count" => {
            if scope.repeat != Some(Repeat::Count) || attr(0) != Some("index") || operators.len() != 1 {
                return Err("`count` other than `count.index` in a `count` resource".into());
            }
            // The item keys of the translated forEach are "0", "1"...
            Ok(Value::String("${each.key}".into()))
        }
        "module" => {
            let call = attr(0).ok_or("`module` without a name")?;
            let output = attr(1).ok_or_else(|| format!("`module.{call}` without an output"))?;
            let outputs = scope
                .modules
                .get(call)
                .ok_or_else(|| format!("module `{call}` is not translated"))?;
            let bound = outputs
                .get(output)
                .ok_or_else(|| format!("module `{call}` has no output `{output}`"))?;
            bound_with(bound, &operators[2..], &format!("module.{call}.{output}"))
        }
        "path" => {
            let dir = match attr(0) {
                Some("module") => &scope.dir,
                Some("root") | Some("cwd") => &scope.root,
                _ => return Err("a `path` value other than path.module or path.root".into()),
            };
            Ok(Value::String(dir.to_string_lossy().into_owned()))
        }
        "data" => Err("a data source".into()),
        kind => {
            let resource = attr(0).ok_or_else(|| format!("`{kind}` without a resource name"))?;
            let target = scope
                .resources
                .get(&(kind.to_owned(), resource.to_owned()))
                .ok_or_else(|| format!("`{kind}.{resource}` is not a resource of this module"))?;
            let mut rest = &operators[1..];
            let mut id = target.id.clone();
            if target.repeated {
                let Some(TraversalOperator::Index(index)) = rest.first().map(|o| o.value()) else {
                    return Err(format!("`{kind}.{resource}` without an item key"));
                };
                let key = splice(&translate(index, scope)?)?;
                id = format!("{id}[{key}]");
                rest = &rest[1..];
            }
            match rest.first().map(|o| o.value()) {
                Some(TraversalOperator::GetAttr(a))
                    if rest.len() == 1 && ["id", "slug_name", "key"].contains(&a.as_str()) =>
                {
                    Ok(Value::String(id))
                }
                _ => Err(format!(
                    "an attribute of `{kind}.{resource}` other than its id (monform references name the logical id)"
                )),
            }
        }
    }
}

fn step(operator: &TraversalOperator) -> Result<String> {
    match operator {
        TraversalOperator::GetAttr(ident) => Ok(ident.as_str().to_owned()),
        TraversalOperator::Index(Expression::String(s)) => Ok(s.value().clone()),
        TraversalOperator::Index(Expression::Number(n)) => Ok(n.value().to_string()),
        TraversalOperator::LegacyIndex(i) => Ok(i.value().to_string()),
        _ => Err("a computed index or a splat".into()),
    }
}

fn bound_with(bound: &Bound, rest: &[hcl_edit::Decorated<TraversalOperator>], name: &str) -> Result<Value> {
    match bound {
        Bound::Fail(reason) => Err(format!("`{name}`: {reason}")),
        Bound::Value { value, .. } if rest.is_empty() => Ok(value.clone()),
        Bound::Value {
            literal: Some(literal), ..
        } => navigate_literal(literal, rest),
        Bound::Value { .. } => Err(format!("a path into `{name}`, whose value is not known here")),
    }
}

fn navigate_literal(base: &Value, operators: &[hcl_edit::Decorated<TraversalOperator>]) -> Result<Value> {
    let mut value = base;
    for operator in operators {
        let key = step(operator.value())?;
        value = match value {
            Value::Object(map) => map.get(&key),
            Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
        .ok_or_else(|| format!("no `{key}` in the value"))?;
    }
    Ok(value.clone())
}

fn function(call: &hcl_edit::expr::FuncCall, scope: &Scope) -> Result<Value> {
    let name = call.name.name.as_str();
    let args: Vec<&Expression> = call.args.iter().collect();
    match (name, args.as_slice()) {
        // Conversions: monform values carry their own types.
        ("toset" | "tolist" | "tomap" | "tostring" | "tonumber" | "tobool", [arg]) => translate(arg, scope),
        ("file", [arg]) => {
            let path = translate(arg, scope)?;
            let path = path.as_str().ok_or("`file()` of something other than a path")?;
            let path = monform_config::literal::unescape(path);
            if path.contains("${") {
                return Err("`file()` of a path monform computes".into());
            }
            let full = resolve(&scope.dir, &path);
            let text = std::fs::read_to_string(&full).map_err(|e| format!("`file()`: {}: {e}", full.display()))?;
            let mut map = Map::new();
            map.insert(FILE_MARKER.into(), Value::String(full.to_string_lossy().into_owned()));
            map.insert("text".into(), Value::String(text));
            Ok(Value::Object(map))
        }
        ("jsonencode", [arg]) => {
            let value = translate(arg, scope)?;
            serde_json::to_string(&value)
                .map(Value::String)
                .map_err(|e| e.to_string())
        }
        _ => Err(format!("the function `{name}()`")),
    }
}

fn resolve(dir: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        dir.join(path)
    }
}

/// Whether a translated value holds no substitution (a literal for `[vars]`).
pub fn is_literal(value: &Value) -> bool {
    match value {
        Value::String(s) => !monform_config::literal::has_substitution(s),
        Value::Array(items) => items.iter().all(is_literal),
        Value::Object(map) => !map.contains_key(FILE_MARKER) && map.values().all(is_literal),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Expression {
        hcl_edit::parser::parse_expr(text).unwrap()
    }

    fn scope() -> Scope {
        let mut scope = Scope::default();
        scope.vars.insert(
            "base".into(),
            Bound::Value {
                value: Value::String("${var:base}".into()),
                literal: Some(Value::String("https://x".into())),
            },
        );
        scope.vars.insert(
            "paths".into(),
            Bound::Value {
                value: Value::String("${var:paths}".into()),
                literal: Some(serde_json::json!({"users": {"path": "/u"}})),
            },
        );
        scope.resources.insert(
            ("checkly_check_group".into(), "main".into()),
            Target {
                id: "main".into(),
                repeated: false,
            },
        );
        scope.resources.insert(
            ("checkly_alert_channel".into(), "mail".into()),
            Target {
                id: "mail".into(),
                repeated: true,
            },
        );
        scope.repeat = Some(Repeat::ForEach);
        scope
    }

    fn ok(text: &str) -> Value {
        translate(&expr(text), &scope()).unwrap()
    }

    #[test]
    fn literals_and_substitutions() {
        assert_eq!(ok("5"), Value::from(5));
        assert_eq!(ok("[\"a\", true]"), serde_json::json!(["a", true]));
        assert_eq!(ok("{ a = 1, \"b\" = \"x\" }"), serde_json::json!({"a": 1, "b": "x"}));
        assert_eq!(ok("\"${var.base}/health\""), Value::String("${var:base}/health".into()));
        assert_eq!(
            ok("\"$${literal} {{TOKEN}}\""),
            Value::String("$${literal} {{TOKEN}}".into())
        );
        assert_eq!(ok("each.value.path"), Value::String("${each.value.path}".into()));
        assert_eq!(ok("\"API ${each.key}\""), Value::String("API ${each.key}".into()));
        assert_eq!(ok("var.paths[\"users\"].path"), Value::String("/u".into()));
        assert_eq!(ok("toset([\"a\"])"), serde_json::json!(["a"]));
    }

    #[test]
    fn references_become_logical_ids() {
        assert_eq!(ok("checkly_check_group.main.id"), Value::String("main".into()));
        assert_eq!(
            ok("checkly_alert_channel.mail[\"ops\"].id"),
            Value::String("mail[ops]".into())
        );
        assert_eq!(
            ok("checkly_alert_channel.mail[each.key].id"),
            Value::String("mail[${each.key}]".into())
        );
    }

    #[test]
    fn what_is_not_translated_says_why() {
        let fail = |text: &str| translate(&expr(text), &scope()).unwrap_err();
        assert_eq!(fail("var.x ? 1 : 2"), "a conditional expression");
        assert_eq!(fail("upper(\"a\")"), "the function `upper()`");
        assert_eq!(fail("data.checkly_static_ips.all.ip_addresses"), "a data source");
        assert!(fail("checkly_check_group.main.name").contains("other than its id"));
        assert_eq!(fail("var.nope"), "`var.nope` is not declared");
        assert_eq!(fail("1 + 2"), "an operation");
    }
}
