//! Where every HTTP client of monform is built (the API client, the check
//! runner, the agent, webhooks of the emulator and the reconciler,
//! `generate`'s downloads, the tests): [`client`] and [`blocking`] hand
//! out reqwest's builders after installing rustls's crypto provider.
//!
//! reqwest is built with `rustls-no-provider` and rustls with `ring`
//! rather than reqwest's default aws-lc-rs, whose C library (aws-lc-sys)
//! was about 144 s of a cold build on 2 cores (issue 48: CI within 15
//! minutes). Without a provider installed in the process, reqwest panics
//! when a client is built; here it is installed before every builder, so
//! no binary or test can forget it. Building a client any other way is
//! refused by clippy (`disallowed-methods` in the workspace's
//! `clippy.toml`).

use std::sync::Once;

/// Installs ring as the process's rustls crypto provider, once. Another
/// provider already installed (by a library of the process) is kept: any
/// provider serves reqwest.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err: one is installed already, which is all that is needed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An async client's builder (`reqwest::Client::builder()`), the crypto
/// provider installed.
#[allow(clippy::disallowed_methods)] // the one place it is called
pub fn client() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}

/// A blocking client's builder (`reqwest::blocking::Client::builder()`),
/// the crypto provider installed.
#[allow(clippy::disallowed_methods)] // the one place it is called
pub fn blocking() -> reqwest::blocking::ClientBuilder {
    install_crypto_provider();
    reqwest::blocking::Client::builder()
}

#[cfg(test)]
mod tests {
    #[test]
    fn clients_are_built_with_ring_installed() {
        let client = super::client().build();
        assert!(client.is_ok(), "{client:?}");
        let blocking = super::blocking().build();
        assert!(blocking.is_ok(), "{blocking:?}");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        // Again: installing twice is no error.
        super::install_crypto_provider();
    }
}
