//! How monform recognises its objects (design decision 1): an ownership tag
//! `monform:<project>/<logical-id>` on kinds with tags, a natural key on the
//! others, and the state's remote ids as a cache of both.

use monform_api::Remote;
use monform_model::quirks::required_on_update;
use monform_model::{Identity, Kind};
use serde_json::{Value, json};

pub use monform_model::OWNERSHIP_TAG_PREFIX as TAG_PREFIX;

pub fn ownership_tag(project: &str, logical_id: &str) -> String {
    format!("{TAG_PREFIX}{project}/{logical_id}")
}

/// The (project, logical id) an object's tags say owns it.
#[cfg(test)]
fn owner(body: &Value) -> Option<(&str, &str)> {
    owner_in_tags(body.get("tags")?)
}

/// [`owner`] of a listed object (read with its id, `Remote::owner`).
pub fn remote_owner(remote: &Remote) -> Option<(String, String)> {
    remote.owner().map(|(p, id)| (p.to_owned(), id.to_owned()))
}

/// Whether a listed object's tags say `project` owns it (as any address).
pub fn owned_by(remote: &Remote, project: &str) -> bool {
    remote_owner(remote).is_some_and(|(p, _)| p == project)
}

#[cfg(test)]
fn owner_in_tags(tags: &Value) -> Option<(&str, &str)> {
    monform_model::ownership_in_tags(tags.as_array()?.iter().filter_map(Value::as_str))
}

pub fn is_ownership_tag(tag: &str) -> bool {
    tag.starts_with(TAG_PREFIX)
}

pub fn uses_tags(kind: Kind) -> bool {
    kind.identity() == Identity::OwnershipTag
}

/// An update body that replaces `project`'s ownership tag on an object by
/// `tag` (or just removes it), keeping its other tags and fields. Checks
/// carry their `checkType` (it picks the typed update endpoint) and every
/// kind the fields its update requires.
pub fn retag_body(kind: Kind, body: &Value, project: &str, tag: Option<&str>) -> Value {
    let ours = format!("{TAG_PREFIX}{project}/");
    let mut tags: Vec<Value> = body
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter(|t| !t.as_str().is_some_and(|t| t.starts_with(&ours)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    if let Some(tag) = tag {
        tags.push(Value::String(tag.to_owned()));
    }
    let mut update = json!({ "tags": tags });
    let required = required_on_update(kind)
        .iter()
        .chain(if kind == Kind::Check { &["checkType"][..] } else { &[] });
    for field in required {
        if let Some(value) = body.get(*field) {
            update[*field] = value.clone();
        }
    }
    update
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

    #[test]
    fn retag_bodies_keep_other_tags_and_required_fields() {
        let check =
            json!({"checkType": "ICMP", "name": "n", "tags": ["team:web", "monform:acme/old", "monform:other/x"]});
        assert_eq!(
            retag_body(Kind::Check, &check, "acme", Some("monform:acme/new")),
            json!({"tags": ["team:web", "monform:other/x", "monform:acme/new"], "checkType": "ICMP"})
        );
        let group = json!({"name": "Prod", "tags": ["monform:acme/prod"]});
        assert_eq!(
            retag_body(Kind::Group, &group, "acme", None),
            json!({"tags": [], "name": "Prod"})
        );
    }
}
