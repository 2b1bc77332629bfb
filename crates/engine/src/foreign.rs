//! The account's objects a change's list of references names that are no
//! object of the project (issue 27 item 8): a check subscribed by hand to a
//! channel monform does not manage shows `"5"` in its `alertChannels`, and
//! a reviewer needs to know which channel that is and whose, not only that
//! monform cannot name it.

use std::collections::{BTreeSet, HashSet};

use monform_api::Remote;
use monform_config::Desired;
use monform_model::facts::reference_target;
use monform_model::{Address, FieldPath, Kind};
use serde_json::Value;

use crate::actual::Actual;
use crate::identity::{remote_owner, uses_tags};
use crate::ownership::Owner;
use crate::plan::{Change, Foreign, ForeignObjects, Whose};

/// Every item of the changes' lists of references that names no address of
/// the plan but an object in the account: only those items, so a plan of
/// 10,000 checks keeps nothing for the account's other objects.
pub fn foreign_objects(changes: &[Change], desired: &Desired, actual: &Actual) -> ForeignObjects {
    let mut candidates: BTreeSet<(Kind, String)> = BTreeSet::new();
    for change in changes {
        for field in change.fields_in(desired).iter() {
            let Some(target) = reference_target(change.address.kind, &field.path) else {
                continue;
            };
            let items = [&field.before, &field.after]
                .into_iter()
                .filter_map(|v| v.as_ref()?.as_array())
                .flatten();
            for item in items {
                match item {
                    Value::String(s) => candidates.insert((target, s.clone())),
                    Value::Number(n) => candidates.insert((target, n.to_string())),
                    _ => continue,
                };
            }
        }
    }
    if candidates.is_empty() {
        return ForeignObjects::new();
    }
    let addresses: HashSet<&Address> = changes.iter().map(|c| &c.address).collect();
    candidates.retain(|(kind, id)| !addresses.contains(&Address::new(*kind, id.as_str())));
    let mut found = ForeignObjects::new();
    for (kind, others) in &actual.others {
        for remote in others {
            let key = (*kind, remote.id.clone());
            if candidates.contains(&key) {
                found.insert(key, describe(remote, actual));
            }
        }
    }
    found
}

fn describe(remote: &Remote, actual: &Actual) -> Foreign {
    let owner = if uses_tags(remote.kind) {
        remote_owner(remote).map_or(Whose::Nobody, |(project, _)| Whose::Project(project))
    } else {
        match actual.owners.owner(remote.kind, &remote.id) {
            Owner::Recorded(p) => Whose::Project(p),
            // In no project's record: being used by this project's check
            // (which is how it appears here) makes it no project's own.
            Owner::UsedBy(_) | Owner::Nobody => Whose::Nobody,
            Owner::Unknown(_) => Whose::Unknown,
        }
    };
    Foreign {
        label: label(remote),
        owner,
    }
}

/// What a person names the object by. For an alert channel its type and
/// address or channel name, never a URL: webhook and Slack URLs carry
/// tokens, and a plan is pasted into pull requests.
fn label(remote: &Remote) -> Option<String> {
    let body = remote.body();
    let text = |path: &str| {
        FieldPath::parse(path)
            .get(&body)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    match remote.kind {
        Kind::AlertChannel => {
            let kind = text("type")?;
            match ["config.address", "config.channel", "config.name"]
                .iter()
                .find_map(|p| text(p))
            {
                Some(detail) => Some(format!("{kind} {detail}")),
                None => Some(kind),
            }
        }
        _ => text("name"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn channel(body: Value) -> Remote {
        Remote::new(Kind::AlertChannel, &body)
    }

    #[test]
    fn a_channel_is_named_by_its_address_never_by_a_url() {
        let email = channel(json!({"id": 5, "type": "EMAIL", "config": {"address": "someone@example.com"}}));
        assert_eq!(label(&email).as_deref(), Some("EMAIL someone@example.com"));
        let hook = channel(json!({"id": 6, "type": "WEBHOOK", "config": {"url": "https://hooks.example.com/T0K3N"}}));
        assert_eq!(label(&hook).as_deref(), Some("WEBHOOK"));
    }
}
