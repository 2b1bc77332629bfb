//! The run budget of a plan (issue 20): how many times the project's checks
//! run in 30 days as the service holds them and as the files would make them.

use std::collections::{BTreeMap, HashMap};

use monform_api::Remote;
use monform_config::Desired;
use monform_model::effective::effective;
use monform_model::pick::pick;
use monform_model::resources::Check;
use monform_model::runs::{SCHEDULE_FIELDS, runs_per_month, schedule_of};
use monform_model::sensitive::mask;
use monform_model::{Address, Kind, Resource};
use rayon::prelude::*;
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
/// groups. Other projects' checks count in neither. Each check's runs come
/// from its schedule fields alone ([`SCHEDULE_FIELDS`]: picked out of a
/// listed check's text, read from a typed check of the files), counted in
/// parallel: at 100,000 checks whole bodies were a fifth of a no-op plan's
/// CPU.
pub fn run_budget(desired: &Desired, actual: &Actual) -> RunBudget {
    let groups = RemoteGroups::new(actual);
    let names = check_schedule();
    let remote: Vec<(&Address, &Remote)> = actual.owned.iter().filter(|(a, _)| a.kind == Kind::Check).collect();
    let before: Vec<(&Address, Value, u64)> = remote
        .par_iter()
        .map(|(address, remote)| {
            let check = Value::Object(remote.fields(&names));
            let runs = groups.runs_per_month(&check);
            (*address, check["checkType"].clone(), runs)
        })
        .collect();
    let desired_groups: HashMap<&str, Value> = desired
        .resources
        .values()
        .filter(|r| r.address.kind == Kind::Group)
        .map(|r| {
            (
                r.address.id.as_str(),
                Value::Object(pick(&r.resource.to_json_string(), SCHEDULE_FIELDS)),
            )
        })
        .collect();
    let files: Vec<(&Address, &Check)> = desired
        .resources
        .iter()
        .filter_map(|(address, r)| match &r.resource {
            Resource::Check(check) => Some((address, check)),
            _ => None,
        })
        .collect();
    let after: Vec<(&Address, Value, u64)> = files
        .par_iter()
        .map(|&(address, check)| {
            let check = schedule_of(check);
            let group = check["group"].as_str().and_then(|id| desired_groups.get(id));
            (
                address,
                check["checkType"].clone(),
                runs_per_month(&effective(&check, group)),
            )
        })
        .collect();
    let mut budget = RunBudget::default();
    for (address, check_type, runs) in before {
        budget.add(address, &check_type, runs, false);
    }
    for (address, check_type, runs) in after {
        budget.add(address, &check_type, runs, true);
        // Not read (`--refresh`): as applied, so as the files say (an
        // offline plan does not know an edited check's runs before: the
        // same, so the budget shows no change it cannot tell).
        if actual.unrefreshed.contains_key(address) {
            budget.add(address, &check_type, runs, false);
        }
    }
    budget
}

/// A listed check's schedule, its type and its group.
fn check_schedule() -> Vec<&'static str> {
    SCHEDULE_FIELDS
        .iter()
        .copied()
        .chain(["checkType", "groupId"])
        .collect()
}

/// The project's groups as the service holds them, by id: their schedule
/// fields, all a check's runs need of its group.
pub(crate) struct RemoteGroups {
    by_id: BTreeMap<String, Value>,
}

impl RemoteGroups {
    pub fn new(actual: &Actual) -> RemoteGroups {
        let by_id = actual
            .owned
            .iter()
            .filter(|(address, _)| address.kind == Kind::Group)
            .map(|(_, remote)| (remote.id.clone(), Value::Object(remote.fields(SCHEDULE_FIELDS))))
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

/// A check of the files as it will run, to show: after `[defaults]` (the
/// loader's) and its group (`monform_model::effective`: what the service
/// and `test --local` run; `plan --effective`), each secret masked, the
/// check's by the check's rules and what its group adds by the group's (an API check has
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
        let check = masked_effective_check(&loaded.desired, &Address::new(Kind::Check, "c")).unwrap();
        assert_eq!(check["locations"], serde_json::json!(["us-east-1"]));
        assert_eq!(check["tags"], serde_json::json!(["own", "team"]));
        assert_eq!(check["environmentVariables"][0]["key"], "A");
    }
}
