//! Checks as they run: with their group's settings applied, matched by tags.

use monform_model::Kind;
use monform_model::group_rules::apply_group;
use monform_model::resources::CheckType;
use rusqlite::Connection;
use serde_json::Value;

use crate::ids::id_text;
use crate::store::Objects;

/// A check as it runs: with its group's settings applied and the scripts of
/// the snippets it (or its group) names by id inlined.
pub fn effective_check(db: &Connection, account: &str, check: Value) -> rusqlite::Result<Value> {
    let group = match &check["groupId"] {
        Value::Null => None,
        id => db.get(account, Kind::Group.section(), &id_text(id))?,
    };
    let mut check = match group {
        Some(group) => apply_group(check, &group),
        None => check,
    };
    let mut snippets = Vec::new();
    for field in ["setupSnippetId", "tearDownSnippetId"] {
        if !check[field].is_null() {
            let snippet = db.get(account, Kind::Snippet.section(), &id_text(&check[field]))?;
            snippets.push((check[field].clone(), snippet));
        }
    }
    let script_of = |id: &Value| {
        let (_, snippet) = snippets.iter().find(|(known, _)| known == id)?;
        snippet.as_ref()?["script"].as_str().map(str::to_owned)
    };
    monform_runner::inline_snippets(&mut check, &script_of);
    Ok(check)
}

/// Whether `check` carries every tag of some group of `match_tags`.
pub fn has_tags(check: &Value, tags: &[String]) -> bool {
    let own = check["tags"].as_array();
    tags.iter()
        .all(|t| own.is_some_and(|list| list.iter().any(|x| x.as_str() == Some(t))))
}

/// Every check type's wire name, for messages and filters.
/// The names of every check type.
pub fn check_type_names() -> Vec<&'static str> {
    CheckType::ALL.iter().map(|t| t.as_str()).collect()
}

/// `Config::normalise_urls` (off by default): the scheme and host of a
/// check's `request.url` lowercased, as a service that normalises URLs
/// stores them. The service's spec names no rewrite; this exists so clients
/// can test that they take a rewritten value for what they wrote (monform
/// records it as the service's normal form).
pub fn normalise_url(check: &mut Value) {
    let Some(url) = check.pointer_mut("/request/url") else {
        return;
    };
    let Some(text) = url.as_str() else {
        return;
    };
    let Some(scheme_end) = text.find("://") else {
        return;
    };
    let host_start = scheme_end + 3;
    let host_end = text[host_start..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |i| host_start + i);
    let normal = format!("{}{}", text[..host_end].to_ascii_lowercase(), &text[host_end..]);
    *url = Value::String(normal);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_match_every_tag_of_a_group() {
        let check = json!({ "tags": ["a", "b"] });
        assert!(has_tags(&check, &["a".into(), "b".into()]));
        assert!(!has_tags(&check, &["a".into(), "c".into()]));
        assert!(has_tags(&check, &[]));
    }
}

#[cfg(test)]
mod normalise_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lowercases_scheme_and_host_only() {
        let mut check = json!({"request": {"url": "HTTPS://Example.COM/Path?Q=A"}});
        normalise_url(&mut check);
        assert_eq!(check["request"]["url"], "https://example.com/Path?Q=A");
        let mut odd = json!({"request": {"url": "not a url"}});
        normalise_url(&mut odd);
        assert_eq!(odd["request"]["url"], "not a url");
    }
}
