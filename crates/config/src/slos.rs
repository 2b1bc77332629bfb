//! Service level objectives across resources (issue 50): which checks an
//! SLO's `checks` and `tags` select (`members`, for `slo status`, `gate`
//! and the reconciler too), and the diagnostics that need the member
//! checks: a selector that matches nothing, a time slice shorter than a
//! member's frequency, a member that cannot fail, and (a warning) too few
//! runs in the shortest alert window to tell a fast burn from one failed
//! run. With `enforce: true` the last sets the members' frequency and
//! locations instead (`enforce`), so the plan shows it as their update.
//! The rules within one SLO are the model's (`rules.rs`).

use std::collections::BTreeSet;

use monform_model::resources::check::CheckType;
use monform_model::resources::slo::{Slo, SloBudgeting, duration_seconds};
use monform_model::{Address, Kind, Resource};
use serde_json::Value;

use crate::desired::{Desired, DesiredResource};
use crate::diagnostic::Diagnostic;
use crate::source::Span;

/// The top-level SLO fields whose key the loader keeps a span of
/// (`DesiredResource::own_fields`), for the diagnostics here.
pub const SPANNED_FIELDS: &[&str] = &["checks", "tags", "timeslice", "target", "enforce"];

/// The shortest alert window and its factor (`burnRates: default`: 14.4x
/// over 5 minutes): what `samples_needed` sizes.
pub const FAST_WINDOW_SECONDS: u64 = 300;
pub const FAST_FACTOR: f64 = 14.4;

/// The member checks of an SLO: `checks` (an address, an item of a
/// `forEach`, or `[*]` for all its items) and `tags` (every check with
/// one of them), in address order, each once. Unknown ones are left out
/// (the loader reports them).
pub fn members(desired: &Desired, slo: &Slo) -> Vec<Address> {
    let mut found = BTreeSet::new();
    for selector in slo.checks.iter().flatten() {
        found.extend(select(desired, &selector.0));
    }
    for tag in slo.tags.iter().flatten() {
        found.extend(with_tag(desired, tag));
    }
    found.into_iter().collect()
}

fn checks(desired: &Desired) -> impl Iterator<Item = (&Address, &DesiredResource)> {
    desired.resources.iter().filter(|(a, _)| a.kind == Kind::Check)
}

fn select(desired: &Desired, selector: &str) -> Vec<Address> {
    let Some(id) = selector.strip_prefix("checks.") else {
        return Vec::new();
    };
    if let Some(base) = id.strip_suffix("[*]") {
        let prefix = format!("{base}[");
        return checks(desired)
            .filter(|(a, _)| a.id.starts_with(&prefix))
            .map(|(a, _)| a.clone())
            .collect();
    }
    let address = Address::new(Kind::Check, id.to_owned());
    if desired.resources.contains_key(&address) {
        vec![address]
    } else {
        Vec::new()
    }
}

fn with_tag(desired: &Desired, tag: &str) -> Vec<Address> {
    checks(desired)
        .filter(|(_, r)| match r.resource.as_ref() {
            Resource::Check(check) => check.common().tags.iter().flatten().any(|t| t == tag),
            _ => false,
        })
        .map(|(a, _)| a.clone())
        .collect()
}

/// Runs a fast-burn alert needs in its short window so that one failed
/// run alone does not reach the factor: one failure of n is a burn rate
/// of 1 / (n * budget), which must stay below `FAST_FACTOR`.
pub fn samples_needed(target_percent: f64) -> u64 {
    let budget = (100.0 - target_percent) / 100.0;
    if budget <= 0.0 {
        return 0;
    }
    (1.0 / (FAST_FACTOR * budget)).floor() as u64 + 1
}

/// The frequency (seconds, one the service offers) and number of
/// locations that give `needed` runs in the fast window: the fewest
/// locations at the longest frequency that suffices, sub-minute only for
/// the check types that have it.
pub fn schedule_for(needed: u64, check_type: CheckType) -> (u64, u64) {
    let sub_minute = matches!(check_type, CheckType::Api | CheckType::Tcp);
    let periods: &[u64] = if sub_minute { &[60, 30, 20, 10] } else { &[60] };
    for locations in 1..=22u64 {
        for &period in periods.iter() {
            if (FAST_WINDOW_SECONDS / period) * locations >= needed {
                return (period, locations);
            }
        }
    }
    (*periods.last().unwrap_or(&60), 22)
}

/// Runs in the fast window from a check's effective schedule.
fn runs_in_fast_window(check: &Value) -> u64 {
    let period = monform_model::runs::period_seconds(check).max(1);
    let count = |field: &str| check[field].as_array().map_or(0, Vec::len) as u64;
    let locations = if check["runParallel"] == true {
        (count("locations") + count("privateLocations")).max(1)
    } else {
        1
    };
    (FAST_WINDOW_SECONDS / period) * locations
}

fn span_of(resource: &DesiredResource, field: &str) -> Span {
    resource
        .own_fields
        .iter()
        .find(|(name, _)| *name == field)
        .map_or(resource.span, |(_, span)| *span)
}

/// Every SLO's diagnostics that need its member checks.
pub fn check(desired: &Desired) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for (address, resource) in desired.resources.iter().filter(|(a, _)| a.kind == Kind::Slo) {
        let Resource::Slo(slo) = resource.resource.as_ref() else {
            continue;
        };
        check_one(desired, address, resource, slo, &mut diagnostics);
    }
    diagnostics
}

fn check_one(desired: &Desired, address: &Address, resource: &DesiredResource, slo: &Slo, out: &mut Vec<Diagnostic>) {
    let check_ids: Vec<&str> = checks(desired).map(|(a, _)| a.id.as_str()).collect();
    for selector in slo.checks.iter().flatten() {
        if select(desired, &selector.0).is_empty() {
            let id = selector.0.strip_prefix("checks.").unwrap_or(&selector.0);
            let mut diagnostic = Diagnostic::new(
                "monform::slo-members",
                format!("{address}.checks: `{}` names no check of the files", selector.0),
            )
            .at(span_of(resource, "checks"), "unknown check");
            if let Some(near) = monform_model::suggest(id, check_ids.iter().copied()) {
                diagnostic = diagnostic.help(format!("did you mean `checks.{near}`?"));
            }
            out.push(diagnostic);
        }
    }
    for tag in slo.tags.iter().flatten() {
        if with_tag(desired, tag).is_empty() {
            out.push(
                Diagnostic::new(
                    "monform::slo-members",
                    format!("{address}.tags: no check of the files has the tag `{tag}`"),
                )
                .at(span_of(resource, "tags"), "matches no check")
                .help("tag the checks the objective is about, or name them in `checks`"),
            );
        }
    }
    let members = members(desired, slo);
    let slice = slo.timeslice.as_deref().and_then(duration_seconds);
    let needed = samples_needed(slo.target);
    for member in &members {
        let Some(check_resource) = desired.resources.get(member) else {
            continue;
        };
        let Resource::Check(check) = check_resource.resource.as_ref() else {
            continue;
        };
        let common = check.common();
        if common.should_fail {
            out.push(
                Diagnostic::new(
                    "monform::slo-cannot-fail",
                    format!("{address}: {member} has `shouldFail: true`: its runs pass when the service fails, so they cannot measure it"),
                )
                .at(span_of(resource, "checks"), "a member that cannot fail")
                .help("leave it out of the objective"),
            );
        }
        if let Some(hb) = heartbeat_without_grace(check) {
            out.push(
                Diagnostic::new(
                    "monform::slo-cannot-fail",
                    format!("{address}: {member} is a HEARTBEAT check without grace ({hb}): it has no runs to fail, only missed pings"),
                )
                .at(span_of(resource, "checks"), "a member that cannot fail")
                .help("give the heartbeat a grace, or leave it out of the objective"),
            );
        }
        let schedule = effective_schedule(desired, check_resource);
        let period = monform_model::runs::period_seconds(&schedule);
        if slo.budgeting == SloBudgeting::Timeslices
            && let Some(slice) = slice
            && slice < period
        {
            out.push(
                Diagnostic::new(
                    "monform::slo-timeslice",
                    format!(
                        "{address}.timeslice: a slice of {} is shorter than {member}'s frequency ({}): most slices hold no run, which inflates the SLI",
                        slo.timeslice.as_deref().unwrap_or_default(),
                        monform_slo_duration(period)
                    ),
                )
                .at(span_of(resource, "timeslice"), "shorter than a member's frequency")
                .help(format!("use a slice of at least {}", monform_slo_duration(period))),
            );
        }
        let runs = runs_in_fast_window(&schedule);
        if !slo.enforce && runs < needed && schedule["activated"] != false {
            let (every, locations) = schedule_for(needed, check.check_type());
            out.push(
                Diagnostic::new(
                    "monform::slo-samples",
                    format!(
                        "{address}: a {}% target needs at least {needed} runs in the 5m fast-burn window, and {member} makes {runs}: one failed run would page; it needs a run every {} {}",
                        slo.target,
                        monform_slo_duration(every),
                        if locations > 1 {
                            format!("from {locations} locations (runParallel: true)")
                        } else {
                            "from one location".to_owned()
                        }
                    ),
                )
                .at(span_of(resource, "target"), "too few samples for its alerts")
                .help("raise the members' frequency and locations, set `enforce: true` to let the plan do it, or lower the target")
                .warning(),
            );
        }
    }
}

/// The check's schedule fields after its group's overrides.
fn effective_schedule(desired: &Desired, check: &DesiredResource) -> Value {
    let json = check.resource.to_json();
    let group = json["group"]
        .as_str()
        .map(|id| Address::new(Kind::Group, id.to_owned()))
        .and_then(|a| desired.resources.get(&a))
        .map(|g| g.resource.to_json());
    monform_model::effective::effective(&json, group.as_ref())
}

fn heartbeat_without_grace(check: &monform_model::resources::Check) -> Option<String> {
    let json = serde_json::to_value(check).ok()?;
    let heartbeat = json.get("heartbeat")?;
    (heartbeat["grace"].as_u64() == Some(0)).then(|| "grace: 0".to_owned())
}

fn monform_slo_duration(seconds: u64) -> String {
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if seconds > 0 && seconds.is_multiple_of(size) {
            return format!("{}{unit}", seconds / size);
        }
    }
    format!("{seconds}s")
}

/// With `enforce: true`, sets each member check's `frequency`,
/// `frequencyOffset`, `runParallel` and `locations` to what the SLO's
/// fast-burn alert needs (never lowering what it has): the plan shows
/// these as the checks' updates. Keeps each raised check's schedule as
/// the files wrote it in [`Desired::slo_written`]. Returns what it
/// changed, for a note.
pub fn enforce(desired: &mut Desired) -> Vec<(Address, Address, u64, u64)> {
    let mut wanted: Vec<(Address, Address, u64)> = Vec::new();
    for (address, resource) in desired.resources.iter().filter(|(a, _)| a.kind == Kind::Slo) {
        let Resource::Slo(slo) = resource.resource.as_ref() else {
            continue;
        };
        if !slo.enforce {
            continue;
        }
        let needed = samples_needed(slo.target);
        for member in members(desired, slo) {
            wanted.push((address.clone(), member, needed));
        }
    }
    let mut changed = Vec::new();
    for (slo, member, needed) in wanted {
        let Some(resource) = desired.resources.get(&member) else {
            continue;
        };
        let schedule = effective_schedule(desired, resource);
        let Some((updated, period, locations)) = raised(resource, &schedule, needed) else {
            continue;
        };
        // The first raise is from what the files wrote; a second SLO's
        // raises it further.
        desired.slo_written.entry(member.clone()).or_insert(schedule);
        if let Some(resource) = desired.resources.get_mut(&member) {
            *resource.resource = updated;
            changed.push((slo, member, period, locations));
        }
    }
    changed
}

/// The member check `resource` (effective schedule `schedule`) with the
/// frequency and locations that give `needed` runs in the fast window,
/// and that frequency (seconds) and number of locations; `None` when it
/// already makes them (or is not a check).
fn raised(resource: &DesiredResource, schedule: &Value, needed: u64) -> Option<(Resource, u64, u64)> {
    if runs_in_fast_window(schedule) >= needed {
        return None;
    }
    let Resource::Check(check) = resource.resource.as_ref() else {
        return None;
    };
    let (period, locations) = schedule_for(needed, check.check_type());
    let mut json = resource.resource.to_json();
    if period < 60 {
        json["frequency"] = Value::from(0);
        json["frequencyOffset"] = Value::from(period);
    } else {
        json["frequency"] = Value::from(1);
    }
    let mut names: Vec<Value> = json["locations"].as_array().cloned().unwrap_or_default();
    for location in monform_model::resources::Location::ALL {
        if names.len() as u64 >= locations {
            break;
        }
        let name = Value::from(location.as_str());
        if !names.contains(&name) {
            names.push(name);
        }
    }
    json["locations"] = Value::Array(names);
    json["runParallel"] = Value::Bool(locations > 1);
    let updated = Resource::from_json(Kind::Check, json).ok()?;
    Some((updated, period, locations))
}

/// What an SLO needs from its member checks and what that costs in runs
/// (issue 50 item 2): the plan's SLO notes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SloRunCost {
    pub slo: Address,
    /// The runs its fast-burn alert needs in 5 minutes from each member.
    pub samples: u64,
    /// `enforce: true`: the plan sets the members' schedule.
    pub enforce: bool,
    pub members: Vec<MemberRunCost>,
    /// The members' runs a month as the files write them.
    pub before: u64,
    /// The members' runs a month at what the SLO needs (never fewer).
    pub after: u64,
}

/// One member check's part of an [`SloRunCost`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberRunCost {
    pub check: Address,
    /// As the files write it: a run every `every_seconds`, from
    /// `locations` locations at once (1 unless `runParallel`).
    pub every_seconds: u64,
    pub locations: u64,
    /// What the SLO needs when that is short of its samples.
    pub needs: Option<Schedule>,
    pub before: u64,
    pub after: u64,
}

/// A run every `every_seconds` from `locations` locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub every_seconds: u64,
    pub locations: u64,
}

/// Locations a run is made from at once: all of them with `runParallel`.
fn parallel_locations(schedule: &Value) -> u64 {
    let count = |field: &str| schedule[field].as_array().map_or(0, Vec::len) as u64;
    match schedule["runParallel"] == true {
        true => (count("locations") + count("privateLocations")).max(1),
        false => 1,
    }
}

/// Every SLO's [`SloRunCost`], in address order. "As the files write
/// them" is before `enforce` raised them ([`Desired::slo_written`]); what
/// the SLO needs is [`raised`]'s rule, the one `enforce` applies. A
/// deactivated member runs 0 times and needs nothing.
pub fn run_costs(desired: &Desired) -> Vec<SloRunCost> {
    let mut costs = Vec::new();
    for (address, resource) in desired.resources.iter().filter(|(a, _)| a.kind == Kind::Slo) {
        let Resource::Slo(slo) = resource.resource.as_ref() else {
            continue;
        };
        let needed = samples_needed(slo.target);
        let mut members_cost = Vec::new();
        for member in members(desired, slo) {
            let Some(check) = desired.resources.get(&member) else {
                continue;
            };
            let current = effective_schedule(desired, check);
            let written = desired.slo_written.get(&member).unwrap_or(&current);
            let (needs, after) = match written["activated"] == false {
                true => (None, 0),
                false => {
                    let check_now = match raised(check, &current, needed) {
                        Some((updated, _, _)) => {
                            let mut raised_check = check.clone();
                            *raised_check.resource = updated;
                            effective_schedule(desired, &raised_check)
                        }
                        None => current.clone(),
                    };
                    let needs = (runs_in_fast_window(written) < needed).then(|| Schedule {
                        every_seconds: monform_model::runs::period_seconds(&check_now),
                        locations: parallel_locations(&check_now),
                    });
                    (needs, monform_model::runs::runs_per_month(&check_now))
                }
            };
            members_cost.push(MemberRunCost {
                check: member,
                every_seconds: monform_model::runs::period_seconds(written),
                locations: parallel_locations(written),
                needs,
                before: monform_model::runs::runs_per_month(written),
                after,
            });
        }
        costs.push(SloRunCost {
            slo: address.clone(),
            samples: needed,
            enforce: slo.enforce,
            before: members_cost.iter().map(|m| m.before).sum(),
            after: members_cost.iter().map(|m| m.after).sum(),
            members: members_cost,
        });
    }
    costs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_and_schedules_by_hand() {
        // floor(1 / (14.4 * budget)) + 1: 99.9% -> floor(69.44) + 1 = 70;
        // 99.5% -> floor(13.89) + 1 = 14; 99% -> floor(6.94) + 1 = 7.
        assert_eq!(samples_needed(99.9), 70);
        assert_eq!(samples_needed(99.5), 14);
        assert_eq!(samples_needed(99.0), 7);
        // 70 runs in 5 minutes: every 10s (30 a location) from 3 locations
        // for an API check; a URL check runs at most once a minute, 5 a
        // location: 14 locations.
        assert_eq!(schedule_for(70, CheckType::Api), (10, 3));
        assert_eq!(schedule_for(70, CheckType::Url), (60, 14));
        // 7 runs: every 30s from one location (10 runs).
        assert_eq!(schedule_for(7, CheckType::Api), (30, 1));
    }

    fn loaded(files: &str) -> Desired {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(dir.path().join("m.yaml"), files).unwrap();
        let loaded = crate::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        loaded.desired
    }

    const FILES: &str = "checks:\n  web:\n    checkType: URL\n    name: Web\n    frequency: 1\n    locations: [eu-west-1]\n    request: { url: https://example.com/ }\n  api:\n    checkType: API\n    name: Api\n    frequency: 10\n    locations: [eu-west-1]\n    request: { method: GET, url: https://example.com/ }\nslos:\n  shop:\n    checks: [checks.web, checks.api]\n    target: 99.5\n    window: 28d\n";

    #[test]
    fn run_costs_by_hand() {
        // 99.5%: 14 runs per 5 minutes. web (URL, every minute, one
        // location: 5) needs every 60s from 3 locations (schedule_for:
        // a URL check runs at most once a minute): 3 * 43,200 = 129,600
        // runs a month, from 43,200. api (every 10 minutes: 0 runs in 5)
        // needs every 20s from 1 location (15 runs): 30 * 1,440 * 3 =
        // 129,600, from 4,320.
        let costs = run_costs(&loaded(FILES));
        assert_eq!(costs.len(), 1);
        let shop = &costs[0];
        assert_eq!((shop.samples, shop.enforce), (14, false));
        // (check, what it needs, runs before, after)
        type Row<'a> = (&'a str, Option<(u64, u64)>, u64, u64);
        let members: Vec<Row> = shop
            .members
            .iter()
            .map(|m| {
                (
                    m.check.id.as_str(),
                    m.needs.map(|n| (n.every_seconds, n.locations)),
                    m.before,
                    m.after,
                )
            })
            .collect();
        assert_eq!(
            members,
            [
                ("api", Some((20, 1)), 4_320, 129_600),
                ("web", Some((60, 3)), 43_200, 129_600)
            ]
        );
        assert_eq!((shop.before, shop.after), (47_520, 259_200));
        // With `enforce: true` the checks are raised, and the costs are
        // still counted from what the files wrote.
        let enforced = run_costs(&loaded(&format!("{FILES}    enforce: true\n")));
        assert_eq!(enforced[0].members, shop.members);
        assert_eq!(
            (enforced[0].before, enforced[0].after, enforced[0].enforce),
            (47_520, 259_200, true)
        );
        // Enough runs already (90%: 1 run per 5 minutes; api every 5
        // minutes makes 1): nothing needed, nothing more.
        let easy = run_costs(&loaded(
            &FILES.replace("99.5", "90").replace("frequency: 10", "frequency: 5"),
        ));
        assert!(
            easy[0].members.iter().all(|m| m.needs.is_none() && m.before == m.after),
            "{easy:?}"
        );
    }
}
