//! Where a request carrying the API key may go at all, whoever chose the
//! URL: `https://` anywhere, plain `http://` only to this machine (the
//! emulator on a loopback port), where the key never crosses a network.

use reqwest::Url;

/// Why a URL may not carry the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("`{url}` is not a URL ({reason})")]
    Invalid { url: String, reason: String },
    #[error("`{url}` is not an http:// or https:// URL")]
    Scheme { url: String },
    #[error(
        "`{url}` is plain http:// to {host}, which is not this machine: the API key would cross the network unencrypted (use https://; http:// is for 127.0.0.1, ::1 or localhost)"
    )]
    PlainHttp { url: String, host: String },
}

/// Checks that a request to `url` may carry the API key.
pub fn check_destination(url: &str) -> Result<(), Unfit> {
    let parsed = Url::parse(url).map_err(|e| Unfit::Invalid {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&parsed) => Ok(()),
        "http" => Err(Unfit::PlainHttp {
            url: url.to_owned(),
            host: parsed.host_str().unwrap_or_default().to_owned(),
        }),
        _ => Err(Unfit::Scheme { url: url.to_owned() }),
    }
}

/// 127.0.0.0/8, ::1 or `localhost` (the parser has already written an
/// address in its one form: `127.1` is `127.0.0.1`, IPv6 in brackets).
fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(address) => address.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_this_machine() {
        for fit in [
            "https://api.example.com",
            "https://10.0.0.1:8443/v1",
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://[::1]:9000/",
            "http://localhost:3000",
            "http://LOCALHOST",
        ] {
            assert_eq!(check_destination(fit), Ok(()), "{fit}");
        }
        for unfit in [
            "http://attacker.example/x",
            "http://10.0.0.1:8080",
            "http://localhost.attacker.example",
            "http://127.0.0.1.nip.io",
            "http://[::ffff:7f00:1]",
            "http://0.0.0.0:8080",
        ] {
            assert!(
                matches!(check_destination(unfit), Err(Unfit::PlainHttp { .. })),
                "{unfit}"
            );
        }
        assert!(matches!(check_destination("ftp://x"), Err(Unfit::Scheme { .. })));
        assert!(matches!(check_destination("local"), Err(Unfit::Invalid { .. })));
    }
}
