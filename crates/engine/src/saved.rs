//! Saved plans (`plan --out`): what was planned, against which state serial
//! and remote versions, with salted fingerprints of the secrets it would
//! write. Never a secret. `apply PLANFILE` re-plans and refuses to go on
//! when anything differs.

use std::collections::{BTreeMap, HashMap, HashSet};

use monform_config::Desired;
use monform_model::sensitive::url_credential_paths;
use monform_model::{Address, FieldPath};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::forms::{lookup, managed, sensitive_paths};
use crate::plan::{Action, Plan};
use crate::state::{State, fingerprint};

pub const SAVED_PLAN_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedChange {
    pub address: String,
    pub action: Action,
    pub remote_id: Option<String>,
    pub remote_version: Option<String>,
    /// What each changed field becomes (secrets as `null`).
    pub fields: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedPlan {
    pub format_version: u32,
    pub project: String,
    /// The environment it was planned for: `apply PLANFILE` applies it
    /// there without being told again ([`SavedPlan::environment_to_apply`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    pub state_serial: u64,
    pub changes: Vec<SavedChange>,
    /// Address to field path to salted fingerprint of the secret to write.
    pub secrets: BTreeMap<String, BTreeMap<String, String>>,
    /// The salt of those fingerprints. A project's first plan has no state
    /// (and so no salt) yet, and its apply starts a state with a new one:
    /// the plan keeps its own. (The state file holds its salt beside its
    /// fingerprints the same way.) Plans saved without one used the state's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt: Option<String>,
    /// How much of the account the plan read: one made with a partial
    /// refresh is checked again by reading what it changes (`changed`).
    #[serde(default, skip_serializing_if = "is_all")]
    pub refresh: crate::refresh::Refresh,
}

fn is_all(refresh: &crate::refresh::Refresh) -> bool {
    *refresh == crate::refresh::Refresh::All
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StalePlan {
    #[error("the plan is for project `{0}`, not `{1}`")]
    Project(String, String),
    #[error("the plan file format {0} is not supported (expected {SAVED_PLAN_VERSION})")]
    Version(u32),
    #[error("the state changed since the plan was made (serial {planned}, now {now})")]
    State { planned: u64, now: u64 },
    #[error("{0} changed in the account since the plan was made")]
    Remote(String),
    #[error("{0}: a secret value (from the environment, or a credential in a URL) differs from the one planned")]
    Secret(String),
    #[error("the files or the account changed since the plan was made: {0} would now be planned differently")]
    Changed(String),
}

/// A saved plan applied in another environment than it was planned for.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("the plan was made for environment `{planned}`, not `{chosen}`")]
pub struct OtherEnvironment {
    pub planned: String,
    pub chosen: String,
}

fn saved_changes(plan: &Plan, desired: &Desired) -> Vec<SavedChange> {
    plan.changes
        .iter()
        .filter(|c| c.action != Action::Noop)
        .map(|c| SavedChange {
            address: c.address.to_string(),
            action: c.action,
            remote_id: c.remote_id.clone(),
            remote_version: c.remote_version.clone(),
            fields: c
                .fields_in(desired)
                .iter()
                .map(|f| (f.path.clone(), f.after.clone().unwrap_or(Value::Null)))
                .collect(),
        })
        .collect()
}

fn secrets(plan: &Plan, desired: &Desired, salt: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    plan.changes
        .iter()
        .filter(|c| {
            matches!(
                c.action,
                Action::Create | Action::Update | Action::Replace | Action::Import
            )
        })
        .filter_map(|c| {
            let resource = desired.resources.get(&c.address)?;
            let json = managed(c.address.kind, resource.resource.to_json());
            // A URL's credential is masked in `fields` too: its print tells
            // a token changed between the plan and the apply.
            let urls = url_credential_paths(&json, &FieldPath::root());
            let fingerprints: BTreeMap<String, String> = sensitive_paths(c.address.kind, &json, &resource.sensitive)
                .into_iter()
                .chain(urls)
                .filter_map(|path| Some((path.to_string(), fingerprint(salt, lookup(&json, &path)?))))
                .collect();
            (!fingerprints.is_empty()).then(|| (c.address.to_string(), fingerprints))
        })
        .collect()
}

impl SavedPlan {
    /// `environment`: the one the plan was made for, if the project has any.
    pub fn new(plan: &Plan, desired: &Desired, state: &State, environment: Option<&str>) -> SavedPlan {
        SavedPlan {
            format_version: SAVED_PLAN_VERSION,
            project: plan.project.clone(),
            environment: environment.map(str::to_owned),
            state_serial: state.serial,
            changes: saved_changes(plan, desired),
            secrets: secrets(plan, desired, &state.salt),
            salt: Some(state.salt.clone()),
            refresh: plan.refreshed.mode,
        }
    }

    /// Whether `fresh` (planned now) is still exactly this plan.
    pub fn verify(&self, fresh: &Plan, desired: &Desired, state: &State) -> Result<(), StalePlan> {
        if self.format_version != SAVED_PLAN_VERSION {
            return Err(StalePlan::Version(self.format_version));
        }
        if self.project != fresh.project {
            return Err(StalePlan::Project(self.project.clone(), fresh.project.clone()));
        }
        if self.state_serial != state.serial {
            return Err(StalePlan::State {
                planned: self.state_serial,
                now: state.serial,
            });
        }
        let now = saved_changes(fresh, desired);
        // By address and remote id, the first of each kept (a scan of `now`
        // per planned change was quadratic: 10^10 steps at 100,000 creates).
        let mut by_key: HashMap<(&str, Option<&str>), &SavedChange> = HashMap::with_capacity(now.len());
        for change in &now {
            by_key
                .entry((change.address.as_str(), change.remote_id.as_deref()))
                .or_insert(change);
        }
        for planned in &self.changes {
            let current = by_key
                .get(&(planned.address.as_str(), planned.remote_id.as_deref()))
                .copied();
            match current {
                Some(c) if c.remote_version != planned.remote_version => {
                    return Err(StalePlan::Remote(planned.address.clone()));
                }
                Some(c) if c == planned => {}
                _ => return Err(StalePlan::Changed(planned.address.clone())),
            }
        }
        let planned: HashSet<&str> = self.changes.iter().map(|p| p.address.as_str()).collect();
        if let Some(extra) = now.iter().find(|c| !planned.contains(c.address.as_str())) {
            return Err(StalePlan::Changed(extra.address.clone()));
        }
        let current_secrets = secrets(fresh, desired, self.salt.as_deref().unwrap_or(&state.salt));
        for (address, fingerprints) in &self.secrets {
            if current_secrets.get(address) != Some(fingerprints) {
                return Err(StalePlan::Secret(address.clone()));
            }
        }
        Ok(())
    }

    /// The environment to apply this plan in: its own, which `chosen` (the
    /// one asked for, if any) may only repeat. A plan saved without one
    /// takes `chosen` (its project name then tells a wrong one: `verify`).
    pub fn environment_to_apply<'a>(&'a self, chosen: Option<&'a str>) -> Result<Option<&'a str>, OtherEnvironment> {
        match (self.environment.as_deref(), chosen) {
            (Some(planned), Some(chosen)) if planned != chosen => Err(OtherEnvironment {
                planned: planned.to_owned(),
                chosen: chosen.to_owned(),
            }),
            (Some(planned), _) => Ok(Some(planned)),
            (None, chosen) => Ok(chosen),
        }
    }

    /// The addresses the plan touches.
    pub fn addresses(&self) -> Vec<Address> {
        self.changes.iter().filter_map(|c| c.address.parse().ok()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(environment: Option<&str>) -> SavedPlan {
        SavedPlan::new(&Plan::default(), &Desired::default(), &State::new("shop"), environment)
    }

    #[test]
    fn a_plan_is_applied_in_its_own_environment() {
        let production = saved(Some("production"));
        assert_eq!(production.environment_to_apply(None), Ok(Some("production")));
        assert_eq!(
            production.environment_to_apply(Some("production")),
            Ok(Some("production"))
        );
        assert_eq!(
            production.environment_to_apply(Some("staging")),
            Err(OtherEnvironment {
                planned: "production".into(),
                chosen: "staging".into()
            })
        );
        assert_eq!(saved(None).environment_to_apply(Some("staging")), Ok(Some("staging")));
        assert_eq!(saved(None).environment_to_apply(None), Ok(None));
    }

    #[test]
    fn the_environment_is_kept_in_the_file_and_plans_without_one_still_read() {
        let text = serde_json::to_string(&saved(Some("production"))).unwrap();
        assert!(text.contains(r#""environment":"production""#), "{text}");
        let old = serde_json::to_string(&saved(None)).unwrap();
        assert!(!old.contains("environment"), "{old}");
        let read: SavedPlan = serde_json::from_str(&old).unwrap();
        assert_eq!(read.environment, None);
    }
}
