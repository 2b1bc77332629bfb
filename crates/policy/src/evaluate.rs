//! Loading policies into regorus and running their `deny`, `warn` and
//! `violation` rules (conftest's conventions) over an input.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use monform_config::project::{PolicyLimits, Project};
use monform_config::source::{FileId, Format, SourceFile, Sources, Span};
use monform_config::{Diagnostic, source};
use rayon::prelude::*;
use regex::Regex;
use serde_json::Value;

use crate::PACKAGE_ROOT;
use crate::input::Input;
use crate::limits::{Deadline, Failure, LimitHit};
use crate::run::{Runner, run_rule, runner};

/// What a rule's results are: conftest's `deny` and `violation` (errors,
/// `apply` refuses) and `warn` (shown, never blocking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Deny,
    Violation,
    Warn,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Deny, Level::Violation, Level::Warn];

    /// The rule's name in a policy.
    pub fn rule(self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Violation => "violation",
            Level::Warn => "warn",
        }
    }

    /// Whether a finding of this level stops an apply (unless overridden).
    pub fn blocks(self) -> bool {
        self != Level::Warn
    }
}

/// One result of a policy rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// `package.rule`, e.g. `monform.locations.deny`: the finding's code.
    pub rule: &'static str,
    /// The package without `data.`, e.g. `monform.locations` (each
    /// distinct one leaked once per process, as `rule`).
    pub package: &'static str,
    pub level: Level,
    pub message: String,
    /// The resource it is about (`checks.home`), when the result names one:
    /// the input's own text, shared (130,000 findings at 100,000 checks).
    pub address: Option<Arc<str>>,
    /// The field of that resource (`locations`, `request.url`).
    pub field: Option<Arc<str>>,
    /// Named by `--policy-override`: shown, but it does not block.
    pub overridden: bool,
    /// Where the rule is written, for findings about no resource of the files.
    pub rule_at: Span,
}

impl Finding {
    /// Whether it stops an apply.
    pub fn blocks(&self) -> bool {
        self.level.blocks() && !self.overridden
    }

    /// Whether `--policy-override name` names this finding's rule: the
    /// whole package (`monform.slo`) or one rule of it (`monform.slo.deny`).
    pub fn overridden_by(&self, name: &str) -> bool {
        self.package == name || self.rule == name
    }
}

/// A policy that could not run on this input, at its file:line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EvalError {
    pub message: String,
    pub span: Option<Span>,
    /// The bound it went past (`[policy] max-instructions` or `timeout`),
    /// when that is why it stopped.
    pub limit: Option<LimitHit>,
}

impl EvalError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        let code = match self.limit {
            Some(_) => "monform::policy-limit",
            None => "monform::policy-error",
        };
        let diagnostic = Diagnostic::new(code, format!("policy: {}", self.message));
        let label = match self.limit {
            Some(_) => "stopped here",
            None => "here",
        };
        let diagnostic = match self.span {
            Some(span) => diagnostic.at(span, label),
            None => diagnostic,
        };
        match self.limit {
            Some(hit) => diagnostic.help(hit.help()),
            None => diagnostic,
        }
    }
}

/// One loaded policy file.
#[derive(Debug, Clone)]
pub(crate) struct Module {
    /// Without `data.`: `monform.locations`.
    pub package: String,
    /// The file as shown (`policies/locations.rego`) and as read.
    pub name: String,
    pub file: FileId,
    pub text: Arc<str>,
    /// The levels it declares, each with where.
    pub rules: Vec<(Level, Span)>,
    /// Its `test_*` rules, each with where.
    pub tests: Vec<(String, Span)>,
}

/// The project's policies, ready to evaluate.
#[derive(Clone, Default)]
pub struct Policies {
    pub(crate) engine: regorus::Engine,
    pub(crate) modules: Vec<Module>,
    /// How far one rule's evaluation may go.
    pub(crate) limits: PolicyLimits,
}

impl std::fmt::Debug for Policies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policies")
            .field("modules", &self.modules)
            .field("limits", &self.limits)
            .finish()
    }
}

/// Reads the project's policy files into `sources` (so findings and errors
/// point into them) and compiles them. Every file that does not parse, or
/// whose package is not under `monform.`, is a diagnostic at its line; the
/// others are kept.
pub fn load(root: &Path, project: &Project, sources: &mut Sources) -> (Policies, Vec<Diagnostic>) {
    let (files, mut diagnostics) = crate::discover::policy_files(root, project);
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let mut policies = Policies::default().with_limits(project.policy_limits);
    for path in files {
        let shown = path
            .strip_prefix(&canonical_root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let text = match std::fs::read(&path).map(source::decode) {
            Ok(Ok(text)) => text,
            Ok(Err(not_utf8)) => {
                diagnostics.push(Diagnostic::new(
                    "monform::policy-error",
                    format!("{shown} {}", not_utf8.message()),
                ));
                continue;
            }
            Err(error) => {
                diagnostics.push(Diagnostic::new(
                    "monform::policy-error",
                    format!("cannot read {shown}: {error}"),
                ));
                continue;
            }
        };
        let file = sources.add(SourceFile {
            name: shown.clone(),
            path: path.clone(),
            text: text.clone().into(),
            format: Format::Rego,
        });
        if let Err(diagnostic) = policies.add(file, &shown, &text) {
            diagnostics.push(*diagnostic);
        }
    }
    (policies, diagnostics)
}

impl Policies {
    /// Adds one policy file (already in the sources as `file`).
    pub(crate) fn add(&mut self, file: FileId, name: &str, text: &str) -> Result<(), Box<Diagnostic>> {
        let broken = |error: &dyn std::fmt::Display| Box::new(error_at(file, text, &error.to_string()).to_diagnostic());
        // Parsed on a copy first: a broken file leaves the others usable.
        let mut engine = self.engine.clone();
        let package = engine
            .add_policy(name.to_owned(), text.to_owned())
            .map_err(|e| broken(&e))?;
        let package = package.strip_prefix("data.").unwrap_or(&package).to_owned();
        if package != PACKAGE_ROOT && !package.starts_with(&format!("{PACKAGE_ROOT}.")) {
            let at = first_match(text, r"(?m)^\s*package\b").unwrap_or(0);
            return Err(Box::new(
                Diagnostic::new(
                    "monform::policy-error",
                    format!("policy package `{package}` is not under `{PACKAGE_ROOT}.`: monform would never run it"),
                )
                .at(Span::new(file, at, "package".len()), "this package")
                .help(format!("name it `package {PACKAGE_ROOT}.{package}`")),
            ));
        }
        let mut rules = Vec::new();
        for level in Level::ALL {
            if engine.has_declared_rule_rooted_at(name, level.rule()).unwrap_or(false) {
                let at = first_match(text, &format!(r"(?m)^\s*{}\b", level.rule())).unwrap_or(0);
                rules.push((level, Span::new(file, at, level.rule().len())));
            }
        }
        let mut tests: Vec<(String, Span)> = Vec::new();
        for found in test_rule().captures_iter(text) {
            let Some(rule) = found.get(1) else { continue };
            if !tests.iter().any(|(name, _)| name == rule.as_str()) {
                tests.push((rule.as_str().to_owned(), Span::new(file, rule.start(), rule.len())));
            }
        }
        self.engine = engine;
        self.modules.push(Module {
            package,
            name: name.to_owned(),
            file,
            text: text.into(),
            rules,
            tests,
        });
        Ok(())
    }

    /// The same policies with other bounds on each rule's evaluation
    /// ([`load`] takes the project's `[policy]` ones).
    pub fn with_limits(mut self, limits: PolicyLimits) -> Policies {
        self.limits = limits;
        self
    }

    pub fn limits(&self) -> PolicyLimits {
        self.limits
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// How many policy files are loaded.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Runs every `deny`, `violation` and `warn` rule over `input`; the
    /// findings of rules `overrides` names are marked overridden. A rule
    /// that fails at run time (a conflict, a builtin's error) is an error at
    /// its file:line; the other rules still run.
    pub fn evaluate(&self, input: &Input, overrides: &[String]) -> (Vec<Finding>, Vec<EvalError>) {
        // A package split over files is one rule: evaluated once.
        let mut jobs: Vec<(&str, Level, Span)> = Vec::new();
        for module in &self.modules {
            for &(level, rule_at) in &module.rules {
                if !jobs.iter().any(|(p, l, _)| *p == module.package && *l == level) {
                    jobs.push((module.package.as_str(), level, rule_at));
                }
            }
        }
        if jobs.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let mut engine = self.engine.clone();
        let modules = engine.get_modules();
        let jobs: Vec<Job> = jobs
            .into_iter()
            .map(|(package, level, rule_at)| Job {
                package,
                level,
                rule_at,
                runner: runner(modules, package, level),
            })
            .collect();
        // Rules are independent: spread over the cores, each worker with
        // its own engine (cheap clones) taking the next rule when it is
        // done with one (rules differ tenfold in cost: a fixed split left a
        // core idle), results put back in rule order. On rayon's workers
        // (which built the input), not threads of their own: each new
        // thread started an allocator heap of its own for the results.
        let workers = rayon::current_num_threads().clamp(1, jobs.len());
        let next = AtomicUsize::new(0);
        let mut outcomes: Vec<(usize, Outcome)> = (0..workers)
            .into_par_iter()
            .with_max_len(1)
            .flat_map_iter(|_| {
                let work = || {
                    let mut engine = self.engine.clone();
                    engine.set_input(input.0.clone());
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(index) else { break };
                        done.push((index, self.evaluate_rule(&mut engine, &input.0, job, overrides)));
                    }
                    done
                };
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
                    let panicked = EvalError {
                        message: "a policy's evaluation panicked".into(),
                        span: None,
                        limit: None,
                    };
                    vec![(usize::MAX, (Vec::new(), vec![panicked]))]
                })
            })
            .collect();
        outcomes.sort_by_key(|(index, _)| *index);
        // One allocation of the right size (130,000 findings at 100,000
        // checks), not grown by doubling while the input is still held.
        let mut findings = Vec::with_capacity(outcomes.iter().map(|(_, (found, _))| found.len()).sum());
        let mut errors = Vec::new();
        for (_, (found, failed)) in outcomes {
            findings.extend(found);
            errors.extend(failed);
        }
        (findings, errors)
    }
}

/// A rule's findings and, when it could not run, its error.
type Outcome = (Vec<Finding>, Vec<EvalError>);

/// One rule to evaluate: a package's `deny`, `violation` or `warn`.
struct Job<'a> {
    package: &'a str,
    level: Level,
    /// Where the rule is written.
    rule_at: Span,
    runner: Runner,
}

impl Policies {
    /// Evaluates one rule on `engine` (whose input is `input`).
    fn evaluate_rule(
        &self,
        engine: &mut regorus::Engine,
        input: &regorus::Value,
        job: &Job<'_>,
        overrides: &[String],
    ) -> Outcome {
        let (package, level, rule_at) = (job.package, job.level, job.rule_at);
        let rule = intern(format!("{package}.{}", level.rule()));
        let package = intern(package.to_owned());
        let deadline = Deadline::start(self.limits);
        match run_rule(engine, input, &format!("data.{rule}"), &job.runner, &deadline) {
            Ok(value) => {
                let (count, results) = results(value);
                let mut findings: Vec<Finding> = Vec::with_capacity(count);
                findings.extend(results.map(|(message, address, field)| {
                    let mut finding = Finding {
                        rule,
                        package,
                        level,
                        message,
                        address,
                        field,
                        overridden: false,
                        rule_at,
                    };
                    finding.overridden = overrides.iter().any(|o| finding.overridden_by(o));
                    finding
                }));
                (findings, Vec::new())
            }
            Err(Failure::Other(error)) => (
                Vec::new(),
                vec![EvalError {
                    message: format!("{rule}: {}", located(&error).2),
                    span: Some(rule_at),
                    limit: None,
                }],
            ),
            Err(Failure::Limit { hit, at }) => (Vec::new(), vec![self.stopped(rule, rule_at, hit, at)]),
        }
    }

    /// The error of a rule stopped by a bound: the file and the rule, the
    /// bound, at the line it was running when the VM knows it (else at
    /// the rule).
    fn stopped(&self, rule: &str, rule_at: Span, hit: LimitHit, at: Option<usize>) -> EvalError {
        let module = self.modules.iter().find(|m| m.file == rule_at.file);
        let span = match (module, at) {
            (Some(module), Some(line)) => {
                // At the statement, past its indentation.
                let text = module.text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
                let column = text.chars().take_while(|c| c.is_whitespace()).count() + 1;
                span_at(module.file, &module.text, line, Some(column))
            }
            _ => rule_at,
        };
        let file = module.map_or("a policy", |m| m.name.as_str());
        EvalError {
            message: format!("{file}: {rule} {} and was stopped", hit.what()),
            span: Some(span),
            limit: Some(hit),
        }
    }
}

/// A regorus error at the file:line it names (its first `--> file:line:col`).
pub(crate) fn error_at(file: FileId, text: &str, message: &str) -> EvalError {
    let (line, column, message) = located(message);
    let span = line.map(|line| span_at(file, text, line, column));
    EvalError {
        message,
        span: span.or(Some(Span::new(file, 0, 0))),
        limit: None,
    }
}

/// The span of one character at a 1-based line and column of `text`.
fn span_at(file: FileId, text: &str, line: usize, column: Option<usize>) -> Span {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let column = column.unwrap_or(1).saturating_sub(1);
    let rest = &text[start.min(text.len())..];
    let offset = rest.char_indices().nth(column).map_or(0, |(i, _)| i);
    Span::new(file, (start + offset).min(text.len()), 1)
}

/// The line, column and last line (`error: ...`) of a regorus message,
/// which draws the source line with a caret in between.
fn located(message: &str) -> (Option<usize>, Option<usize>, String) {
    static AT: OnceLock<Regex> = OnceLock::new();
    let at = AT.get_or_init(|| Regex::new(r"--> .*?:(\d+):(\d+)").expect("a constant pattern"));
    let (line, column) = match at.captures(message) {
        Some(found) => (
            found.get(1).and_then(|m| m.as_str().parse().ok()),
            found.get(2).and_then(|m| m.as_str().parse().ok()),
        ),
        None => (None, None),
    };
    let last = message
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(message)
        .trim();
    let last = last.strip_prefix("error: ").unwrap_or(last).to_owned();
    (line, column, last)
}

fn test_rule() -> &'static Regex {
    static TEST: OnceLock<Regex> = OnceLock::new();
    TEST.get_or_init(|| Regex::new(r"(?m)^\s*(test_[A-Za-z0-9_]+)\b").expect("a constant pattern"))
}

fn first_match(text: &str, pattern: &str) -> Option<usize> {
    let found = Regex::new(pattern).ok()?.find(text)?;
    // Past the leading blanks the pattern allows.
    Some(found.start() + (found.as_str().len() - found.as_str().trim_start().len()))
}

/// A result's message, address and field.
type Parts = (String, Option<Arc<str>>, Option<Arc<str>>);

/// A rule's value as its results' parts: each member of a set (or array);
/// a single value is one result; undefined (no result) none. The value is
/// taken apart as it is read: a rule with 100,000 results made them as
/// objects of about 450 bytes each with their place in the set (810 in
/// the B-tree regorus 0.14.1's VM built each in: `vendor/regorus`'s
/// patch), which are freed one by one as the findings are made, not kept
/// beside them (a plan's peak at 100,000 checks).
fn results(value: regorus::Value) -> (usize, Box<dyn Iterator<Item = Parts>>) {
    use regorus::Value as R;
    match value {
        R::Undefined | R::Null | R::Bool(false) => (0, Box::new(std::iter::empty())),
        R::Set(items) => match regorus::Rc::try_unwrap(items) {
            Ok(items) => (items.len(), Box::new(items.into_iter().filter_map(|item| parts(&item)))),
            Err(shared) => {
                let parts: Vec<Parts> = shared.iter().filter_map(parts).collect();
                (parts.len(), Box::new(parts.into_iter()))
            }
        },
        R::Array(items) => {
            let parts: Vec<Parts> = items.iter().filter_map(parts).collect();
            (parts.len(), Box::new(parts.into_iter()))
        }
        other => (1, Box::new(parts(&other).into_iter())),
    }
}

/// One result's parts, read from the interpreter's value when it is a
/// string or a flat object of strings (the usual result: 130,000 of them
/// went through JSON first), else from its JSON as [`result_parts`] reads
/// it; a result that does not convert to JSON is none.
fn parts(result: &regorus::Value) -> Option<Parts> {
    use regorus::Value as R;
    match result {
        R::String(text) => return Some((text.to_string(), None, None)),
        R::Object(object) => {
            // Only where the JSON path certainly gives the same: string keys,
            // values that always convert (a number may not), and a `msg`.
            let (mut message, mut address, mut field) = (None, None, None);
            let mut flat = true;
            for (key, value) in object.iter() {
                let (R::String(key), R::Null | R::Bool(_) | R::String(_)) = (key, value) else {
                    flat = false;
                    break;
                };
                if let R::String(text) = value {
                    match key.as_ref() {
                        "msg" => message = Some(text),
                        "address" => address = Some(text),
                        "field" => field = Some(text),
                        _ => {}
                    }
                }
            }
            if let (true, Some(message)) = (flat, message) {
                // With regorus's `arc` feature its texts are `Arc<str>`:
                // shared, not copied.
                return Some((message.to_string(), address.cloned(), field.cloned()));
            }
        }
        _ => {}
    }
    serde_json::to_value(result).ok().map(|json| result_parts(&json))
}

/// A result's message, address and field: a string is the message; an
/// object `{msg, address, field}` (conftest's `violation` shape) names
/// the resource and field too; anything else is shown as JSON.
fn result_parts(result: &Value) -> Parts {
    let text = |key: &str| result.get(key).and_then(Value::as_str);
    match result {
        Value::String(message) => (message.clone(), None, None),
        Value::Object(_) => (
            text("msg").map_or_else(|| result.to_string(), str::to_owned),
            text("address").map(Arc::from),
            text("field").map(Arc::from),
        ),
        other => (other.to_string(), None, None),
    }
}

/// A rule's name as a diagnostic code, which is `&'static str`: each
/// distinct name (a project has a few dozen) is leaked once per process.
fn intern(name: String) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = names.get(name.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

#[cfg(test)]
pub(crate) mod tests;
