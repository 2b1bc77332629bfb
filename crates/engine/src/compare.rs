//! Comparing a desired value with an actual one the way design decision 3
//! says: only fields set in the files (or defaulted) are managed; sets
//! compare as sets; null, [] and absent are the same; trailing whitespace
//! and number formats never make a difference.

use monform_model::facts::{Facts, matches};
use monform_model::{FieldPath, Segment};
use serde_json::Value;

/// One field that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: FieldPath,
    pub before: Value,
    pub after: Value,
}

/// Differences between `desired` and `actual`, at the deepest object level,
/// skipping `skip` paths (secrets, compared separately).
pub fn differences(
    desired: &Value,
    actual: &Value,
    facts: &Facts,
    skip: &dyn Fn(&FieldPath) -> bool,
) -> Vec<Difference> {
    let mut found = Vec::new();
    walk(desired, actual, &mut FieldPath::root(), facts, skip, &mut found);
    found
}

/// `path` is where the walk is: pushed and popped, cloned only into what
/// differs (a plan walks every field of every resource).
fn walk(
    desired: &Value,
    actual: &Value,
    path: &mut FieldPath,
    facts: &Facts,
    skip: &dyn Fn(&FieldPath) -> bool,
    found: &mut Vec<Difference>,
) {
    if skip(path) {
        return;
    }
    match (desired, actual) {
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want {
                path.0.push(Segment::Key(key.clone()));
                walk(value, have.get(key).unwrap_or(&Value::Null), path, facts, skip, found);
                path.0.pop();
            }
        }
        _ if equal(desired, actual, path, facts) => {}
        _ => found.push(Difference {
            path: path.clone(),
            before: actual.clone(),
            after: desired.clone(),
        }),
    }
}

/// Equality under the diff rule, for a value at `path`.
fn equal(desired: &Value, actual: &Value, path: &mut FieldPath, facts: &Facts) -> bool {
    match (desired, actual) {
        (d, a) if is_empty(d) && is_empty(a) => true,
        (Value::String(d), Value::String(a)) => d.trim_end() == a.trim_end(),
        (Value::Number(d), Value::Number(a)) => d.as_f64() == a.as_f64(),
        (Value::Object(want), Value::Object(have)) => want.iter().all(|(k, v)| {
            path.0.push(Segment::Key(k.clone()));
            let same = equal(v, have.get(k).unwrap_or(&Value::Null), path, facts);
            path.0.pop();
            same
        }),
        (Value::Array(want), Value::Array(have)) if want.len() == have.len() => {
            let is_set = facts.sets.iter().any(|p| matches(p, path));
            let mut have: Vec<&Value> = have.iter().collect();
            want.iter().enumerate().all(|(i, w)| {
                // Set members are matched in any order; their paths say `[0]`.
                path.0.push(Segment::Index(if is_set { 0 } else { i }));
                let same = if is_set {
                    let position = have.iter().position(|h| equal(w, h, path, facts));
                    position.map(|i| have.swap_remove(i)).is_some()
                } else {
                    equal(w, have[i], path, facts)
                };
                path.0.pop();
                same
            })
        }
        (d, a) => d == a,
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_model::Kind;
    use monform_model::facts::facts;
    use serde_json::json;

    fn diff(desired: Value, actual: Value) -> Vec<String> {
        let facts = facts(Kind::Check, &json!({"checkType": "API"}));
        differences(&desired, &actual, facts, &|_| false)
            .iter()
            .map(|d| d.path.to_string())
            .collect()
    }

    #[test]
    fn sets_nulls_whitespace_and_numbers_do_not_differ() {
        let desired =
            json!({"tags": ["a", "b"], "locations": [], "name": "x", "frequency": 10, "request": {"url": "u"}});
        let actual = json!({"tags": ["b", "a"], "locations": null, "name": "x  ", "frequency": 10.0, "request": {"url": "u", "extra": 1}, "id": "z"});
        assert!(diff(desired, actual).is_empty());
    }

    #[test]
    fn lists_and_nested_fields_differ_at_their_path() {
        let desired = json!({"request": {"url": "new", "assertions": [{"source": "STATUS_CODE"}]}, "tags": ["a"]});
        let actual = json!({"request": {"url": "old", "assertions": []}, "tags": ["a", "b"]});
        assert_eq!(diff(desired, actual), ["request.url", "request.assertions", "tags"]);
    }
}
