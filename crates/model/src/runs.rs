//! How often a check runs: the run budget of a plan (issue 20). Works on a
//! check's JSON, model or wire form: the fields read share their names.

use serde_json::Value;

use crate::resources::Check;

/// Every field [`runs_per_month`] reads. A check's runs depend on these
/// fields of it and of its group alone (a group changes them only through
/// `group_rules::impose`), so a plan counts runs from these fields picked
/// out of each body, not from whole bodies.
pub const SCHEDULE_FIELDS: &[&str] = &[
    "activated",
    "frequency",
    "frequencyOffset",
    "runParallel",
    "locations",
    "privateLocations",
];

/// The [`SCHEDULE_FIELDS`] of a check of the files (with its `checkType`
/// and `group`), as its canonical JSON has them, from the typed check: a
/// plan counts the runs of every check, and serializing 100,000 whole
/// checks to read six fields was a tenth of its run budget's time. The
/// test below holds it to the JSON.
pub fn schedule_of(check: &Check) -> Value {
    let common = check.common();
    let mut schedule = serde_json::Map::new();
    let mut put = |name: &str, value: Value| {
        schedule.insert(name.to_owned(), value);
    };
    put("activated", Value::Bool(common.activated));
    put("frequency", Value::from(common.frequency));
    if let Some(offset) = common.frequency_offset {
        put("frequencyOffset", Value::from(offset));
    }
    put("runParallel", Value::Bool(common.run_parallel));
    if let Some(locations) = &common.locations {
        put("locations", serde_json::to_value(locations).unwrap_or_default());
    }
    if let Some(private) = &common.private_locations {
        put("privateLocations", serde_json::to_value(private).unwrap_or_default());
    }
    put("checkType", Value::from(check.check_type().as_str()));
    if let Some(group) = &common.group {
        put("group", serde_json::to_value(group).unwrap_or_default());
    }
    Value::Object(schedule)
}

/// A month, for budgets: 30 days, whatever the calendar says.
pub const MONTH_MINUTES: u64 = 30 * 24 * 60;

/// `frequency` when a check does not set it (spec 2.1), minutes.
pub const DEFAULT_FREQUENCY: u64 = 10;
/// The period of a sub-minute check (`frequency: 0`) without a usable
/// `frequencyOffset`, seconds: the shortest spec 2.4 allows, so a budget
/// never counts fewer runs than the service could make.
pub const DEFAULT_SUB_MINUTE_SECONDS: u64 = 10;

/// Seconds between two scheduled runs of a check: every `frequency`
/// minutes (not set: the spec's default, [`DEFAULT_FREQUENCY`]);
/// `frequency: 0` every `frequencyOffset` seconds (spec 2.4: 10, 20 or
/// 30; not set or 0: [`DEFAULT_SUB_MINUTE_SECONDS`]). The one reading for
/// the run budget and the emulator's scheduler.
pub fn period_seconds(check: &Value) -> u64 {
    match check["frequency"].as_u64().unwrap_or(DEFAULT_FREQUENCY) {
        0 => check["frequencyOffset"]
            .as_u64()
            .filter(|seconds| *seconds > 0)
            .unwrap_or(DEFAULT_SUB_MINUTE_SECONDS),
        minutes => minutes * 60,
    }
}

/// Scheduled runs in 30 days of an effective check: one per
/// [`period_seconds`], in each public and private location when
/// `runParallel`, else in one; retries are not counted; a deactivated
/// check runs 0 times.
pub fn runs_per_month(check: &Value) -> u64 {
    if check["activated"] == false {
        return 0;
    }
    let per_location = MONTH_MINUTES * 60 / period_seconds(check);
    let count = |field: &str| check[field].as_array().map_or(0, Vec::len) as u64;
    let locations = if check["runParallel"] == true {
        (count("locations") + count("privateLocations")).max(1)
    } else {
        1
    };
    per_location * locations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effective::effective;
    use serde_json::json;

    #[test]
    fn a_one_minute_check_in_three_parallel_locations_runs_129600_times() {
        let check = json!({ "frequency": 1, "runParallel": true, "locations": ["a", "b", "c"] });
        assert_eq!(runs_per_month(&check), 129_600);
        let round_robin = json!({ "frequency": 1, "locations": ["a", "b", "c"] });
        assert_eq!(runs_per_month(&round_robin), 43_200);
        let sub_minute = json!({ "frequency": 0, "frequencyOffset": 30 });
        assert_eq!(runs_per_month(&sub_minute), 86_400);
        assert_eq!(runs_per_month(&json!({ "frequency": 1, "activated": false })), 0);
    }

    /// Spec 2.1: frequency defaults to 10; spec 2.4: a sub-minute check
    /// runs every `frequencyOffset` seconds (none given: the shortest, 10).
    #[test]
    fn a_missing_frequency_is_ten_minutes_and_a_bare_zero_ten_seconds() {
        assert_eq!(period_seconds(&json!({})), 600);
        assert_eq!(runs_per_month(&json!({})), 4_320);
        assert_eq!(period_seconds(&json!({ "frequency": 0 })), 10);
        assert_eq!(period_seconds(&json!({ "frequency": 0, "frequencyOffset": 0 })), 10);
        assert_eq!(runs_per_month(&json!({ "frequency": 0 })), 259_200);
        assert_eq!(period_seconds(&json!({ "frequency": 0, "frequencyOffset": 30 })), 30);
    }

    /// The typed schedule is the schedule fields of the check's JSON, for
    /// every check type, with and without the optional fields.
    #[test]
    fn the_typed_schedule_is_the_json_schedule() {
        use crate::resources::CheckType;
        for (i, check_type) in CheckType::ALL.iter().enumerate() {
            let mut spec = crate::samples::check_spec(*check_type, i);
            spec["checkType"] = json!(check_type.as_str());
            spec["name"] = json!("a check");
            if i % 2 == 0 {
                spec["frequency"] = json!(0);
                spec["frequencyOffset"] = json!(20);
                spec["locations"] = json!(["eu-west-1", "us-east-1"]);
                spec["privateLocations"] = json!(["office"]);
                spec["group"] = json!("web");
                spec["runParallel"] = json!(true);
                spec["activated"] = json!(false);
            }
            let check: Check = serde_json::from_value(spec).unwrap();
            let text = serde_json::to_string(&check).unwrap();
            let names: Vec<&str> = SCHEDULE_FIELDS.iter().copied().chain(["checkType", "group"]).collect();
            let picked = Value::Object(crate::pick::pick(&text, &names));
            assert_eq!(schedule_of(&check), picked, "{check_type:?}");
        }
    }

    /// Runs counted from the schedule fields alone are the runs of the
    /// whole check in its whole group.
    #[test]
    fn the_schedule_fields_alone_give_the_runs() {
        let check = json!({
            "checkType": "API", "name": "a", "frequency": 1, "runParallel": true,
            "locations": ["a"], "privateLocations": ["p"], "tags": ["t"],
            "request": { "method": "GET", "url": "https://example.com" },
        });
        let pick = |value: &serde_json::Value| {
            let object = value.as_object().unwrap();
            let picked: serde_json::Map<_, _> = SCHEDULE_FIELDS
                .iter()
                .filter_map(|f| object.get(*f).map(|v| ((*f).to_owned(), v.clone())))
                .collect();
            serde_json::Value::Object(picked)
        };
        let groups = [
            json!({ "name": "g", "locations": ["x", "y", "z"], "activated": true, "tags": ["g"] }),
            json!({ "name": "g", "privateLocations": [], "activated": false }),
            json!({ "name": "g", "locations": [], "runtimeId": "2024.02" }),
        ];
        for group in &groups {
            let whole = runs_per_month(&effective(&check, Some(group)));
            assert_eq!(
                runs_per_month(&effective(&pick(&check), Some(&pick(group)))),
                whole,
                "{group}"
            );
        }
    }

    #[test]
    fn the_group_decides_locations_and_activation() {
        let check = json!({ "frequency": 10, "runParallel": true, "locations": ["a"] });
        let group = json!({ "locations": ["a", "b"], "privateLocations": ["p"] });
        assert_eq!(runs_per_month(&effective(&check, Some(&group))), 3 * 4_320);
        let off = json!({ "activated": false });
        assert_eq!(runs_per_month(&effective(&check, Some(&off))), 0);
    }
}
