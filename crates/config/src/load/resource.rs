//! One resource's checks: its shape, scripts, rules and references, each
//! run on whatever part of it is well-formed.

use super::*;
use monform_model::resources::common::MAX_SCRIPT_BYTES;
use monform_model::sensitive::word;

/// The references of `address` found at `sites`: to a resource of the
/// project, to a remote-only object (soft), or dangling (a diagnostic,
/// naming the variable of a logical id from `${env:}`, in `substituted`,
/// rather than the id).
pub(super) fn references(
    address: &Address,
    sites: Vec<(RefSite, Span)>,
    substituted: &[(FieldPath, Hidden)],
    defined: &FxHashSet<Address>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Reference> {
    let mut references = Vec::with_capacity(sites.len());
    for (site, span) in sites {
        // The id moved into the address looked up, not copied: a
        // reference of each of 300,000 was an allocation of its own.
        let RefSite {
            path,
            target: kind,
            id,
            soft,
        } = site;
        let target = Address::new(kind, id);
        if defined.contains(&target) {
            references.push(Reference {
                path,
                target: Target::Managed(target),
                span,
            });
        } else if soft {
            references.push(Reference {
                path,
                target: Target::Remote(target.id),
                span,
            });
        } else {
            let site = RefSite {
                path,
                target: kind,
                id: target.id,
                soft,
            };
            let mut existing: Vec<&str> = defined
                .iter()
                .filter(|a| a.kind == site.target)
                .map(|a| a.id.as_str())
                .collect();
            existing.sort_unstable();
            let hidden = hidden_at(substituted, &site.path);
            let shown = word(&Value::String(site.id.clone()), hidden);
            let (message, label) = match hidden {
                Some(_) => (
                    format!("{address}.{}: {shown} names no {}", site.path, site.target.section()),
                    NOT_SHOWN,
                ),
                None => (
                    format!("{address}.{}: no {} named {shown}", site.path, site.target.section()),
                    "unknown reference",
                ),
            };
            let diagnostic = Diagnostic::new("monform::dangling-reference", message).at(span, label);
            // A did-you-mean would say what the sensitive id is like.
            let suggestion = hidden
                .is_none()
                .then(|| monform_model::suggest(&site.id, existing.iter().copied()))
                .flatten();
            diagnostics.push(match suggestion {
                Some(s) => diagnostic.help(format!("did you mean `{s}`?")),
                None if existing.is_empty() => {
                    diagnostic.help(format!("the project defines no {}", site.target.section()))
                }
                None => diagnostic.help(format!("{} are: {}", site.target.section(), existing.join(", "))),
            });
        }
    }
    references
}

/// Shape, scripts, rules and the reference sites of one resource. Every
/// check runs on whatever part of the resource is well-formed: a rule is
/// skipped only when a top-level field it reads is broken, a reference only
/// when its own value is. The typed resource comes back when nothing is wrong.
pub(super) fn validate(item: &Found, base: &Path, roots: &Roots, diagnostics: &mut Vec<Diagnostic>) -> Validated {
    let kind = item.address.kind;
    let mut json = item.node.to_json();
    let substituted = substituted(&item.node);
    let shape = check_shape_worded(kind, &json, &Wording::new(kind, &json, &substituted));
    // Top-level fields that are broken: rules reading them are skipped.
    let mut broken: FxHashSet<String> = FxHashSet::default();
    for violation in &shape.violations {
        if let Some(field) = top_field(&violation.path).or_else(|| violation.missing_field()) {
            broken.insert(field.to_owned());
        }
        // A failed substitution was reported; its leftover text is not news.
        if item.unresolved.is_empty() || !item.unresolved.contains(&item.node.locate(&violation.path, false)) {
            diagnostics.push(violation_diagnostic(item, violation, &substituted));
        }
    }
    for script in &shape.scripts {
        let file_path = script.path.key("file");
        let hidden = hidden_at(&substituted, &file_path);
        match read_script(base, &script.file, roots) {
            Ok(text) => set_at(&mut json, &script.path, Value::String(text)),
            Err((message, outside)) => {
                if let Some(field) = top_field(&script.path) {
                    broken.insert(field.to_owned());
                }
                let span = item.node.locate(&file_path, false);
                let (code, help) = if outside {
                    ("monform::path", OUTSIDE_HELP)
                } else {
                    ("monform::script-file", "paths are relative to the file that names them")
                };
                // The message quotes the path: of a sensitive one, only
                // what it is made of.
                let (message, label) = match hidden {
                    Some(hidden) => (
                        format!(
                            "{}.{file_path}: cannot read {} as a script file",
                            item.address,
                            word(&Value::Null, Some(hidden))
                        ),
                        NOT_SHOWN,
                    ),
                    None => (format!("{}.{}: {message}", item.address, script.path), "this file"),
                };
                diagnostics.push(Diagnostic::new(code, message).at(span, label).help(help));
            }
        }
    }
    let reads_project = bundle_playwright(item, base, roots, &mut json, &mut broken, diagnostics);
    let rules = monform_model::rules::check_worded(
        kind,
        &json,
        &|field| !broken.contains(field),
        &Wording::new(kind, &json, &substituted),
    );
    for violation in &rules {
        diagnostics.push(violation_diagnostic(item, violation, &substituted));
    }
    // A reference whose own value is broken (a bad logical id, a failed
    // substitution) is not looked up.
    let refs = shape
        .refs
        .into_iter()
        .filter(|r| !shape.violations.iter().any(|v| v.path.0.starts_with(&r.path.0)))
        .map(|r| {
            let span = item.node.locate(&r.path, false);
            (r, span)
        })
        .filter(|(_, span)| !item.unresolved.contains(span))
        .collect();
    let sensitive = sensitive_fields(&substituted, &json);
    let resource = if broken.is_empty() && shape.violations.is_empty() && rules.is_empty() {
        match monform_model::Resource::from_json(item.address.kind, json) {
            Ok(resource) => Some(resource),
            Err(e) => {
                // serde's message may quote a value: said without it when
                // the resource holds any sensitive one.
                let message = if substituted.is_empty() {
                    e.to_string()
                } else {
                    "is not a valid resource".to_owned()
                };
                diagnostics.push(violation_diagnostic(
                    item,
                    &Violation::new(FieldPath::root(), message),
                    &substituted,
                ));
                None
            }
        }
    } else {
        None
    };
    Validated {
        resource: resource.map(Box::new),
        refs,
        sensitive,
        substituted,
        reads_files: !shape.scripts.is_empty() || reads_project,
    }
}

/// A PLAYWRIGHT check's `playwright.config`: its project read into
/// `codeBundle`, and the config's path made the bundle's. True when it read
/// the project's files (the parse cache cannot keep what they hold).
fn bundle_playwright(
    item: &Found,
    base: &Path,
    roots: &Roots,
    json: &mut Value,
    broken: &mut FxHashSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    if item.address.kind != Kind::Check || json["checkType"] != "PLAYWRIGHT" || broken.contains("playwright") {
        return false;
    }
    let Some(config) = json["playwright"]["config"].as_str().map(str::to_owned) else {
        return false;
    };
    match super::playwright::bundle(base, &config, roots) {
        Ok((bundle, config)) => {
            json["codeBundle"] = bundle;
            json["playwright"]["config"] = Value::String(config);
        }
        Err(e) => {
            broken.insert("playwright".to_owned());
            let path = FieldPath::root().key("playwright").key("config");
            let span = item.node.locate(&path, false);
            let (code, help) = if e.outside {
                ("monform::path", OUTSIDE_HELP)
            } else {
                (
                    "monform::script-file",
                    "playwright.config is relative to the file that names it; the suite's imports to the file importing them",
                )
            };
            diagnostics.push(
                Diagnostic::new(code, format!("{}.playwright.config: {}", item.address, e.message))
                    .at(span, "this Playwright project")
                    .help(help),
            );
        }
    }
    true
}

/// What a diagnostic's label says at a value it does not show.
const NOT_SHOWN: &str = "sensitive: its value is not shown";

/// How the value at `path` is hidden, if a field holding it was
/// substituted from `${env:}` (the innermost such field).
fn hidden_at<'h>(substituted: &'h [(FieldPath, Hidden)], path: &FieldPath) -> Option<&'h Hidden> {
    substituted
        .iter()
        .filter(|(at, _)| path.starts_with(at))
        .max_by_key(|(at, _)| at.segments().len())
        .map(|(_, hidden)| hidden)
}

/// The fields of a resource holding text of a non-public `${env:}`
/// (`Node::sensitive`) as the file has them, with the variables each read.
fn substituted(node: &Node) -> Vec<(FieldPath, Hidden)> {
    // Nearly every resource has none: looked for first without the paths,
    // which cost an allocation per node (3% of a cold load's CPU).
    if !has_sensitive(node) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut stack = vec![(node, FieldPath::root())];
    while let Some((node, path)) = stack.pop() {
        if let Some(sensitive) = &node.sensitive {
            found.push((path, sensitive.hidden()));
            continue;
        }
        match &node.value {
            NodeValue::Map(entries) => {
                stack.extend(entries.iter().rev().map(|e| (&e.value, path.key(&e.key))));
            }
            NodeValue::Seq(items) => {
                stack.extend(items.iter().enumerate().rev().map(|(i, n)| (n, path.index(i))));
            }
            _ => {}
        }
    }
    found
}

/// The fields of `substituted` in the form the resource's JSON has, with
/// the variables each read: a field the JSON does not have as such
/// (`script.file`, replaced by the script) is its nearest ancestor there.
fn sensitive_fields(substituted: &[(FieldPath, Hidden)], json: &Value) -> Vec<(FieldPath, Vec<String>)> {
    let mut fields: Vec<(FieldPath, Vec<String>)> = Vec::with_capacity(substituted.len());
    for (path, hidden) in substituted {
        let mut path = path.clone();
        while !path.is_root() && path.get(json).is_none() {
            path.0.pop();
        }
        let read: &[String] = match hidden {
            Hidden::Env(names) => names,
            Hidden::Secret => &[],
        };
        match fields.iter_mut().find(|(field, _)| *field == path) {
            Some((_, names)) => names.extend(read.iter().filter(|n| !names.contains(n)).cloned().collect::<Vec<_>>()),
            None => fields.push((path, read.to_vec())),
        }
    }
    fields
}

/// Whether anything in `node` is sensitive.
fn has_sensitive(node: &Node) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.sensitive.is_some() {
            return true;
        }
        match &node.value {
            NodeValue::Map(entries) => stack.extend(entries.iter().map(|e| &e.value)),
            NodeValue::Seq(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// The top-level field a path is in.
pub(super) fn top_field(path: &FieldPath) -> Option<&str> {
    match path.segments().first()? {
        Segment::Key(key) => Some(key),
        Segment::Index(_) => None,
    }
}

/// A `{ file }` script, relative to the folder `base` of the file naming
/// it, inside the project (`roots`, symbolic links followed). The error
/// says whether the path leaves the project.
pub(super) fn read_script(base: &Path, relative: &str, roots: &Roots) -> Result<String, (String, bool)> {
    let path = match roots.resolve(&base.join(relative)) {
        Ok(path) => path,
        Err(PathError::Outside) => return Err((format!("script file `{relative}` is outside the project"), true)),
        Err(PathError::NotFound) => return Err((format!("script file `{relative}` not found"), false)),
        Err(PathError::Io(e)) => return Err((format!("cannot read script file `{relative}`: {e}"), false)),
    };
    let fail = |message: String| Err((message, false));
    let metadata = match std::fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(e) => return fail(format!("cannot read script file `{relative}`: {e}")),
    };
    // Devices and pipes (`/dev/zero`, `/dev/stdin`) would never end.
    if !metadata.is_file() {
        return fail(format!("script file `{relative}` is not a regular file"));
    }
    // No larger script fits a request (`MAX_SCRIPT_BYTES`): not worth reading.
    if metadata.len() > MAX_SCRIPT_BYTES as u64 {
        return fail(format!(
            "script file `{relative}` is larger than {} MiB, the most the service accepts",
            MAX_SCRIPT_BYTES >> 20
        ));
    }
    match std::fs::read(&path).map(decode) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(error)) => fail(format!("script file `{relative}` {}", error.message())),
        Err(e) => fail(format!("cannot read script file `{relative}`: {e}")),
    }
}

/// A violation as a diagnostic; at a sensitive value (`substituted`, or a
/// secret by the model's rule), the label says it is not shown: the
/// violation's message already names it by where it came from.
fn violation_diagnostic(item: &Found, violation: &Violation, substituted: &[(FieldPath, Hidden)]) -> Diagnostic {
    let span = item.node.locate(&violation.path, violation.at_key);
    let field = if violation.path.is_root() {
        item.address.to_string()
    } else {
        format!("{}.{}", item.address, violation.path)
    };
    let label = if violation.at_key {
        "unknown field"
    } else if hidden_at(substituted, &violation.path).is_some() {
        NOT_SHOWN
    } else if violation.path.is_root() {
        "in this resource"
    } else {
        "invalid value"
    };
    let mut diagnostic = Diagnostic::new("monform::invalid", format!("{field}: {}", violation.message)).at(span, label);
    if let Some(help) = &violation.help {
        diagnostic = diagnostic.help(help.clone());
    }
    diagnostic
}

/// Replaces the value at `path` in `value`, if there is one.
fn set_at(value: &mut Value, path: &FieldPath, new: Value) {
    let mut current = value;
    for segment in path.segments() {
        current = match (segment, current) {
            (Segment::Key(k), Value::Object(map)) => match map.get_mut(k) {
                Some(v) => v,
                None => return,
            },
            (Segment::Index(i), Value::Array(items)) => match items.get_mut(*i) {
                Some(v) => v,
                None => return,
            },
            _ => return,
        };
    }
    *current = new;
}
