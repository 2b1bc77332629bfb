//! Credentials inside a URL's text: query parameters named like
//! credentials (`?apikey=`, `?access_token=`, `?sig=`: the header rule,
//! [`is_credential_name`]), the same in a fragment (`#access_token=`, as
//! OAuth's implicit flow returns it), and the password of the user
//! information (`postgres://app:PASSWORD@db/x`). Masked in place, so the
//! URL stays readable: `https://api.example.com/health?apikey=(sensitive)&page=2`.
//!
//! A string is a URL here when the whole of it is one: a scheme, `://`,
//! and no whitespace. URLs inside longer text (a script) are the text's.

use std::borrow::Cow;

use serde_json::Value;

use super::{MASK, is_credential_name};

/// `text` with the credentials it holds masked, when it is a URL; as it is
/// (borrowed) otherwise.
pub fn mask_url(text: &str) -> Cow<'_, str> {
    let Some(rest_at) = authority_start(text) else {
        return Cow::Borrowed(text);
    };
    // Most URLs have nothing to mask: no copy for them.
    if !text[rest_at..].contains(['?', '#', '@']) {
        return Cow::Borrowed(text);
    }
    let rest = &text[rest_at..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let mut out = String::with_capacity(text.len());
    let mut masked = false;
    out.push_str(&text[..rest_at]);
    match authority.rfind('@').map(|at| (&authority[..at], &authority[at..])) {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, password)) if !password.is_empty() && password != MASK => {
                masked = true;
                out.push_str(user);
                out.push(':');
                out.push_str(MASK);
                out.push_str(host);
            }
            _ => out.push_str(authority),
        },
        None => out.push_str(authority),
    }
    let after = &rest[authority_end..];
    let (before_fragment, fragment) = match after.find('#') {
        Some(at) => (&after[..at], Some(&after[at + 1..])),
        None => (after, None),
    };
    match before_fragment.find('?') {
        Some(at) => {
            out.push_str(&before_fragment[..=at]);
            masked |= mask_parameters(&before_fragment[at + 1..], &mut out);
        }
        None => out.push_str(before_fragment),
    }
    if let Some(fragment) = fragment {
        out.push('#');
        masked |= mask_parameters(fragment, &mut out);
    }
    if masked { Cow::Owned(out) } else { Cow::Borrowed(text) }
}

/// Whether `text` is a URL holding a credential that [`mask_url`] masks.
pub fn holds_url_credential(text: &str) -> bool {
    matches!(mask_url(text), Cow::Owned(_))
}

/// Whether `text` is a URL [`mask_url`] masked (it holds [`MASK`]).
pub fn is_masked_url(text: &str) -> bool {
    authority_start(text).is_some() && text.contains(MASK)
}

/// `value` with every URL in it masked ([`mask_url`]), at any depth.
pub fn mask_urls(value: &Value) -> Value {
    match value {
        Value::String(s) => match mask_url(s) {
            Cow::Owned(masked) => Value::String(masked),
            Cow::Borrowed(_) => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(mask_urls).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), mask_urls(v))).collect()),
        other => other.clone(),
    }
}

/// Whether any string of `value` is a URL holding a credential.
pub fn any_url_credential(value: &Value) -> bool {
    any_url_credential_in(&crate::tree::Json, value)
}

/// [`any_url_credential`] of a value in any form.
pub fn any_url_credential_in<T: crate::tree::Tree>(form: &T, value: &T::Node) -> bool {
    match form.as_str(value) {
        Some(s) => holds_url_credential(s),
        None => form.any_child(value, &mut |child| any_url_credential_in(form, child)),
    }
}

/// Where a URL's authority starts (after `scheme://`), if `text` is a URL.
fn authority_start(text: &str) -> Option<usize> {
    // The scheme is the text's leading run of scheme characters (a letter
    // first), so the first `://` is right after it or the text is no URL:
    // read that run rather than search the whole text (every string of
    // every resource is asked, for the policies' input too).
    let bytes = text.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let at = bytes
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (text[at..].starts_with("://") && !text.contains(char::is_whitespace)).then_some(at + 3)
}

/// `name=value&...` into `out`, the value of each parameter named like a
/// credential masked; whether any was.
fn mask_parameters(parameters: &str, out: &mut String) -> bool {
    let mut masked = false;
    for (i, parameter) in parameters.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match parameter.split_once('=') {
            Some((name, value)) if !value.is_empty() && value != MASK && is_credential_name(&decode(name)) => {
                masked = true;
                out.push_str(name);
                out.push('=');
                out.push_str(MASK);
            }
            _ => out.push_str(parameter),
        }
    }
    masked
}

/// A parameter name percent-decoded (`api%5Fkey` is `api_key`), `+` as a
/// space; undecodable bytes as they are.
fn decode(name: &str) -> Cow<'_, str> {
    if !name.contains(['%', '+']) {
        return Cow::Borrowed(name);
    }
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            byte => out.push(byte),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credential_parameters_are_masked_and_the_rest_kept() {
        for (url, masked) in [
            (
                "https://api.example.com/health?apikey=abc123&page=2",
                "https://api.example.com/health?apikey=(sensitive)&page=2",
            ),
            (
                "https://x.test/p?token=t&access_token=a&sig=s&api_key=k&key=k2&password=p&secret=s2",
                "https://x.test/p?token=(sensitive)&access_token=(sensitive)&sig=(sensitive)&api_key=(sensitive)&key=(sensitive)&password=(sensitive)&secret=(sensitive)",
            ),
            (
                "https://s3.test/o?X-Amz-Credential=AKIA&X-Amz-Signature=f00&X-Amz-Expires=60",
                "https://s3.test/o?X-Amz-Credential=(sensitive)&X-Amz-Signature=(sensitive)&X-Amz-Expires=60",
            ),
            ("https://x.test/?API%5FKEY=k", "https://x.test/?API%5FKEY=(sensitive)"),
            (
                "https://app.test/cb#access_token=tok&state=1",
                "https://app.test/cb#access_token=(sensitive)&state=1",
            ),
            (
                "postgres://app:hunter2@db.test:5432/x?sslmode=require",
                "postgres://app:(sensitive)@db.test:5432/x?sslmode=require",
            ),
            ("svn+ssh.x-1://u:pw@h.test/", "svn+ssh.x-1://u:(sensitive)@h.test/"),
            (
                "https://hooks.test/h?x-api-key=k#frag",
                "https://hooks.test/h?x-api-key=(sensitive)#frag",
            ),
        ] {
            assert_eq!(mask_url(url), masked, "{url}");
            assert!(holds_url_credential(url) && is_masked_url(masked), "{url}");
            // Masking twice changes nothing more.
            assert_eq!(mask_url(masked), masked);
        }
    }

    #[test]
    fn other_text_is_left_alone() {
        for text in [
            "https://x.test/p?page=2&keyword=monkey&q=token",
            "https://x.test/p?token=",
            "https://user@x.test/",
            "https://x.test/a@b?c=d",
            "fetch('https://x.test/?token=abc')",
            "see https://x.test/?token=abc",
            "token=abc",
            "?token=abc",
            "1http://x.test/?token=a",
            "http:/x.test/?token=a",
            "ht tp://x.test/?token=a",
            "\u{e9}://x.test/?token=a",
            "h\u{e9}://x.test/?token=a",
            "",
        ] {
            assert!(matches!(mask_url(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn values_are_masked_at_any_depth() {
        let value = json!({"url": "https://x.test/?token=a", "links": [{"url": "https://y.test/?sig=b"}], "n": 1});
        assert!(any_url_credential(&value));
        assert_eq!(
            mask_urls(&value),
            json!({"url": "https://x.test/?token=(sensitive)", "links": [{"url": "https://y.test/?sig=(sensitive)"}], "n": 1})
        );
        assert!(!any_url_credential(&json!({"url": "https://x.test/?page=1"})));
    }
}
