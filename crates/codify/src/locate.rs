//! Where one drifted field's value is written: the resource's own line, a
//! `forEach` item's entry, a variable, or nowhere yet (a new field on the
//! resource). Works on the file's tree as written (before `forEach` and
//! substitutions), so `${...}` is still text to recognise.

use monform_config::literal::has_substitution;
use monform_config::source::{FileId, Format};
use monform_config::tree::{Entry, Node, NodeValue};
use monform_model::{FieldPath, Segment};
use serde_json::Value;

use crate::render::{self, Style};
use crate::text::{anchor_before, column, extent, is_alias, is_flow, next_line};

/// A text edit: `text` replaces `[start, end)` of a file (an insertion
/// when they are equal). `check` is the path from the file's root where
/// the edited file must then hold `expected`.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub file: FileId,
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub check: Vec<String>,
    pub expected: Value,
    /// The edit is to a `forEach` definition: every item shares it.
    pub shared: bool,
    pub note: Option<String>,
}

/// What the definition is read with.
pub struct Site<'a> {
    pub file: FileId,
    pub text: &'a str,
    pub format: Format,
    /// Path of the definition from the file's root: `[section, id]`.
    pub root: Vec<String>,
    pub definition: &'a Node,
    /// The `forEach` item this resource is, if any.
    pub item: Option<&'a str>,
    pub vars: &'a Vars<'a>,
    /// Top-level keys `[defaults]` sets (for checks).
    pub defaults: &'a [String],
}

/// Where an edit sits.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub file: FileId,
    pub text: &'a str,
    pub format: Format,
}

impl Site<'_> {
    fn place(&self) -> Place<'_> {
        Place {
            file: self.file,
            text: self.text,
            format: self.format,
        }
    }
}

/// `[vars]` in monform.toml, and how often each is used in the project.
pub struct Vars<'a> {
    pub file: Option<(FileId, &'a str)>,
    /// monform.toml as written (`[environments.NAME] vars` are found in it).
    pub tree: Option<&'a Node>,
    pub entries: &'a [Entry],
    pub uses: &'a dyn Fn(&str) -> usize,
    pub edit: bool,
    /// The environment loaded: its own `vars` take the edit.
    pub environment: Option<&'a str>,
}

pub type Located = Result<Edit, String>;

/// Where `service`, the service's value of `path`, goes.
///
/// The value is the service's text: where the loader substitutes (the
/// resource's own fields, `[vars]`) it is written escaped
/// (`monform_config::literal`), so `x ${env:GITHUB_TOKEN}` in the service
/// stays that text rather than becoming the token at the next apply. A
/// `forEach` item's entry is not substituted, and so is written as it is.
pub fn locate(site: &Site<'_>, path: &FieldPath, service: &Value) -> Located {
    if site.definition.get("forEachFile").is_some() {
        return Err("made by forEachFile from files: the files cannot say which item to edit".into());
    }
    let literal = monform_config::literal::escaped(service);
    let value: &Value = &literal;
    let shared = site.definition.get("forEach").is_some();
    let mut node = site.definition;
    let mut check = site.root.clone();
    let segments = path.segments();
    for (i, segment) in segments.iter().enumerate() {
        match segment {
            Segment::Key(key) => match node.get(key) {
                Some(entry) if own(entry, site.text) => {
                    node = &entry.value;
                    check.push(key.clone());
                }
                Some(_) => {
                    let note = format!("{path} overrides the value merged from an anchor, which is unchanged");
                    return insert(site.place(), node, &segments[i..], value, check, shared, Some(note));
                }
                None => {
                    let note = added_note(site, path);
                    return insert(site.place(), node, &segments[i..], value, check, shared, Some(note));
                }
            },
            Segment::Index(_) => return Err("an item of a list the files write in part".into()),
        }
    }
    if let NodeValue::Map(entries) = &node.value
        && entries.len() == 1
        && entries[0].key == "file"
        && value.is_string()
    {
        return Err("read from a file (`{ file: }`): edit that file".into());
    }
    if let NodeValue::Str(s) = &node.value
        && has_substitution(s)
    {
        return substitution(site, node, s, value, service, check, shared);
    }
    if holds_substitution(node) {
        return Err("holds substitutions: the files cannot take the service's value as it is".into());
    }
    replace(site.file, site.text, site.format, node, value, check, shared, None)
}

/// A note for a field the resource did not write.
fn added_note(site: &Site<'_>, path: &FieldPath) -> String {
    let top = match path.segments().first() {
        Some(Segment::Key(key)) => key.as_str(),
        _ => "",
    };
    if path.segments().len() == 1 && site.defaults.iter().any(|d| d == top) {
        format!("{path} came from [defaults], which is unchanged: the resource now sets its own")
    } else {
        format!("{path} was not written in the files (the service's default): the resource now sets it")
    }
}

/// Whether an entry is written in this map (not merged from an anchor).
fn own(entry: &Entry, text: &str) -> bool {
    let written = text
        .get(entry.key_span.start..entry.key_span.start + entry.key_span.len)
        .unwrap_or_default();
    written.trim_matches(['"', '\'']) == entry.key
}

/// Whether the text as written substitutes anything (an escaped `$${` is
/// text: a value codify wrote before, say).
fn holds_substitution(node: &Node) -> bool {
    match &node.value {
        NodeValue::Str(s) => has_substitution(s),
        NodeValue::Seq(items) => items.iter().any(holds_substitution),
        NodeValue::Map(entries) => entries.iter().any(|e| holds_substitution(&e.value)),
        _ => false,
    }
}

/// The value's text replaced by `value`, in the style it was written.
#[allow(clippy::too_many_arguments)]
pub fn replace(
    file: FileId,
    text: &str,
    format: Format,
    node: &Node,
    value: &Value,
    check: Vec<String>,
    shared: bool,
    note: Option<String>,
) -> Located {
    let (start, end) = extent(node, text, format);
    let written = &text[start..end];
    if format == Format::Yaml
        && let Some(anchor) = anchor_before(text, start)
    {
        return Err(format!(
            "anchored (`&{anchor}`): the aliases of the anchor share the value"
        ));
    }
    let is_collection = matches!(node.value, NodeValue::Map(_) | NodeValue::Seq(_));
    let style = if is_alias(node, text) {
        Style::Flow
    } else if is_collection && !is_flow(node, text) {
        Style::Block(column(text, start))
    } else {
        Style::of(written, column(text, start))
    };
    let new = match format {
        Format::Yaml => render::yaml(value, style),
        Format::Toml => render::toml(value, style).ok_or("TOML cannot write null")?,
        Format::Rego => return Err("a policy file holds no resources".into()),
    };
    Ok(Edit {
        file,
        start,
        end,
        text: new,
        check,
        expected: value.clone(),
        shared,
        note,
    })
}

/// A value the whole of which is one `${...}` (its default may nest
/// others: `${each.value.f:-${var:f}}`). `value` is the service's value
/// escaped, `service` as it is (for a `forEach` item's entry).
fn substitution(
    site: &Site<'_>,
    node: &Node,
    s: &str,
    value: &Value,
    service: &Value,
    check: Vec<String>,
    shared: bool,
) -> Located {
    let interpolated = || format!("made by interpolation (`{s}`): the files cannot say which part changed");
    let Some(inner) = whole(s) else {
        return Err(interpolated());
    };
    let (reference, default) = match inner.split_once(":-") {
        Some((reference, default)) => (reference, Some(default)),
        None => (inner, None),
    };
    if reference.contains(['$', '{', '}']) {
        return Err(interpolated());
    }
    if reference == "each.key" {
        return Err("`${each.key}` is the item's key, part of its address".into());
    }
    if let Some(rest) = reference.strip_prefix("each.value")
        && (rest.is_empty() || rest.starts_with('.'))
    {
        // `${each.value.X:-default}`: the item's own X when it has one, so
        // the item is where the value goes (a new X when it had none).
        let added = default.map(|default| {
            format!(
                "the item set no {}, so `{default}` applied: the item now sets it",
                rest.trim_start_matches('.')
            )
        });
        return item_value(site, rest, service, added);
    }
    if let Some(name) = reference.strip_prefix("var:") {
        if site.vars.edit && (site.vars.uses)(name) == 1 {
            // In a forEach definition every item reads the variable.
            return variable(site, name, value).map(|edit| Edit { shared, ..edit });
        }
        let note = format!("was `${{var:{name}}}`: the resource now has the value, the variable is unchanged");
        return replace(
            site.file,
            site.text,
            site.format,
            node,
            value,
            check,
            shared,
            Some(note),
        );
    }
    Err(format!(
        "made by substitution (`{s}`): the files cannot hold the service's value there"
    ))
}

/// The body of `s` when `s` is exactly one `${...}`, defaults nested in it
/// or not (as the loader reads it: a `}` closes the innermost `${`).
fn whole(s: &str) -> Option<&str> {
    let rest = s.strip_prefix("${")?;
    let bytes = rest.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return (i + 1 == rest.len()).then(|| &rest[..i]),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `forEach` item's entry: `rest` is `""` (the item's value) or `.X.Y`;
/// `added` is the note for a field the item did not set.
fn item_value(site: &Site<'_>, rest: &str, value: &Value, added: Option<String>) -> Located {
    let Some(key) = site.item else {
        return Err("`${each.value}` outside a forEach".into());
    };
    let Some(for_each) = site.definition.get("forEach") else {
        return Err("`${each.value}` outside a forEach".into());
    };
    let items = match &for_each.value.value {
        NodeValue::Map(items) => items,
        NodeValue::Str(_) => return Err("the items come from a variable: edit it in monform.toml".into()),
        _ => return Err("the items of a list forEach are their keys, part of their addresses".into()),
    };
    if for_each.value.get("file").is_some() && items.len() == 1 {
        return Err("the items come from a data file: edit that file".into());
    }
    let Some(item) = items.iter().find(|e| e.key == key) else {
        return Err("the forEach item is not written in this file".into());
    };
    let mut check = site.root.clone();
    check.extend(["forEach".to_owned(), key.to_owned()]);
    let mut node = &item.value;
    let path = FieldPath::parse(rest.trim_start_matches('.'));
    let segments = path.segments();
    for (i, segment) in segments.iter().enumerate() {
        let Segment::Key(k) = segment else {
            return Err("an item of a list inside a forEach item".into());
        };
        match node.get(k) {
            Some(entry) if own(entry, site.text) => {
                node = &entry.value;
                check.push(k.clone());
            }
            _ => return insert(site.place(), node, &segments[i..], value, check, false, added),
        }
    }
    // An item's text is not substituted (it is substituted into the
    // resource as a value): `${` in it is text, replaced as any other.
    replace(site.file, site.text, site.format, node, value, check, false, None)
}

/// `[vars] NAME` in monform.toml, used by this resource only (`--edit-vars`);
/// with an environment loaded, that environment's own value
/// (`[environments.NAME] vars`), added there when it has none.
fn variable(site: &Site<'_>, name: &str, value: &Value) -> Located {
    if let Some(environment) = site.vars.environment {
        return environment_variable(site, environment, name, value);
    }
    let (Some((file, text)), Some(entry)) = (site.vars.file, site.vars.entries.iter().find(|e| e.key == name)) else {
        return Err(format!("`${{var:{name}}}` is not set in monform.toml's [vars]"));
    };
    // `[vars]` as loaded is substituted already: the text as written tells.
    let span = entry.value.span;
    let written = text.get(span.start..span.start + span.len).unwrap_or("${");
    if span.file != file || has_substitution(written) {
        return Err(format!("`${{var:{name}}}` is not written as a value in [vars]"));
    }
    let note = format!("the variable `{name}` (used only here) now holds the service's value");
    replace(
        file,
        text,
        Format::Toml,
        &entry.value,
        value,
        vec!["vars".into(), name.into()],
        false,
        Some(note),
    )
}

/// `[environments.ENV] vars.NAME`: replaced, or added (`[vars]` unchanged).
fn environment_variable(site: &Site<'_>, environment: &str, name: &str, value: &Value) -> Located {
    let (Some((file, text)), Some(tree)) = (site.vars.file, site.vars.tree) else {
        return Err("monform.toml was not found".into());
    };
    let Some(table) = tree
        .get("environments")
        .and_then(|e| e.value.get(environment))
        .filter(|t| matches!(t.value.value, NodeValue::Map(_)))
    else {
        return Err(format!(
            "[environments.{environment}] is not written as a table in monform.toml"
        ));
    };
    let place = Place {
        file,
        text,
        format: Format::Toml,
    };
    let mut check = vec!["environments".to_owned(), environment.to_owned()];
    let Some(vars) = table.value.get("vars") else {
        let note =
            format!("the variable `{name}` now has its own value in environment {environment} ([vars] unchanged)");
        let keys = [Segment::Key("vars".into()), Segment::Key(name.into())];
        return insert(place, &table.value, &keys, value, check, false, Some(note));
    };
    check.push("vars".into());
    let Some(entry) = vars.value.get(name) else {
        let note =
            format!("the variable `{name}` now has its own value in environment {environment} ([vars] unchanged)");
        return insert(
            place,
            &vars.value,
            &[Segment::Key(name.into())],
            value,
            check,
            false,
            Some(note),
        );
    };
    if holds_substitution(&entry.value) {
        return Err(format!(
            "`${{var:{name}}}` is not written as a value in [environments.{environment}] vars"
        ));
    }
    check.push(name.into());
    let note =
        format!("the variable `{name}` (used only here) now holds the service's value in environment {environment}");
    replace(file, text, Format::Toml, &entry.value, value, check, false, Some(note))
}

/// A new entry in `map` for `segments` (keys), holding `value`.
fn insert(
    place: Place<'_>,
    map: &Node,
    segments: &[Segment],
    value: &Value,
    mut check: Vec<String>,
    shared: bool,
    note: Option<String>,
) -> Located {
    let mut keys = Vec::new();
    for segment in segments {
        match segment {
            Segment::Key(k) => keys.push(k.clone()),
            Segment::Index(_) => return Err("an item of a list the files do not write".into()),
        }
    }
    let Some((first, rest)) = keys.split_first() else {
        return Err("nothing to write".into());
    };
    let NodeValue::Map(entries) = &map.value else {
        return Err("the files write this field as something other than a map".into());
    };
    let nested = rest.iter().rev().fold(value.clone(), |v, k| {
        Value::Object([(k.clone(), v)].into_iter().collect())
    });
    check.extend(keys.iter().cloned());
    let text = place.text;
    let (at, new) = match place.format {
        Format::Yaml if is_flow(map, text) => {
            let (_, end) = extent(map, text, Format::Yaml);
            let close = text[..end - 1].trim_end().len();
            let sep = if entries.is_empty() { " " } else { ", " };
            (
                close,
                format!("{sep}{}: {}", key_yaml(first), render::yaml_flow(&nested)),
            )
        }
        Format::Yaml => {
            let Some(first_entry) = entries.first() else {
                return Err("an empty map: nowhere to add the field".into());
            };
            let indent = column(text, first_entry.key_span.start);
            let (_, end) = extent(map, text, Format::Yaml);
            let at = next_line(text, end);
            let value_text = match &nested {
                Value::Object(m) if !m.is_empty() => {
                    format!(
                        "\n{}{}",
                        " ".repeat(indent + 2),
                        render::yaml(&nested, Style::Block(indent + 2))
                    )
                }
                Value::Array(a) if a.iter().any(|v| v.is_object() || v.is_array()) => {
                    format!(
                        "\n{}{}",
                        " ".repeat(indent + 2),
                        render::yaml(&nested, Style::Block(indent + 2))
                    )
                }
                _ => format!(" {}", render::yaml_flow(&nested)),
            };
            let lead = if at == text.len() && !text.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            (
                at,
                format!("{lead}{}{}:{value_text}\n", " ".repeat(indent), key_yaml(first)),
            )
        }
        Format::Toml => {
            let rendered = render::toml(&nested, Style::DoubleQuoted).ok_or("TOML cannot write null")?;
            let key = render::toml_key(first);
            if is_flow(map, text) && !is_header(map, text) {
                let (_, end) = extent(map, text, Format::Toml);
                let close = text[..end - 1].trim_end().len();
                let sep = if entries.is_empty() { " " } else { ", " };
                (close, format!("{sep}{key} = {rendered}"))
            } else {
                let end = entries
                    .iter()
                    .filter(|e| !is_header(&e.value, text))
                    .map(|e| extent(&e.value, text, Format::Toml).1)
                    .max()
                    .unwrap_or(map.span.start + map.span.len);
                let at = next_line(text, end);
                let lead = if at == text.len() && !text.ends_with('\n') {
                    "\n"
                } else {
                    ""
                };
                (at, format!("{lead}{key} = {rendered}\n"))
            }
        }
        Format::Rego => return Err("a policy file holds no resources".into()),
    };
    Ok(Edit {
        file: place.file,
        start: at,
        end: at,
        text: new,
        check,
        expected: value.clone(),
        shared,
        note,
    })
}

fn key_yaml(key: &str) -> String {
    match render::yaml_flow(&Value::String(key.to_owned())) {
        plain if !plain.starts_with('"') => plain,
        quoted => quoted,
    }
}

/// A TOML table written as a `[header]` (its span is the header).
fn is_header(node: &Node, text: &str) -> bool {
    let start = node.span.start;
    matches!(node.value, NodeValue::Map(_) | NodeValue::Seq(_))
        && text[start..].starts_with('[')
        && text[..start].rsplit('\n').next().is_some_and(|l| l.trim().is_empty())
}
