//! What of monform's environment a check of the files takes to
//! `monform test --local`, and the rule on it (issue 43). The loader
//! records, for each value filled from `${env:NAME}`, the names it read
//! (`DesiredResource::env_reads`); a check run here carries the values of
//! its effective definition (its own fields, what its group adds or
//! imposes, its snippets' scripts) and every project variable. In CI the
//! files are a pull request's: `headers: [{ key: X, value:
//! "${env:AWS_SECRET_ACCESS_KEY}" }]` and a URL of its choosing would make
//! the runner send the CI's secret there, and a script reads
//! `environmentVariables` directly. So a check runs here only when every
//! name it read is one `[project] pass-env` (or `public-env`) lists: the
//! same list that says what of monform's environment scripts see.
//! `plan` and `apply` are not concerned: they send values to the service
//! once the change is reviewed and merged.

use std::fmt;

use monform_config::{Desired, DesiredResource, Project};
use monform_model::group_rules::{GROUP_OVERRIDES, group_overrides};
use monform_model::resources::CheckType;
use monform_model::{FieldPath, Kind, Segment};
use serde_json::Value;

/// A value of a check's effective definition read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvRead {
    /// The field as the files name it: the check's own
    /// (`request.headers[0].value`), or another object's with its address
    /// and why the check carries it (`groups.web.environmentVariables[0].value
    /// (its group)`, `variables.TOKEN.value (a project variable)`).
    pub field: String,
    /// The variables its text came from.
    pub names: Vec<String>,
}

/// A check `test --local` does not run: the values of its effective
/// definition read from variables `[project] pass-env` does not list,
/// each field with only those names. Says the fields and names, never a
/// value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpassedEnv {
    pub reads: Vec<EnvRead>,
}

impl UnpassedEnv {
    /// The names to list in `pass-env`, each once, in the order read.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for name in self.reads.iter().flat_map(|r| &r.names) {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        names
    }
}

impl fmt::Display for UnpassedEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "not run: it holds values of monform's environment that [project] pass-env does not list"
        )?;
        for read in &self.reads {
            let names: Vec<String> = read.names.iter().map(|n| format!("`${{env:{n}}}`")).collect();
            writeln!(f, "{} reads {}", read.field, names.join(", "))?;
        }
        let names = self.names();
        let (list, it) = match names.as_slice() {
            [one] => ((*one).to_owned(), "it"),
            [init @ .., last] => (format!("{} and {last}", init.join(", ")), "them"),
            [] => (String::new(), "it"),
        };
        write!(
            f,
            "hint: list {list} in [project] pass-env to let test --local use {it}"
        )
    }
}

/// The rule: whether a check reading `reads` may run under `test --local`
/// in `project`. A name `pass-env` or `public-env` lists may be used;
/// a value the files wrote themselves (a `secret: true` variable's
/// literal value) read nothing and is no concern here.
pub fn unpassed_env(reads: &[EnvRead], project: &Project) -> Option<UnpassedEnv> {
    let may_use =
        |name: &str| project.pass_env.iter().any(|(passed, _)| passed == name) || project.env_policy.is_public(name);
    let reads: Vec<EnvRead> = reads
        .iter()
        .filter_map(|read| {
            let names: Vec<String> = read.names.iter().filter(|n| !may_use(n)).cloned().collect();
            (!names.is_empty()).then(|| EnvRead {
                field: read.field.clone(),
                names,
            })
        })
        .collect();
    (!reads.is_empty()).then_some(UnpassedEnv { reads })
}

/// What every check run here carries: the project's variables (all of
/// them go into every run's variables, as the service does).
pub(super) fn project_variable_reads(desired: &Desired) -> Vec<EnvRead> {
    desired
        .resources
        .values()
        .filter(|r| r.address.kind == Kind::Variable)
        .flat_map(|r| elsewhere(r, "a project variable", |_| true))
        .collect()
}

/// The reads of `check`'s effective definition, `group` (with its JSON)
/// applied; `wire`: the check in the API's form, its group applied and
/// its snippets not yet inlined (which snippets it runs).
pub(super) fn check_reads(
    desired: &Desired,
    check: &DesiredResource,
    check_json: &Value,
    group: Option<(&DesiredResource, &Value)>,
    wire: &Value,
) -> Vec<EnvRead> {
    let imposed =
        |field: &str| group.is_some_and(|(_, json)| GROUP_OVERRIDES.contains(&field) && group_overrides(json, field));
    let mut reads: Vec<EnvRead> = check
        .env_reads
        .iter()
        .filter(|(path, _)| !top_key(path).is_some_and(imposed))
        .map(|(path, names)| EnvRead {
            field: path.to_string(),
            names: names.clone(),
        })
        .collect();
    if let Some((group, group_json)) = group {
        let api = CheckType::of_check(check_json) == Ok(CheckType::Api);
        let unset = |field: &str| check_json.get(field).is_none_or(Value::is_null);
        reads.extend(elsewhere(group, "its group", |path| {
            let Some(field) = top_key(path) else { return false };
            match field {
                "tags" | "environmentVariables" => true,
                "apiCheckDefaults" => {
                    api && matches!(
                        path.segments().get(1),
                        Some(Segment::Key(k)) if ["headers", "queryParameters", "assertions"].contains(&k.as_str())
                    )
                }
                "setupSnippet" | "tearDownSnippet" | "localSetupScript" | "localTearDownScript" => api && unset(field),
                field => GROUP_OVERRIDES.contains(&field) && group_overrides(group_json, field),
            }
        }));
    }
    for (id_field, why) in [
        ("setupSnippetId", "its setup snippet"),
        ("tearDownSnippetId", "its teardown snippet"),
    ] {
        let snippet = wire[id_field]
            .as_str()
            .and_then(|id| desired.resources.get(&monform_model::Address::new(Kind::Snippet, id)));
        if let Some(snippet) = snippet {
            reads.extend(elsewhere(snippet, why, |_| true));
        }
    }
    reads
}

/// The reads of another object the check carries, those `keep` keeps,
/// named with its address and `why`.
fn elsewhere(resource: &DesiredResource, why: &str, keep: impl Fn(&FieldPath) -> bool) -> Vec<EnvRead> {
    resource
        .env_reads
        .iter()
        .filter(|(path, _)| keep(path))
        .map(|(path, names)| EnvRead {
            field: if path.is_root() {
                format!("{} ({why})", resource.address)
            } else {
                format!("{}.{path} ({why})", resource.address)
            },
            names: names.clone(),
        })
        .collect()
}

fn top_key(path: &FieldPath) -> Option<&str> {
    match path.segments().first()? {
        Segment::Key(key) => Some(key),
        Segment::Index(_) => None,
    }
}

#[cfg(test)]
mod tests;
