//! Hover: a field's description, type, default and limits; on a reference,
//! the referenced resource's summary; on a resource's id, its address and
//! what the service holds of it (`live`), never waiting for the network.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position, Url};
use monform_config::DesiredResource;
use monform_config::source::Format;
use monform_engine::Action;
use monform_model::Address;
use serde_json::Value;

use crate::analysis::Analysis;
use crate::cursor::{self, Spot};
use crate::documents::LineIndex;
use crate::fields;
use crate::index::Role;
use crate::live::Live;
use crate::navigate::occurrence_at;

pub fn hover(analysis: &Analysis, live: &Live, format: Format, uri: &Url, position: Position) -> Option<Hover> {
    let markdown = match occurrence_at(analysis, uri, position) {
        Some(occurrence) => {
            let mut text = summary(analysis, &occurrence.address);
            if occurrence.role == Role::Definition {
                text.push_str(&live_facts(analysis, live, &occurrence.address));
            }
            text
        }
        None => {
            let (_, source) = analysis.file(uri)?;
            let offset = LineIndex::new(&source.text).offset(&source.text, position);
            field_docs(format, &source.text, offset)?
        }
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: None,
    })
}

/// The documentation of the field under the cursor (its key or value).
fn field_docs(format: Format, text: &str, offset: usize) -> Option<String> {
    let cursor = match format {
        Format::Yaml => cursor::yaml(text, offset),
        Format::Toml => cursor::toml(text, offset),
        Format::Rego => return None,
    };
    let section = cursor
        .path
        .first()
        .cloned()
        .or_else(|| (!cursor.word.is_empty()).then(|| cursor.word.clone()))?;
    if cursor.path.len() < 2 {
        let schema = &fields::document()["properties"][section.as_str()];
        return schema
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!("**{section}**\n\n{d}"));
    }
    let variant = fields::kind(&section).and_then(|kind| fields::variant_in(kind, &cursor.block));
    let root = fields::root(&section, variant.as_deref())?;
    let (at, name) = match cursor.spot {
        Spot::Key => (root.path(&cursor.path[2..])?.step(&cursor.word)?, cursor.word.clone()),
        Spot::Value => (root.path(&cursor.path[2..])?, cursor.path.last()?.clone()),
    };
    Some(at.documentation(&name))
}

/// What a resource is: address, type, name (unless it comes from a
/// secret environment value), where it is defined.
fn summary(analysis: &Analysis, address: &Address) -> String {
    let resources: Vec<&DesiredResource> = analysis
        .loaded
        .desired
        .resources
        .values()
        .filter(|r| crate::index::definition_of(&r.address) == *address)
        .collect();
    let mut text = format!("**{address}**");
    let Some(first) = resources.first() else {
        text.push_str("\n\nnot defined in the files (or not valid)");
        return text;
    };
    let json = first.resource.to_json();
    if let Some(tag) = monform_model::facts::variant_tag(address.kind)
        && let Some(variant) = json.get(tag).and_then(Value::as_str)
    {
        text.push_str(&format!(" ({variant})"));
    }
    let name_hidden = first.sensitive.iter().any(|p| p.to_string() == "name");
    if let Some(name) = json.get("name").and_then(Value::as_str).filter(|_| !name_hidden) {
        text.push_str(&format!("\n\nname: {name}"));
    }
    if resources.len() > 1 || first.address != *address {
        let items: Vec<String> = resources.iter().map(|r| r.address.to_string()).collect();
        text.push_str(&format!("\n\n{} items: {}", items.len(), items.join(", ")));
    }
    let file = analysis.loaded.sources.get(first.span.file);
    let (line, _) = file.line_col(first.span.start);
    text.push_str(&format!("\n\ndefined in {}:{line}", file.name));
    let used_by = analysis
        .occurrences
        .iter()
        .filter(|o| o.address == *address && o.role == Role::Reference)
        .count();
    if used_by > 0 {
        text.push_str(&format!(
            "; referenced {used_by} time{}",
            if used_by == 1 { "" } else { "s" }
        ));
    }
    text
}

/// The service's side of a resource, from the cache.
fn live_facts(analysis: &Analysis, live: &Live, address: &Address) -> String {
    let Some((fact, facts)) = live.fact(analysis, address) else {
        return String::new();
    };
    if let Some(error) = facts.error {
        return format!("\n\n---\nlive facts unavailable: {error}");
    }
    let age = facts
        .read_at
        .and_then(|at| at.elapsed().ok())
        .map_or(String::new(), |age| format!(" (read {} s ago)", age.as_secs()));
    let mut lines = vec![format!("\n\n---\n**In the service**{age}")];
    match &fact.remote_id {
        Some(id) => lines.push(format!("- remote id: {id}")),
        None => lines.push("- not in the service yet".into()),
    }
    let state = match fact.action {
        Some(Action::Noop) | Some(Action::Move) if fact.drifted.is_empty() => "in sync".to_owned(),
        Some(Action::Create) => "to be created by the next apply".to_owned(),
        _ if !fact.drifted.is_empty() => format!("drifted: {}", fact.drifted.join(", ")),
        Some(Action::Update) | Some(Action::Replace) => "changed in the files since the last apply".to_owned(),
        Some(other) => format!("next apply: {other:?}").to_lowercase(),
        None => "not planned".to_owned(),
    };
    lines.push(format!("- {state}"));
    if let Some(status) = &fact.last_status {
        let time = fact
            .last_time
            .as_deref()
            .map(|t| format!(" at {t}"))
            .unwrap_or_default();
        lines.push(format!("- last result: {status}{time}"));
    }
    lines.join("\n")
}
