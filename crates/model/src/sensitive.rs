//! Which values of a resource are secrets: the one rule every output
//! (plans in every format, saved plans, `--effective`, export, the
//! emulator's notifications) masks by, read from the schema's facts.
//!
//! A field is sensitive when the types say so (`x-sensitive`), when a
//! sibling flag is true (`x-sensitive-if`, e.g. a secret variable's value),
//! or when a sibling names a credential (`x-sensitive-if-named`: a header
//! called `Authorization`, `X-Api-Key`, `Cookie`...). Inside any URL, the
//! query parameters named the same way and a user information's password
//! are masked in place (`url`: `https://x/p?apikey=(sensitive)&page=2`).
//! Diagnostics quote a resource's values through `worded`, by the same rule.

use serde_json::Value;

use crate::facts::{Pattern, Step, expand_in, facts_in, matches};
use crate::tree::{Json, Tree, get_at};
use crate::{FieldPath, Kind};

mod url;
mod worded;
pub use url::{any_url_credential, any_url_credential_in, holds_url_credential, is_masked_url, mask_url, mask_urls};
pub use worded::{Hidden, Wording, show_number, word};

/// What masked values read as, in every output.
pub const MASK: &str = "(sensitive)";

/// A masked value the service changed since the last apply (a plan's old
/// value of a credential header set in the web UI): masked too, but not the
/// same text as the files' [`MASK`], so the changed item is the one shown.
pub const MASK_CHANGED: &str = "(sensitive, changed)";

/// What a secret shows as where two values must be told apart without
/// telling either (a conflict's): the first digits of a salted fingerprint.
pub const MASK_FINGERPRINT: &str = "(sensitive, fingerprint ";

/// Whether a header or parameter name (of a header, or of a URL's query)
/// says its value is a credential: `Authorization`, `Proxy-Authorization`,
/// `Cookie`, `Set-Cookie`, and any name with a token, key, secret, password,
/// signature or auth part (`X-Api-Key`, `X-Auth-Token`, `Client-Secret`,
/// `api_key`, `access_token`, `sig`...).
pub fn is_credential_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if matches!(lower.as_str(), "cookie" | "set-cookie") {
        return true;
    }
    lower.split(['-', '_', '.', ' ']).any(|part| {
        matches!(
            part,
            "token"
                | "key"
                | "apikey"
                | "secret"
                | "password"
                | "passwd"
                | "pwd"
                | "auth"
                | "signature"
                | "sig"
                | "jwt"
                | "credential"
                | "credentials"
                | "session"
        ) || part.starts_with("authori")
            || part.ends_with("token")
            || part.ends_with("secret")
            || part.ends_with("password")
    })
}

/// The sensitive field paths of a value (file or API form) of `kind`.
pub fn sensitive_paths(kind: Kind, value: &Value) -> Vec<FieldPath> {
    sensitive_paths_at(kind, value, &FieldPath::root(), value)
}

/// The sensitive field paths of `value`, which sits at `at` inside a
/// resource of `kind` whose variant `resource` tells (a field's old value
/// in a plan, say: it is masked by what it holds, not by the new one).
pub fn sensitive_paths_at(kind: Kind, resource: &Value, at: &FieldPath, value: &Value) -> Vec<FieldPath> {
    sensitive_paths_in(&Json, kind, resource, at, value)
}

/// [`sensitive_paths_at`] of a value in any form.
pub fn sensitive_paths_in<T: Tree>(
    form: &T,
    kind: Kind,
    resource: &T::Node,
    at: &FieldPath,
    value: &T::Node,
) -> Vec<FieldPath> {
    let facts = facts_in(form, kind, resource);
    // Patterns below `at`, as patterns relative to `value` (borrowed: at
    // the root, as for every whole resource, each is itself).
    let depth = at.segments().len();
    let within = |pattern: &'static Pattern| -> Option<&'static [Step]> {
        (pattern.len() >= depth && (depth == 0 || matches(&pattern[..depth].to_vec(), at))).then(|| &pattern[depth..])
    };
    let under_at = |path: FieldPath| FieldPath(at.segments().iter().cloned().chain(path.0).collect());
    let sibling = |path: &FieldPath, name: &str| {
        let mut parent = path.segments().to_vec();
        parent.pop();
        get_at(form, value, &FieldPath(parent).key(name))
    };
    let mut paths: Vec<FieldPath> = Vec::new();
    for pattern in facts.sensitive.iter().filter_map(within) {
        paths.extend(expand_in(form, pattern, value));
    }
    for (pattern, flag) in &facts.sensitive_if {
        for path in within(pattern).into_iter().flat_map(|p| expand_in(form, p, value)) {
            if sibling(&path, flag).and_then(|v| form.as_bool(v)) == Some(true) && !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    for (pattern, name) in &facts.sensitive_named {
        for path in within(pattern).into_iter().flat_map(|p| expand_in(form, p, value)) {
            if sibling(&path, name)
                .and_then(|v| form.as_str(v))
                .is_some_and(is_credential_name)
                && !paths.contains(&path)
            {
                paths.push(path);
            }
        }
    }
    paths.into_iter().map(under_at).collect()
}

/// `value`, at `at` inside a resource of `kind` (variant as `resource`),
/// with every secret it holds masked: by its own content and at `extra`.
pub fn mask_at(kind: Kind, resource: &Value, at: &FieldPath, value: &Value, extra: &[FieldPath]) -> Value {
    let mut sensitive = sensitive_paths_at(kind, resource, at, value);
    sensitive.extend(extra.iter().cloned());
    redact(value, at, &sensitive)
}

/// `value` as every output shows it: the value at every path of
/// `sensitive` (at or below `at`, the place `value` sits in its resource)
/// replaced by [`MASK`], and the credentials of every URL masked in place.
pub fn redact(value: &Value, at: &FieldPath, sensitive: &[FieldPath]) -> Value {
    redact_with(value, at, sensitive, true)
}

/// [`redact`] without masking URLs: for a fingerprint of what the files
/// say, which must change when a URL's token does.
pub fn redact_paths(value: &Value, at: &FieldPath, sensitive: &[FieldPath]) -> Value {
    redact_with(value, at, sensitive, false)
}

fn redact_with(value: &Value, at: &FieldPath, sensitive: &[FieldPath], urls: bool) -> Value {
    if sensitive.contains(at) {
        return Value::String(MASK.into());
    }
    // Most values hold no secret: copy them as they are.
    if !sensitive.iter().any(|p| p.starts_with(at)) {
        return if urls { mask_urls(value) } else { value.clone() };
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_with(v, &at.key(k), sensitive, urls)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| redact_with(v, &at.index(i), sensitive, urls))
                .collect(),
        ),
        other if urls => mask_urls(other),
        other => other.clone(),
    }
}

/// Whether a masked value shows a secret was there: [`MASK`] itself (or
/// [`MASK_CHANGED`], a [`MASK_FINGERPRINT`]), or a URL with a credential masked.
pub fn holds_mask(value: &Value) -> bool {
    match value {
        Value::String(s) => s == MASK || s == MASK_CHANGED || s.starts_with(MASK_FINGERPRINT) || is_masked_url(s),
        Value::Array(items) => items.iter().any(holds_mask),
        Value::Object(map) => map.values().any(holds_mask),
        _ => false,
    }
}

/// The paths of the strings of `value` (below `at`) that are URLs holding
/// a credential: what a saved plan fingerprints, as it does secrets.
pub fn url_credential_paths(value: &Value, at: &FieldPath) -> Vec<FieldPath> {
    let mut paths = Vec::new();
    fn walk(value: &Value, at: FieldPath, paths: &mut Vec<FieldPath>) {
        match value {
            Value::String(s) if holds_url_credential(s) => paths.push(at),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, at.index(i), paths);
                }
            }
            Value::Object(map) => {
                for (k, v) in map {
                    walk(v, at.key(k), paths);
                }
            }
            _ => {}
        }
    }
    walk(value, at.clone(), &mut paths);
    paths
}

/// A whole resource value with its secrets masked: the sensitive paths of
/// the value itself and `extra` (values the loader marked, such as text
/// from `${env:}`).
pub fn mask(kind: Kind, value: &Value, extra: &[FieldPath]) -> Value {
    mask_at(kind, value, &FieldPath::root(), value, extra)
}

/// [`mask`] of a value the caller no longer needs: one without secrets,
/// most of them, is returned as it is instead of copied.
pub fn into_masked(kind: Kind, value: Value, extra: &[FieldPath]) -> Value {
    let root = FieldPath::root();
    let mut sensitive = sensitive_paths_at(kind, &value, &root, &value);
    sensitive.extend(extra.iter().cloned());
    if sensitive.is_empty() && !any_url_credential(&value) {
        return value;
    }
    redact(&value, &root, &sensitive)
}

/// Whether [`mask`] would change a whole resource `value` (any form) of
/// `kind`, with `extra` paths marked: whether it holds a secret by this
/// rule. One that does not is shown as it is (the policies' input builds
/// those without a JSON stage and masks only the others).
pub fn holds_secrets_in<T: Tree>(form: &T, kind: Kind, value: &T::Node, extra: &[FieldPath]) -> bool {
    !extra.is_empty()
        || !sensitive_paths_in(form, kind, value, &FieldPath::root(), value).is_empty()
        || any_url_credential_in(form, value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credential_names() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "X-Api-Key",
            "X-Auth-Token",
            "api_key",
            "Client-Secret",
            "X-Session",
            "PRIVATE-TOKEN",
            "x-hub-signature",
            "access_token",
            "sig",
            "apikey",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in [
            "Accept",
            "Content-Type",
            "User-Agent",
            "X-Request-Id",
            "Cache-Control",
            "keyword",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
    }

    #[test]
    fn headers_named_like_credentials_or_marked_secret_are_masked() {
        let check = json!({"checkType": "API", "name": "a", "request": {"method": "GET", "url": "https://x",
            "headers": [
                {"key": "Accept", "value": "application/json"},
                {"key": "Authorization", "value": "Bearer hunter2"},
                {"key": "X-Tenant", "value": "acme-secret", "secret": true}
            ],
            "basicAuth": {"username": "u", "password": "pw"}}});
        let masked = mask(Kind::Check, &check, &[]);
        let text = masked.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("acme-secret") && !text.contains("\"pw\""),
            "{text}"
        );
        assert!(text.contains("application/json"), "{text}");
        let channel = json!({"type": "WEBHOOK", "config": {"name": "n", "url": "https://h", "method": "POST",
            "headers": [{"key": "X-Api-Key", "value": "k-123"}]}});
        assert!(!mask(Kind::AlertChannel, &channel, &[]).to_string().contains("k-123"));
    }

    #[test]
    fn a_value_inside_a_resource_is_masked_by_what_it_holds() {
        let check = json!({"checkType": "API", "name": "a", "request": {"url": "https://x"}});
        let old = json!([{"key": "Accept", "value": "a/b"}, {"key": "Cookie", "value": "sid=1"}]);
        let masked = mask_at(Kind::Check, &check, &FieldPath::parse("request.headers"), &old, &[]);
        assert_eq!(
            masked,
            json!([{"key": "Accept", "value": "a/b"}, {"key": "Cookie", "value": MASK}])
        );
    }

    #[test]
    fn extra_paths_are_masked() {
        let check = json!({"checkType": "URL", "name": "k=abc", "request": {"url": "https://x"}});
        let masked = mask(Kind::Check, &check, &[FieldPath::parse("name")]);
        assert_eq!(masked["name"], MASK);
    }

    /// Issue 43: a credential in a URL's query is masked in every URL of
    /// every kind (check, webhook channel), the URL kept readable; the
    /// fingerprint form keeps it.
    #[test]
    fn url_query_credentials_are_masked_in_place() {
        let check = json!({"checkType": "API", "name": "a",
            "request": {"method": "GET", "url": "https://api.example.com/health?apikey=MARKER&page=2"}});
        for masked in [
            mask(Kind::Check, &check, &[]),
            into_masked(Kind::Check, check.clone(), &[]),
        ] {
            assert_eq!(
                masked["request"]["url"],
                "https://api.example.com/health?apikey=(sensitive)&page=2"
            );
        }
        let channel = json!({"type": "WEBHOOK", "config": {"name": "n", "url": "https://h.test/in?token=MARKER",
            "method": "POST", "headers": [{"key": "Authorization", "value": "MARKER"}]}});
        let masked = mask(Kind::AlertChannel, &channel, &[]).to_string();
        assert!(
            !masked.contains("MARKER") && masked.contains("https://h.test/in?token=(sensitive)"),
            "{masked}"
        );
        assert!(holds_mask(&json!(["https://h.test/in?token=(sensitive)"])));
        assert!(!holds_mask(&json!("Homepage")));
        let url = FieldPath::parse("request.url");
        assert_eq!(
            redact_paths(&check["request"]["url"], &url, &[]),
            check["request"]["url"]
        );
        assert_eq!(url_credential_paths(&check, &FieldPath::root()), vec![url]);
    }

    /// The owned form masks what `mask` masks, secrets or none.
    #[test]
    fn into_masked_is_mask() {
        let secret = json!({"checkType": "API", "name": "a", "request": {"url": "https://x",
            "headers": [{"key": "Authorization", "value": "Bearer hunter2"}]}});
        let plain = json!({"checkType": "API", "name": "a", "request": {"url": "https://x", "headers": []}});
        for (value, extra) in [
            (&secret, vec![]),
            (&plain, vec![]),
            (&plain, vec![FieldPath::parse("name")]),
        ] {
            assert_eq!(
                into_masked(Kind::Check, value.clone(), &extra),
                mask(Kind::Check, value, &extra)
            );
        }
        assert!(!into_masked(Kind::Check, secret, &[]).to_string().contains("hunter2"));
    }
}
