//! Validating a project (issue 44): **the one composition** of what
//! `monform validate` reports, which the CLI renders and the language
//! server publishes: the files loaded in the environment chosen or, when
//! none is, in every environment the project declares (each finding once,
//! named after the environments it is found in when not all), then
//! across them (objects two environments in one account would both
//! claim: `monform_config::shared`); the linter's findings; the Rego
//! policies' findings over the files, and the policies that do not load.
//!
//! Validation reads no API and no state, and works on files with errors
//! (an open would refuse them): it loads what there is.

use std::collections::HashMap;
use std::path::Path;

use monform_config::source::{Sources, Span};
use monform_config::{Diagnostic, Loaded, Severity, Unsaved};

use super::{OpenRequest, PolicyLoad};

/// Everything a validation found, and the loads the findings point into.
pub struct Findings {
    /// The files in the environment chosen, or in none: what an editor
    /// navigates. Its `warnings` are the linter's (with, across
    /// environments, the shared objects' warnings; without environments,
    /// the policies' warnings) and point into its `sources`; its
    /// `diagnostics` were moved into [`Findings::warnings`] and
    /// [`Findings::errors`].
    pub loaded: Loaded,
    /// Whether `loaded` had no error of the files (the policies' findings
    /// aside): what a plan of it needs (an editor's live facts).
    pub files_ok: bool,
    /// Each environment's load, by name, when every one was validated (no
    /// environment chosen and the project declares some); empty otherwise.
    pub environments: Vec<(String, Loaded)>,
    /// The other warnings and notes (the policies', with environments),
    /// in [`Findings::sources`].
    pub warnings: Vec<Diagnostic>,
    /// Every error, in [`Findings::sources`]: the files' (each
    /// environment's once), across environments, the policies' and the
    /// policies that do not load.
    pub errors: Vec<Diagnostic>,
}

impl Findings {
    /// Where [`Findings::warnings`] and [`Findings::errors`] point: the
    /// first environment's files (every environment reads the same files,
    /// in the same order), or `loaded`'s.
    pub fn sources(&self) -> &Sources {
        self.environments
            .first()
            .map_or(&self.loaded.sources, |(_, loaded)| &loaded.sources)
    }

    /// The resource files read (monform.toml not counted).
    pub fn files(&self) -> usize {
        self.environments
            .first()
            .map_or(self.loaded.resource_files, |(_, loaded)| loaded.resource_files)
    }

    /// Whether the project has no error (warnings and notes allowed).
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// Every finding with the sources its spans point into, in the order
    /// `validate --format json` lists them: `loaded`'s warnings, then the
    /// other warnings, then the errors.
    pub fn all(&self) -> impl Iterator<Item = (&Diagnostic, &Sources)> {
        let own = &self.loaded.sources;
        let sources = self.sources();
        (self.loaded.warnings.iter().map(move |d| (d, own)))
            .chain(self.warnings.iter().chain(&self.errors).map(move |d| (d, sources)))
    }
}

/// Validates the project of `request.dir` (see the module's doc), its
/// files read as [`super::open`] reads them: `dir`, `environment` (the
/// scope: the one chosen, or every one), `env`'s variables, `unsaved`,
/// `cache` and `findings`; the policies unless `policies` is
/// [`PolicyLoad::Skip`] (those that do not load are errors, whether
/// `Report` or `Require`). Neither the state nor the API is opened
/// (`state` and `api` are not read).
pub fn validate(request: &OpenRequest<'_>) -> Findings {
    let mut loaded = load(request, request.environment);
    let files_ok = loaded.is_ok();
    let names: Vec<String> = match &loaded.project {
        Some(project) if request.environment.is_none() => {
            project.environment_names().into_iter().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    };
    let mut environments: Vec<(String, Loaded)> = names
        .into_iter()
        .map(|name| {
            let loaded = load(request, Some(&name));
            (name, loaded)
        })
        .collect();
    let mut policy_problems = Vec::new();
    let policies = request.policies != PolicyLoad::Skip;
    // The policies over the files: of the one load, or of each
    // environment's (merged below as the loader's diagnostics are).
    let mut found = if environments.is_empty() {
        let (warnings, errors) = policy_findings(request.dir, &mut loaded, &mut policy_problems, policies);
        loaded.warnings.extend(warnings);
        loaded.diagnostics.extend(errors);
        std::mem::take(&mut loaded.diagnostics)
    } else {
        for (_, load) in &mut environments {
            let (warnings, errors) = policy_findings(request.dir, load, &mut policy_problems, policies);
            load.diagnostics.extend(warnings);
            load.diagnostics.extend(errors);
        }
        // Across environments: objects two of them would claim in one account.
        let named: Vec<(&str, &Loaded)> = environments.iter().map(|(n, l)| (n.as_str(), l)).collect();
        let (shared_warnings, shared_errors) = monform_config::shared::shared_objects(&named);
        loaded.warnings.extend(shared_warnings);
        let mut merged = merge(&mut environments);
        merged.extend(shared_errors);
        merged
    };
    found.extend(policy_problems);
    // Policy warnings of the environments are merged with their errors: apart again.
    let (warnings, errors) = found.into_iter().partition(|d| d.severity != Severity::Error);
    Findings {
        loaded,
        files_ok,
        environments,
        warnings,
        errors,
    }
}

/// The project's files for `environment`, as the request reads them.
fn load(request: &OpenRequest<'_>, environment: Option<&str>) -> Loaded {
    let cache = request.cache.then(|| request.dir.join(monform_config::CACHE_DIR));
    let no_text = Unsaved::default();
    let unsaved = request.unsaved.unwrap_or(&no_text);
    let vars = |name: &str| (request.env.vars)(name);
    let mut loaded = monform_config::load_unsaved(request.dir, &vars, environment, cache.as_deref(), unsaved);
    if !request.findings {
        loaded.warnings.retain(|d| !d.finding);
        loaded.diagnostics.retain(|d| !d.finding);
    }
    loaded
}

/// The policies' findings on one load's files, as (warnings, errors); a
/// policy that does not load or run is a problem (once, not per environment).
fn policy_findings(
    dir: &Path,
    loaded: &mut Loaded,
    problems: &mut Vec<Diagnostic>,
    wanted: bool,
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let Some(project) = loaded.project.clone().filter(|_| wanted) else {
        return (Vec::new(), Vec::new());
    };
    let (policies, broken) = super::load_policies(dir, loaded, &project);
    if problems.is_empty() {
        problems.extend(broken);
    }
    if policies.is_empty() || !loaded.is_ok() {
        return (Vec::new(), Vec::new());
    }
    let (findings, errors) = policies.policies.evaluate(&policies.files, &[]);
    // A quarter of a GiB at 100,000 checks: not kept while the findings are placed.
    drop(policies);
    let mut found = monform_policy::diagnostics(&findings, &loaded.desired, &loaded.sources);
    found.extend(errors.iter().map(|e| e.to_diagnostic()));
    found.into_iter().partition(|d| d.severity != Severity::Error)
}

/// Every environment's diagnostics, once each: one found in every
/// environment as it is, one found in some named after them. Keyed, not
/// compared pairwise: a finding on each of 100,000 checks is 100,000 keys.
fn merge(environments: &mut [(String, Loaded)]) -> Vec<Diagnostic> {
    type Key = (&'static str, String, Option<Span>, String);
    let count = environments.len();
    let mut merged: Vec<(Diagnostic, Vec<&str>)> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    for (name, loaded) in environments.iter_mut() {
        for diagnostic in std::mem::take(&mut loaded.diagnostics) {
            let key = (
                diagnostic.code,
                diagnostic.message.clone(),
                diagnostic.span,
                diagnostic.label.clone(),
            );
            // Same key but not equal (other help or related places): kept apart.
            match index.get(&key).filter(|&&i| merged[i].0 == diagnostic) {
                Some(&i) => merged[i].1.push(name),
                None => {
                    index.insert(key, merged.len());
                    merged.push((diagnostic, vec![name]));
                }
            }
        }
    }
    let mut diagnostics: Vec<Diagnostic> = merged
        .into_iter()
        .map(|(mut diagnostic, names)| {
            if names.len() < count {
                let which = if names.len() == 1 {
                    "environment"
                } else {
                    "environments"
                };
                diagnostic.message = format!("{} ({which} {})", diagnostic.message, names.join(", "));
            }
            diagnostic
        })
        .collect();
    diagnostics.sort_by_key(|d| d.span.map(|s| (s.file, s.start)));
    diagnostics
}
