//! One load of a project over the editor's unsaved text, and what the
//! editor is told of it: every diagnostic `monform validate` gives, at the
//! same place, with its code and help.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use lsp_types::{
    Diagnostic as LspDiagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url,
};
use monform_config::project::PROJECT_FILE;
use monform_config::source::{SourceFile, Span};
use monform_config::{Diagnostic, Loaded, Severity, Unsaved};

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
    /// The load without an environment: what navigation, completion and
    /// hover read.
    pub loaded: Loaded,
    /// Every diagnostic by file, `validate`'s: every environment's, once.
    pub diagnostics: BTreeMap<Url, Vec<LspDiagnostic>>,
    /// Where each logical id occurs.
    pub occurrences: Vec<Occurrence>,
}

impl Analysis {
    /// Loads the project at `root` as `monform validate` does (every
    /// environment, then across them, when it declares some), reading
    /// `unsaved` instead of the disk where it has a file.
    pub fn load(root: &Path, unsaved: &Unsaved, chosen: Option<&str>) -> Analysis {
        let env = |name: &str| std::env::var(name).ok();
        // The parse cache `monform` keeps (`.monform/cache/`): a keystroke
        // parses the file typed in, the others come from their entries.
        let cache = root.join(monform_config::CACHE_DIR);
        let loaded = monform_config::load_unsaved(root, &env, chosen, Some(&cache), unsaved);
        let mut all: Vec<(&Diagnostic, &Loaded)> = Vec::new();
        all.extend(loaded.warnings.iter().map(|d| (d, &loaded)));
        let names: Vec<String> = match (&loaded.project, chosen) {
            (Some(project), None) => project.environment_names().into_iter().map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let loads: Vec<Loaded> = names
            .iter()
            .map(|name| monform_config::load_unsaved(root, &env, Some(name), Some(&cache), unsaved))
            .collect();
        // As validate: with environments, their errors (each once), not
        // those of a load in none of them.
        if loads.is_empty() {
            all.extend(loaded.diagnostics.iter().map(|d| (d, &loaded)));
        }
        let named: Vec<(&str, &Loaded)> = names.iter().map(String::as_str).zip(&loads).collect();
        let (shared_warnings, shared_errors) = monform_config::shared::shared_objects(&named);
        for load in &loads {
            all.extend(load.diagnostics.iter().map(|d| (d, load)));
        }
        let shared: Vec<Diagnostic> = shared_warnings.into_iter().chain(shared_errors).collect();
        if let Some(first) = loads.first() {
            all.extend(shared.iter().map(|d| (d, first)));
        }
        let diagnostics = publishable(root, &loaded, &all);
        let occurrences = crate::index::occurrences(&loaded);
        Analysis {
            root: root.to_path_buf(),
            loaded,
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
        location(&self.loaded, span)
    }
}

/// The URI of a loaded file.
pub fn file_uri(file: &SourceFile) -> Option<Url> {
    let path = std::path::absolute(&file.path).ok()?;
    Url::from_file_path(path).ok()
}

fn location(loaded: &Loaded, span: Span) -> Option<Location> {
    if span.file as usize >= loaded.sources.len() {
        return None;
    }
    let file = loaded.sources.get(span.file);
    let index = LineIndex::new(&file.text);
    Some(Location::new(
        file_uri(file)?,
        index.range(&file.text, span.start, span.len),
    ))
}

/// Each diagnostic in its file's list, once (the same problem found in
/// several environments is one); every file the load read gets a list,
/// empty when it is clean, so the editor clears what it showed before. A
/// diagnostic with no place (no monform.toml, a folder not readable) is
/// shown at the top of monform.toml.
fn publishable(root: &Path, loaded: &Loaded, all: &[(&Diagnostic, &Loaded)]) -> BTreeMap<Url, Vec<LspDiagnostic>> {
    let mut by_file: BTreeMap<Url, Vec<LspDiagnostic>> = BTreeMap::new();
    for file in loaded.sources.iter() {
        if let Some(uri) = file_uri(file) {
            by_file.entry(uri).or_default();
        }
    }
    let project_file = std::path::absolute(root.join(PROJECT_FILE))
        .ok()
        .and_then(|p| Url::from_file_path(p).ok());
    let mut seen = HashSet::new();
    for (diagnostic, loaded) in all {
        let (uri, range) = match diagnostic.span.and_then(|span| location(loaded, span)) {
            Some(location) => (location.uri, location.range),
            None => match &project_file {
                Some(uri) => (uri.clone(), lsp_types::Range::default()),
                None => continue,
            },
        };
        if !seen.insert((
            uri.clone(),
            range.start,
            range.end,
            diagnostic.code,
            diagnostic.message.clone(),
        )) {
            continue;
        }
        by_file.entry(uri).or_default().push(to_lsp(diagnostic, loaded, range));
    }
    by_file
}

/// One diagnostic as the editor shows it: the message, then the label and
/// help as the terminal shows them under it.
fn to_lsp(diagnostic: &Diagnostic, loaded: &Loaded, range: lsp_types::Range) -> LspDiagnostic {
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
                location: location(loaded, r.span?)?,
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
