//! What a check group imposes on the checks inside it: the one table the
//! emulator applies when it runs or lists a group's checks and the linter
//! reads to say which of a check's own fields are ignored (issue 20).

use serde_json::Value;

use crate::Kind;
use crate::facts::variant_tag;
use crate::resources::CheckType;
use crate::tree::{Json, Tree};

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
    overrides_in(&Json, group, field)
}

/// [`group_overrides`] of a group in any form.
pub fn overrides_in<T: Tree>(form: &T, group: &T::Node, field: &str) -> bool {
    match form.get(group, field) {
        None => false,
        Some(value) if form.is_null(value) => false,
        Some(value) => match form.items_len(value) {
            Some(len) => len > 0,
            None if field == "retryStrategy" => form.is_object(value),
            None => true,
        },
    }
}

/// Imposes on `check` what `group` overrides (both JSON, same form): the
/// fields of [`GROUP_OVERRIDES`] the group sets, and deactivated or muted
/// when the group is.
pub fn impose(check: &mut Value, group: &Value) {
    impose_in(&mut Json, check, group)
}

/// [`impose`] in any form.
pub fn impose_in<T: Tree>(form: &mut T, check: &mut T::Node, group: &T::Node) {
    for field in GROUP_OVERRIDES {
        if overrides_in(form, group, field)
            && let Some(value) = form.get(group, field)
        {
            form.set(check, field, value.clone());
        }
    }
    if form.get(group, "activated").and_then(|v| form.as_bool(v)) == Some(false) {
        let value = form.bool(false);
        form.set(check, "activated", value);
    }
    if form.get(group, "muted").and_then(|v| form.as_bool(v)) == Some(true) {
        let value = form.bool(true);
        form.set(check, "muted", value);
    }
}

/// A check as it runs in its group (monform's reading of "group settings
/// applied"; see ARCHITECTURE.md; the emulator runs checks so, and
/// `monform test --local` too; both JSON in the wire form): locations, private locations, runtime,
/// retry strategy and alert settings when the group sets them; tags and
/// environment variables merged; deactivated or muted when the group is;
/// API checks get the group's `apiCheckDefaults` headers, query parameters and
/// assertions, and snippets when they have none.
pub fn apply_group(check: Value, group: &Value) -> Value {
    apply_group_in(&mut Json, check, group)
}

/// [`apply_group`] in any form (the policies' input merges 100,000
/// checks in the interpreter's own values).
pub fn apply_group_in<T: Tree>(form: &mut T, mut check: T::Node, group: &T::Node) -> T::Node {
    impose_in(form, &mut check, group);
    for field in ["tags", "environmentVariables"] {
        let extra = form.get(group, field);
        append(form, &mut check, field, extra);
    }
    let check_type = variant_tag(Kind::Check)
        .and_then(|tag| form.get(&check, tag))
        .and_then(|v| form.as_str(v))
        .unwrap_or_default()
        .parse::<CheckType>();
    if check_type == Ok(CheckType::Api) {
        let defaults = form.get(group, "apiCheckDefaults");
        if let Some(mut request) = form.take(&mut check, "request") {
            for field in ["headers", "queryParameters", "assertions"] {
                let extra = defaults.and_then(|d| form.get(d, field));
                append(form, &mut request, field, extra);
            }
            form.set(&mut check, "request", request);
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
            let own = form.get(&check, field).is_none_or(|v| form.is_null(v));
            match form.get(group, field) {
                Some(value) if own && !form.is_null(value) => {
                    let value = value.clone();
                    form.set(&mut check, field, value);
                }
                _ => {}
            }
        }
    }
    check
}

fn append<T: Tree>(form: &mut T, target: &mut T::Node, field: &str, extra: Option<&T::Node>) {
    let Some(extra) = extra else { return };
    let Some(len) = form.items_len(extra) else { return };
    // Taken, not copied: the policies' input merges 100,000 checks' tags.
    let mut list = match form.take(target, field) {
        Some(own) => form.items_of(own),
        None => Vec::new(),
    };
    for item in (0..len).filter_map(|i| form.item(extra, i)) {
        if !list.contains(item) {
            list.push(item.clone());
        }
    }
    let list = form.array(list);
    form.set(target, field, list);
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
