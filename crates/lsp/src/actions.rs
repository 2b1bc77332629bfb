//! Code actions: the loader's did-you-mean fixes, a `moved` entry for a
//! rename the plan suggests, and "ignore this field's drift" (the field
//! added to the resource's `lifecycle.ignoreChanges`).

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, Range, TextEdit, Url, WorkspaceEdit};
use monform_config::source::Format;
use monform_model::{Address, Kind};

use crate::analysis::{Analysis, file_uri};
use crate::cursor::{self, Spot};
use crate::documents::LineIndex;
use crate::index::Role;
use crate::live::Live;
use crate::navigate::occurrence_at;

/// Everything the editor may offer at `range` of `uri`, whose text is `text`.
pub fn actions(
    analysis: &Analysis,
    live: &Live,
    uri: &Url,
    text: &str,
    range: Range,
    diagnostics: &[Diagnostic],
) -> Vec<CodeActionOrCommand> {
    let mut found: Vec<CodeActionOrCommand> = diagnostics
        .iter()
        .filter_map(|d| did_you_mean(uri, text, d))
        .map(CodeActionOrCommand::CodeAction)
        .collect();
    found.extend(add_moved(analysis, live, uri, range).map(CodeActionOrCommand::CodeAction));
    found.extend(ignore_drift(analysis, live, uri, text, range).map(CodeActionOrCommand::CodeAction));
    found
}

fn edit(uri: &Url, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }
}

/// The suggestion of a diagnostic's help (`did you mean `frequency`?`).
fn suggestion(diagnostic: &Diagnostic) -> Option<String> {
    let help = diagnostic
        .data
        .as_ref()
        .and_then(|d| d.get("help"))
        .and_then(|h| h.as_str())
        .unwrap_or(&diagnostic.message);
    let text = if help.contains("did you mean `") {
        help
    } else {
        &diagnostic.message
    };
    let start = text.find("did you mean `")? + "did you mean `".len();
    let end = text[start..].find('`')? + start;
    Some(text[start..end].to_owned())
}

fn did_you_mean(uri: &Url, text: &str, diagnostic: &Diagnostic) -> Option<CodeAction> {
    let replacement = suggestion(diagnostic)?;
    let index = LineIndex::new(text);
    let start = index.offset(text, diagnostic.range.start);
    let end = index.offset(text, diagnostic.range.end);
    let written = text.get(start..end)?;
    // A quoted key or value keeps its quotes.
    let mut range = diagnostic.range;
    if written.len() >= 2 && (written.starts_with('"') || written.starts_with('\'')) {
        range.start.character += 1;
        range.end.character = range.end.character.saturating_sub(1);
    }
    Some(CodeAction {
        title: format!("Change to `{replacement}`"),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diagnostic.clone()]),
        edit: Some(edit(uri, vec![TextEdit::new(range, replacement)])),
        is_preferred: Some(true),
        ..CodeAction::default()
    })
}

/// On a resource the plan takes for a renamed one: add the `moved` entry.
fn add_moved(analysis: &Analysis, live: &Live, uri: &Url, range: Range) -> Option<CodeAction> {
    let occurrence = occurrence_at(analysis, uri, range.start).filter(|o| o.role == Role::Definition)?;
    let (fact, _) = live.fact(analysis, &occurrence.address)?;
    let from = fact.renamed_from?;
    let file = analysis.loaded.sources.get(occurrence.span.file);
    let entry = crate::rename::moved_entry(file, &from, &occurrence.address);
    Some(CodeAction {
        title: format!(
            "Add `moved: {{ from: {from}, to: {} }}` (keep the object and its results)",
            occurrence.address
        ),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(edit(&file_uri(file)?, vec![entry])),
        ..CodeAction::default()
    })
}

/// On a field that drifted: add it to the resource's `lifecycle.ignoreChanges`.
fn ignore_drift(analysis: &Analysis, live: &Live, uri: &Url, text: &str, range: Range) -> Option<CodeAction> {
    let format = crate::documents::format_of(uri);
    let index = LineIndex::new(text);
    let offset = index.offset(text, range.start);
    let cursor = match format {
        Format::Yaml => cursor::yaml(text, offset),
        Format::Toml => cursor::toml(text, offset),
        // Policies are never edited as resource files.
        Format::Rego => return None,
    };
    let (Some(section), Some(id)) = (cursor.path.first(), cursor.path.get(1)) else {
        return None;
    };
    let mut field: Vec<String> = cursor.path[2..].iter().filter(|k| *k != "[]").cloned().collect();
    if cursor.spot == Spot::Key {
        field.push(cursor.word.clone());
    }
    let field = field.first()?.clone();
    let address = Address::new(Kind::from_section(section)?, id);
    let (fact, _) = live.fact(analysis, &address)?;
    if !fact
        .drifted
        .iter()
        .any(|p| p == &field || p.starts_with(&format!("{field}.")) || p.starts_with(&format!("{field}[")))
    {
        return None;
    }
    let definition = analysis
        .occurrences
        .iter()
        .find(|o| o.address == address && o.role == Role::Definition)?;
    let insert = ignore_edit(format, text, definition.span.start, section, id, &field)?;
    Some(CodeAction {
        title: format!("Ignore drift of `{field}` (lifecycle.ignoreChanges)"),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(edit(uri, vec![insert])),
        ..CodeAction::default()
    })
}

/// The edit adding `field` to `ignoreChanges`: into an existing flow list,
/// else a `lifecycle` line under the resource's key (YAML) or table header
/// (TOML). Nothing when the resource is written in a way this cannot
/// extend safely (flow style, a `lifecycle` block of its own).
fn ignore_edit(format: Format, text: &str, key: usize, section: &str, id: &str, field: &str) -> Option<TextEdit> {
    let index = LineIndex::new(text);
    let (block_start, block_end, child_indent) = match format {
        Format::Yaml => {
            let line_end = text[key..].find('\n').map_or(text.len(), |i| key + i + 1);
            let line_start = text[..key].rfind('\n').map_or(0, |i| i + 1);
            let own_indent = key - line_start;
            // Flow style (`home: { ... }`): not extended.
            if !text[key..line_end].trim_end().ends_with(':') {
                return None;
            }
            let mut end = line_end;
            let mut child = None;
            for line in text[line_end..].split_inclusive('\n') {
                let indent = line.len() - line.trim_start().len();
                if !line.trim().is_empty() && indent <= own_indent {
                    break;
                }
                if child.is_none() && !line.trim().is_empty() {
                    child = Some(indent);
                }
                end += line.len();
            }
            (line_end, end, child?)
        }
        Format::Toml => {
            if text.contains(&format!("[{section}.{id}.lifecycle]")) {
                return None;
            }
            let header = format!("[{section}.{id}]");
            let at = text.find(&header)?;
            let start = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            let end = text[start..].find("\n[").map_or(text.len(), |i| start + i + 1);
            (start, end, 0)
        }
        Format::Rego => return None,
    };
    let block = &text[block_start..block_end];
    let quoted = match format {
        Format::Yaml => field.to_owned(),
        Format::Toml => format!("\"{field}\""),
        Format::Rego => return None,
    };
    if let Some(list) = block.find("ignoreChanges") {
        let open = block[list..].find('[')? + list;
        let close = block[open..].find(']')? + open;
        let inside = block[open + 1..close].trim();
        let new_text = if inside.is_empty() {
            quoted
        } else {
            format!(", {quoted}")
        };
        let at = index.position(text, block_start + close);
        return Some(TextEdit::new(Range::new(at, at), new_text));
    }
    if block.contains("lifecycle") {
        return None;
    }
    let line = match format {
        Format::Yaml => format!(
            "{}lifecycle: {{ ignoreChanges: [{quoted}] }}\n",
            " ".repeat(child_indent)
        ),
        Format::Toml => format!("lifecycle = {{ ignoreChanges = [{quoted}] }}\n"),
        Format::Rego => return None,
    };
    let at = index.position(text, block_start);
    Some(TextEdit::new(Range::new(at, at), line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(format: Format, text: &str) -> Option<String> {
        let key = text.find("home").unwrap();
        let edit = ignore_edit(format, text, key, "checks", "home", "frequency")?;
        let index = LineIndex::new(text);
        let mut out = text.to_owned();
        out.insert_str(index.offset(text, edit.range.start), &edit.new_text);
        Some(out)
    }

    #[test]
    fn ignore_changes_is_added_or_extended() {
        assert_eq!(
            applied(Format::Yaml, "checks:\n  home:\n    name: H\n    frequency: 5\n").as_deref(),
            Some("checks:\n  home:\n    lifecycle: { ignoreChanges: [frequency] }\n    name: H\n    frequency: 5\n")
        );
        assert_eq!(
            applied(
                Format::Yaml,
                "checks:\n  home:\n    lifecycle: { ignoreChanges: [tags] }\n"
            )
            .as_deref(),
            Some("checks:\n  home:\n    lifecycle: { ignoreChanges: [tags, frequency] }\n")
        );
        assert_eq!(
            applied(Format::Toml, "[checks.home]\nname = \"H\"\n\n[groups.g]\n").as_deref(),
            Some("[checks.home]\nlifecycle = { ignoreChanges = [\"frequency\"] }\nname = \"H\"\n\n[groups.g]\n")
        );
        assert_eq!(applied(Format::Yaml, "checks:\n  home: { name: H }\n"), None);
    }

    #[test]
    fn did_you_mean_keeps_quotes() {
        let uri = Url::parse("file:///p/c.yaml").unwrap();
        let text = "checks:\n  a: { \"frequncy\": 5 }\n";
        let diagnostic = Diagnostic {
            range: Range::new(lsp_types::Position::new(1, 7), lsp_types::Position::new(1, 17)),
            message: "unknown field\nhelp: did you mean `frequency`?".into(),
            ..Diagnostic::default()
        };
        let action = did_you_mean(&uri, text, &diagnostic).unwrap();
        let edits = &action.edit.unwrap().changes.unwrap()[&uri];
        assert_eq!(
            edits[0].range,
            Range::new(lsp_types::Position::new(1, 8), lsp_types::Position::new(1, 16))
        );
        assert_eq!(edits[0].new_text, "frequency");
    }
}
