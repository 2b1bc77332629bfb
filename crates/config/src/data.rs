//! Data files whose rows are a `forEach`'s items: `forEach: { file: PATH }`
//! (issue 27 item 16). A CSV file's rows (the first line names the
//! columns); a YAML or JSON file holding what `forEach` itself may hold (a
//! map, or a list of strings) or a list of rows (maps). The path is
//! relative to the resource file and stays inside the project as every
//! path of the files does; a file read as data is not a resource file
//! (the loader leaves it out even when it is a `*.yaml` it discovered).
//!
//! A row's key is its `key` column or field, else its first one. Values
//! keep their spans in the resource file: every diagnostic of a row points
//! at the `file:` line and names the row's key, since the data file is not
//! one of the project's sources.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use monform_model::Address;

use crate::budget::Budget;
use crate::diagnostic::Diagnostic;
use crate::interpolate::Each;
use crate::paths::{OUTSIDE_HELP, PathError, Roots};
use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue, parse_yaml_within};

/// The key of a data-file `forEach`: `forEach: { file: data/x.csv }`.
pub const FILE: &str = "file";

/// The path of `forEach: { file: PATH }`, when `value` is that: a map whose
/// only key is `file`, with a string. (An inline item named `file` with a
/// string value alone reads the same: write such an item in a list.)
pub fn file_of(value: &Node) -> Option<(&str, Span)> {
    match &value.value {
        NodeValue::Map(entries) if entries.len() == 1 && entries[0].key == FILE => match &entries[0].value.value {
            NodeValue::Str(path) => Some((path.as_str(), entries[0].value.span)),
            _ => None,
        },
        _ => None,
    }
}

/// Data files read while loading (canonical paths): the loader leaves
/// them out of the resource files.
#[derive(Debug, Default)]
pub struct DataFiles(Mutex<Vec<PathBuf>>);

impl DataFiles {
    fn add(&self, path: PathBuf) {
        if let Ok(mut files) = self.0.lock() {
            files.push(path);
        }
    }

    /// Whether no file was read as data.
    pub fn is_empty(&self) -> bool {
        self.0.lock().is_ok_and(|files| files.is_empty())
    }

    pub fn contains(&self, path: &Path) -> bool {
        self.0.lock().is_ok_and(|files| files.iter().any(|f| f == path))
    }
}

/// The items of the data file `path` (relative to `base`, inside
/// `roots`), or nothing after a diagnostic at `span` (the path's). The
/// file is recorded in `read`.
pub fn items(
    address: &Address,
    (path, span): (&str, Span),
    base: &Path,
    roots: &Roots,
    read: &DataFiles,
    budget: &Budget,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Each> {
    let error = |message: String| {
        Diagnostic::new("monform::for-each", format!("{address}.forEach.file: {message}")).at(span, "this file")
    };
    let canonical = match roots.resolve(&base.join(path)) {
        Ok(canonical) => canonical,
        Err(PathError::NotFound) => {
            diagnostics.push(error(format!("`{path}` does not exist")).help("the path is relative to this file"));
            return Vec::new();
        }
        Err(e) => {
            diagnostics.push(error(e.message(path)).help(OUTSIDE_HELP));
            return Vec::new();
        }
    };
    read.add(canonical.clone());
    let text = match std::fs::read_to_string(&canonical) {
        Ok(text) => text,
        Err(e) => {
            diagnostics.push(error(format!("cannot read `{path}`: {e}")));
            return Vec::new();
        }
    };
    if let Err(exceeded) = budget.charge(text.len()) {
        diagnostics.push(error(exceeded.message()).help("split the data file"));
        return Vec::new();
    }
    let extension = Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let rows = match extension.as_deref() {
        Some("csv") => csv(&text, span).map_err(|(line, message)| format!("`{path}` line {line}: {message}")),
        Some("json" | "yaml" | "yml") => match parse_yaml_within(span.file, &text, budget) {
            Ok(mut node) => {
                respan(&mut node, span);
                Ok(node)
            }
            Err(e) => {
                let line = e
                    .span
                    .map_or(1, |s| text[..s.start.min(text.len())].lines().count().max(1));
                Err(format!("`{path}` line {line}: {}", e.message))
            }
        },
        _ => Err(format!("`{path}` is not a data file: use .csv, .json, .yaml or .yml")),
    };
    let rows = match rows {
        Ok(rows) => rows,
        Err(message) => {
            diagnostics.push(error(message));
            return Vec::new();
        }
    };
    let mut items = Vec::new();
    match rows.value {
        NodeValue::Map(entries) => {
            for entry in entries {
                push(address, entry.key, entry.value, span, &mut items, diagnostics);
            }
        }
        NodeValue::Seq(list) => {
            for row in list {
                let key = match &row.value {
                    NodeValue::Str(text) => Some(text.clone()),
                    NodeValue::Map(fields) => fields
                        .iter()
                        .find(|f| f.key == "key")
                        .or(fields.first())
                        .and_then(|f| scalar(&f.value)),
                    _ => None,
                };
                match key {
                    Some(key) => push(address, key, row, span, &mut items, diagnostics),
                    None => diagnostics.push(error(format!(
                        "`{path}`: a row must be a string or a map whose `key` (or first) field is a string or number, found {}",
                        row.type_name()
                    ))),
                }
            }
        }
        _ => diagnostics.push(error(format!(
            "`{path}` must hold a map, a list of strings or a list of rows, found {}",
            rows.type_name()
        ))),
    }
    items
}

fn push(
    address: &Address,
    key: String,
    value: Node,
    span: Span,
    items: &mut Vec<Each>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if !monform_model::is_valid_logical_id(&key) {
        diagnostics.push(
            Diagnostic::new(
                "monform::logical-id",
                format!("{address}.forEach.file: `{key}` is not a valid item key"),
            )
            .at(span, "a row of this file")
            .help("item keys follow the logical-id rules: letters, digits, - and _, starting with a letter or digit, at most 64"),
        );
        return;
    }
    items.push(Each {
        key,
        key_span: span,
        value,
    });
}

fn scalar(node: &Node) -> Option<String> {
    match &node.value {
        NodeValue::Str(s) => Some(s.clone()),
        NodeValue::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// Every span of `node` made `span`: the data file is not a source.
fn respan(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        NodeValue::Seq(items) => items.iter_mut().for_each(|n| respan(n, span)),
        NodeValue::Map(entries) => {
            for entry in entries {
                entry.key_span = span;
                respan(&mut entry.value, span);
            }
        }
        _ => {}
    }
}

/// A CSV text (RFC 4180: `"` quotes, `""` inside them, commas and line
/// breaks in quoted fields) as a list of rows, each a map from the header's
/// names to the row's strings; or the line and what is wrong there.
fn csv(text: &str, span: Span) -> Result<Node, (usize, String)> {
    let records = records(text)?;
    let mut records = records.into_iter().filter(|(_, r)| !(r.len() == 1 && r[0].is_empty()));
    let Some((line, header)) = records.next() else {
        return Err((1, "no header line (the first line names the columns)".into()));
    };
    if let Some(blank) = header.iter().position(String::is_empty) {
        return Err((line, format!("column {} has no name", blank + 1)));
    }
    let mut rows = Vec::new();
    for (line, record) in records {
        if record.len() != header.len() {
            return Err((
                line,
                format!("{} fields where the header names {}", record.len(), header.len()),
            ));
        }
        let fields = header
            .iter()
            .zip(record)
            .map(|(name, value)| Entry {
                key: name.clone(),
                key_span: span,
                value: Node::new(span, NodeValue::Str(value)),
            })
            .collect();
        rows.push(Node::new(span, NodeValue::Map(fields)));
    }
    Ok(Node::new(span, NodeValue::Seq(rows)))
}

/// A CSV record's fields and the line it starts on.
type Record = (usize, Vec<String>);

/// The records of a CSV text, or the line and what is wrong there.
fn records(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let (mut line, mut start) = (1, 1);
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
            }
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push((start, std::mem::take(&mut record)));
                line += 1;
                start = line;
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err((start, "a quoted field is not closed".into()));
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push((start, record));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> serde_json::Value {
        csv(text, Span::new(0, 0, 0))
            .map(|n| n.to_json())
            .unwrap_or_else(|(l, m)| format!("{l}: {m}").into())
    }

    #[test]
    fn csv_rows_are_maps_named_by_the_header() {
        assert_eq!(
            rows("key,path\r\nusers,/users\n\norders,\"/orders?a=1,2\"\"\"\n"),
            serde_json::json!([{"key": "users", "path": "/users"}, {"key": "orders", "path": "/orders?a=1,2\""}])
        );
        assert_eq!(
            rows("a,b\n1\n"),
            serde_json::json!("2: 1 fields where the header names 2")
        );
        assert_eq!(rows("a,\"b\n"), serde_json::json!("1: a quoted field is not closed"));
        assert_eq!(
            rows(""),
            serde_json::json!("1: no header line (the first line names the columns)")
        );
    }
}
