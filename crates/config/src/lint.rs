//! Findings about a project that loads: settings that look effective in the
//! files but are not (issue 20). Warnings; they never make a load fail.

use monform_model::group_rules::{GROUP_OVERRIDES, group_overrides};
use monform_model::{Address, FieldPath, Kind, Resource};
use rustc_hash::FxHashMap;

mod linted;
pub use linted::Linted;

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
    // Each reads every check: on both cores.
    let (routing, ignored) = rayon::join(|| routing(desired), || ignored_fields(desired));
    leveled(
        levels,
        global_settings_note(routing.global.len(), &routing.global),
        ignored,
        routing.unrouted,
    )
}

/// The findings at their levels, as (warnings and notes, errors), in the
/// linter's order: the note, the ignored fields, the unrouted checks.
fn leveled(
    levels: Lint,
    note: Option<Diagnostic>,
    ignored: Vec<Diagnostic>,
    unrouted: Vec<Diagnostic>,
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for (level, found) in [
        (levels.global_alert_settings, Vec::from_iter(note)),
        (levels.ignored_fields, ignored),
        (levels.unrouted_checks, unrouted),
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

fn routing(desired: &Desired) -> Routing<'_> {
    let mut reader = Reader::new(desired);
    let mut found = Vec::new();
    let mut global = Vec::new();
    for resource in of_kind(desired, Kind::Check) {
        match reader.route(resource) {
            Route::Unrouted => found.push(unrouted(resource)),
            Route::Global => global.push(resource),
            Route::Silent | Route::Own => {}
        }
    }
    Routing {
        unrouted: found,
        global,
    }
}

/// Where a check's failures go, as the linter tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Deactivated or muted (itself or by its group): nothing to say.
    Silent,
    /// No channel it is subscribed to sends failures.
    Unrouted,
    /// To a channel, by the account's global alert settings.
    Global,
    /// To a channel, by its own (or its group's) alert settings.
    Own,
}

/// What the rules read of a check's group and channels: the groups by id
/// (looked up once per check, without making an address), and each
/// channel's and group's wire form once, not once per check naming it.
struct Reader<'d> {
    desired: &'d Desired,
    groups: FxHashMap<&'d str, &'d DesiredResource>,
    sending: FxHashMap<&'d str, bool>,
    group_json: FxHashMap<&'d str, serde_json::Value>,
}

impl<'d> Reader<'d> {
    fn new(desired: &'d Desired) -> Reader<'d> {
        Reader {
            desired,
            groups: of_kind(desired, Kind::Group)
                .map(|r| (r.address.id.as_str(), r))
                .collect(),
            sending: FxHashMap::default(),
            group_json: FxHashMap::default(),
        }
    }

    fn route(&mut self, resource: &'d DesiredResource) -> Route {
        let Resource::Check(check) = &*resource.resource else {
            return Route::Silent;
        };
        let common = check.common();
        let group = common
            .group
            .as_ref()
            .and_then(|id| self.groups.get(id.as_str()))
            .and_then(|r| match &*r.resource {
                Resource::Group(group) => Some(group),
                _ => None,
            });
        let activated = common.activated && group.is_none_or(|g| g.activated);
        let muted = common.muted || group.is_some_and(|g| g.muted);
        if !activated || muted {
            return Route::Silent;
        }
        let channels = common
            .alert_channels
            .iter()
            .chain(group.and_then(|g| g.alert_channels.as_ref()))
            .flatten();
        let desired = self.desired;
        let routed = channels.into_iter().any(|id| {
            *self
                .sending
                .entry(id.as_str())
                .or_insert_with(|| sends_failures(desired, id))
        });
        if !routed {
            Route::Unrouted
        } else if group
            .and_then(|g| g.use_global_alert_settings)
            .unwrap_or(common.use_global_alert_settings)
        {
            Route::Global
        } else {
            Route::Own
        }
    }

    /// A finding at every field the check writes that its group overrides.
    fn ignored(&mut self, resource: &'d DesiredResource, found: &mut Vec<Diagnostic>) {
        let Resource::Check(check) = &*resource.resource else {
            return;
        };
        if resource.own_fields.is_empty() {
            return;
        }
        let Some(group_id) = &check.common().group else {
            return;
        };
        let Some(group) = self.groups.get(group_id.as_str()) else {
            return;
        };
        let group_json = self
            .group_json
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
}

/// One note for every routed check on the account's alert settings (the
/// default, so most checks: one line, not one each), pointing at the
/// first: `count` of them, `first` the first three or more, in order.
fn global_settings_note(count: usize, first: &[&DesiredResource]) -> Option<Diagnostic> {
    let head = first.first()?;
    let named: Vec<String> = first.iter().take(3).map(|r| format!("`{}`", r.address)).collect();
    let more = match count {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    let message = format!(
        "{} ({}{more}) {} by the account's global alert settings, which monform cannot read: that {} failures alert is assumed, not checked",
        if count == 1 {
            "1 check".to_owned()
        } else {
            format!("{count} checks")
        },
        named.join(", "),
        if count == 1 { "alerts" } else { "alert" },
        if count == 1 { "its" } else { "their" }
    );
    Some(
        Diagnostic::new(GLOBAL_ALERT_SETTINGS, message)
            .at(head.span, "useGlobalAlertSettings is true here (the default)")
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
    let mut reader = Reader::new(desired);
    let mut found = Vec::new();
    for resource in of_kind(desired, Kind::Check) {
        reader.ignored(resource, &mut found);
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
