//! Connection URLs shown and logged without their password.

/// A connection URL fit to show: the password (in the user part or a
/// `password=` parameter) replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_parameters(url);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{user_info}@{host}"),
        },
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{}", redact_parameters(tail))
}

/// `password=...` and `sslpassword=...` values as `***`, in a query string
/// or a `key=value` connection string.
fn redact_parameters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_password_key(rest) {
        let value_start = at + rest[at..].find('=').map_or(0, |i| i + 1);
        out.push_str(&rest[..value_start]);
        let value_end = rest[value_start..]
            .find(['&', ' ', '#'])
            .map_or(rest.len(), |i| value_start + i);
        out.push_str("***");
        rest = &rest[value_end..];
    }
    out.push_str(rest);
    out
}

fn find_password_key(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("password=") {
        let at = from + found;
        let start = if lower[..at].ends_with("ssl") { at - 3 } else { at };
        let boundary = start == 0 || matches!(lower.as_bytes()[start - 1], b'?' | b'&' | b' ');
        if boundary {
            return Some(start);
        }
        from = at + "password=".len();
    }
    None
}

/// `text` (an error a driver worded, which may quote the URL or its parts)
/// with every form of `url`'s password replaced by `***`: the user part's
/// and `password=` / `sslpassword=` values, as written and percent-decoded.
/// The one scrubber for connection errors, the state backend's and the
/// reconciler's alike.
pub fn scrub_url_secrets(text: &str, url: &str) -> String {
    url_secrets(url)
        .iter()
        .fold(text.to_owned(), |text, secret| text.replace(secret.as_str(), "***"))
}

/// Every form of the password in `url`: as written and percent-decoded.
pub(super) fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = Vec::new();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if let Some((user_info, _)) = authority.rsplit_once('@')
        && let Some((_, password)) = user_info.split_once(':')
    {
        secrets.push(password.to_owned());
    }
    let lower = url.to_ascii_lowercase();
    for key in ["password=", "sslpassword="] {
        let mut from = 0;
        while let Some(found) = lower[from..].find(key) {
            let start = from + found + key.len();
            let end = url[start..].find(['&', ' ', '#']).map_or(url.len(), |i| start + i);
            secrets.push(url[start..end].to_owned());
            from = end;
        }
    }
    let decoded: Vec<String> = secrets.iter().map(|s| percent_decode(s)).collect();
    secrets.extend(decoded);
    secrets.retain(|s| !s.is_empty());
    // Longest first, so a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(high * 16 + low);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            redact_url("postgres://monform:s3cr%40t@db.internal:5432/state?sslmode=require"),
            "postgres://monform:***@db.internal:5432/state?sslmode=require"
        );
        assert_eq!(
            redact_url("postgresql://db/state?user=x&password=hunter2&sslmode=verify-full"),
            "postgresql://db/state?user=x&password=***&sslmode=verify-full"
        );
        assert_eq!(
            redact_url("postgres://u@h/d?sslpassword=k"),
            "postgres://u@h/d?sslpassword=***"
        );
        assert_eq!(redact_url("host=db password=pw user=u"), "host=db password=*** user=u");
        assert_eq!(redact_url("postgres://h/d"), "postgres://h/d");
        let secrets = url_secrets("postgres://monform:s3cr%40t@db/state?password=other");
        assert!(secrets.contains(&"s3cr%40t".to_owned()));
        assert!(secrets.contains(&"s3cr@t".to_owned()));
        assert!(secrets.contains(&"other".to_owned()));
        let url = "postgres://monform:s3cr%40t@db/state?sslpassword=k3y";
        assert_eq!(
            scrub_url_secrets("auth failed for monform:s3cr@t, s3cr%40t, key k3y at db", url),
            "auth failed for monform:***, ***, key *** at db"
        );
        assert_eq!(
            scrub_url_secrets("no password here", "postgres://u@h/d"),
            "no password here"
        );
    }
}
