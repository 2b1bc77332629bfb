//! One resource's checks: its shape, scripts, rules and references, each
//! run on whatever part of it is well-formed.

use super::*;
use monform_model::resources::common::MAX_SCRIPT_BYTES;

/// The references of `address` found at `sites`: to a resource of the
/// project, to a remote-only object (soft), or dangling (a diagnostic).
pub(super) fn references(
    address: &Address,
    sites: Vec<(RefSite, Span)>,
    defined: &FxHashSet<Address>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Reference> {
    let mut references = Vec::new();
    for (site, span) in sites {
        let target = Address::new(site.target, site.id.clone());
        if defined.contains(&target) {
            references.push(Reference {
                path: site.path,
                target: Target::Managed(target),
                span,
            });
        } else if site.soft {
            references.push(Reference {
                path: site.path,
                target: Target::Remote(site.id),
                span,
            });
        } else {
            let mut existing: Vec<&str> = defined
                .iter()
                .filter(|a| a.kind == site.target)
                .map(|a| a.id.as_str())
                .collect();
            existing.sort_unstable();
            let diagnostic = Diagnostic::new(
                "monform::dangling-reference",
                format!(
                    "{address}.{}: no {} named `{}`",
                    site.path,
                    site.target.section(),
                    site.id
                ),
            )
            .at(span, "unknown reference");
            diagnostics.push(match monform_model::suggest(&site.id, existing.iter().copied()) {
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
    let mut json = item.node.to_json();
    let shape = check_shape(item.address.kind, &json);
    // Top-level fields that are broken: rules reading them are skipped.
    let mut broken: FxHashSet<String> = FxHashSet::default();
    for violation in &shape.violations {
        if let Some(field) = top_field(&violation.path).or_else(|| violation.missing_field()) {
            broken.insert(field.to_owned());
        }
        // A failed substitution was reported; its leftover text is not news.
        if item.unresolved.is_empty() || !item.unresolved.contains(&item.node.locate(&violation.path, false)) {
            diagnostics.push(violation_diagnostic(item, violation));
        }
    }
    for script in &shape.scripts {
        match read_script(base, &script.file, roots) {
            Ok(text) => set_at(&mut json, &script.path, Value::String(text)),
            Err((message, outside)) => {
                if let Some(field) = top_field(&script.path) {
                    broken.insert(field.to_owned());
                }
                let span = item.node.locate(&script.path.key("file"), false);
                let (code, help) = if outside {
                    ("monform::path", OUTSIDE_HELP)
                } else {
                    ("monform::script-file", "paths are relative to the file that names them")
                };
                diagnostics.push(
                    Diagnostic::new(code, format!("{}.{}: {message}", item.address, script.path))
                        .at(span, "this file")
                        .help(help),
                );
            }
        }
    }
    let rules = monform_model::rules::check(item.address.kind, &json, &|field| !broken.contains(field));
    for violation in &rules {
        diagnostics.push(violation_diagnostic(item, violation));
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
    let sensitive = sensitive_fields(&item.node, &json);
    let resource = if broken.is_empty() && shape.violations.is_empty() && rules.is_empty() {
        match monform_model::Resource::from_json(item.address.kind, json) {
            Ok(resource) => Some(resource),
            Err(e) => {
                diagnostics.push(violation_diagnostic(
                    item,
                    &Violation::new(FieldPath::root(), e.to_string()),
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
        reads_files: !shape.scripts.is_empty(),
    }
}

/// The fields of a resource holding text of a non-public `${env:}`
/// (`Node::sensitive`), in the file form the resource's JSON has: a field
/// the JSON does not have as such (`script.file`, replaced by the script)
/// is its nearest ancestor there.
pub(super) fn sensitive_fields(node: &Node, json: &Value) -> Vec<FieldPath> {
    // Nearly every resource has none: looked for first without the paths,
    // which cost an allocation per node (3% of a cold load's CPU).
    if !has_sensitive(node) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut stack = vec![(node, FieldPath::root())];
    while let Some((node, path)) = stack.pop() {
        if node.sensitive {
            found.push(path);
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
    let mut fields: Vec<FieldPath> = Vec::with_capacity(found.len());
    for mut path in found {
        while !path.is_root() && path.get(json).is_none() {
            path.0.pop();
        }
        if !fields.contains(&path) {
            fields.push(path);
        }
    }
    fields
}

/// Whether anything in `node` is sensitive.
fn has_sensitive(node: &Node) -> bool {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.sensitive {
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

fn violation_diagnostic(item: &Found, violation: &Violation) -> Diagnostic {
    let span = item.node.locate(&violation.path, violation.at_key);
    let field = if violation.path.is_root() {
        item.address.to_string()
    } else {
        format!("{}.{}", item.address, violation.path)
    };
    let label = if violation.at_key {
        "unknown field"
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
