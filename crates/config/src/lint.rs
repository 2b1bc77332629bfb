//! Findings about a project that loads: settings that look effective in the
//! files but are not (issue 20). Warnings; they never make a load fail.

use monform_model::group_rules::{GROUP_OVERRIDES, group_overrides};
use monform_model::{Address, Kind, Resource};

use crate::desired::{Desired, DesiredResource};
use crate::diagnostic::Diagnostic;
use crate::project::{Lint, LintLevel};

/// Every finding at the level `[lint]` gives it: the warnings, then the
/// errors (which make validate and plan fail).
pub fn lint(desired: &Desired, levels: Lint) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for (level, found) in [
        (levels.ignored_fields, ignored_fields(desired)),
        (levels.unrouted_checks, unrouted_checks(desired)),
    ] {
        for mut diagnostic in found {
            match level {
                LintLevel::Off => {}
                LintLevel::Warn => {
                    diagnostic.warning = true;
                    warnings.push(diagnostic);
                }
                LintLevel::Error => errors.push(diagnostic),
            }
        }
    }
    (warnings, errors)
}

/// Every activated, unmuted check (after its group) whose failure alerts
/// reach no channel: none subscribed, itself or through its group, sends
/// failures. The account's global alert settings (`useGlobalAlertSettings`)
/// choose when to alert, never where, so they do not route a check.
pub fn unrouted_checks(desired: &Desired) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for resource in desired.resources.values() {
        let Resource::Check(check) = &resource.resource else {
            continue;
        };
        let common = check.common();
        let group = common
            .group
            .as_ref()
            .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id.as_str())))
            .and_then(|r| match &r.resource {
                Resource::Group(group) => Some(group),
                _ => None,
            });
        let activated = common.activated && group.is_none_or(|g| g.activated);
        let muted = common.muted || group.is_some_and(|g| g.muted);
        if !activated || muted {
            continue;
        }
        let channels = common
            .alert_channels
            .iter()
            .chain(group.and_then(|g| g.alert_channels.as_ref()))
            .flatten();
        let routed = channels.into_iter().any(|id| sends_failures(desired, id));
        if routed {
            continue;
        }
        found.push(unrouted(resource));
    }
    found
}

fn sends_failures(desired: &Desired, channel: &str) -> bool {
    desired
        .resources
        .get(&Address::new(Kind::AlertChannel, channel))
        .is_some_and(|c| c.resource.to_json()["sendFailure"] != false)
}

fn unrouted(resource: &DesiredResource) -> Diagnostic {
    let address = &resource.address;
    Diagnostic::new("monform::unrouted-check", format!("{address}: a failure alerts nobody"))
        .at(resource.span, "no channel sends this check's failures")
        .help("add `alertChannels: [...]` to the check or its group, with a channel whose sendFailure is true")
}

/// A finding at every field a check writes that its group overrides.
pub fn ignored_fields(desired: &Desired) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for resource in desired.resources.values() {
        let Resource::Check(check) = &resource.resource else {
            continue;
        };
        let Some(group_id) = &check.common().group else {
            continue;
        };
        let Some(group) = desired.resources.get(&Address::new(Kind::Group, group_id.as_str())) else {
            continue;
        };
        let group_json = group.resource.to_json();
        for (field, span) in &resource.own_fields {
            if group_overrides(&group_json, field) {
                found.push(
                    Diagnostic::new(
                        "monform::ignored-field",
                        format!("`{field}` is ignored: group `{group_id}` sets {field}"),
                    )
                    .at(*span, "overridden by the group")
                    .help(format!("remove it here, or unset `{field}` on group `{group_id}`")),
                );
            }
        }
    }
    found
}

/// The fields of a check's own entry (before `[defaults]`) a group can override.
pub(crate) fn overridable(node: &crate::tree::Node) -> Vec<(&'static str, crate::source::Span)> {
    GROUP_OVERRIDES
        .iter()
        .filter_map(|field| node.get(field).map(|entry| (*field, entry.key_span)))
        .collect()
}
