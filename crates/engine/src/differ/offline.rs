//! The changes of objects a partial refresh did not read (`refresh.rs`):
//! unchanged in the files, a no-op; edited (only with `--refresh=none`),
//! the fields whose fingerprints differ from the state's, their value in
//! the account unknown; gone from the files, a delete by the state's id.

use std::collections::BTreeSet;

use monform_config::{Desired, DesiredResource};
use monform_model::facts::{facts, matches, variant_tag};
use monform_model::sensitive::redact;
use monform_model::{Address, FieldPath};
use serde_json::Value;

use crate::forms::{field_fingerprints, leaves, lookup, same_print, secret_changed, sensitive_paths};
use crate::plan::{Action, Change, FieldChange, Reason};
use crate::refresh::Unrefreshed;
use crate::state::State;

/// A resource the files did not change since it was applied, not read:
/// a no-op (no field is looked at, so none is counted as unchanged).
pub(super) fn trusted(address: &Address, unrefreshed: &Unrefreshed) -> Change {
    Change {
        address: address.clone(),
        action: Action::Noop,
        remote_id: Some(unrefreshed.remote_id.clone()),
        from: None,
        reason: Reason::UpToDate,
        fields: Vec::new(),
        unchanged: 0,
        remote_version: unrefreshed.version.clone(),
        deferred: None,
    }
}

/// A resource in the files and the state that the plan did not read.
pub(super) fn unread(
    address: &Address,
    desired: &Value,
    resource: &DesiredResource,
    unrefreshed: &Unrefreshed,
    state: &State,
) -> Change {
    let mut change = Change {
        unchanged: desired.as_object().map_or(0, |o| o.len()),
        ..trusted(address, unrefreshed)
    };
    if !unrefreshed.edited {
        return change;
    }
    let kind = address.kind;
    let recorded = state.resources.get(&address.to_string());
    let applied = recorded.map(|r| &r.fields).filter(|f| !f.is_empty());
    let sensitive = sensitive_paths(kind, desired, &resource.sensitive);
    let now = field_fingerprints(kind, desired, &resource.sensitive, state);
    let field = |path: String, after: Option<Value>, cleared: bool| FieldChange {
        path,
        before: None,
        after,
        sensitive: false,
        drift: false,
        known_after_apply: false,
        cleared,
        conflict: None,
    };
    for (path, value) in leaves(desired, &FieldPath::root()) {
        let key = path.to_string();
        // Without field fingerprints (an older state) every field is shown.
        let same = applied.is_some_and(|a| match (a.get(&key), now.get(&key)) {
            (Some(recorded), Some(now)) => same_print(state, now, recorded),
            _ => false,
        });
        if !sensitive.contains(&path) && !same {
            change
                .fields
                .push(field(key, Some(redact(value, &path, &sensitive)), false));
        }
    }
    let mut cleared = BTreeSet::new();
    for (path, _) in applied.map(|a| a.iter().collect::<Vec<_>>()).unwrap_or_default() {
        if now.get(path).is_some() {
            continue;
        }
        let root = path.split(['.', '[']).next().unwrap_or(path);
        if desired.get(root).is_none() {
            if cleared.insert(root.to_owned()) {
                change.fields.push(field(root.to_owned(), Some(Value::Null), true));
            }
        } else {
            change.fields.push(field(path.to_owned(), Some(Value::Null), false));
        }
    }
    for path in &sensitive {
        let Some(value) = lookup(desired, path) else { continue };
        if secret_changed(path, value, recorded, state) {
            change.fields.push(FieldChange {
                sensitive: true,
                ..field(path.to_string(), None, false)
            });
        }
    }
    if change.fields.is_empty() {
        return change;
    }
    let facts = facts(kind, desired);
    let replace = change.fields.iter().any(|f| {
        let path = FieldPath::parse(&f.path);
        Some(f.path.as_str()) == variant_tag(kind) || facts.replace.iter().any(|p| matches(p, &path))
    });
    change.action = if replace { Action::Replace } else { Action::Update };
    change.reason = Reason::ConfigChanged;
    let roots: BTreeSet<&str> = change
        .fields
        .iter()
        .map(|f| f.path.split(['.', '[']).next().unwrap_or(""))
        .collect();
    change.unchanged = change.unchanged.saturating_sub(roots.len());
    change
}

/// A resource gone from the files whose object the plan did not read: a
/// delete (or a forget) of the id the state records.
pub(super) fn removal(address: &Address, unrefreshed: &Unrefreshed, desired: &Desired) -> Change {
    let forget = desired.declarations.removed(address).is_some_and(|r| !r.destroy);
    Change {
        address: address.clone(),
        action: if forget { Action::Forget } else { Action::Delete },
        remote_id: Some(unrefreshed.remote_id.clone()),
        from: None,
        reason: if forget { Reason::Forgotten } else { Reason::Removed },
        fields: Vec::new(),
        unchanged: 0,
        remote_version: unrefreshed.version.clone(),
        deferred: None,
    }
}
