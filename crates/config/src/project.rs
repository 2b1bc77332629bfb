//! `monform.toml`: the project's name, which files to read, the API URL,
//! defaults for checks, the state backend, `[vars]` and `[environments]`.

use crate::diagnostic::{Diagnostic, quote};
use crate::interpolate::EnvPolicy;
use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue};

mod env;
mod policy;
mod reconcile;
pub use env::{read_env_policy, read_pass_env};
pub use policy::PolicyLimits;
pub use reconcile::{Reconcile, parse_duration};

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
    /// Where `api_url` is written in monform.toml (the selected
    /// environment's when it sets one): the API key goes only to a URL the
    /// user chose, and a refusal names this line.
    pub api_url_span: Option<Span>,
    /// `[defaults]`: merged into every check that does not set the field.
    pub defaults: Vec<Entry>,
    pub state_backend: StateBackend,
    /// `[vars]`: values for `${var:NAME}` (the environment's merged over them).
    pub vars: Vec<Entry>,
    /// `[environments.NAME]`, in file order.
    pub environments: Vec<Environment>,
    /// The environment selected (`--env`); `name`, `api_url`, `vars` and
    /// `defaults` are then its own.
    pub environment: Option<String>,
    /// `[lint]`: how loud each finding of the linter is.
    pub lint: Lint,
    /// `[budget] max-runs-per-month`: a plan whose checks would run more fails.
    pub max_runs_per_month: Option<u64>,
    /// `[project] allow-paths`: folders (relative to the root) the files may
    /// read besides the project's own, each with where it is written.
    pub allow_paths: Vec<(String, Span)>,
    /// `[project] secret-env` and `public-env`: what `${env:}` may not read,
    /// and whose values plans may show.
    pub env_policy: EnvPolicy,
    /// `[project] pass-env`: the variables of monform's environment
    /// `test --local` may use, directly or through `${env:}`, each with
    /// where it is written. Its scripts get these on purpose and nothing
    /// else of monform's environment; a check whose effective definition
    /// reads any other (not `public-env`) through `${env:}` is not run
    /// there (`monform_engine::ops::unpassed_env`). Never a credential.
    pub pass_env: Vec<(String, Span)>,
    /// `[reconcile]`: what `monform reconcile` does (issue 30).
    pub reconcile: Reconcile,
    /// `[policy] paths`: where the Rego policies are (folders or files,
    /// relative to the root, each with where it is written); empty means
    /// `policies/` (issue 32).
    pub policy_paths: Vec<(String, Span)>,
    /// `[policy] max-instructions` and `timeout`: how far one rule's
    /// evaluation may go (issue 43).
    pub policy_limits: PolicyLimits,
}

/// How a linter finding is reported (`[lint]` in monform.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LintLevel {
    #[default]
    Warn,
    Error,
    /// Said by `validate` only, never a finding: what monform cannot check.
    Note,
    Off,
}

impl LintLevel {
    pub const NAMES: &[&str] = &["warn", "error", "note", "off"];

    fn parse(name: &str) -> Option<LintLevel> {
        match name {
            "warn" => Some(LintLevel::Warn),
            "error" => Some(LintLevel::Error),
            "note" => Some(LintLevel::Note),
            "off" => Some(LintLevel::Off),
            _ => None,
        }
    }
}

/// `[lint]`: one level per finding and per note, so each can be switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lint {
    /// Activated, unmuted checks whose failure alerts reach no channel.
    pub unrouted_checks: LintLevel,
    /// A check's own fields that its group overrides.
    pub ignored_fields: LintLevel,
    /// Routed checks alerting by the account's global alert settings, which
    /// monform cannot read (a note by default).
    pub global_alert_settings: LintLevel,
    /// Environments in one account claiming one account-wide object
    /// (the `shared` module's finding; an error by default).
    pub shared_objects: LintLevel,
}

impl Default for Lint {
    fn default() -> Lint {
        Lint {
            unrouted_checks: LintLevel::Warn,
            ignored_fields: LintLevel::Warn,
            global_alert_settings: LintLevel::Note,
            shared_objects: LintLevel::Error,
        }
    }
}

impl Lint {
    /// The `[lint]` keys, each with what it governs.
    pub const KEYS: &[&str] = &[
        "unrouted-checks",
        "ignored-fields",
        "global-alert-settings",
        "shared-objects",
    ];
}

/// One `[environments.NAME]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Environment {
    pub name: String,
    /// Ownership scope; default `<project>-<environment>`.
    pub project: Option<String>,
    pub vars: Vec<Entry>,
    pub defaults: Vec<Entry>,
    pub api_url: Option<String>,
    pub api_url_span: Option<Span>,
}

impl Project {
    /// A project with default settings.
    pub fn new(name: impl Into<String>) -> Project {
        Project {
            name: name.into(),
            include: Vec::new(),
            api_url: None,
            api_url_span: None,
            defaults: Vec::new(),
            state_backend: StateBackend::Local,
            vars: Vec::new(),
            environments: Vec::new(),
            environment: None,
            lint: Lint::default(),
            max_runs_per_month: None,
            allow_paths: Vec::new(),
            env_policy: EnvPolicy::default(),
            pass_env: Vec::new(),
            reconcile: Reconcile::default(),
            policy_paths: Vec::new(),
            policy_limits: PolicyLimits::default(),
        }
    }

    pub fn environment_names(&self) -> Vec<&str> {
        self.environments.iter().map(|e| e.name.as_str()).collect()
    }

    /// Makes `environment` the selected one: its project name, API, vars and
    /// defaults replace (or are merged over) the project's.
    pub fn select(&mut self, environment: &str) -> Result<(), Box<Diagnostic>> {
        let Some(selected) = self.environments.iter().find(|e| e.name == environment).cloned() else {
            let names = self.environment_names();
            let diagnostic = Diagnostic::new("monform::environment", format!("unknown environment `{environment}`"));
            return Err(Box::new(if names.is_empty() {
                diagnostic.help("monform.toml declares no [environments]; drop --env / MONFORM_ENV")
            } else {
                diagnostic.help(format!("environments are {}", names.join(", ")))
            }));
        };
        self.name = selected
            .project
            .unwrap_or_else(|| format!("{}-{}", self.name, selected.name));
        if selected.api_url.is_some() {
            self.api_url = selected.api_url;
            self.api_url_span = selected.api_url_span;
        }
        merge_entries(&mut self.vars, selected.vars);
        merge_entries(&mut self.defaults, selected.defaults);
        self.environment = Some(selected.name);
        Ok(())
    }
}

/// `over` replaces the entries of `base` with the same key and adds the rest.
fn merge_entries(base: &mut Vec<Entry>, over: Vec<Entry>) {
    for entry in over {
        match base.iter_mut().find(|e| e.key == entry.key) {
            Some(existing) => *existing = entry,
            None => base.push(entry),
        }
    }
}

pub(crate) const SECTIONS: &[(&str, &[&str])] = &[
    (
        "project",
        &["name", "include", "allow-paths", "secret-env", "public-env", "pass-env"],
    ),
    ("api", &["url"]),
    ("defaults", &[]),
    ("state", &["backend"]),
    ("vars", &[]),
    ("environments", &[]),
    ("lint", Lint::KEYS),
    ("budget", &["max-runs-per-month"]),
    ("reconcile", reconcile::KEYS),
    ("policy", &["paths", "max-instructions", "timeout"]),
];

pub(crate) const ENVIRONMENT_KEYS: &[&str] = &["project", "vars", "defaults", "api"];

/// Reads the project settings from the parsed `monform.toml`, reporting
/// every problem. `check_fields` are the fields `[defaults]` may set.
pub fn read_project(root: &Node, check_fields: &[&str], diagnostics: &mut Vec<Diagnostic>) -> Option<Project> {
    let mut project = Project::new(String::new());
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
        match entry.key.as_str() {
            "defaults" => {
                project.defaults = read_defaults(fields, check_fields, "[defaults]", diagnostics);
                continue;
            }
            "vars" => {
                project.vars = read_vars(fields, diagnostics);
                continue;
            }
            "reconcile" => {
                reconcile::read(fields, &mut project.reconcile, diagnostics);
                continue;
            }
            "environments" => {
                for environment in fields {
                    if let Some(environment) = read_environment(environment, check_fields, diagnostics) {
                        project.environments.push(environment);
                    }
                }
                continue;
            }
            _ => {}
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
                                format!("project.name {} is not a valid name", quote(&field.value)),
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
                                        match &item.sensitive {
                                            Some(_) => {
                                                format!("project.include: {} is not a valid pattern", quote(item))
                                            }
                                            None => format!("project.include: invalid pattern `{glob}`: {}", e.kind()),
                                        },
                                    )
                                    .at(item.span, "this pattern"),
                                ),
                            },
                            _ => diagnostics.push(wrong_type("project.include[]", item, "a string")),
                        }
                    }
                }
                ("policy.paths", NodeValue::Seq(items)) => {
                    project.policy_paths = paths(&path, items, diagnostics);
                }
                ("policy.paths", _) => {
                    diagnostics.push(wrong_type(&path, &field.value, "a list of folders or .rego files"))
                }
                ("policy.max-instructions" | "policy.timeout", _) => {
                    policy::read_limit(field, &mut project.policy_limits, diagnostics)
                }
                ("project.allow-paths", NodeValue::Seq(items)) => {
                    project.allow_paths = paths(&path, items, diagnostics);
                }
                // Read before the file's substitutions (`read_env_policy`);
                // here only the items' types are checked.
                ("project.secret-env" | "project.public-env" | "project.pass-env", NodeValue::Seq(items)) => {
                    strings(&path, items, diagnostics);
                }
                ("api.url", NodeValue::Str(url)) => {
                    project.api_url = Some(url.clone());
                    project.api_url_span = Some(field.value.span);
                }
                ("state.backend", NodeValue::Str(backend)) => match backend.as_str() {
                    "local" => project.state_backend = StateBackend::Local,
                    "postgres" => project.state_backend = StateBackend::Postgres,
                    _ => diagnostics.push(
                        Diagnostic::new(
                            "monform::state-backend",
                            format!("state.backend {} is not known", quote(&field.value)),
                        )
                        .at(field.value.span, "expected \"local\" or \"postgres\""),
                    ),
                },
                (
                    "lint.unrouted-checks"
                    | "lint.ignored-fields"
                    | "lint.global-alert-settings"
                    | "lint.shared-objects",
                    NodeValue::Str(level),
                ) => match LintLevel::parse(level) {
                    Some(level) => match path.as_str() {
                        "lint.unrouted-checks" => project.lint.unrouted_checks = level,
                        "lint.ignored-fields" => project.lint.ignored_fields = level,
                        "lint.shared-objects" => project.lint.shared_objects = level,
                        _ => project.lint.global_alert_settings = level,
                    },
                    None => diagnostics.push(
                        Diagnostic::new("monform::lint", format!("{path} {} is not known", quote(&field.value)))
                            .at(field.value.span, "expected \"warn\", \"error\", \"note\" or \"off\""),
                    ),
                },
                ("budget.max-runs-per-month", NodeValue::Int(n)) if *n >= 0 => {
                    project.max_runs_per_month = Some(*n as u64);
                }
                ("budget.max-runs-per-month", _) => {
                    diagnostics.push(wrong_type(&path, &field.value, "a whole number of runs, 0 or more"))
                }
                ("project.include", _) => diagnostics.push(wrong_type(&path, &field.value, "a list of glob patterns")),
                ("project.allow-paths", _) => diagnostics.push(wrong_type(&path, &field.value, "a list of folders")),
                ("project.secret-env" | "project.public-env" | "project.pass-env", _) => {
                    diagnostics.push(wrong_type(&path, &field.value, "a list of environment variable names"))
                }
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

/// The paths of a list setting (`allow-paths`, `policy.paths`), each with
/// its span. Diagnostics about a path quote it: one read from a
/// non-public `${env:}` is refused, not used unseen.
fn paths(path: &str, items: &[Node], diagnostics: &mut Vec<Diagnostic>) -> Vec<(String, Span)> {
    let (sensitive, shown): (Vec<&Node>, Vec<&Node>) = items.iter().partition(|item| item.sensitive.is_some());
    for item in sensitive {
        diagnostics.push(
            Diagnostic::new(
                "monform::sensitive-setting",
                format!(
                    "{path}[]: {} is sensitive, and a path here is shown in messages",
                    quote(item)
                ),
            )
            .at(item.span, "not shown: sensitive")
            .help("list the variable in [project] public-env if its value may be shown, or write the path out"),
        );
    }
    let shown: Vec<Node> = shown.into_iter().cloned().collect();
    strings(path, &shown, diagnostics)
}

/// The strings of a list setting, each with its span; other items are errors.
fn strings(path: &str, items: &[Node], diagnostics: &mut Vec<Diagnostic>) -> Vec<(String, Span)> {
    let mut found = Vec::new();
    for item in items {
        match &item.value {
            NodeValue::Str(text) => found.push((text.clone(), item.span)),
            _ => diagnostics.push(wrong_type(&format!("{path}[]"), item, "a string")),
        }
    }
    found
}

fn read_defaults(
    fields: &[Entry],
    check_fields: &[&str],
    table: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Entry> {
    let mut defaults = Vec::new();
    for field in fields {
        if check_fields.contains(&field.key.as_str()) {
            defaults.push(field.clone());
        } else {
            diagnostics.push(unknown(
                &field.key,
                field.key_span,
                check_fields.iter().copied(),
                &format!("check field in {table}"),
            ));
        }
    }
    defaults
}

fn read_vars(fields: &[Entry], diagnostics: &mut Vec<Diagnostic>) -> Vec<Entry> {
    let mut vars = Vec::new();
    for field in fields {
        if crate::interpolate::is_name(&field.key) {
            vars.push(field.clone());
        } else {
            diagnostics.push(
                Diagnostic::new("monform::vars", format!("`{}` is not a valid variable name", field.key))
                    .at(field.key_span, "here")
                    .help("use letters, digits, - and _, starting with a letter or _"),
            );
        }
    }
    vars
}

fn read_environment(entry: &Entry, check_fields: &[&str], diagnostics: &mut Vec<Diagnostic>) -> Option<Environment> {
    // The name goes into state file names and the default project name.
    if !monform_model::is_valid_logical_id(&entry.key) {
        diagnostics.push(
            Diagnostic::new(
                "monform::environment",
                format!("`{}` is not a valid environment name", entry.key),
            )
            .at(entry.key_span, "here")
            .help("use letters, digits, - and _, starting with a letter or digit, at most 64"),
        );
        return None;
    }
    let Some(fields) = entry.value.as_map() else {
        diagnostics.push(wrong_type(
            &format!("environments.{}", entry.key),
            &entry.value,
            "a table",
        ));
        return None;
    };
    let mut environment = Environment {
        name: entry.key.clone(),
        project: None,
        vars: Vec::new(),
        defaults: Vec::new(),
        api_url: None,
        api_url_span: None,
    };
    for field in fields {
        let path = format!("environments.{}.{}", entry.key, field.key);
        match (field.key.as_str(), &field.value.value) {
            ("project", NodeValue::Str(name)) if monform_model::is_valid_logical_id(name) => {
                environment.project = Some(name.clone());
            }
            ("project", NodeValue::Str(_)) => diagnostics.push(
                Diagnostic::new(
                    "monform::project-name",
                    format!("{path} {} is not a valid name", quote(&field.value)),
                )
                .at(field.value.span, "here")
                .help("use letters, digits, - and _, starting with a letter or digit, at most 64"),
            ),
            ("project", _) => diagnostics.push(wrong_type(&path, &field.value, "a string")),
            ("vars", NodeValue::Map(vars)) => environment.vars = read_vars(vars, diagnostics),
            ("defaults", NodeValue::Map(defaults)) => {
                environment.defaults = read_defaults(defaults, check_fields, &path, diagnostics);
            }
            ("api", NodeValue::Map(api)) => {
                for setting in api {
                    match (setting.key.as_str(), &setting.value.value) {
                        ("url", NodeValue::Str(url)) => {
                            environment.api_url = Some(url.clone());
                            environment.api_url_span = Some(setting.value.span);
                        }
                        ("url", _) => diagnostics.push(wrong_type(&format!("{path}.url"), &setting.value, "a string")),
                        _ => diagnostics.push(unknown(&setting.key, setting.key_span, ["url"].into_iter(), "field")),
                    }
                }
            }
            ("vars" | "defaults" | "api", _) => diagnostics.push(wrong_type(&path, &field.value, "a table")),
            _ => diagnostics.push(unknown(
                &field.key,
                field.key_span,
                ENVIRONMENT_KEYS.iter().copied(),
                "environment setting",
            )),
        }
    }
    Some(environment)
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
