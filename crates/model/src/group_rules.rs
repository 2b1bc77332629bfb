//! What a check group imposes on the checks inside it: the one table the
//! emulator applies when it runs or lists a group's checks and the linter
//! reads to say which of a check's own fields are ignored (issue 20).

use serde_json::Value;

use crate::resources::CheckType;

/// Check fields the group's value replaces whenever the group sets it (the
/// group and check fields share their names, in the files and on the wire).
/// `retryStrategy` is replaced only by a strategy object: the group's
/// `FALLBACK` leaves each check its own.
pub const GROUP_OVERRIDES: &[&str] = &[
    "locations",
    "privateLocations",
    "runtimeId",
    "alertSettings",
    "retryStrategy",
];

/// Whether `group` (its JSON, model or wire form) sets `field` so that it
/// overrides the check's own value.
pub fn group_overrides(group: &Value, field: &str) -> bool {
    match group.get(field) {
        None | Some(Value::Null) => false,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(value) if field == "retryStrategy" => value.is_object(),
        Some(_) => true,
    }
}

/// Imposes on `check` what `group` overrides (both JSON, same form): the
/// fields of [`GROUP_OVERRIDES`] the group sets, and deactivated or muted
/// when the group is.
pub fn impose(check: &mut Value, group: &Value) {
    for field in GROUP_OVERRIDES {
        if group_overrides(group, field) {
            check[*field] = group[*field].clone();
        }
    }
    if group["activated"] == false {
        check["activated"] = Value::Bool(false);
    }
    if group["muted"] == true {
        check["muted"] = Value::Bool(true);
    }
}

/// A check as it runs in its group (monform's reading of "group settings
/// applied"; see ARCHITECTURE.md; the emulator runs checks so, and
/// `monform test --local` too; both JSON in the wire form): locations, private locations, runtime,
/// retry strategy and alert settings when the group sets them; tags and
/// environment variables merged; deactivated or muted when the group is;
/// API checks get the group's `apiCheckDefaults` headers, query parameters and
/// assertions, and snippets when they have none.
pub fn apply_group(mut check: Value, group: &Value) -> Value {
    impose(&mut check, group);
    append(&mut check, "tags", &group["tags"]);
    append(&mut check, "environmentVariables", &group["environmentVariables"]);
    if CheckType::of_check(&check) == Ok(CheckType::Api) {
        let defaults = &group["apiCheckDefaults"];
        for field in ["headers", "queryParameters", "assertions"] {
            if let Some(request) = check.get_mut("request") {
                append(request, field, &defaults[field]);
            }
        }
        // The API's snippet fields and the files' (`effective` takes either form).
        for field in [
            "setupSnippetId",
            "tearDownSnippetId",
            "setupSnippet",
            "tearDownSnippet",
            "localSetupScript",
            "localTearDownScript",
        ] {
            if check.get(field).is_none_or(Value::is_null) && group.get(field).is_some_and(|v| !v.is_null()) {
                check[field] = group[field].clone();
            }
        }
    }
    check
}

fn append(target: &mut Value, field: &str, extra: &Value) {
    let Some(extra) = extra.as_array() else { return };
    // Taken, not copied: the policies' input merges 100,000 checks' tags.
    let mut list = match target[field].take() {
        Value::Array(list) => list,
        _ => Vec::new(),
    };
    for item in extra {
        if !list.contains(item) {
            list.push(item.clone());
        }
    }
    target[field] = Value::Array(list);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_lists_nulls_and_fallback_leave_the_check_its_own() {
        let group = json!({
            "locations": [], "privateLocations": ["p"], "runtimeId": null,
            "retryStrategy": "FALLBACK", "alertSettings": { "escalationType": "RUN_BASED" }
        });
        let overridden: Vec<&str> = GROUP_OVERRIDES
            .iter()
            .copied()
            .filter(|f| group_overrides(&group, f))
            .collect();
        assert_eq!(overridden, ["privateLocations", "alertSettings"]);
        assert!(group_overrides(
            &json!({ "retryStrategy": { "type": "FIXED" } }),
            "retryStrategy"
        ));
    }
}
