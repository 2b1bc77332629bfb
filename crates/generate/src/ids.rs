//! Logical ids that stay the same when the document is generated again:
//! read from what the document names (an operationId, a method and path,
//! a page's path), never from a position or a counter, so adding one
//! operation or page adds one item and renames none.

use std::collections::BTreeMap;

use monform_model::address::is_valid_logical_id;

/// The longest logical id (`LOGICAL_ID_PATTERN`).
const MAX_ID: usize = 64;

/// `text` as a logical id: letters, digits, `_` and `-` kept, every run of
/// other characters one `-`, no `-` at either end; `empty` when nothing is
/// left. Past 64 characters, the start and a hash of the whole text (two
/// long paths that share their first 55 characters stay apart).
pub fn slug(text: &str, empty: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '_');
    let id = if trimmed.is_empty() {
        empty.to_owned()
    } else {
        trimmed.to_owned()
    };
    if id.len() <= MAX_ID {
        return id;
    }
    let head = id[..MAX_ID - 9].trim_end_matches(['-', '_']);
    format!("{head}-{:08x}", hash(text))
}

/// A stable 32-bit FNV-1a hash: the same text gives the same suffix on
/// every machine and release (std's hasher is seeded per process).
pub fn hash(text: &str) -> u32 {
    text.bytes()
        .fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// `wanted` as unique keys: `(key, source)` pairs, where `source` is what
/// the key was made from (an operation, a URL). When two sources give one
/// key, the first source (in sorted order) keeps it and each other gets
/// its hash appended: a new colliding source never renames an old one
/// that sorts first.
pub fn unique(wanted: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut by_key: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, source) in wanted {
        by_key.entry(key).or_default().push(source);
    }
    let mut out = Vec::new();
    for (key, mut sources) in by_key {
        sources.sort();
        sources.dedup();
        for (i, source) in sources.into_iter().enumerate() {
            let key = if i == 0 {
                key.clone()
            } else {
                let head = &key[..key.len().min(MAX_ID - 9)];
                format!("{}-{:08x}", head.trim_end_matches(['-', '_']), hash(&source))
            };
            out.push((key, source));
        }
    }
    out.sort();
    out
}

/// Whether `id` may name a definition (`--id`).
pub fn is_valid(id: &str) -> bool {
    is_valid_logical_id(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_logical_ids() {
        assert_eq!(slug("GET /v1/checks/{id}", "x"), "GET-v1-checks-id");
        assert_eq!(slug("/", "home"), "home");
        assert_eq!(slug("listChecks", "x"), "listChecks");
        assert_eq!(slug("get_v1_checks_0", "x"), "get_v1_checks_0");
        let long = format!("/{}", "segment/".repeat(20));
        let id = slug(&long, "x");
        assert!(is_valid(&id), "{id}");
        assert_eq!(id, slug(&long, "x"));
        assert_ne!(id, slug(&format!("{long}more"), "x"));
    }

    #[test]
    fn collisions_keep_the_first_source() {
        let keys = unique(vec![
            ("a-b".into(), "/a-b".into()),
            ("a-b".into(), "/a/b".into()),
            ("c".into(), "/c".into()),
        ]);
        assert_eq!(keys[0], ("a-b".into(), "/a-b".into()));
        assert!(keys[1].0.starts_with("a-b-") && keys[1].1 == "/a/b", "{keys:?}");
        assert_eq!(keys[2], ("c".into(), "/c".into()));
        // Adding a source that sorts after leaves the earlier keys alone.
        let more = unique(vec![
            ("a-b".into(), "/a-b".into()),
            ("a-b".into(), "/a/b".into()),
            ("a-b".into(), "/a/b/".into()),
        ]);
        assert_eq!(more[0].0, keys[0].0);
        assert!(more.iter().any(|(k, s)| k == &keys[1].0 && s == "/a/b"));
    }
}
