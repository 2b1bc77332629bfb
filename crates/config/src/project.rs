//! `monform.toml`: the project's name, which files to read, the API URL,
//! defaults for checks and the state backend.

use crate::diagnostic::Diagnostic;
use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue};

pub const PROJECT_FILE: &str = "monform.toml";

/// Where state is kept (design decision 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateBackend {
    Local,
    Postgres,
}

/// The settings of `monform.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// Ownership scope: stable and unique per account.
    pub name: String,
    /// Glob patterns of resource files; empty means every YAML and TOML file.
    pub include: Vec<String>,
    pub api_url: Option<String>,
    /// `[defaults]`: merged into every check that does not set the field.
    pub defaults: Vec<Entry>,
    pub state_backend: StateBackend,
}

const SECTIONS: &[(&str, &[&str])] = &[
    ("project", &["name", "include"]),
    ("api", &["url"]),
    ("defaults", &[]),
    ("state", &["backend"]),
];

/// Reads the project settings from the parsed `monform.toml`, reporting
/// every problem. `check_fields` are the fields `[defaults]` may set.
pub fn read_project(root: &Node, check_fields: &[&str], diagnostics: &mut Vec<Diagnostic>) -> Option<Project> {
    let mut project = Project {
        name: String::new(),
        include: Vec::new(),
        api_url: None,
        defaults: Vec::new(),
        state_backend: StateBackend::Local,
    };
    for entry in root.as_map().unwrap_or_default() {
        let Some((_, keys)) = SECTIONS.iter().find(|(name, _)| *name == entry.key) else {
            diagnostics.push(unknown(
                &entry.key,
                entry.key_span,
                SECTIONS.iter().map(|(n, _)| *n),
                "section",
            ));
            continue;
        };
        let Some(fields) = entry.value.as_map() else {
            diagnostics.push(wrong_type(&entry.key, &entry.value, "a table"));
            continue;
        };
        if entry.key == "defaults" {
            for field in fields {
                if check_fields.contains(&field.key.as_str()) {
                    project.defaults.push(field.clone());
                } else {
                    diagnostics.push(unknown(
                        &field.key,
                        field.key_span,
                        check_fields.iter().copied(),
                        "check field in [defaults]",
                    ));
                }
            }
            continue;
        }
        for field in fields {
            let path = format!("{}.{}", entry.key, field.key);
            if !keys.contains(&field.key.as_str()) {
                diagnostics.push(unknown(&field.key, field.key_span, keys.iter().copied(), "field"));
                continue;
            }
            match (path.as_str(), &field.value.value) {
                ("project.name", NodeValue::Str(name)) => {
                    if monform_model::is_valid_logical_id(name) {
                        project.name = name.clone();
                    } else {
                        diagnostics.push(
                            Diagnostic::new(
                                "monform::project-name",
                                format!("project.name `{name}` is not a valid name"),
                            )
                            .at(field.value.span, "here")
                            .help("use letters, digits, - and _, starting with a letter or digit, at most 64"),
                        );
                    }
                }
                ("project.include", NodeValue::Seq(items)) => {
                    for item in items {
                        match &item.value {
                            NodeValue::Str(glob) => match globset::Glob::new(glob) {
                                Ok(_) => project.include.push(glob.clone()),
                                Err(e) => diagnostics.push(
                                    Diagnostic::new(
                                        "monform::include",
                                        format!("project.include: invalid pattern `{glob}`: {}", e.kind()),
                                    )
                                    .at(item.span, "this pattern"),
                                ),
                            },
                            _ => diagnostics.push(wrong_type("project.include[]", item, "a string")),
                        }
                    }
                }
                ("api.url", NodeValue::Str(url)) => project.api_url = Some(url.clone()),
                ("state.backend", NodeValue::Str(backend)) => match backend.as_str() {
                    "local" => project.state_backend = StateBackend::Local,
                    "postgres" => project.state_backend = StateBackend::Postgres,
                    other => diagnostics.push(
                        Diagnostic::new(
                            "monform::state-backend",
                            format!("state.backend `{other}` is not known"),
                        )
                        .at(field.value.span, "expected \"local\" or \"postgres\""),
                    ),
                },
                ("project.include", _) => diagnostics.push(wrong_type(&path, &field.value, "a list of glob patterns")),
                _ => diagnostics.push(wrong_type(&path, &field.value, "a string")),
            }
        }
    }
    if project.name.is_empty() {
        if !diagnostics.iter().any(|d| d.code == "monform::project-name") {
            diagnostics.push(
                Diagnostic::new("monform::project-name", "monform.toml has no project.name")
                    .at(Span { len: 0, ..root.span }, "add it here")
                    .help("[project]\nname = \"acme-web\"   # stable and unique per account"),
            );
        }
        return None;
    }
    Some(project)
}

fn unknown<'a>(key: &str, span: Span, expected: impl Iterator<Item = &'a str> + Clone, what: &str) -> Diagnostic {
    let diagnostic = Diagnostic::new("monform::unknown-field", format!("unknown {what} `{key}`")).at(span, "not known");
    match crate::suggest(key, expected.clone()) {
        Some(s) => diagnostic.help(format!("did you mean `{s}`?")),
        None => diagnostic.help(format!("expected one of {}", expected.collect::<Vec<_>>().join(", "))),
    }
}

fn wrong_type(path: &str, node: &Node, expected: &str) -> Diagnostic {
    Diagnostic::new(
        "monform::type",
        format!("{path}: expected {expected}, found {}", node.type_name()),
    )
    .at(node.span, format!("expected {expected}"))
}
