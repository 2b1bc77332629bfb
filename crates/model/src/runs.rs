//! How often a check runs: the run budget of a plan (issue 20). Works on a
//! check's JSON, model or wire form: the fields read share their names.

use serde_json::Value;

/// A month, for budgets: 30 days, whatever the calendar says.
pub const MONTH_MINUTES: u64 = 30 * 24 * 60;

/// Scheduled runs in 30 days of an effective check: every `frequency`
/// minutes (`frequency: 0` runs every `frequencyOffset` seconds), in each
/// public and private location when `runParallel`, else in one; retries
/// are not counted; a deactivated check runs 0 times.
pub fn runs_per_month(check: &Value) -> u64 {
    if check["activated"] == false {
        return 0;
    }
    let per_location = match check["frequency"].as_u64() {
        Some(0) => match check["frequencyOffset"].as_u64() {
            Some(seconds) if seconds > 0 => MONTH_MINUTES * 60 / seconds,
            _ => 0,
        },
        Some(minutes) => MONTH_MINUTES / minutes,
        None => 0,
    };
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

    #[test]
    fn the_group_decides_locations_and_activation() {
        let check = json!({ "frequency": 10, "runParallel": true, "locations": ["a"] });
        let group = json!({ "locations": ["a", "b"], "privateLocations": ["p"] });
        assert_eq!(runs_per_month(&effective(&check, Some(&group))), 3 * 4_320);
        let off = json!({ "activated": false });
        assert_eq!(runs_per_month(&effective(&check, Some(&off))), 0);
    }
}
