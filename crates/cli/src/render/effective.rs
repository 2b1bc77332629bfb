//! `plan --effective`: each changed check as it will run, after
//! `[defaults]` (already in the files' form the loader gives) and what its
//! group imposes (`monform_model::group_rules`).

use monform_config::Desired;
use monform_engine::{Action, Plan};
use monform_model::sensitive::mask;
use monform_model::{Address, Kind};
use serde_json::Value;

/// A changed check: its own values and the values it runs with.
pub struct Effective {
    pub address: Address,
    pub own: Value,
    pub effective: Value,
}

/// The checks the plan creates, updates or replaces.
pub fn of_changes(plan: &Plan, desired: &Desired) -> Vec<Effective> {
    plan.changes
        .iter()
        .filter(|c| c.address.kind == Kind::Check)
        .filter(|c| !matches!(c.action, Action::Noop | Action::Delete | Action::Forget))
        .filter_map(|c| {
            let resource = desired.resources.get(&c.address)?;
            // Secrets masked as the plan masks them: the check's own, and
            // what its group adds (a secret variable, a basic-auth password).
            let masked = |value: &Value| mask(Kind::Check, value, &resource.sensitive);
            let own = masked(&resource.resource.to_json());
            let effective = masked(&monform_engine::masked_effective_check(desired, &c.address)?);
            Some(Effective {
                address: c.address.clone(),
                own,
                effective,
            })
        })
        .collect()
}

/// For a terminal: per check, the fields its group changes (the rest run
/// as written).
pub fn human(checks: &[Effective]) -> String {
    if checks.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nAs they will run (after [defaults] and their group):\n");
    for check in checks {
        let group = check.own["group"]
            .as_str()
            .map(|g| format!(" (group {g})"))
            .unwrap_or_default();
        let changed: Vec<String> = check
            .effective
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(field, value)| check.own.get(field.as_str()) != Some(*value))
            .map(|(field, value)| format!("    {field} = {value}"))
            .collect();
        if changed.is_empty() {
            out.push_str(&format!("  {}: as written{group}\n", check.address));
        } else {
            out.push_str(&format!("  {}{group}:\n{}\n", check.address, changed.join("\n")));
        }
    }
    out
}

/// The JSON plan's changes gain `effective`: the whole check as it runs.
pub fn into_json(json: &mut super::plan::PlanJson, checks: &[Effective]) {
    for change in &mut json.changes {
        if let Some(check) = checks.iter().find(|c| c.address.to_string() == change.address) {
            change.effective = Some(check.effective.clone());
        }
    }
}
