//! The run budget of a plan (issue 20): how many times the project's checks
//! run in 30 days as the service holds them and as the files would make them.

use std::collections::{BTreeMap, HashMap};

use monform_api::Remote;
use monform_config::Desired;
use monform_model::effective::{effective, into_effective};
use monform_model::pick::pick;
use monform_model::resources::Check;
use monform_model::runs::{SCHEDULE_FIELDS, runs_per_month, schedule_of};
use monform_model::sensitive::mask;
use monform_model::{Address, Kind, Resource};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::Value;

use crate::actual::Actual;

/// Runs a month before and after a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Runs {
    pub before: u64,
    pub after: u64,
}

/// The project's runs a month, in total, per check type, and the checks
/// that run most.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunBudget {
    pub before: u64,
    pub after: u64,
    pub by_type: BTreeMap<String, Runs>,
    /// The files' checks that run most after the plan, most first (ties by
    /// address), at most [`BUSIEST`]: what a refusal over budget names.
    #[serde(skip)]
    pub busiest: Vec<(Address, u64)>,
}

/// How many of the checks that run most a [`RunBudget`] keeps (and an
/// over-budget refusal names).
pub const BUSIEST: usize = 5;

/// Runs counted over some checks: folded in parallel, one per thread, then
/// merged. Nothing per check is kept but the few busiest (a map of every
/// check was 20 MB of a 100,000-check plan's peak).
#[derive(Default)]
struct Tally<'a> {
    total: u64,
    by_type: BTreeMap<String, u64>,
    busiest: Vec<(&'a Address, u64)>,
}

impl<'a> Tally<'a> {
    fn add(mut self, check_type: &Value, runs: u64) -> Tally<'a> {
        self.total += runs;
        let check_type = check_type.as_str().unwrap_or("UNKNOWN");
        match self.by_type.get_mut(check_type) {
            Some(n) => *n += runs,
            None => {
                self.by_type.insert(check_type.to_owned(), runs);
            }
        }
        self
    }

    fn add_busy(self, address: &'a Address, check_type: &Value, runs: u64) -> Tally<'a> {
        let mut tally = self.add(check_type, runs);
        tally.busiest.push((address, runs));
        if tally.busiest.len() > 4 * BUSIEST {
            tally.keep_busiest();
        }
        tally
    }

    fn keep_busiest(&mut self) {
        self.busiest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        self.busiest.truncate(BUSIEST);
    }

    fn merge(mut self, other: Tally<'a>) -> Tally<'a> {
        self.total += other.total;
        for (check_type, runs) in other.by_type {
            *self.by_type.entry(check_type).or_default() += runs;
        }
        self.busiest.extend(other.busiest);
        self.keep_busiest();
        self
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
    let remote: Vec<&Remote> = actual
        .owned
        .iter()
        .filter(|(a, _)| a.kind == Kind::Check)
        .map(|(_, remote)| remote)
        .collect();
    // Long runs per thread, so each counts a schedule once.
    let listed = remote
        .par_iter()
        .with_min_len(RUN)
        .fold(
            || (Tally::default(), Seen::default()),
            |(tally, mut seen), remote| {
                let (check_type, runs) = seen.listed(remote, &names, &groups);
                (tally.add(check_type, runs), seen)
            },
        )
        .map(|(tally, _)| tally)
        .reduce(Tally::default, Tally::merge);
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
        .filter_map(|(address, r)| match &*r.resource {
            Resource::Check(check) => Some((address, check)),
            _ => None,
        })
        .collect();
    // The files' checks after the plan; those not read (`--refresh`) also
    // before, as applied, so as the files say (an offline plan does not
    // know an edited check's runs before: the same, so the budget shows no
    // change it cannot tell).
    let (unread, mut after) = files
        .par_iter()
        .with_min_len(RUN)
        .fold(
            || (Tally::default(), Tally::default(), Seen::default()),
            |(unread, after, mut seen), &(address, check)| {
                let check = schedule_of(check);
                let check_type = check["checkType"].clone();
                let runs = seen.files(check, &desired_groups);
                let unread = match actual.unrefreshed.contains_key(address) {
                    true => unread.add(&check_type, runs),
                    false => unread,
                };
                (unread, after.add_busy(address, &check_type, runs), seen)
            },
        )
        .map(|(unread, after, _)| (unread, after))
        .reduce(
            || (Tally::default(), Tally::default()),
            |(u1, a1), (u2, a2)| (u1.merge(u2), a1.merge(a2)),
        );
    let before = listed.merge(unread);
    after.keep_busiest();
    let mut by_type: BTreeMap<String, Runs> = BTreeMap::new();
    for (check_type, runs) in before.by_type {
        by_type.entry(check_type).or_default().before = runs;
    }
    for (check_type, runs) in after.by_type {
        by_type.entry(check_type).or_default().after = runs;
    }
    RunBudget {
        before: before.total,
        after: after.total,
        by_type,
        busiest: after.busiest.into_iter().map(|(a, n)| (a.clone(), n)).collect(),
    }
}

/// The runs of checks already counted, by the text of what they depend
/// on (their schedule, type and group): most checks share a few
/// schedules, and merging each one's with its group's was most of the
/// count's time.
struct Seen<T> {
    by_text: FxHashMap<Vec<u8>, T>,
    /// The text of the check at hand.
    key: Vec<u8>,
}

impl<T> Default for Seen<T> {
    fn default() -> Seen<T> {
        Seen {
            by_text: FxHashMap::default(),
            key: Vec::new(),
        }
    }
}

impl<T> Seen<T> {
    /// At most this many schedules are kept (a few at most in practice):
    /// an account of all different ones is counted, not held.
    const MOST: usize = 1024;

    /// What was counted for the check whose text is `key`, counted first
    /// by `count` if it was not.
    fn get_or(&mut self, count: impl FnOnce() -> T) -> &T {
        if !self.by_text.contains_key(&self.key) {
            if self.by_text.len() >= Self::MOST {
                self.by_text.clear();
            }
            self.by_text.insert(self.key.clone(), count());
        }
        &self.by_text[&self.key]
    }
}

impl Seen<(Value, u64)> {
    /// A listed check's type and runs a month.
    fn listed(&mut self, remote: &Remote, names: &[&str], groups: &RemoteGroups) -> (&Value, u64) {
        let texts = remote.field_texts(names);
        self.key.clear();
        for (name, text) in &texts {
            self.key.extend_from_slice(name.as_bytes());
            self.key.push(b':');
            self.key.extend_from_slice(text.as_bytes());
            self.key.push(b'\n');
        }
        let (check_type, runs) = self.get_or(|| {
            let check: serde_json::Map<String, Value> = texts
                .iter()
                .map(|(name, text)| {
                    let value = serde_json::from_str(text).unwrap_or(Value::Null);
                    ((*name).to_owned(), value)
                })
                .collect();
            let check = Value::Object(check);
            (check["checkType"].clone(), groups.runs_per_month_of(check))
        });
        (check_type, *runs)
    }
}

impl Seen<u64> {
    /// A check of the files' runs a month (`check`: its schedule, merged
    /// with its group without a copy when not counted yet).
    fn files(&mut self, check: Value, groups: &HashMap<&str, Value>) -> u64 {
        self.key.clear();
        let written = serde_json::to_writer(&mut self.key, &check);
        let count = || {
            let group = check["group"].as_str().and_then(|id| groups.get(id));
            runs_per_month(&into_effective(check, group))
        };
        match written {
            Ok(()) => *self.get_or(count),
            // Not written (it cannot fail): counted alone.
            Err(_) => count(),
        }
    }
}

/// How many checks a thread counts at least in one go (with one [`Seen`]).
const RUN: usize = 4096;

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
        runs_per_month(&effective(check, self.group_of(check)))
    }

    /// [`RemoteGroups::runs_per_month`] of a check the caller no longer
    /// needs: merged with its group without a copy.
    fn runs_per_month_of(&self, check: Value) -> u64 {
        let group = self.group_of(&check);
        runs_per_month(&into_effective(check, group))
    }

    /// The group of a check as the service holds it (by `groupId`).
    fn group_of(&self, check: &Value) -> Option<&Value> {
        match &check["groupId"] {
            Value::Number(id) => self.by_id.get(&id.to_string()),
            Value::String(id) => self.by_id.get(id),
            _ => None,
        }
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

    #[test]
    fn a_tally_keeps_the_busiest_checks_most_first_ties_by_address() {
        let addresses: Vec<Address> = (0..40).map(|i| Address::new(Kind::Check, format!("c{i:02}"))).collect();
        let api = Value::from("API");
        let halves: Vec<Tally> = addresses
            .chunks(20)
            .map(|chunk| {
                chunk.iter().fold(Tally::default(), |t, a| {
                    t.add_busy(a, &api, a.id[1..].parse::<u64>().unwrap() % 7)
                })
            })
            .collect();
        let mut tally = halves.into_iter().fold(Tally::default(), Tally::merge);
        tally.keep_busiest();
        let busiest: Vec<(&str, u64)> = tally.busiest.iter().map(|(a, n)| (a.id.as_str(), *n)).collect();
        assert_eq!(busiest, [("c06", 6), ("c13", 6), ("c20", 6), ("c27", 6), ("c34", 6)]);
        assert_eq!(tally.total, (0..40).map(|i| i % 7).sum::<u64>());
        assert_eq!(tally.by_type["API"], tally.total);
    }

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
