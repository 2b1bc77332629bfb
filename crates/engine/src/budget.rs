//! The run budget of a plan (issue 20): how many times the project's checks
//! run in 30 days as the service holds them and as the files would make them.

use std::collections::BTreeMap;

use monform_config::Desired;
use monform_model::effective::effective;
use monform_model::runs::runs_per_month;
use monform_model::sensitive::mask;
use monform_model::{Address, Kind};
use serde::Serialize;
use serde_json::Value;

use crate::actual::Actual;

/// Runs a month before and after a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Runs {
    pub before: u64,
    pub after: u64,
}

/// The project's runs a month, in total, per check type and per check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunBudget {
    pub before: u64,
    pub after: u64,
    pub by_type: BTreeMap<String, Runs>,
    #[serde(skip)]
    pub by_check: BTreeMap<Address, Runs>,
}

impl RunBudget {
    /// The checks that run most after the plan, most first, at most `n`.
    pub fn top(&self, n: usize) -> Vec<(&Address, u64)> {
        let mut checks: Vec<(&Address, u64)> = self.by_check.iter().map(|(a, r)| (a, r.after)).collect();
        checks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        checks.truncate(n);
        checks
    }

    fn add(&mut self, address: &Address, check_type: &Value, runs: u64, after: bool) {
        let kind = check_type.as_str().unwrap_or("UNKNOWN").to_owned();
        for entry in [
            self.by_type.entry(kind).or_default(),
            self.by_check.entry(address.clone()).or_default(),
        ] {
            if after {
                entry.after += runs;
            } else {
                entry.before += runs;
            }
        }
        if after {
            self.after += runs;
        } else {
            self.before += runs;
        }
    }
}

/// Before: the project's checks as the service holds them, with their
/// groups' settings. After: the files' checks, after `[defaults]` and their
/// groups. Other projects' checks count in neither.
pub fn run_budget(desired: &Desired, actual: &Actual) -> RunBudget {
    let mut budget = RunBudget::default();
    let groups = RemoteGroups::new(actual);
    for (address, remote) in actual.owned.iter().filter(|(a, _)| a.kind == Kind::Check) {
        let body = remote.body();
        budget.add(address, &body["checkType"], groups.runs_per_month(&body), false);
    }
    for address in desired.resources.keys().filter(|a| a.kind == Kind::Check) {
        if let Some(check) = effective_check(desired, address) {
            let runs = runs_per_month(&check);
            budget.add(address, &check["checkType"], runs, true);
            // Not read (`--refresh`): as applied, so as the files say (an
            // offline plan does not know an edited check's runs before: the
            // same, so the budget shows no change it cannot tell).
            if actual.unrefreshed.contains_key(address) {
                budget.add(address, &check["checkType"], runs, false);
            }
        }
    }
    budget
}

/// The project's groups as the service holds them, by id.
pub(crate) struct RemoteGroups {
    by_id: BTreeMap<String, Value>,
}

impl RemoteGroups {
    pub fn new(actual: &Actual) -> RemoteGroups {
        let by_id = actual
            .owned
            .iter()
            .filter(|(address, _)| address.kind == Kind::Group)
            .map(|(_, remote)| (remote.id.clone(), remote.body()))
            .collect();
        RemoteGroups { by_id }
    }

    /// Runs a month of a check as the service holds it, after its group.
    pub fn runs_per_month(&self, check: &Value) -> u64 {
        let group = match &check["groupId"] {
            Value::Number(id) => self.by_id.get(&id.to_string()),
            Value::String(id) => self.by_id.get(id),
            _ => None,
        };
        runs_per_month(&effective(check, group))
    }
}

/// A check of the files as it will run: after `[defaults]` (the loader's)
/// and its group (`monform_model::effective`: what the service and `test
/// --local` run; `plan --effective`, the run budget).
pub fn effective_check(desired: &Desired, address: &Address) -> Option<Value> {
    let check = desired.resources.get(address)?.resource.to_json();
    let group = check["group"]
        .as_str()
        .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id)))
        .map(|g| g.resource.to_json());
    Some(effective(&check, group.as_ref()))
}

/// [`effective_check`] to show: each secret masked, the check's by the
/// check's rules and what its group adds by the group's (an API check has
/// no `environmentVariables` of its own, so the check's rules cannot tell
/// that a group's variable is secret).
pub fn masked_effective_check(desired: &Desired, address: &Address) -> Option<Value> {
    let resource = desired.resources.get(address)?;
    let check = mask(Kind::Check, &resource.resource.to_json(), &resource.sensitive);
    let group = check["group"]
        .as_str()
        .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id)))
        .map(|g| mask(Kind::Group, &g.resource.to_json(), &g.sensitive));
    Some(effective(&check, group.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `plan --effective` shows what the service and `test --local` run:
    /// the group's locations imposed, its tags and variables merged.
    #[test]
    fn the_effective_check_has_its_groups_tags_variables_and_locations() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(
            dir.path().join("m.yaml"),
            "checks:\n  c:\n    checkType: TCP\n    name: C\n    group: g\n    frequency: 5\n    tags: [own]\n    locations: [eu-west-1]\n    request: { hostname: example.com, port: 443 }\ngroups:\n  g:\n    name: G\n    concurrency: 1\n    locations: [us-east-1]\n    tags: [team]\n    environmentVariables: [{ key: A, value: x }]\n",
        )
        .unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        let check = effective_check(&loaded.desired, &Address::new(Kind::Check, "c")).unwrap();
        assert_eq!(check["locations"], serde_json::json!(["us-east-1"]));
        assert_eq!(check["tags"], serde_json::json!(["own", "team"]));
        assert_eq!(check["environmentVariables"][0]["key"], "A");
    }
}
