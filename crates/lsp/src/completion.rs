//! Completion: field names valid at the cursor (by check type and channel
//! type), enum values, logical ids for reference fields, addresses in
//! `moved`/`import`/`removed`, `${var:` names and `${each.` members, all
//! read from the model's schema and the project's load.

use lsp_types::{CompletionItem, CompletionItemKind, Documentation, MarkupContent, MarkupKind};
use monform_config::source::Format;
use monform_config::tree::{Node, NodeValue};
use serde_json::Value;

use crate::analysis::Analysis;
use crate::cursor::{self, Cursor, Spot};
use crate::fields::{self, At, plain};
use crate::index::definition_of;

/// The completions at byte `offset` of `text`, a file of `format`.
pub fn complete(analysis: Option<&Analysis>, format: Format, text: &str, offset: usize) -> Vec<CompletionItem> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    if let Some(open) = before.rfind("${")
        && !before[open..].contains('}')
    {
        return substitutions(analysis, format, text, offset, &before[open + 2..]);
    }
    let cursor = match format {
        Format::Yaml => cursor::yaml(text, offset),
        Format::Toml => cursor::toml(text, offset),
        Format::Rego => return Vec::new(),
    };
    let Some(section) = cursor.path.first() else {
        return top_level();
    };
    if cursor.path.len() < 2 {
        return Vec::new();
    }
    let kind = fields::kind(section);
    let variant = kind.and_then(|kind| fields::variant_in(kind, &cursor.block));
    let Some(at) = fields::root(section, variant.as_deref()).and_then(|root| root.path(&cursor.path[2..])) else {
        return Vec::new();
    };
    match cursor.spot {
        Spot::Key => keys(&at),
        Spot::Value => values(analysis, format, &cursor, &at),
    }
}

/// The sections and declaration lists, from the schema's top level.
fn top_level() -> Vec<CompletionItem> {
    fields::document()["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, schema)| CompletionItem {
            label: name.clone(),
            kind: Some(CompletionItemKind::MODULE),
            detail: schema.get("description").and_then(Value::as_str).map(first_sentence),
            ..CompletionItem::default()
        })
        .collect()
}

fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].to_owned()
}

fn keys(at: &At<'_>) -> Vec<CompletionItem> {
    at.fields()
        .into_iter()
        .map(|(name, schema)| {
            let field = At::one(schema, at.variant);
            let mut detail = field
                .keyword("description")
                .and_then(Value::as_str)
                .map(first_sentence)
                .unwrap_or_else(|| field.type_name());
            if let Some(default) = field.keyword("default") {
                detail.push_str(&format!(" (default: {})", plain(default)));
            }
            CompletionItem {
                label: name.to_owned(),
                kind: Some(CompletionItemKind::FIELD),
                detail: Some(detail),
                documentation: Some(markdown(field.documentation(name))),
                ..CompletionItem::default()
            }
        })
        .collect()
}

fn markdown(value: String) -> Documentation {
    Documentation::MarkupContent(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    })
}

fn values(analysis: Option<&Analysis>, format: Format, cursor: &Cursor, at: &At<'_>) -> Vec<CompletionItem> {
    let field = cursor.path.last().map(String::as_str).unwrap_or_default();
    // `moved`, `import` and `removed` name addresses.
    if matches!(
        cursor.path.first().map(String::as_str),
        Some("moved" | "import" | "removed")
    ) && matches!(field, "from" | "to")
    {
        return addresses(analysis, format);
    }
    if let Some(section) = at.reference() {
        return logical_ids(analysis, format, section);
    }
    at.values()
        .into_iter()
        .map(|value| {
            let label = plain(&value);
            let insert = match (&value, format) {
                (Value::String(s), Format::Toml) => Some(format!("\"{s}\"")),
                _ => None,
            };
            CompletionItem {
                label,
                kind: Some(CompletionItemKind::ENUM_MEMBER),
                detail: Some(format!("{field}: {}", at.type_name())),
                insert_text: insert,
                ..CompletionItem::default()
            }
        })
        .collect()
}

fn quoted(format: Format, text: &str) -> Option<String> {
    (format == Format::Toml).then(|| format!("\"{text}\""))
}

/// The logical ids of a section, each with its `name`.
fn logical_ids(analysis: Option<&Analysis>, format: Format, section: &str) -> Vec<CompletionItem> {
    let Some(analysis) = analysis else {
        return Vec::new();
    };
    let Some(kind) = monform_model::Kind::from_section(section) else {
        return Vec::new();
    };
    let mut items: Vec<CompletionItem> = Vec::new();
    // The section's resources only, from the map's order (kind first):
    // not the 100,000 checks when the field names a group.
    let first = monform_model::Address::new(kind, "");
    let resources = analysis.loaded.desired.resources.range(first..);
    for (_, resource) in resources.take_while(|(address, _)| address.kind == kind) {
        let label = resource.address.id.clone();
        let name = resource
            .resource
            .to_json()
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        items.push(CompletionItem {
            insert_text: quoted(format, &label),
            label,
            kind: Some(CompletionItemKind::REFERENCE),
            detail: Some(match name {
                Some(name) => format!("{} ({name})", resource.address),
                None => resource.address.to_string(),
            }),
            ..CompletionItem::default()
        });
    }
    items
}

/// Every address of the project (`checks.home`), for `moved` and the like.
fn addresses(analysis: Option<&Analysis>, format: Format) -> Vec<CompletionItem> {
    let Some(analysis) = analysis else {
        return Vec::new();
    };
    let mut items: Vec<CompletionItem> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for resource in analysis.loaded.desired.resources.values() {
        let label = definition_of(&resource.address).to_string();
        if !seen.insert(label.clone()) {
            continue;
        }
        items.push(CompletionItem {
            insert_text: quoted(format, &label),
            label,
            kind: Some(CompletionItemKind::REFERENCE),
            ..CompletionItem::default()
        });
    }
    items
}

/// Inside `${`: what may be substituted.
fn substitutions(
    analysis: Option<&Analysis>,
    format: Format,
    text: &str,
    offset: usize,
    typed: &str,
) -> Vec<CompletionItem> {
    let item = |label: String, detail: String| CompletionItem {
        label,
        kind: Some(CompletionItemKind::VARIABLE),
        detail: Some(detail),
        ..CompletionItem::default()
    };
    if typed.starts_with("var:") {
        let Some(project) = analysis.and_then(|a| a.loaded.project.as_ref()) else {
            return Vec::new();
        };
        let mut items: Vec<CompletionItem> = Vec::new();
        let all = project
            .vars
            .iter()
            .map(|v| (v, "[vars]".to_owned()))
            .chain(project.environments.iter().flat_map(|e| {
                e.vars
                    .iter()
                    .map(move |v| (v, format!("[environments.{}.vars]", e.name)))
            }));
        for (entry, table) in all {
            if !items.iter().any(|i| i.label == entry.key) {
                // The value is not shown: it may come from a secret environment variable.
                items.push(item(entry.key.clone(), format!("monform.toml {table}")));
            }
        }
        return items;
    }
    if typed.starts_with("each.") {
        let mut items = vec![
            item("key".into(), "the item's key".into()),
            item("value".into(), "the item's value".into()),
        ];
        for member in each_members(format, text, offset) {
            items.push(item(format!("value.{member}"), "a field of the item's value".into()));
        }
        return items;
    }
    ["var:", "env:", "each.key", "each.value"]
        .into_iter()
        .map(|label| item(label.into(), "substitution".into()))
        .collect()
}

/// The fields of the first item of the `forEach` of the resource the
/// cursor is in (the document parsed as it is; nothing when it does not
/// parse).
fn each_members(format: Format, text: &str, offset: usize) -> Vec<String> {
    let cursor = match format {
        Format::Yaml => cursor::yaml(text, offset),
        Format::Toml => cursor::toml(text, offset),
        Format::Rego => return Vec::new(),
    };
    let parsed = match format {
        Format::Yaml => monform_config::tree::parse_yaml(0, text).ok(),
        Format::Toml => monform_config::tree::parse_toml(0, text).ok(),
        Format::Rego => None,
    };
    let Some(tree) = parsed else {
        return Vec::new();
    };
    let resource = cursor
        .path
        .iter()
        .take(2)
        .try_fold(&tree, |node, key| node.get(key).map(|e| &e.value));
    let Some(for_each) = resource.and_then(|r| r.get("forEach")) else {
        return Vec::new();
    };
    let first: Option<&Node> = match &for_each.value.value {
        NodeValue::Map(items) => items.first().map(|e| &e.value),
        NodeValue::Seq(items) => items.first(),
        _ => None,
    };
    first
        .and_then(Node::as_map)
        .map(|fields| fields.iter().map(|e| e.key.clone()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(format: Format, text: &str) -> Vec<String> {
        let offset = text.find('|').unwrap();
        let text = text.replace('|', "");
        complete(None, format, &text, offset)
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn fields_follow_the_channel_type_and_each_members_the_items() {
        let email = labels(
            Format::Yaml,
            "alertChannels:\n  ops:\n    type: EMAIL\n    config:\n      |\n",
        );
        assert_eq!(email, ["address"]);
        let members = labels(
            Format::Yaml,
            "checks:\n  api:\n    forEach:\n      eu: { host: a.example, port: 1 }\n    checkType: TCP\n    name: \"${each.|}\"\n",
        );
        assert_eq!(members, ["key", "value", "value.host", "value.port"]);
        let top = labels(Format::Toml, "|");
        assert!(
            top.contains(&"checks".to_owned()) && top.contains(&"moved".to_owned()),
            "{top:?}"
        );
    }
}
