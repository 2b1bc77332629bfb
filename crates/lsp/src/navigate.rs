//! Go to definition, find references, the outline (document symbols) and
//! every address (workspace symbols).

use lsp_types::{Location, Position, SymbolInformation, SymbolKind, Url};
use monform_config::source::Span;
use monform_model::Kind;

use crate::analysis::Analysis;
use crate::documents::LineIndex;
use crate::index::{Occurrence, Role};

/// The byte offset of `position` in the loaded file of `uri`, with its id.
pub fn offset(analysis: &Analysis, uri: &Url, position: Position) -> Option<(u32, usize)> {
    let (id, file) = analysis.file(uri)?;
    let index = LineIndex::new(&file.text);
    Some((id, index.offset(&file.text, position)))
}

/// The occurrence of a logical id under the cursor.
pub fn occurrence_at<'a>(analysis: &'a Analysis, uri: &Url, position: Position) -> Option<&'a Occurrence> {
    let (file, offset) = offset(analysis, uri, position)?;
    analysis.occurrences.at(file, offset)
}

/// Where what is under the cursor is defined: a logical id's definition,
/// a `{ file: }` script's file, a `${var:NAME}`'s `[vars]` entry.
pub fn definition(analysis: &Analysis, uri: &Url, position: Position) -> Vec<Location> {
    if let Some(occurrence) = occurrence_at(analysis, uri, position) {
        return analysis
            .occurrences
            .iter()
            .filter(|o| o.address == occurrence.address && o.role == Role::Definition)
            .filter_map(|o| analysis.location(o.span))
            .collect();
    }
    let Some((file, offset)) = offset(analysis, uri, position) else {
        return Vec::new();
    };
    let source = analysis.loaded.sources.get(file);
    let (line, column) = line_at(&source.text, offset);
    if let Some(name) = substitution_at(line, column, "${var:") {
        return var_definitions(analysis, name);
    }
    if let Some(path) = script_at(line) {
        let base = source
            .path
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let target = base.join(path);
        // Only a file inside the project: the files are untrusted.
        let inside = target
            .canonicalize()
            .ok()
            .zip(analysis.root.canonicalize().ok())
            .is_some_and(|(target, root)| target.starts_with(root));
        if inside && let Ok(uri) = Url::from_file_path(std::path::absolute(&target).unwrap_or(target)) {
            return vec![Location::new(uri, lsp_types::Range::default())];
        }
    }
    Vec::new()
}

/// Every place the logical id under the cursor occurs (its definition
/// when `declaration`), `moved` entries included.
pub fn references(analysis: &Analysis, uri: &Url, position: Position, declaration: bool) -> Vec<Location> {
    let Some(occurrence) = occurrence_at(analysis, uri, position) else {
        return Vec::new();
    };
    analysis
        .occurrences
        .iter()
        .filter(|o| o.address == occurrence.address && (declaration || o.role != Role::Definition))
        .filter_map(|o| analysis.location(o.span))
        .collect()
}

/// The text of the line holding `offset`, and the column (bytes) in it.
pub fn line_at(text: &str, offset: usize) -> (&str, usize) {
    let start = text[..offset.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    (&text[start..end], offset - start)
}

/// The name of a `${var:NAME}` (or `${each.`...) the column is inside.
pub fn substitution_at<'l>(line: &'l str, column: usize, opener: &str) -> Option<&'l str> {
    let start = line[..column.min(line.len())].rfind(opener)?;
    let name_start = start + opener.len();
    let end = line[name_start..]
        .find(['}', ':'])
        .map_or(line.len(), |i| name_start + i);
    (column <= end + 1).then(|| &line[name_start..end])
}

/// The path of a `{ file: PATH }` (or `file: PATH` on its own line).
fn script_at(line: &str) -> Option<&str> {
    let rest = line.split_once("file:")?.1.trim_start();
    let path = match rest.strip_prefix(['"', '\'']) {
        Some(quoted) => quoted.split(['"', '\'']).next()?,
        None => rest.split([' ', ',', '}', '#']).next()?,
    };
    (!path.is_empty()).then_some(path)
}

/// `[vars]` (and each environment's) entries named `name`, in monform.toml.
fn var_definitions(analysis: &Analysis, name: &str) -> Vec<Location> {
    let Some(project) = &analysis.loaded.project else {
        return Vec::new();
    };
    project
        .vars
        .iter()
        .chain(project.environments.iter().flat_map(|e| &e.vars))
        .filter(|entry| entry.key == name)
        .filter_map(|entry| analysis.location(entry.key_span))
        .collect()
}

fn symbol_kind(kind: Kind) -> SymbolKind {
    match kind {
        Kind::Check => SymbolKind::FUNCTION,
        Kind::Group => SymbolKind::NAMESPACE,
        Kind::Snippet => SymbolKind::METHOD,
        Kind::Variable => SymbolKind::VARIABLE,
        Kind::AlertChannel => SymbolKind::EVENT,
        Kind::PrivateLocation => SymbolKind::PACKAGE,
        _ => SymbolKind::OBJECT,
    }
}

/// Every resource of the load (each `forEach` item by its address), those
/// of `file` alone when given, names matching `query` (case-insensitive).
#[allow(deprecated)] // SymbolInformation::deprecated: a field the protocol keeps.
pub fn symbols(analysis: &Analysis, file: Option<u32>, query: &str) -> Vec<SymbolInformation> {
    let query = query.to_lowercase();
    analysis
        .loaded
        .desired
        .resources
        .values()
        .filter(|r| file.is_none_or(|f| r.span.file == f))
        .filter(|r| r.address.to_string().to_lowercase().contains(&query))
        .filter_map(|r| {
            Some(SymbolInformation {
                name: r.address.to_string(),
                kind: symbol_kind(r.address.kind),
                tags: None,
                deprecated: None,
                location: analysis.location(r.span)?,
                container_name: Some(file_name(analysis, r.span)),
            })
        })
        .collect()
}

fn file_name(analysis: &Analysis, span: Span) -> String {
    analysis.loaded.sources.get(span.file).name.clone()
}
