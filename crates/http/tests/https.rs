//! A real TLS handshake on ring: a blocking and an async client of
//! monform-http against a loopback HTTPS server (rustls's own server, a
//! self-signed certificate for 127.0.0.1 valid until 2125, in this
//! folder), verified against that certificate and, as a check's `skipSSL`
//! does, unverified.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const CERT: &[u8] = include_bytes!("localhost.crt");
const KEY: &[u8] = include_bytes!("localhost.key");

/// Serves `connections` HTTPS requests on a loopback port, each answered
/// `ok`; its URL.
fn serve(connections: usize) -> String {
    monform_http::install_crypto_provider();
    let cert = CertificateDer::from_pem_slice(CERT).expect("the test certificate");
    let key = PrivateKeyDer::from_pem_slice(KEY).expect("the test key");
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("a server configuration");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!(
        "https://127.0.0.1:{}/",
        listener.local_addr().expect("its address").port()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let connection = rustls::ServerConnection::new(Arc::clone(&config)).expect("a TLS connection");
            let mut tls = rustls::StreamOwned::new(connection, stream.expect("a connection"));
            let mut reader = BufReader::new(&mut tls);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let _ = tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    url
}

fn root() -> reqwest::Certificate {
    reqwest::Certificate::from_pem(CERT).expect("the test certificate")
}

#[test]
fn a_blocking_client_completes_a_verified_and_an_unverified_handshake() {
    let url = serve(2);
    let verified = monform_http::blocking()
        .tls_certs_only([root()])
        .build()
        .expect("a client");
    let text = verified.get(&url).send().and_then(|r| r.text());
    assert_eq!(text.as_deref().ok(), Some("ok"), "{text:?}");
    let unverified = monform_http::blocking()
        .tls_danger_accept_invalid_certs(true)
        .build()
        .expect("a client");
    let text = unverified.get(&url).send().and_then(|r| r.text());
    assert_eq!(text.as_deref().ok(), Some("ok"), "{text:?}");
}

#[tokio::test]
async fn an_async_client_completes_a_verified_handshake() {
    let url = serve(1);
    let client = monform_http::client()
        .tls_certs_only([root()])
        .build()
        .expect("a client");
    let text = match client.get(&url).send().await {
        Ok(response) => response.text().await,
        Err(e) => Err(e),
    };
    assert_eq!(text.as_deref().ok(), Some("ok"), "{text:?}");
}
