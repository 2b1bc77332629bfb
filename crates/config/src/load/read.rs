//! Reading one file of the project: its text (UTF-8, or where it is not)
//! and its tree.

use super::*;

/// One file, read and parsed: its source (empty when it cannot be read, so
/// file ids stay in step), its tree if it parsed, and what went wrong.
pub(super) struct ReadFile {
    pub source: SourceFile,
    pub node: Option<Node>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads and parses one file, charging its YAML aliases to `budget`.
pub(super) fn read_file(root: &Path, path: PathBuf, id: FileId, budget: &Budget, unsaved: &Unsaved) -> ReadFile {
    let mut file = read_text(root, path, id, unsaved);
    if file.diagnostics.is_empty() {
        parse_text(&mut file, id, budget);
    }
    file
}

/// Reads one file's text (not yet parsed: `parse_text`); a file that
/// cannot be read as UTF-8 comes back with a diagnostic. An editor's
/// unsaved text of the file, when `unsaved` has it, is read instead of the
/// disk (only for a file the project already reads: the path rules stay).
pub(super) fn read_text(root: &Path, path: PathBuf, id: FileId, unsaved: &Unsaved) -> ReadFile {
    let name = display_name(root, &path);
    let format = Format::of(&path).unwrap_or(Format::Yaml);
    let mut diagnostics = Vec::new();
    if let Some(text) = unsaved.get(&name) {
        let source = SourceFile {
            name,
            path,
            text: text.clone(),
            format,
        };
        return ReadFile {
            source,
            node: None,
            diagnostics,
        };
    }
    let text: Arc<str> = match std::fs::read(&path).map(decode) {
        Ok(Ok(text)) => text.into(),
        Ok(Err(error)) => {
            // Shown as far as it is text, pointing at the first byte that is not.
            diagnostics.push(
                Diagnostic::new("monform::encoding", format!("{name} {}", error.message()))
                    .at(Span::new(id, error.offset, '\u{FFFD}'.len_utf8()), "not UTF-8")
                    .help("save the file as UTF-8"),
            );
            let source = SourceFile {
                name,
                path,
                text: error.lossy.into(),
                format,
            };
            return ReadFile {
                source,
                node: None,
                diagnostics,
            };
        }
        Err(e) => {
            diagnostics.push(Diagnostic::new("monform::io", format!("cannot read {name}: {e}")));
            let source = SourceFile {
                name,
                path,
                text: "".into(),
                format,
            };
            return ReadFile {
                source,
                node: None,
                diagnostics,
            };
        }
    };
    let source = SourceFile {
        name,
        path,
        text,
        format,
    };
    ReadFile {
        source,
        node: None,
        diagnostics,
    }
}

/// Parses a file read by `read_text`, charging its YAML aliases to `budget`.
pub(super) fn parse_text(file: &mut ReadFile, id: FileId, budget: &Budget) {
    let text = &file.source.text;
    let parsed = match file.source.format {
        Format::Yaml => parse_yaml_within(id, text, budget).map_err(|e| vec![e]),
        Format::Toml => parse_toml(id, text),
        // Discovery reads only YAML and TOML files as resource files.
        Format::Rego => Err(vec![SyntaxError {
            message: "a Rego policy is not a resource file".into(),
            span: None,
        }]),
    };
    file.node = match parsed {
        Ok(node) => Some(node),
        Err(errors) => {
            for SyntaxError { message, span } in errors {
                // The byte budget stops the parse too, but the file's syntax is fine.
                let mut diagnostic = if message.starts_with(crate::budget::EXCEEDED) {
                    Diagnostic::new("monform::too-large", message)
                        .help("repeat large values (aliases) in fewer places, or split the file")
                } else {
                    Diagnostic::new("monform::syntax", format!("syntax error: {message}"))
                };
                if let Some(span) = span {
                    diagnostic = diagnostic.at(span, "here");
                }
                file.diagnostics.push(diagnostic);
            }
            None
        }
    };
}
