//! Rename of a logical id: one workspace edit that renames its definition
//! and every reference to it in every file, and appends `{ from: OLD, to:
//! NEW }` to a `moved` list in the resource's file (the section created
//! when there is none), so the next plan moves the object instead of
//! deleting it and creating another. A `forEach` definition is moved
//! whole (`checks.api` to `checks.backend-api`: every item follows).

use std::collections::HashMap;

use lsp_types::{Position, PrepareRenameResponse, TextEdit, Url, WorkspaceEdit};
use monform_config::source::{Format, SourceFile};
use monform_model::Address;

use crate::analysis::{Analysis, file_uri};
use crate::documents::LineIndex;
use crate::index::{Occurrence, Role};
use crate::navigate::occurrence_at;

/// Why a rename cannot be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RenameError {
    #[error("no logical id here")]
    Nothing,
    #[error("`{0}` is not a valid logical id (letters, digits, - and _, starting with a letter or digit, at most 64)")]
    Invalid(String),
    #[error("{0} already exists")]
    Taken(Address),
    #[error("{0} is not defined in the files")]
    Undefined(Address),
}

/// The id under the cursor and its range, for the editor's rename box.
pub fn prepare(analysis: &Analysis, uri: &Url, position: Position) -> Result<PrepareRenameResponse, RenameError> {
    let occurrence = occurrence_at(analysis, uri, position).ok_or(RenameError::Nothing)?;
    let location = analysis.location(occurrence.span).ok_or(RenameError::Nothing)?;
    Ok(PrepareRenameResponse::RangeWithPlaceholder {
        range: location.range,
        placeholder: occurrence.address.id.clone(),
    })
}

/// The edit renaming the id under the cursor to `new_id`.
pub fn rename(analysis: &Analysis, uri: &Url, position: Position, new_id: &str) -> Result<WorkspaceEdit, RenameError> {
    let occurrence = occurrence_at(analysis, uri, position).ok_or(RenameError::Nothing)?;
    if !monform_model::is_valid_logical_id(new_id) {
        return Err(RenameError::Invalid(new_id.to_owned()));
    }
    let old = occurrence.address.clone();
    let new = Address::new(old.kind, new_id);
    if analysis
        .occurrences
        .iter()
        .any(|o| o.address == new && o.role == Role::Definition)
    {
        return Err(RenameError::Taken(new));
    }
    let definition = analysis
        .occurrences
        .iter()
        .find(|o| o.address == old && o.role == Role::Definition)
        .ok_or_else(|| RenameError::Undefined(old.clone()))?;
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    // Declarations keep the old address: `moved` entries leading to it
    // chain on to the new one.
    let renamed: Vec<&Occurrence> = analysis
        .occurrences
        .iter()
        .filter(|o| o.address == old && o.role != Role::Declaration)
        .collect();
    for occurrence in renamed {
        if let Some(location) = analysis.location(occurrence.span) {
            changes
                .entry(location.uri)
                .or_default()
                .push(TextEdit::new(location.range, new_id.to_owned()));
        }
    }
    let file = analysis.loaded.sources.get(definition.span.file);
    if let Some(uri) = file_uri(file) {
        changes.entry(uri).or_default().push(moved_entry(file, &old, &new));
    }
    Ok(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    })
}

/// The edit adding `{ from: OLD, to: NEW }` to the file's `moved` list.
pub(crate) fn moved_entry(file: &SourceFile, old: &Address, new: &Address) -> TextEdit {
    let text = &file.text;
    let index = LineIndex::new(text);
    let end = index.position(text, text.len());
    let newline = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    match file.format {
        // A definition's file is a resource file: never a policy.
        Format::Toml | Format::Rego => TextEdit::new(
            lsp_types::Range::new(end, end),
            format!("{newline}\n[[moved]]\nfrom = \"{old}\"\nto = \"{new}\"\n"),
        ),
        Format::Yaml => {
            let entry = format!("{{ from: \"{old}\", to: \"{new}\" }}");
            // A block list under an existing `moved:`: one more item, at its indentation.
            let mut offset = 0;
            for line in text.split_inclusive('\n') {
                let next = offset + line.len();
                if line.trim_end() == "moved:" {
                    let indent = text[next..]
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .filter(|l| l.trim_start().starts_with("- "))
                        .map_or(2, |l| l.len() - l.trim_start().len());
                    let at = index.position(text, next);
                    let before = if line.ends_with('\n') { "" } else { "\n" };
                    return TextEdit::new(
                        lsp_types::Range::new(at, at),
                        format!("{before}{}- {entry}\n", " ".repeat(indent)),
                    );
                }
                offset = next;
            }
            TextEdit::new(
                lsp_types::Range::new(end, end),
                format!("{newline}moved:\n  - {entry}\n"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(format: Format, text: &str) -> SourceFile {
        SourceFile {
            name: "f".into(),
            path: "/p/f".into(),
            text: text.into(),
            format,
        }
    }

    fn applied(format: Format, text: &str) -> String {
        let old = Address::new(monform_model::Kind::Check, "a");
        let new = Address::new(monform_model::Kind::Check, "b");
        let edit = moved_entry(&file(format, text), &old, &new);
        let index = LineIndex::new(text);
        let start = index.offset(text, edit.range.start);
        let mut out = text.to_owned();
        out.insert_str(start, &edit.new_text);
        out
    }

    #[test]
    fn the_moved_entry_joins_the_list_or_starts_one() {
        assert_eq!(
            applied(Format::Yaml, "checks:\n  b: {}\n"),
            "checks:\n  b: {}\nmoved:\n  - { from: \"checks.a\", to: \"checks.b\" }\n"
        );
        assert_eq!(
            applied(Format::Yaml, "moved:\n- { from: checks.x, to: checks.y }\nchecks: {}"),
            "moved:\n- { from: \"checks.a\", to: \"checks.b\" }\n- { from: checks.x, to: checks.y }\nchecks: {}"
        );
        assert_eq!(
            applied(Format::Toml, "[checks.b]\nname = \"B\""),
            "[checks.b]\nname = \"B\"\n\n[[moved]]\nfrom = \"checks.a\"\nto = \"checks.b\"\n"
        );
    }
}
