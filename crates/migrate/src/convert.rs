//! The Terraform module tree walked: local module calls followed into
//! their folders, logical ids given to every resource, then every
//! variable, local, module argument, output and resource body translated
//! in its module's scope. The result is each resource's body in the
//! provider's shape (monform values in it), with the line of every
//! attribute and what could not be translated.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use hcl_edit::expr::Expression;
use hcl_edit::structure::Body;
use monform_model::Kind;
use serde_json::{Map, Value};

use crate::expr::{Bound, Repeat, Scope, Target, is_literal, translate};
use crate::mapping::kind_of;
use crate::tf::{Module, Place, read_module};
use crate::{MigrateError, Note};

mod names;
use names::{env_for_variable, evaluate_locals, root_variables};

/// Module calls deeper than this are not followed (a module calling itself).
const MAX_DEPTH: usize = 8;

/// One resource definition, translated as far as it goes.
#[derive(Debug)]
pub struct Definition {
    pub tf_type: String,
    pub tf_name: String,
    /// `module.a.module.b`, empty at the root: the state's module address.
    pub module: String,
    pub kind: Kind,
    pub id: String,
    pub place: Place,
    /// The Terraform file it came from (relative), for the output file's name.
    pub source_file: String,
    pub repeat: Repeat,
    /// The translated `forEach`, for a repeated resource whose `for_each`
    /// or `count` translated.
    pub for_each: Option<Value>,
    /// The body in the provider's shape.
    pub body: Map<String, Value>,
    /// Terraform attribute paths (`request.0.url`) to their lines.
    pub lines: BTreeMap<String, Place>,
    /// Attribute paths whose expression did not translate: (path, place, text, reason).
    pub failed: Vec<Failed>,
    pub prevent_destroy: bool,
    /// `lifecycle { ignore_changes }` as monform field paths (`lifecycle: { ignoreChanges }`).
    pub ignore_changes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Failed {
    pub path: Vec<String>,
    pub place: Place,
    pub text: String,
    pub reason: String,
}

/// Everything the walk found.
#[derive(Debug, Default)]
pub struct Walked {
    pub definitions: Vec<Definition>,
    /// `[vars]` of monform.toml: Terraform variables and locals with literal values.
    pub vars: Map<String, Value>,
    /// Environment variables the files name: (name, what it holds).
    pub env: Vec<(String, String)>,
    pub notes: Vec<Note>,
    /// Modules that were not followed, by state address (their resources stay unmanaged).
    pub skipped_modules: BTreeSet<String>,
}

struct Node {
    module: Module,
    /// The state's module address.
    address: String,
    /// The logical id prefix of its resources (`payments_`).
    prefix: String,
    /// Calls followed: index into `module.calls` and the called module.
    children: Vec<(usize, Node)>,
    /// Logical ids of its resources, by (type, name).
    targets: BTreeMap<(String, String), Target>,
}

/// Reads the root folder and every local module it calls.
pub fn walk(root: &Path) -> Result<Walked, MigrateError> {
    let mut walked = Walked::default();
    let module = read_module(root, "", true)?;
    let mut node = load(module, root, String::new(), String::new(), 0, &mut walked)?;
    let mut taken: BTreeSet<(Kind, String)> = BTreeSet::new();
    assign_ids(&mut node, &mut taken);
    let mut vars = BTreeMap::new();
    root_variables(&node.module, &mut vars, &mut walked);
    evaluate(&node, vars, root, true, &mut walked);
    Ok(walked)
}

fn load(
    module: Module,
    root: &Path,
    address: String,
    prefix: String,
    depth: usize,
    walked: &mut Walked,
) -> Result<Node, MigrateError> {
    let mut children = Vec::new();
    for (index, call) in module.calls.iter().enumerate() {
        let child_address = if address.is_empty() {
            format!("module.{}", call.name)
        } else {
            format!("{address}.module.{}", call.name)
        };
        let skip = |walked: &mut Walked, why: String| {
            walked.notes.push(Note::new(call.place.clone(), why));
            walked.skipped_modules.insert(child_address.clone());
        };
        let Some(source) = call
            .source
            .as_deref()
            .filter(|s| s.starts_with("./") || s.starts_with("../"))
        else {
            skip(
                walked,
                format!(
                    "module `{}`: only local modules (`./path`) are followed; its resources are not migrated",
                    call.name
                ),
            );
            continue;
        };
        if call.repeated {
            skip(
                walked,
                format!(
                    "module `{}` is called with `count` or `for_each`: not migrated (call it once per item, or move its resources up)",
                    call.name
                ),
            );
            continue;
        }
        if depth >= MAX_DEPTH {
            skip(
                walked,
                format!(
                    "module `{}`: modules nested deeper than {MAX_DEPTH} are not followed",
                    call.name
                ),
            );
            continue;
        }
        let dir = module.dir.join(source);
        let shown = relative(root, &dir);
        let child = read_module(&dir, &shown, false)?;
        let child_prefix = format!("{prefix}{}_", call.name);
        children.push((
            index,
            load(child, root, child_address, child_prefix, depth + 1, walked)?,
        ));
    }
    Ok(Node {
        module,
        address,
        prefix,
        children,
        targets: BTreeMap::new(),
    })
}

/// `dir` relative to `root` with `/` (lexically: `a/../b` is `b`).
fn relative(root: &Path, dir: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    let tail = dir.strip_prefix(root).unwrap_or(dir);
    for component in tail.components() {
        match component {
            std::path::Component::ParentDir if parts.pop().is_none() => parts.push("..".into()),
            std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

/// A logical id from a Terraform name: the name itself when valid, made
/// unique per section (two resource types become one section: checks).
fn assign_ids(node: &mut Node, taken: &mut BTreeSet<(Kind, String)>) {
    for resource in &node.module.resources {
        let Some((kind, _)) = kind_of(&resource.kind) else {
            continue;
        };
        let mut base = format!("{}{}", node.prefix, resource.name);
        if !base.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            base.insert(0, 'x');
        }
        base.truncate(64);
        let mut id = base.clone();
        let mut n = 2;
        while taken.contains(&(kind, id.clone())) {
            let suffix = format!("-{n}");
            let mut stem = base.clone();
            stem.truncate(64 - suffix.len());
            id = format!("{stem}{suffix}");
            n += 1;
        }
        taken.insert((kind, id.clone()));
        let repeated = resource.body.has_attribute("for_each") || resource.body.has_attribute("count");
        node.targets
            .insert((resource.kind.clone(), resource.name.clone()), Target { id, repeated });
    }
    for (_, child) in &mut node.children {
        assign_ids(child, taken);
    }
}

fn evaluate(
    node: &Node,
    vars: BTreeMap<String, Bound>,
    root_dir: &Path,
    is_root: bool,
    walked: &mut Walked,
) -> BTreeMap<String, Bound> {
    let module = &node.module;
    let mut scope = Scope {
        vars,
        resources: node.targets.clone(),
        dir: module.dir.clone(),
        root: root_dir.to_owned(),
        ..Scope::default()
    };
    evaluate_locals(node, &mut scope, is_root, walked);
    for (index, child) in &node.children {
        let call = &module.calls[*index];
        let mut child_vars = BTreeMap::new();
        for variable in &child.module.variables {
            let bound = match call.arguments.iter().find(|a| a.name == variable.name) {
                Some(argument) => match translate(&argument.expr, &scope) {
                    Ok(value) => {
                        let literal = is_literal(&value).then(|| value.clone());
                        Bound::Value { value, literal }
                    }
                    Err(reason) => {
                        walked.notes.push(Note::new(
                            argument.place.clone(),
                            format!(
                                "module `{}` argument `{}` = `{}`: {reason} is not translated",
                                call.name,
                                argument.name,
                                module.files[argument.file].text_of(&argument.expr)
                            ),
                        ));
                        Bound::Fail(reason)
                    }
                },
                None => match variable.default.as_ref().map(|d| translate(d, &Scope::default())) {
                    Some(Ok(value)) => Bound::literal(value),
                    Some(Err(reason)) => Bound::Fail(reason),
                    None => Bound::Fail(format!("module `{}` sets no `{}`", call.name, variable.name)),
                },
            };
            // A sensitive module variable: its value is a secret wherever it goes.
            let bound = if variable.sensitive {
                match bound {
                    Bound::Value {
                        value: Value::String(s),
                        ..
                    } if s.starts_with("${env:") => Bound::Value {
                        value: Value::String(s),
                        literal: None,
                    },
                    _ => {
                        let env = env_for_variable(&format!("{}_{}", call.name, variable.name));
                        walked.env.push((
                            env.clone(),
                            format!("variable `{}` of module `{}` (sensitive)", variable.name, call.name),
                        ));
                        Bound::Value {
                            value: Value::String(format!("${{env:{env}}}")),
                            literal: None,
                        }
                    }
                }
            } else {
                bound
            };
            child_vars.insert(variable.name.clone(), bound);
        }
        let outputs = evaluate(child, child_vars, root_dir, false, walked);
        scope.modules.insert(call.name.clone(), outputs);
    }
    for skipped in &module.skipped {
        walked.notes.push(Note::new(
            skipped.place.clone(),
            format!(
                "`{}` is not migrated (monform has no data sources or other providers)",
                skipped.what
            ),
        ));
    }
    for resource in &module.resources {
        let Some((kind, _)) = kind_of(&resource.kind) else {
            let why = if resource.kind.starts_with("checkly_") {
                format!("resource type `{}` has no monform kind: not migrated", resource.kind)
            } else {
                format!(
                    "`{}.{}` is not the service's provider: not migrated",
                    resource.kind, resource.name
                )
            };
            walked.notes.push(Note::new(resource.place.clone(), why));
            continue;
        };
        let target = &node.targets[&(resource.kind.clone(), resource.name.clone())];
        let file = &module.files[resource.file];
        let mut definition = Definition {
            tf_type: resource.kind.clone(),
            tf_name: resource.name.clone(),
            module: node.address.clone(),
            kind,
            id: target.id.clone(),
            place: resource.place.clone(),
            source_file: file.name.clone(),
            repeat: Repeat::None,
            for_each: None,
            body: Map::new(),
            lines: BTreeMap::new(),
            failed: Vec::new(),
            prevent_destroy: false,
            ignore_changes: Vec::new(),
        };
        let body = &resource.body;
        scope.repeat = None;
        if let Some(attribute) = body.get_attribute("for_each") {
            definition.repeat = Repeat::ForEach;
            match translate(&attribute.value, &scope) {
                Ok(value @ (Value::Object(_) | Value::Array(_))) => definition.for_each = Some(value),
                Ok(Value::String(s)) if s.starts_with("${var:") => definition.for_each = Some(Value::String(s)),
                Ok(_) => definition.failed.push(failed_at(
                    file,
                    &attribute.value,
                    vec!["for_each".into()],
                    "a value that is neither a map nor a set".into(),
                )),
                Err(reason) => {
                    definition
                        .failed
                        .push(failed_at(file, &attribute.value, vec!["for_each".into()], reason))
                }
            }
        } else if let Some(attribute) = body.get_attribute("count") {
            definition.repeat = Repeat::Count;
            match translate(&attribute.value, &scope) {
                Ok(Value::Number(n)) if n.as_u64().is_some() => {
                    let count = n.as_u64().unwrap_or_default();
                    definition.for_each =
                        Some(Value::Array((0..count).map(|i| Value::String(i.to_string())).collect()));
                }
                Ok(_) => definition.failed.push(failed_at(
                    file,
                    &attribute.value,
                    vec!["count".into()],
                    "a count monform cannot read".into(),
                )),
                Err(reason) => definition
                    .failed
                    .push(failed_at(file, &attribute.value, vec!["count".into()], reason)),
            }
        }
        scope.repeat = Some(definition.repeat);
        for block in body.blocks() {
            match block.ident.as_str() {
                "lifecycle" => {
                    for attribute in block.body.attributes() {
                        let place = file.place_of(attribute);
                        match (attribute.key.as_str(), &attribute.value) {
                            ("prevent_destroy", Expression::Bool(b)) => definition.prevent_destroy = *b.value(),
                            ("ignore_changes", Expression::Array(items)) => {
                                for item in items.iter() {
                                    let text = file.text_of(item);
                                    let check_type = body.get_attribute("type").and_then(|a| translate(&a.value, &scope).ok());
                                    match ignored_path(&definition.tf_type, check_type.as_ref(), &text) {
                                        Some(path) => definition.ignore_changes.push(path),
                                        None => walked.notes.push(Note::new(
                                            file.place_of(item),
                                            format!(
                                                "{}.{}: `ignore_changes` entry `{text}` names no field monform can ignore: left out; add it to `lifecycle: {{ ignoreChanges }}` by hand",
                                                kind.section(),
                                                definition.id
                                            ),
                                        )),
                                    }
                                }
                            }
                            (key, _) => walked.notes.push(Note::new(
                                place,
                                format!(
                                    "{}.{}: `lifecycle {{ {key} }}` is not translated (monform's is `lifecycle: {{ ignoreChanges }}`); add it by hand",
                                    kind.section(),
                                    definition.id
                                ),
                            )),
                        }
                    }
                }
                "dynamic" => {
                    let name = block.labels.first().map(|l| l.as_str().to_owned()).unwrap_or_default();
                    definition.failed.push(Failed {
                        path: vec![name.clone()],
                        place: file.place_of(block),
                        text: format!("dynamic \"{name}\""),
                        reason: "a `dynamic` block".into(),
                    });
                }
                _ => {}
            }
        }
        for meta in ["depends_on", "provider"] {
            if let Some(attribute) = body.get_attribute(meta) {
                walked.notes.push(Note::new(
                    file.place_of(attribute),
                    format!(
                        "{}.{}: `{meta}` is dropped (monform orders changes by references, and has one account per project)",
                        kind.section(),
                        definition.id
                    ),
                ));
            }
        }
        let mut path = Vec::new();
        definition.body = evaluate_body(
            body,
            &scope,
            file,
            &mut path,
            &mut definition.lines,
            &mut definition.failed,
        );
        definition.lines.insert(String::new(), resource.place.clone());
        walked.definitions.push(definition);
    }
    let mut outputs = BTreeMap::new();
    scope.repeat = None;
    for output in &module.outputs {
        let bound = match translate(&output.expr, &scope) {
            Ok(value) => {
                let literal = is_literal(&value).then(|| value.clone());
                Bound::Value { value, literal }
            }
            Err(reason) => Bound::Fail(reason),
        };
        outputs.insert(output.name.clone(), bound);
    }
    outputs
}

fn failed_at(file: &crate::tf::SourceFile, expr: &Expression, path: Vec<String>, reason: String) -> Failed {
    Failed {
        path,
        place: file.place_of(expr),
        text: file.text_of(expr),
        reason,
    }
}

/// A body as the provider's JSON shape: attributes as values, nested
/// blocks as lists of objects. Meta-arguments are left out.
fn evaluate_body(
    body: &Body,
    scope: &Scope,
    file: &crate::tf::SourceFile,
    path: &mut Vec<String>,
    lines: &mut BTreeMap<String, Place>,
    failed: &mut Vec<Failed>,
) -> Map<String, Value> {
    const META: &[&str] = &["count", "for_each", "depends_on", "provider"];
    let mut out = Map::new();
    for attribute in body.attributes() {
        let key = attribute.key.as_str();
        if path.is_empty() && META.contains(&key) {
            continue;
        }
        path.push(key.to_owned());
        lines.insert(path.join("."), file.place_of(attribute));
        match translate(&attribute.value, scope) {
            Ok(Value::Null) => {}
            Ok(value) => {
                out.insert(key.to_owned(), value);
            }
            Err(reason) => failed.push(failed_at(file, &attribute.value, path.clone(), reason)),
        }
        path.pop();
    }
    for block in body.blocks() {
        let ident = block.ident.as_str();
        if path.is_empty() && (ident == "lifecycle" || ident == "dynamic") {
            continue;
        }
        let list = out.entry(ident.to_owned()).or_insert_with(|| Value::Array(Vec::new()));
        let index = list.as_array().map_or(0, Vec::len);
        path.push(ident.to_owned());
        path.push(index.to_string());
        lines.insert(path.join("."), file.place_of(block));
        let inner = evaluate_body(&block.body, scope, file, path, lines, failed);
        path.pop();
        path.pop();
        if let Some(Value::Array(items)) = out.get_mut(ident) {
            items.push(Value::Object(inner));
        }
    }
    out
}

/// An `ignore_changes` entry (`description`, `request[0].headers`) as the
/// monform field path the provider's attribute maps to: the attribute set
/// to a marker in an otherwise empty body (but a check's `type`), mapped,
/// and the marker found.
/// `None` for what does not map to one field (`all`, an expression).
pub(crate) fn ignored_path(tf_type: &str, check_type: Option<&Value>, text: &str) -> Option<String> {
    const MARKER: &str = "\u{1}ignored";
    let steps: Vec<&str> = text
        .split('.')
        // `request[0]`: a block's one item, which monform's path leaves out.
        .map(|step| match step.split_once('[') {
            Some((name, index))
                if index
                    .strip_suffix(']')
                    .is_some_and(|i| i.bytes().all(|b| b.is_ascii_digit())) =>
            {
                name
            }
            Some(_) => "",
            None => step,
        })
        .collect();
    let identifier = |s: &&str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if text == "all" || !steps.iter().all(identifier) {
        return None;
    }
    let none = |_: Kind, _: &str| None;
    let refs = crate::mapping::Refs {
        from_state: false,
        resolve: &none,
    };
    // The attribute's value as a text, a map (headers) or a list (locations).
    let leaves = [
        Value::String(MARKER.into()),
        Value::Object(Map::from_iter([(MARKER.to_owned(), Value::String(MARKER.into()))])),
        Value::Array(vec![Value::String(MARKER.into())]),
    ];
    leaves.into_iter().find_map(|leaf| {
        // Blocks are lists of one in the provider's shape.
        let mut body = leaf;
        for step in steps.iter().skip(1).rev() {
            body = Value::Array(vec![Value::Object(Map::from_iter([((*step).to_owned(), body)]))]);
        }
        let mut tf = Map::from_iter([(steps[0].to_owned(), body)]);
        // A check's type picks the fields its `request` has.
        if let Some(check_type) = check_type {
            tf.insert("type".into(), check_type.clone());
        }
        let mapped = Value::Object(crate::mapping::map_resource(tf_type, &tf, &refs).value);
        marker_path(&mapped, MARKER, &mut Vec::new())
    })
}

/// The keys down to the text `marker`, ending at the first list on the
/// way (monform's ignored paths name fields, not items).
fn marker_path(value: &Value, marker: &str, keys: &mut Vec<String>) -> Option<String> {
    let path = |keys: &[String]| Some(keys.join(".")).filter(|p| !p.is_empty());
    match value {
        Value::String(s) if s == marker => path(keys),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            keys.push(k.clone());
            let found = marker_path(v, marker, keys);
            keys.pop();
            found
        }),
        Value::Array(items) => items
            .iter()
            .find_map(|v| marker_path(v, marker, &mut Vec::new()))
            .and_then(|_| path(keys)),
        _ => None,
    }
}
