//! How monform recognises its objects (design decision 1): an ownership tag
//! `monform:<project>/<logical-id>` on kinds with tags, a natural key on the
//! others, and the state's remote ids as a cache of both.

use monform_model::{Identity, Kind};
use serde_json::Value;

pub const TAG_PREFIX: &str = "monform:";

pub fn ownership_tag(project: &str, logical_id: &str) -> String {
    format!("{TAG_PREFIX}{project}/{logical_id}")
}

/// The (project, logical id) an object's tags say owns it.
pub fn owner(body: &Value) -> Option<(&str, &str)> {
    body.get("tags")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find_map(|tag| tag.strip_prefix(TAG_PREFIX)?.split_once('/'))
}

pub fn is_ownership_tag(tag: &str) -> bool {
    tag.starts_with(TAG_PREFIX)
}

pub fn uses_tags(kind: Kind) -> bool {
    kind.identity() == Identity::OwnershipTag
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_owner_from_tags() {
        let body = json!({"tags": ["team:web", ownership_tag("acme", "home-page")]});
        assert_eq!(owner(&body), Some(("acme", "home-page")));
        assert_eq!(owner(&json!({"tags": ["team:web"]})), None);
        assert!(is_ownership_tag("monform:x/y"));
    }
}
