//! One load of a project over the editor's unsaved text, and what the
//! editor is told of it: every diagnostic `monform validate` gives
//! (`ops::validate`, which both call), at the same place, with its code
//! and help.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use lsp_types::{
    Diagnostic as LspDiagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Url,
};
use monform_config::project::PROJECT_FILE;
use monform_config::source::{SourceFile, Sources, Span};
use monform_config::{Diagnostic, Loaded, Severity, Unsaved};
use monform_engine::ops::{self, Findings, OpenRequest, PolicyLoad, Revalidation};

use crate::Config;
use crate::documents::LineIndex;
use crate::index::Occurrences;

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
    pub occurrences: Occurrences,
    /// The rest of `ops::validate`'s findings, kept for the next
    /// keystroke's `ops::revalidate`; `None` when the project was
    /// validated per environment (the next is a whole validation: the
    /// environments' loads are not kept).
    prior: Option<(Vec<Diagnostic>, Vec<Diagnostic>)>,
    /// Each file's line starts, made when first asked for.
    lines: Vec<OnceLock<LineIndex>>,
    /// Each file's URI (by id in `loaded.sources`), kept while the files
    /// are the same: 2,000 paths made absolute and into URIs were a
    /// tenth of a keystroke at 1,000 files.
    uris: Vec<Option<Url>>,
}

impl Analysis {
    /// Validates the project at `root` as `monform validate` does
    /// (`ops::validate`: every environment, then across them, when it
    /// declares some and none is chosen; the linter; the policies),
    /// reading `unsaved` instead of the disk where it has a file, and the
    /// parse cache `monform` keeps (`.monform/cache/`): a keystroke parses
    /// the file typed in, the others come from their entries.
    pub fn load(root: &Path, unsaved: Unsaved, config: &Config) -> Analysis {
        let findings = ops::validate(&request(root, &unsaved, config));
        Analysis::of(root, unsaved, findings, None)
    }

    /// This analysis brought up to date after the files `changed` (names
    /// relative to the root) changed, `unsaved` the editor's text now:
    /// `ops::revalidate`, which re-checks only what the change can affect
    /// (or validates the whole project when it cannot tell).
    pub fn reload(self, unsaved: Unsaved, changed: &[String], config: &Config) -> Analysis {
        let Analysis {
            root,
            loaded,
            files_ok,
            prior,
            occurrences,
            uris,
            ..
        } = self;
        let Some((warnings, errors)) = prior else {
            drop(loaded);
            return Analysis::load(&root, unsaved, config);
        };
        let prior = Findings {
            loaded,
            files_ok,
            environments: Vec::new(),
            warnings,
            errors,
        };
        let (findings, how) = ops::revalidate(&request(&root, &unsaved, config), prior, changed);
        let before = match how {
            // Only the changed files' occurrences are found again.
            Revalidation::Files => {
                let ids: Vec<u32> = (findings.loaded.sources.iter().enumerate())
                    .filter(|(_, f)| changed.contains(&f.name))
                    .map(|(id, _)| id as u32)
                    .collect();
                Some(Kept {
                    occurrences,
                    changed: ids,
                    uris,
                })
            }
            Revalidation::Whole => None,
        };
        Analysis::of(&root, unsaved, findings, before)
    }

    /// The analysis of `findings`; the occurrences found again only in the
    /// files `kept` names (the others as they were), and the URIs kept,
    /// when it is given.
    fn of(root: &Path, unsaved: Unsaved, findings: Findings, kept: Option<Kept>) -> Analysis {
        let (before, uris) = match kept {
            Some(Kept {
                occurrences,
                changed,
                uris,
            }) if uris.len() == findings.loaded.sources.len() => (Some((occurrences, changed)), uris),
            _ => (None, findings.loaded.sources.iter().map(file_uri).collect()),
        };
        let diagnostics = publishable(root, &findings, &uris);
        let Findings {
            mut loaded,
            files_ok,
            environments,
            warnings,
            errors,
        } = findings;
        let prior = environments.is_empty().then_some((warnings, errors));
        if prior.is_some() && before.is_none() {
            // The next keystroke re-checks from this validation.
            loaded.keep_for_reloads();
        }
        drop(environments);
        let occurrences = match before {
            Some((before, changed)) => crate::index::patched(&loaded, before, &changed),
            None => crate::index::occurrences(&loaded),
        };
        let lines = (0..loaded.sources.len()).map(|_| OnceLock::new()).collect();
        Analysis {
            root: root.to_path_buf(),
            loaded,
            files_ok,
            unsaved,
            diagnostics,
            occurrences,
            prior,
            lines,
            uris,
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
        let file = span.file as usize;
        if file >= self.loaded.sources.len() {
            return None;
        }
        let source = self.loaded.sources.get(span.file);
        let index = self.lines.get(file)?.get_or_init(|| LineIndex::new(&source.text));
        Some(Location::new(
            self.uris.get(file)?.clone()?,
            index.range(&source.text, span.start, span.len),
        ))
    }
}

/// What a keystroke keeps of the analysis before it (the files read
/// again aside): the occurrences, the changed files' ids, the URIs.
struct Kept {
    occurrences: Occurrences,
    changed: Vec<u32>,
    uris: Vec<Option<Url>>,
}

/// The request `monform validate` makes of the project at `root`, over
/// the editor's text.
fn request<'a>(root: &'a Path, unsaved: &'a Unsaved, config: &'a Config) -> OpenRequest<'a> {
    OpenRequest {
        environment: config.environment.as_deref(),
        unsaved: Some(unsaved),
        policies: PolicyLoad::Report,
        ..OpenRequest::new(root, &config.env)
    }
}

/// The URI of a loaded file.
pub fn file_uri(file: &SourceFile) -> Option<Url> {
    let path = std::path::absolute(&file.path).ok()?;
    Url::from_file_path(path).ok()
}

/// Places in one load's sources, each file's line starts made once (a
/// finding on each of 100,000 checks made its file's 100 times each).
struct Locator<'s> {
    sources: &'s Sources,
    lines: HashMap<u32, (Option<Url>, LineIndex)>,
    /// The sources' URIs when known (by id).
    uris: Option<&'s [Option<Url>]>,
}

impl<'s> Locator<'s> {
    fn new(sources: &'s Sources, uris: Option<&'s [Option<Url>]>) -> Locator<'s> {
        Locator {
            sources,
            lines: HashMap::new(),
            uris,
        }
    }

    fn uri(&self, file: u32) -> Option<Url> {
        match self.uris {
            Some(uris) => uris.get(file as usize)?.clone(),
            None => file_uri(self.sources.get(file)),
        }
    }

    fn location(&mut self, span: Span) -> Option<Location> {
        if span.file as usize >= self.sources.len() {
            return None;
        }
        let file = self.sources.get(span.file);
        if !self.lines.contains_key(&span.file) {
            let uri = self.uri(span.file);
            self.lines.insert(span.file, (uri, LineIndex::new(&file.text)));
        }
        let (uri, index) = self.lines.get(&span.file)?;
        Some(Location::new(
            uri.clone()?,
            index.range(&file.text, span.start, span.len),
        ))
    }
}

/// Each finding in its file's list, in `validate --format json`'s order;
/// every file the load read gets a list, empty when it is clean, so the
/// editor clears what it showed before. A diagnostic with no place (no
/// monform.toml, a folder not readable) is shown at the top of
/// monform.toml.
/// `uris` are `findings.loaded.sources`' URIs.
fn publishable(root: &Path, findings: &Findings, uris: &[Option<Url>]) -> BTreeMap<Url, Vec<LspDiagnostic>> {
    let mut by_file: BTreeMap<Url, Vec<LspDiagnostic>> = BTreeMap::new();
    let same = std::ptr::eq(findings.sources(), &findings.loaded.sources);
    for uri in uris.iter().flatten() {
        by_file.entry(uri.clone()).or_default();
    }
    for uri in findings.sources().iter().filter(|_| !same).filter_map(file_uri) {
        by_file.entry(uri).or_default();
    }
    let project_file = std::path::absolute(root.join(PROJECT_FILE))
        .ok()
        .and_then(|p| Url::from_file_path(p).ok());
    let mut own = Locator::new(&findings.loaded.sources, Some(uris));
    let mut shared = Locator::new(findings.sources(), same.then_some(uris));
    for (diagnostic, sources) in findings.all() {
        let locator = if std::ptr::eq(sources, own.sources) {
            &mut own
        } else {
            &mut shared
        };
        let (uri, range) = match diagnostic.span.and_then(|span| locator.location(span)) {
            Some(location) => (location.uri, location.range),
            None => match &project_file {
                Some(uri) => (uri.clone(), lsp_types::Range::default()),
                None => continue,
            },
        };
        by_file.entry(uri).or_default().push(to_lsp(diagnostic, locator, range));
    }
    by_file
}

/// One diagnostic as the editor shows it: the message, then the label and
/// help as the terminal shows them under it.
fn to_lsp(diagnostic: &Diagnostic, locator: &mut Locator<'_>, range: lsp_types::Range) -> LspDiagnostic {
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
                location: locator.location(r.span?)?,
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const SHARED: &str = "groups:\n  web:\n    name: Web\n    locations: [eu-west-1]\n    alertChannels: [oncall]\nalertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n  quiet: { type: EMAIL, config: { address: quiet@example.com }, sendFailure: false }\n";
    const CHECKS: &str = "checks:\n  home:\n    checkType: URL\n    name: Home\n    group: web\n    request: { url: https://example.com }\n  about:\n    checkType: URL\n    name: About\n    group: web\n    locations: [us-east-1]\n    request: { url: https://example.com/about }\n";

    /// What an analysis tells the editor and navigates by.
    fn told(analysis: &Analysis) -> String {
        let occurrences: Vec<_> = analysis.occurrences.iter().collect();
        format!("{:#?}\n{occurrences:#?}", analysis.diagnostics)
    }

    /// Each edit, as a keystroke brings the analysis before it up to date
    /// (`Analysis::reload`), publishes what a fresh analysis of the same
    /// texts publishes, with the same occurrences: edits of a file of
    /// checks and of the file of the groups and channels they read.
    #[test]
    fn keystrokes_tell_what_a_fresh_analysis_tells() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(dir.path().join("shared.yaml"), SHARED).unwrap();
        std::fs::write(dir.path().join("checks.yaml"), CHECKS).unwrap();
        let root = dir.path();
        let config = Config::default();
        let edits = [
            ("checks.yaml", CHECKS.replace("name: Home", "name: Homex")),
            (
                "checks.yaml",
                CHECKS.replace("group: web\n    request", "alertChannels: [quiet]\n    request"),
            ),
            (
                "shared.yaml",
                SHARED.replace("oncall@example.com }", "oncall@example.com }, sendFailure: false"),
            ),
            ("checks.yaml", CHECKS.replace("  about:", "  about-us:")),
            ("shared.yaml", SHARED.replace("name: Web", "name: Web\n    muted: true")),
            ("checks.yaml", CHECKS.replace("group: web", "group: wbe")),
            ("shared.yaml", SHARED.to_owned()),
            ("checks.yaml", CHECKS.to_owned()),
        ];
        let mut texts = Unsaved::default();
        let mut analysis = Analysis::load(root, texts.clone(), &config);
        for (file, text) in edits {
            texts.insert(file.to_owned(), Arc::from(text.as_str()));
            analysis = analysis.reload(texts.clone(), &[file.to_owned()], &config);
            let fresh = Analysis::load(root, texts.clone(), &config);
            assert_eq!(told(&analysis), told(&fresh), "{file}: {text}");
        }
    }
}
