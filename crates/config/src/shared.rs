//! Environments in one account that would claim one object (issue 27 item
//! 3). Variables, snippets, alert channels, status pages and their
//! services and private locations are account-wide and carry no ownership
//! tag: two environments writing the same variable key or snippet name
//! write one object, which only one project may own, so the second apply
//! is refused ("belongs to project shop-staging"). `validate` finds it
//! offline, across the environments it loads, and says how to write it.
//!
//! Environments share an account unless monform.toml gives them other API
//! URLs (the account is never in the files); `[lint] shared-objects =
//! "off"` says they use different accounts of one service.

use monform_model::Kind;
use rustc_hash::FxHashMap;

use crate::diagnostic::{Diagnostic, Severity};
use crate::load::Loaded;
use crate::project::LintLevel;

/// An object in an account: the API URL as the files give it (`None`: the
/// one the environment supplies, the same for every environment), its
/// kind and its identity there.
type Identity<'a> = (Option<&'a str>, Kind, String);

/// Who claims it first: the environment, its project and the resource.
type Claim<'a> = (&'a str, &'a str, &'a crate::DesiredResource);

/// The finding's code: a `[lint]` key (`shared-objects`) sets its level.
pub use crate::lint::SHARED_OBJECT;

/// The findings over `loads` (each environment's load, by name), at the
/// level of the project's `[lint] shared-objects` (default "error"): the
/// warnings, then the errors.
pub fn shared_objects(loads: &[(&str, &Loaded)]) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let level = loads
        .iter()
        .find_map(|(_, l)| l.project.as_ref())
        .map_or(LintLevel::Error, |p| p.lint.shared_objects);
    if level == LintLevel::Off {
        return (Vec::new(), Vec::new());
    }
    // Per account (API URL as the files give it) and object identity: the
    // first environment that claims it.
    let mut claimed: FxHashMap<Identity<'_>, Claim<'_>> = FxHashMap::default();
    let mut found = Vec::new();
    for (environment, loaded) in loads {
        let Some(project) = &loaded.project else {
            continue;
        };
        for resource in loaded.desired.resources.values() {
            let kind = resource.address.kind;
            let identity = match kind.identity() {
                monform_model::Identity::LogicalId => resource.address.id.clone(),
                monform_model::Identity::NaturalKey(_) => {
                    match monform_model::facts::natural_key(kind, &resource.resource.to_json()) {
                        Some(key) => key,
                        None => continue,
                    }
                }
                monform_model::Identity::OwnershipTag => continue,
            };
            let key = (project.api_url.as_deref(), kind, identity);
            match claimed.get(&key) {
                None => {
                    claimed.insert(key, (environment, project.name.as_str(), resource));
                }
                // One project in both: the same owner, no clash.
                Some((_, owner, _)) if *owner == project.name => {}
                Some((first, owner, first_resource)) => {
                    found.push(finding(
                        first,
                        owner,
                        first_resource,
                        environment,
                        &project.name,
                        resource,
                    ));
                }
            }
        }
    }
    let (mut warnings, mut errors) = (Vec::new(), Vec::new());
    for mut diagnostic in found {
        match level {
            LintLevel::Error => {
                diagnostic.severity = Severity::Error;
                errors.push(diagnostic);
            }
            LintLevel::Note => warnings.push(diagnostic.note()),
            _ => warnings.push(diagnostic.warning()),
        }
    }
    (warnings, errors)
}

fn finding(
    first: &str,
    first_project: &str,
    first_resource: &crate::DesiredResource,
    second: &str,
    second_project: &str,
    resource: &crate::DesiredResource,
) -> Diagnostic {
    let kind = resource.address.kind;
    let (what, field) = match kind {
        Kind::Variable => ("variable key", "key"),
        Kind::Snippet => ("snippet name", "name"),
        Kind::AlertChannel => ("alert channel address", "config"),
        Kind::StatusPage => ("status page url", "url"),
        Kind::StatusPageService => ("status page service name", "name"),
        _ => ("private location slug", "slugName"),
    };
    let per_environment = match kind {
        // A variable's logical id is its key: no substitution there.
        Kind::Variable => format!(
            "keep it in one environment with `environments: [{first}]` (the other's checks still read it by its key), or define one variable per environment (`{}_{}` with `environments: [{second}]`)",
            resource.address.id,
            second.to_uppercase().replace('-', "_")
        ),
        _ => format!(
            "give it a {field} per environment through `${{var:NAME}}` (a value in each [environments.NAME] vars), or keep it in one environment with `environments: [{first}]`"
        ),
    };
    let diagnostic = Diagnostic::new(
        SHARED_OBJECT,
        format!(
            "{}: environments {first} and {second} claim one {what} in one account (projects {first_project} and {second_project}): the second apply would be refused",
            resource.address
        ),
    )
    .at(resource.span, "claimed by both environments")
    .finding()
    .help(format!(
        "{per_environment}; if they use different accounts, set [lint] shared-objects = \"off\""
    ));
    if first_resource.span == resource.span {
        return diagnostic;
    }
    diagnostic.related(
        Diagnostic::new(SHARED_OBJECT, format!("{} in {first}", first_resource.address))
            .at(first_resource.span, "the same object"),
    )
}
