//! Snippets referenced by id become part of a check's own scripts before it
//! runs, wherever it runs (the emulator, an agent, `test --local`): only the
//! caller can look a snippet up, so it hands the scripts in.

use serde_json::Value;

/// Inlines `setupSnippetId` before the check's `localSetupScript` and
/// `tearDownSnippetId` after its `localTearDownScript`. An id that
/// `script_of` cannot resolve stays, and the run notes it as skipped.
pub fn inline_snippets(check: &mut Value, script_of: &dyn Fn(&Value) -> Option<String>) {
    inline(check, "setupSnippetId", "localSetupScript", script_of, true);
    inline(check, "tearDownSnippetId", "localTearDownScript", script_of, false);
}

fn inline(
    check: &mut Value,
    id_field: &str,
    script_field: &str,
    script_of: &dyn Fn(&Value) -> Option<String>,
    first: bool,
) {
    let Some(object) = check.as_object_mut() else { return };
    let Some(snippet) = object.get(id_field).filter(|id| !id.is_null()).and_then(script_of) else {
        return;
    };
    object.remove(id_field);
    let own = object.get(script_field).and_then(Value::as_str).unwrap_or_default();
    let joined = if own.is_empty() {
        snippet
    } else if first {
        format!("{snippet}\n{own}")
    } else {
        format!("{own}\n{snippet}")
    };
    object.insert(script_field.to_owned(), Value::String(joined));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn setup_snippets_run_first_teardown_snippets_last_unknown_ids_stay() {
        let scripts = |id: &Value| match id.as_i64() {
            Some(1) => Some("snippet-setup()".to_owned()),
            Some(2) => Some("snippet-teardown()".to_owned()),
            _ => None,
        };
        let mut check = json!({
            "setupSnippetId": 1, "localSetupScript": "own-setup()",
            "tearDownSnippetId": 2, "localTearDownScript": "own-teardown()",
        });
        inline_snippets(&mut check, &scripts);
        assert_eq!(
            check,
            json!({
                "localSetupScript": "snippet-setup()\nown-setup()",
                "localTearDownScript": "own-teardown()\nsnippet-teardown()",
            })
        );
        let mut unknown = json!({ "setupSnippetId": 9, "tearDownSnippetId": null });
        inline_snippets(&mut unknown, &scripts);
        assert_eq!(unknown, json!({ "setupSnippetId": 9, "tearDownSnippetId": null }));
    }
}
