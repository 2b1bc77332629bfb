//! One load of a project over the editor's unsaved text, and what the
//! editor is told of it: every diagnostic `monform validate` gives
//! (`ops::validate`, which both call), at the same place, with its code
//! and help.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    Diagnostic as LspDiagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url,
};
use monform_config::project::PROJECT_FILE;
use monform_config::source::{SourceFile, Sources, Span};
use monform_config::{Diagnostic, Loaded, Severity, Unsaved};
use monform_engine::ops::{self, Findings, OpenRequest, PolicyLoad};

use crate::Config;
use crate::documents::LineIndex;
use crate::index::Occurrence;

/// The folder holding `monform.toml`, from a file up.
pub fn project_root(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|folder| folder.join(PROJECT_FILE).is_file())
        .map(Path::to_path_buf)
}

/// A file's name as the loader knows it: relative to the root, `/`-separated.
pub fn relative_name(root: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(root).ok()?;
    Some(relative.to_string_lossy().replace('\\', "/"))
}

/// A project loaded over the unsaved text.
pub struct Analysis {
    pub root: PathBuf,
    /// The load in the environment chosen, or in none: what navigation,
    /// completion and hover read. Its errors are in `diagnostics` only.
    pub loaded: Loaded,
    /// Whether `loaded` has no error of the files (policies' findings
    /// aside): what a plan, so live facts, needs.
    pub files_ok: bool,
    /// The editor's text it was loaded over (live facts open the same).
    pub unsaved: Unsaved,
    /// Every diagnostic by file, `validate`'s (`ops::validate`).
    pub diagnostics: BTreeMap<Url, Vec<LspDiagnostic>>,
    /// Where each logical id occurs.
    pub occurrences: Vec<Occurrence>,
}

impl Analysis {
    /// Validates the project at `root` as `monform validate` does
    /// (`ops::validate`: every environment, then across them, when it
    /// declares some and none is chosen; the linter; the policies),
    /// reading `unsaved` instead of the disk where it has a file, and the
    /// parse cache `monform` keeps (`.monform/cache/`): a keystroke parses
    /// the file typed in, the others come from their entries.
    pub fn load(root: &Path, unsaved: Unsaved, config: &Config) -> Analysis {
        let findings = ops::validate(&OpenRequest {
            environment: config.environment.as_deref(),
            unsaved: Some(&unsaved),
            policies: PolicyLoad::Report,
            ..OpenRequest::new(root, &config.env)
        });
        let diagnostics = publishable(root, &findings);
        let Findings { loaded, files_ok, .. } = findings;
        let occurrences = crate::index::occurrences(&loaded);
        Analysis {
            root: root.to_path_buf(),
            loaded,
            files_ok,
            unsaved,
            diagnostics,
            occurrences,
        }
    }

    /// The loaded file of a URI, with its id.
    pub fn file(&self, uri: &Url) -> Option<(u32, &SourceFile)> {
        let path = uri.to_file_path().ok()?;
        let name = relative_name(&self.root, &path)?;
        self.loaded
            .sources
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == name)
            .map(|(i, f)| (i as u32, f))
    }

    /// The location of a span of this load.
    pub fn location(&self, span: Span) -> Option<Location> {
        location(&self.loaded.sources, span)
    }
}

/// The URI of a loaded file.
pub fn file_uri(file: &SourceFile) -> Option<Url> {
    let path = std::path::absolute(&file.path).ok()?;
    Url::from_file_path(path).ok()
}

fn location(sources: &Sources, span: Span) -> Option<Location> {
    if span.file as usize >= sources.len() {
        return None;
    }
    let file = sources.get(span.file);
    let index = LineIndex::new(&file.text);
    Some(Location::new(
        file_uri(file)?,
        index.range(&file.text, span.start, span.len),
    ))
}

/// Each finding in its file's list, in `validate --format json`'s order;
/// every file the load read gets a list, empty when it is clean, so the
/// editor clears what it showed before. A diagnostic with no place (no
/// monform.toml, a folder not readable) is shown at the top of
/// monform.toml.
fn publishable(root: &Path, findings: &Findings) -> BTreeMap<Url, Vec<LspDiagnostic>> {
    let mut by_file: BTreeMap<Url, Vec<LspDiagnostic>> = BTreeMap::new();
    for file in findings.loaded.sources.iter().chain(findings.sources().iter()) {
        if let Some(uri) = file_uri(file) {
            by_file.entry(uri).or_default();
        }
    }
    let project_file = std::path::absolute(root.join(PROJECT_FILE))
        .ok()
        .and_then(|p| Url::from_file_path(p).ok());
    for (diagnostic, sources) in findings.all() {
        let (uri, range) = match diagnostic.span.and_then(|span| location(sources, span)) {
            Some(location) => (location.uri, location.range),
            None => match &project_file {
                Some(uri) => (uri.clone(), lsp_types::Range::default()),
                None => continue,
            },
        };
        by_file.entry(uri).or_default().push(to_lsp(diagnostic, sources, range));
    }
    by_file
}

/// One diagnostic as the editor shows it: the message, then the label and
/// help as the terminal shows them under it.
fn to_lsp(diagnostic: &Diagnostic, sources: &Sources, range: lsp_types::Range) -> LspDiagnostic {
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .related
        .iter()
        .filter_map(|r| {
            Some(DiagnosticRelatedInformation {
                location: location(sources, r.span?)?,
                message: r.message.clone(),
            })
        })
        .collect();
    LspDiagnostic {
        range,
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Note => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(diagnostic.code.to_owned())),
        source: Some("monform".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        // The help travels with it: the code actions read their fixes there.
        data: diagnostic.help.as_ref().map(|h| serde_json::json!({ "help": h })),
        ..LspDiagnostic::default()
    }
}
