//! Findings about a project that loads: settings that look effective in the
//! files but are not (issue 20). Warnings; they never make a load fail.

use monform_model::group_rules::{GROUP_OVERRIDES, group_overrides};
use monform_model::{Address, FieldPath, Kind, Resource};
use rustc_hash::FxHashMap;

use crate::desired::{Desired, DesiredResource};
use crate::diagnostic::{Diagnostic, Severity};
use crate::project::{Lint, LintLevel};

// The codes of the findings and notes the linter makes, each switched by
// its own `[lint]` key and marked a finding (`Diagnostic::finding`), which
// commands not about the files (status, test, location-keys) leave out.

/// Environments in one account claiming one account-wide object (the
/// `shared` module makes the finding; its code is here with the others so
/// the linter does not depend on the loader).
pub const SHARED_OBJECT: &str = "monform::shared-object";
/// The codes the linter makes (not [`SHARED_OBJECT`], made across environments).
pub const CODES: [&str; 3] = [UNROUTED, IGNORED_FIELD, GLOBAL_ALERT_SETTINGS];
const UNROUTED: &str = "monform::unrouted-check";
const IGNORED_FIELD: &str = "monform::ignored-field";
const GLOBAL_ALERT_SETTINGS: &str = "monform::global-alert-settings";

/// Every finding at the level `[lint]` gives it: the warnings and notes,
/// then the errors (which make validate and plan fail).
pub fn lint(desired: &Desired, levels: Lint) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    // Each reads every check: on both cores (a keystroke in the language
    // server re-runs the linter over 100,000 checks).
    let (routing, ignored) = rayon::join(|| routing(desired), || ignored_fields(desired));
    for (level, found) in [
        (
            levels.global_alert_settings,
            Vec::from_iter(global_settings_note(&routing.global)),
        ),
        (levels.ignored_fields, ignored),
        (levels.unrouted_checks, routing.unrouted),
    ] {
        for mut diagnostic in found {
            match level {
                LintLevel::Off => {}
                LintLevel::Warn | LintLevel::Note => {
                    diagnostic.severity = match level {
                        LintLevel::Note => Severity::Note,
                        _ => Severity::Warning,
                    };
                    warnings.push(diagnostic);
                }
                LintLevel::Error => {
                    diagnostic.severity = Severity::Error;
                    errors.push(diagnostic);
                }
            }
        }
    }
    (warnings, errors)
}

/// Every activated, unmuted check (after its group) whose failure alerts
/// reach no channel: none subscribed, itself or through its group, sends
/// failures.
pub fn unrouted_checks(desired: &Desired) -> Vec<Diagnostic> {
    routing(desired).unrouted
}

/// Where failures of the activated, unmuted checks go.
struct Routing<'d> {
    /// A finding per check whose failures reach no channel.
    unrouted: Vec<Diagnostic>,
    /// Checks that reach a channel but alert by the account's global alert
    /// settings (`useGlobalAlertSettings`, after the group's), which monform
    /// cannot read: whether and when their failures alert is not known.
    global: Vec<&'d DesiredResource>,
}

/// The resources of `kind`, in the map's order (kind first, then id).
fn of_kind(desired: &Desired, kind: Kind) -> impl Iterator<Item = &DesiredResource> {
    desired
        .resources
        .range(Address::new(kind, "")..)
        .take_while(move |(address, _)| address.kind == kind)
        .map(|(_, resource)| resource)
}

/// The groups by id: looked up once per check, without making an address.
fn groups_by_id(desired: &Desired) -> FxHashMap<&str, &DesiredResource> {
    of_kind(desired, Kind::Group)
        .map(|r| (r.address.id.as_str(), r))
        .collect()
}

fn routing(desired: &Desired) -> Routing<'_> {
    let mut found = Vec::new();
    let mut global = Vec::new();
    // A channel's wire form once, not once per check that names it.
    let mut sending: FxHashMap<&str, bool> = FxHashMap::default();
    let groups = groups_by_id(desired);
    for resource in of_kind(desired, Kind::Check) {
        let Resource::Check(check) = &*resource.resource else {
            continue;
        };
        let common = check.common();
        let group = common
            .group
            .as_ref()
            .and_then(|id| groups.get(id.as_str()))
            .and_then(|r| match &*r.resource {
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
        let routed = channels.into_iter().any(|id| {
            *sending
                .entry(id.as_str())
                .or_insert_with(|| sends_failures(desired, id))
        });
        if !routed {
            found.push(unrouted(resource));
        } else if group
            .and_then(|g| g.use_global_alert_settings)
            .unwrap_or(common.use_global_alert_settings)
        {
            global.push(resource);
        }
    }
    Routing {
        unrouted: found,
        global,
    }
}

/// One note for every routed check on the account's alert settings (the
/// default, so most checks: one line, not one each), pointing at the first.
fn global_settings_note(checks: &[&DesiredResource]) -> Option<Diagnostic> {
    let first = checks.first()?;
    let named: Vec<String> = checks.iter().take(3).map(|r| format!("`{}`", r.address)).collect();
    let more = match checks.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    let message = format!(
        "{} ({}{more}) {} by the account's global alert settings, which monform cannot read: that {} failures alert is assumed, not checked",
        if checks.len() == 1 {
            "1 check".to_owned()
        } else {
            format!("{} checks", checks.len())
        },
        named.join(", "),
        if checks.len() == 1 { "alerts" } else { "alert" },
        if checks.len() == 1 { "its" } else { "their" }
    );
    Some(
        Diagnostic::new(GLOBAL_ALERT_SETTINGS, message)
            .at(first.span, "useGlobalAlertSettings is true here (the default)")
            .help("to make a check's own `alertSettings` apply, set `useGlobalAlertSettings: false` on it or its group")
            .note()
            .finding(),
    )
}

fn sends_failures(desired: &Desired, channel: &str) -> bool {
    desired
        .resources
        .get(&Address::new(Kind::AlertChannel, channel))
        .is_some_and(|c| c.resource.to_json()["sendFailure"] != false)
}

fn unrouted(resource: &DesiredResource) -> Diagnostic {
    let address = &resource.address;
    Diagnostic::new(UNROUTED, format!("{address}: a failure alerts nobody"))
        .at(resource.span, "no channel sends this check's failures")
        .help("add `alertChannels: [...]` to the check or its group, with a channel whose sendFailure is true")
        .finding()
}

/// A finding at every field a check writes that its group overrides.
pub fn ignored_fields(desired: &Desired) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    // A group's wire form once, not once per check in it.
    let mut groups: FxHashMap<&str, serde_json::Value> = FxHashMap::default();
    let by_id = groups_by_id(desired);
    for resource in of_kind(desired, Kind::Check) {
        let Resource::Check(check) = &*resource.resource else {
            continue;
        };
        if resource.own_fields.is_empty() {
            continue;
        }
        let Some(group_id) = &check.common().group else {
            continue;
        };
        let Some(group) = by_id.get(group_id.as_str()) else {
            continue;
        };
        let group_json = groups
            .entry(group_id.as_str())
            .or_insert_with(|| group.resource.to_json());
        // A group named by a sensitive value (`group: ${env:...}`) is not named here.
        let group_name = || {
            if resource.sensitive.contains(&FieldPath::root().key("group")) {
                "its group (named by a sensitive value)".to_owned()
            } else {
                format!("group `{group_id}`")
            }
        };
        for (field, span) in &resource.own_fields {
            if group_overrides(group_json, field) {
                let group_name = group_name();
                found.push(
                    Diagnostic::new(
                        IGNORED_FIELD,
                        format!("`{field}` is ignored: {group_name} sets {field}"),
                    )
                    .at(*span, "overridden by the group")
                    .help(format!("remove it here, or unset `{field}` on {group_name}"))
                    .finding(),
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
