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

/// Validates the project again after the files named in `changed`
/// (relative to `request.dir`, `/`-separated) changed, from `prior`, its
/// validation before (with the same request but for `unsaved`): what
/// [`validate`] would find, re-checking only what the change can affect
/// (`monform_config::reload_file`: the file, and the cross-file rules
/// where they read it). The whole project is validated again when that is
/// not known to be the same: with environments or Rego policies (a policy
/// reads every file), without the linter's findings, or when the loader
/// says so (monform.toml changed, an id changed where another file reads
/// it...). Says which it did: what the caller derived from `prior` for the
/// other files holds after [`Revalidation::Files`] only.
pub fn revalidate(request: &OpenRequest<'_>, mut prior: Findings, changed: &[String]) -> (Findings, Revalidation) {
    if patch(request, &mut prior, changed) {
        (prior, Revalidation::Files)
    } else {
        drop(prior);
        (validate(request), Revalidation::Whole)
    }
}

/// How [`revalidate`] brought a validation up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revalidation {
    /// The files changed were read again and the cross-file rules re-run
    /// where they read them: the other files' resources, spans and
    /// diagnostics are as they were.
    Files,
    /// The whole project was validated again.
    Whole,
}

/// `prior` brought up to date file by file; false when it cannot be.
fn patch(request: &OpenRequest<'_>, prior: &mut Findings, changed: &[String]) -> bool {
    let Some(project) = &prior.loaded.project else {
        return false;
    };
    if !prior.environments.is_empty() || !request.findings || request.environment != project.environment.as_deref() {
        return false;
    }
    if request.policies != PolicyLoad::Skip {
        let (files, problems) = monform_policy::policy_files(request.dir, project);
        if !files.is_empty() || !problems.is_empty() {
            return false;
        }
    }
    let no_text = Unsaved::default();
    let unsaved = request.unsaved.unwrap_or(&no_text);
    let vars = |name: &str| (request.env.vars)(name);
    for name in changed {
        let Findings {
            loaded,
            warnings,
            errors,
            ..
        } = &mut *prior;
        let Some(reloaded) = monform_config::reload_file(
            loaded,
            request.dir,
            &vars,
            unsaved,
            name,
            warnings.iter().chain(errors.iter()),
        ) else {
            return false;
        };
        let file = reloaded.file;
        let (lint_warnings, lint_errors) = reloaded.lint;
        // As `validate` splits the load's diagnostics (no policy adds any).
        let (mut new_errors, new_warnings): (Vec<Diagnostic>, Vec<Diagnostic>) = reloaded
            .diagnostics
            .into_iter()
            .partition(|d| d.severity == Severity::Error);
        new_errors.extend(lint_errors);
        let replaced = |d: &Diagnostic| d.span.is_some_and(|s| s.file == file) || monform_config::is_lint_code(d.code);
        monform_config::place(errors, replaced, new_errors);
        monform_config::place(warnings, replaced, new_warnings);
        loaded.warnings.retain(|d| !monform_config::is_lint_code(d.code));
        loaded.warnings.extend(lint_warnings);
    }
    // The load's diagnostics are these two lists when no policy runs.
    prior.files_ok = prior.errors.is_empty() && prior.warnings.is_empty();
    true
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
    let input = policies.files(&loaded.desired);
    let (findings, errors) = policies.policies.evaluate(&input, &[]);
    // A fifth of a GB at 100,000 checks: not kept while the findings are placed.
    drop((input, policies));
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::ops::OpenEnv;

    const PROJECT: &str = "[project]\nname = \"p\"\n";
    const SHARED: &str = "groups:\n  web:\n    name: Web\n    locations: [eu-west-1]\n    alertChannels: [oncall]\nalertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n  quiet: { type: EMAIL, config: { address: quiet@example.com }, sendFailure: false }\n";
    const CHECKS: &str = "checks:\n  home:\n    checkType: URL\n    name: Home\n    group: web\n    frequency: 5\n    request: { url: https://example.com }\n  about:\n    checkType: URL\n    name: About\n    frequency: 10\n    request: { url: https://example.com/about }\n";

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), PROJECT).unwrap();
        std::fs::write(dir.path().join("shared.yaml"), SHARED).unwrap();
        std::fs::write(dir.path().join("checks.yaml"), CHECKS).unwrap();
        dir
    }

    fn validated(dir: &Path, unsaved: &Unsaved) -> Findings {
        let env = OpenEnv::empty();
        validate(&OpenRequest {
            unsaved: Some(unsaved),
            cache: false,
            ..OpenRequest::new(dir, &env)
        })
    }

    /// What a validation says, to compare.
    fn said(findings: &Findings) -> String {
        let resources: Vec<String> = findings
            .loaded
            .desired
            .resources
            .values()
            .map(|r| format!("{r:?}"))
            .collect();
        let edges = findings.loaded.desired.graph.edge_count();
        format!(
            "ok {}\nerrors {:#?}\nwarnings {:#?}\nloaded warnings {:#?}\nresources {resources:#?}\nedges {edges}",
            findings.files_ok, findings.errors, findings.warnings, findings.loaded.warnings
        )
    }

    /// Each edit of `file` in turn, revalidated from the validation before
    /// it, says what a whole validation of the same text says (resources,
    /// errors and warnings in their order, the linter's findings), and is
    /// made without one where it can be (`patched`).
    fn assert_edits_equal_whole(dir: &Path, file: &str, edits: Vec<(&str, String, bool)>) {
        let env = OpenEnv::empty();
        let mut prior = validated(dir, &Unsaved::default());
        for (what, text, patched) in edits {
            let mut unsaved = Unsaved::default();
            unsaved.insert(file.to_owned(), Arc::from(text.as_str()));
            let request = OpenRequest {
                unsaved: Some(&unsaved),
                cache: false,
                ..OpenRequest::new(dir, &env)
            };
            let expected = validated(dir, &unsaved);
            let mut findings = prior;
            let was_patched = patch(&request, &mut findings, &[file.to_owned()]);
            assert_eq!(was_patched, patched, "{what}: patched");
            if !was_patched {
                let (whole, how) = revalidate(&request, validated(dir, &Unsaved::default()), &[file.to_owned()]);
                assert_eq!(how, Revalidation::Whole, "{what}");
                findings = whole;
            }
            assert_eq!(said(&findings), said(&expected), "{what}");
            prior = findings;
        }
    }

    /// Edits of a file of checks: names, invalid fields, references, ids,
    /// routes (the linter's note names the first checks alerting by the
    /// global settings: `about` comes before `home`).
    #[test]
    fn revalidating_an_edited_file_equals_validating_the_project() {
        let dir = project();
        let edits: Vec<(&str, String, bool)> = vec![
            ("a name typed", CHECKS.replace("name: Home", "name: Homepage"), true),
            (
                "a field made invalid",
                CHECKS.replace("frequency: 5", "frequency: often"),
                true,
            ),
            ("a dangling group", CHECKS.replace("group: web", "group: wbe"), true),
            ("the group again", CHECKS.to_owned(), true),
            ("an id renamed", CHECKS.replace("  about:", "  about-us:"), true),
            (
                "channels that send no failure",
                CHECKS.replace("group: web", "alertChannels: [quiet]"),
                true,
            ),
            (
                "a check routed, first of those on the global settings",
                CHECKS.replace("frequency: 10", "frequency: 10\n    alertChannels: [oncall]"),
                true,
            ),
            (
                "a field its group overrides",
                CHECKS.replace("frequency: 5", "frequency: 5\n    locations: [us-east-1]"),
                true,
            ),
            ("the checks as they were", CHECKS.to_owned(), true),
            // The parser's own finding: one file.
            ("an id written twice", CHECKS.replace("  about:", "  home:"), true),
            (
                "an id another file defines",
                format!("{CHECKS}groups:\n  web: {{ name: Web again, locations: [eu-west-1] }}\n"),
                false,
            ),
        ];
        assert_edits_equal_whole(dir.path(), "checks.yaml", edits);
    }

    /// Edits of the file of groups and channels that checks in two other
    /// files read: the linter's findings on those checks follow (a channel
    /// that stops sending failures, a group muted, made invalid, routed
    /// elsewhere, on its own alert settings, setting a field a check writes).
    #[test]
    fn revalidating_edited_groups_and_channels_equals_validating_the_project() {
        let dir = project();
        let more = "checks:\n  api:\n    checkType: URL\n    name: API\n    group: web\n    locations: [us-east-1]\n    request: { url: https://example.com/api }\n  beat:\n    checkType: URL\n    name: Beat\n    alertChannels: [oncall]\n    request: { url: https://example.com/beat }\n";
        std::fs::write(dir.path().join("more.yaml"), more).unwrap();
        let edits: Vec<(&str, String, bool)> = vec![
            (
                "a channel that stops sending failures",
                SHARED.replace(
                    "address: oncall@example.com }",
                    "address: oncall@example.com }, sendFailure: false",
                ),
                true,
            ),
            ("as it was", SHARED.to_owned(), true),
            (
                "a group muted",
                SHARED.replace("name: Web", "name: Web\n    muted: true"),
                true,
            ),
            (
                "a group made invalid",
                SHARED.replace("name: Web", "name: Web\n    muted: maybe"),
                true,
            ),
            ("valid again", SHARED.to_owned(), true),
            (
                "a group routed to a quiet channel",
                SHARED.replace("alertChannels: [oncall]", "alertChannels: [quiet]"),
                true,
            ),
            (
                "a group on its own alert settings",
                SHARED.replace("name: Web", "name: Web\n    useGlobalAlertSettings: false"),
                true,
            ),
            (
                "a group no longer setting locations",
                SHARED.replace("    locations: [eu-west-1]\n    alertChannels", "    alertChannels"),
                true,
            ),
            (
                "a channel added",
                format!("{SHARED}  pager: {{ type: EMAIL, config: {{ address: pager@example.com }} }}\n"),
                true,
            ),
            ("as it was", SHARED.to_owned(), true),
        ];
        assert_edits_equal_whole(dir.path(), "shared.yaml", edits);
    }

    /// A project opened for one command has freed what reloading one file
    /// needs (8 MB at 100,000 checks held through a plan): a reload of it
    /// asks for a whole load rather than resolving against nothing.
    #[test]
    fn a_project_opened_for_one_command_is_not_reloaded_in_part() {
        let dir = project();
        let env = OpenEnv::empty();
        let request = OpenRequest {
            cache: false,
            ..OpenRequest::new(dir.path(), &env)
        };
        let mut opened = crate::ops::open_files(request).expect("opens");
        let vars = |_: &str| None;
        let none = Unsaved::default();
        let reloaded = monform_config::reload_file(&mut opened.loaded, dir.path(), &vars, &none, "checks.yaml", []);
        assert!(reloaded.is_none());
        let mut whole = validated(dir.path(), &none);
        let reloaded = monform_config::reload_file(&mut whole.loaded, dir.path(), &vars, &none, "checks.yaml", []);
        assert!(reloaded.is_some(), "a validation's load reloads one file");
    }

    /// An id another file references, renamed, is a whole validation (the
    /// reference becomes dangling there).
    #[test]
    fn an_id_another_file_reads_is_revalidated_whole() {
        let dir = project();
        let env = OpenEnv::empty();
        let mut unsaved = Unsaved::default();
        unsaved.insert(
            "shared.yaml".to_owned(),
            Arc::from(SHARED.replace("  web:", "  www:").as_str()),
        );
        let request = OpenRequest {
            unsaved: Some(&unsaved),
            cache: false,
            ..OpenRequest::new(dir.path(), &env)
        };
        let mut findings = validated(dir.path(), &Unsaved::default());
        assert!(!patch(&request, &mut findings, &["shared.yaml".to_owned()]));
        let (findings, _) = revalidate(
            &request,
            validated(dir.path(), &Unsaved::default()),
            &["shared.yaml".to_owned()],
        );
        assert_eq!(said(&findings), said(&validated(dir.path(), &unsaved)));
        assert!(findings.errors.iter().any(|d| d.code == "monform::dangling-reference"));
    }
}
