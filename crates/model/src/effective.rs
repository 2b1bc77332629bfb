//! "The effective check": a check as the service runs it, the one meaning
//! `plan --effective` shows, `monform test --local` runs, the run budget
//! counts and the emulator executes: its group applied
//! ([`crate::group_rules::apply_group`]: overriding fields imposed, tags and
//! environment variables merged, an API check's `apiCheckDefaults` and
//! snippets added) and, for a runner, its snippets' scripts inlined
//! ([`inline_snippets`]).

use serde_json::Value;

use crate::Kind;
use crate::group_rules::apply_group_in;
pub use crate::snippets::inline_snippets;
use crate::tree::{Json, Tree};
use crate::wire::to_wire;

/// `check` as its group (if any) makes it run. Both in one form, the
/// files' or the API's: the fields read share their names (a snippet is
/// `setupSnippet` in one and `setupSnippetId` in the other, each copied).
pub fn effective(check: &Value, group: Option<&Value>) -> Value {
    into_effective(check.clone(), group)
}

/// [`effective`] of a check the caller no longer needs: no copy of it
/// (the policies' input builds 100,000 of them).
pub fn into_effective(check: Value, group: Option<&Value>) -> Value {
    into_effective_in(&mut Json, check, group)
}

/// [`into_effective`] in any form (the policies' input: the interpreter's
/// values, with no JSON stage).
pub fn into_effective_in<T: Tree>(form: &mut T, check: T::Node, group: Option<&T::Node>) -> T::Node {
    match group {
        Some(group) => apply_group_in(form, check, group),
        None => check,
    }
}

/// A check of the files (and its group's, files' form) in the API's form
/// the service runs, references left as logical ids (nothing here has a
/// remote id): what `monform test --local` hands a runner.
pub fn effective_wire(check: &Value, group: Option<&Value>) -> Value {
    let logical = |_: Kind, id: &str| Some(Value::String(id.to_owned()));
    let wire = to_wire(Kind::Check, check, &logical);
    let group = group.map(|group| to_wire(Kind::Group, group, &logical));
    effective(&wire, group.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The files' and the API's forms of a check in a group give the same
    /// effective check, so `plan --effective` shows what `test --local` runs.
    #[test]
    fn both_forms_merge_tags_variables_and_api_defaults_and_impose_locations() {
        let check = json!({
            "checkType": "API", "name": "orders", "frequency": 5, "group": "prod",
            "locations": ["eu-west-1"], "tags": ["own"],
            "environmentVariables": [{ "key": "A", "value": "1" }],
            "request": { "method": "GET", "url": "https://example.com", "headers": [] },
        });
        let group = json!({
            "name": "Prod", "concurrency": 1, "locations": ["us-east-1"], "tags": ["team"],
            "environmentVariables": [{ "key": "B", "value": "2" }],
            "apiCheckDefaults": { "headers": [{ "key": "X", "value": "y" }] },
            "setupSnippet": "login",
        });
        let files = effective(&check, Some(&group));
        assert_eq!(files["locations"], json!(["us-east-1"]));
        assert_eq!(files["tags"], json!(["own", "team"]));
        assert_eq!(files["environmentVariables"].as_array().map(Vec::len), Some(2));
        assert_eq!(files["request"]["headers"], json!([{ "key": "X", "value": "y" }]));
        assert_eq!(files["setupSnippet"], "login");
        let wire = effective_wire(&check, Some(&group));
        for field in ["locations", "tags", "environmentVariables"] {
            assert_eq!(wire[field], files[field], "{field}");
        }
        assert_eq!(wire["request"]["headers"], files["request"]["headers"]);
        assert_eq!(wire["setupSnippetId"], "login");
        assert_eq!(effective(&check, None), check);
        assert_eq!(into_effective(check.clone(), Some(&group)), files);
        assert_eq!(into_effective(check.clone(), None), check);
    }
}
