//! The client against small scripted servers of our own on 127.0.0.1:
//! malformed, truncated and huge bodies, `Retry-After`, which methods are
//! retried.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use monform_api::{Client, ClientConfig, Error, Secret};
use monform_model::Kind;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a scripted server does with one request.
enum Answer {
    /// Writes these bytes, then closes the connection.
    Raw(Vec<u8>),
    /// Closes the connection without answering.
    Drop,
}

fn answer(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    Answer::Raw(bytes)
}

fn json_answer(body: &Value) -> Answer {
    answer(
        "200 OK",
        &[("content-type", "application/json")],
        body.to_string().as_bytes(),
    )
}

/// Requests a scripted server received: (method, path and query, the whole request).
type Log = Arc<Mutex<Vec<(String, String, String)>>>;

/// A server on 127.0.0.1 that answers request `n` (from 0) with `script(n, method, target)`.
async fn scripted(script: impl Fn(usize, &str, &str) -> Answer + Send + Sync + 'static) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::default();
    let seen = log.clone();
    let script = Arc::new(script);
    let counter = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (script, seen, counter) = (script.clone(), seen.clone(), counter.clone());
            tokio::spawn(async move {
                let _ = handle(stream, &*script, &seen, &counter).await;
            });
        }
    });
    (url, log)
}

async fn handle(
    mut stream: TcpStream,
    script: &(dyn Fn(usize, &str, &str) -> Answer + Send + Sync),
    seen: &Log,
    counter: &AtomicUsize,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let mut lines = head.lines();
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let target = request_line.next().unwrap_or_default().to_owned();
    let length: usize = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    let n = counter.fetch_add(1, Ordering::SeqCst);
    let raw = String::from_utf8_lossy(&buffer).to_string();
    seen.lock().unwrap().push((method.clone(), target.clone(), raw));
    match script(n, &method, &target) {
        Answer::Raw(bytes) => {
            stream.write_all(&bytes).await?;
            stream.flush().await?;
            stream.shutdown().await?;
        }
        Answer::Drop => drop(stream),
    }
    Ok(())
}

/// A client for a scripted server: no rate limit, quick backoff.
fn scripted_client(url: &str, max_retries: usize) -> Client {
    let mut config = ClientConfig::new(url, Secret::new("k"));
    config.rate_limit = None;
    config.max_retries = max_retries;
    config.min_backoff = Duration::from_millis(10);
    config.timeout = Duration::from_secs(10);
    Client::new(config).unwrap()
}

fn methods(log: &Log) -> Vec<String> {
    log.lock().unwrap().iter().map(|(m, ..)| m.clone()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_is_not_json_is_a_decode_error() {
    let (url, _) = scripted(|_, _, _| answer("200 OK", &[("content-type", "text/html")], b"<html>hi</html>")).await;
    let error = scripted_client(&url, 0).get(Kind::Snippet, "1").await.unwrap_err();
    assert!(matches!(&error, Error::Decode { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains("GET /v1/snippets/1") && text.contains("not JSON"),
        "{text}"
    );
    assert!(!error.is_transient(), "a wrong answer is not retried");
}

#[tokio::test(flavor = "multi_thread")]
async fn truncated_json_is_a_decode_error() {
    let (url, _) = scripted(|_, _, _| answer("200 OK", &[], br#"[{"id": 1, "name": "a"}, {"id": 2, "na"#)).await;
    let error = scripted_client(&url, 0).list_all(Kind::Snippet).await.unwrap_err();
    assert!(matches!(&error, Error::Decode { .. }), "{error:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_cut_short_is_a_transport_error() {
    // Announces 1000 bytes, sends 20 and closes.
    let (url, log) = scripted(|_, _, _| {
        let mut bytes = b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\nconnection: close\r\n\r\n".to_vec();
        bytes.extend_from_slice(br#"[{"id": 1, "name": "#);
        Answer::Raw(bytes)
    })
    .await;
    let error = scripted_client(&url, 1).list_all(Kind::Snippet).await.unwrap_err();
    assert!(
        matches!(&error, Error::Transport { connect: false, .. } | Error::Decode { .. }),
        "{error:?}"
    );
    assert!(error.to_string().starts_with("GET /v1/snippets"), "{error}");
    assert_eq!(log.lock().unwrap().len(), 2, "a GET is retried after a dropped answer");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_closed_without_an_answer_is_a_transport_error() {
    let (url, log) = scripted(|_, _, _| Answer::Drop).await;
    let error = scripted_client(&url, 2).get(Kind::Snippet, "1").await.unwrap_err();
    assert!(matches!(&error, Error::Transport { connect: false, .. }), "{error:?}");
    assert!(error.is_transient() && !error.certainly_not_applied());
    assert_eq!(log.lock().unwrap().len(), 3, "first attempt and two retries");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_announced_body_is_refused_without_reading_it() {
    // 300 MB announced, a few bytes sent: the client must not wait for or allocate them.
    let (url, _) = scripted(|_, _, _| {
        Answer::Raw(b"HTTP/1.1 200 OK\r\ncontent-length: 314572800\r\nconnection: close\r\n\r\n[1,2,3".to_vec())
    })
    .await;
    let started = Instant::now();
    let error = scripted_client(&url, 0).get(Kind::Snippet, "1").await.unwrap_err();
    assert!(
        matches!(&error, Error::Decode { detail, .. } if detail.contains("too large")),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread")]
async fn deeply_nested_and_large_bodies_do_not_panic() {
    // 100,000 nested arrays: serde_json's recursion limit must turn this into an error, not a stack overflow.
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (url, _) = scripted(move |_, _, _| answer("200 OK", &[], nested.as_bytes())).await;
    let error = scripted_client(&url, 0).get(Kind::Snippet, "1").await.unwrap_err();
    assert!(matches!(&error, Error::Decode { .. }), "{error:?}");

    // An 8 MB page of 100 objects is read whole.
    let big = "x".repeat(80_000);
    let page: Vec<Value> = (0..100).map(|i| json!({ "id": i, "name": big })).collect();
    let page = Value::Array(page).to_string();
    let (url, _) = scripted(move |n, _, _| {
        if n == 0 {
            answer("200 OK", &[("content-range", "0-99/100")], page.as_bytes())
        } else {
            answer("500 Internal Server Error", &[], b"")
        }
    })
    .await;
    let snippets = scripted_client(&url, 0).list_all(Kind::Snippet).await.unwrap();
    assert_eq!(snippets.len(), 100);
}

#[tokio::test(flavor = "multi_thread")]
async fn list_bodies_of_the_wrong_shape_are_decode_errors() {
    let (url, _) = scripted(|_, _, _| json_answer(&json!({ "items": [] }))).await;
    let error = scripted_client(&url, 0).list_all(Kind::Check).await.unwrap_err();
    assert!(
        matches!(&error, Error::Decode { detail, .. } if detail.contains("expected a JSON array")),
        "{error:?}"
    );
    let (url, _) = scripted(|_, _, _| json_answer(&json!({ "entries": "nope", "nextId": null }))).await;
    let error = scripted_client(&url, 0).list_all(Kind::StatusPage).await.unwrap_err();
    assert!(matches!(&error, Error::Decode { .. }), "{error:?}");
    // Objects without an id come back with an empty id, not a panic.
    let (url, _) = scripted(|_, _, _| json_answer(&json!([{ "name": "no id" }, 7, null]))).await;
    let odd = scripted_client(&url, 0).list_all(Kind::Snippet).await.unwrap();
    assert_eq!(odd.len(), 3);
    assert!(odd.iter().all(|o| o.id.is_empty()));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_status_without_a_json_body_still_names_the_request() {
    let (url, _) = scripted(|_, _, _| answer("418 I'm a teapot", &[], b"<h1>teapot</h1>")).await;
    let error = scripted_client(&url, 0)
        .update(Kind::Snippet, "5", &json!({ "name": "x" }))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(418));
    let text = error.to_string();
    assert!(text.starts_with("PUT /v1/snippets/5 failed: 418"), "{text}");
    assert!(text.contains("no message"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_without_content_range_are_read_until_a_short_page() {
    let (url, log) = scripted(|_, _, target| {
        let page: usize = target
            .split(['?', '&'])
            .find_map(|p| p.strip_prefix("page="))
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        let count = if page < 3 { 100 } else { 7 };
        let items: Vec<Value> = (0..count).map(|i| json!({ "id": page * 1000 + i })).collect();
        json_answer(&Value::Array(items))
    })
    .await;
    let snippets = scripted_client(&url, 0).list_all(Kind::Snippet).await.unwrap();
    assert_eq!(snippets.len(), 207);
    let targets: Vec<String> = log.lock().unwrap().iter().map(|(_, t, _)| t.clone()).collect();
    assert_eq!(targets.len(), 3, "{targets:?}");
    assert!(targets.iter().all(|t| t.contains("limit=100")), "{targets:?}");
}

/// A server that ignores `page` (and sends no `Content-Range`) answers every
/// request with the same full page: `list_all` must stop with an error
/// rather than read forever.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_repeating_the_same_page_does_not_hang_list_all() {
    let (url, _) = scripted(|_, _, _| {
        let items: Vec<Value> = (0..100).map(|i| json!({ "id": i })).collect();
        json_answer(&Value::Array(items))
    })
    .await;
    let client = scripted_client(&url, 0);
    let result = tokio::time::timeout(Duration::from_secs(10), client.list_all(Kind::Snippet)).await;
    let error = result
        .expect("list_all ends")
        .expect_err("a repeating server is an error");
    assert!(error.to_string().contains("ignores paging"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cursor_that_repeats_ends_the_listing() {
    let (url, log) = scripted(|_, _, _| json_answer(&json!({ "entries": [{ "id": "a" }], "nextId": "same" }))).await;
    let pages = scripted_client(&url, 0).list_all(Kind::StatusPage).await.unwrap();
    assert_eq!(log.lock().unwrap().len(), 2);
    assert_eq!(pages.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_on_429_is_honoured() {
    let (url, log) = scripted(|n, _, _| {
        if n == 0 {
            answer(
                "429 Too Many Requests",
                &[("retry-after", "1")],
                br#"{"message": "slow down"}"#,
            )
        } else {
            json_answer(&json!({ "id": 1, "name": "s" }))
        }
    })
    .await;
    let client = scripted_client(&url, 3);
    let started = Instant::now();
    let snippet = client.get(Kind::Snippet, "1").await.unwrap().unwrap();
    let waited = started.elapsed();
    assert_eq!(snippet.id, "1");
    assert_eq!(log.lock().unwrap().len(), 2);
    assert!(
        waited >= Duration::from_millis(950),
        "waited {waited:?}, not the second Retry-After asked for"
    );
    assert!(waited < Duration::from_secs(4), "waited {waited:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_rate_limited_with_429_is_retried_after_retry_after() {
    let (url, log) = scripted(|n, _, _| {
        if n == 0 {
            answer("429 Too Many Requests", &[("retry-after", "1")], b"{}")
        } else {
            answer("201 Created", &[], br#"{"id": 9, "name": "s", "script": "x"}"#)
        }
    })
    .await;
    let started = Instant::now();
    let created = scripted_client(&url, 3)
        .create(Kind::Snippet, &json!({ "name": "s", "script": "x" }))
        .await
        .unwrap();
    assert_eq!(created.id, "9");
    assert_eq!(methods(&log), ["POST", "POST"], "a 429 certainly had no effect");
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_is_not_retried_after_a_503_but_a_get_is() {
    let (url, log) = scripted(|_, method, _| {
        if method == "POST" {
            answer("503 Service Unavailable", &[], br#"{"message": "try later"}"#)
        } else {
            json_answer(&json!([]))
        }
    })
    .await;
    let client = scripted_client(&url, 4);
    let error = client
        .create(Kind::Snippet, &json!({ "name": "s", "script": "x" }))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(503));
    assert!(error.is_transient() && !error.certainly_not_applied());
    assert!(error.to_string().contains("try later"), "{error}");
    assert_eq!(methods(&log), ["POST"], "a POST may have had an effect: no retry");

    let (url, log) = scripted(|n, _, _| {
        if n < 2 {
            answer("503 Service Unavailable", &[], b"")
        } else {
            json_answer(&json!({ "id": 3 }))
        }
    })
    .await;
    let got = scripted_client(&url, 4).get(Kind::Snippet, "3").await.unwrap();
    assert_eq!(got.unwrap().id, "3");
    assert_eq!(methods(&log), ["GET", "GET", "GET"], "GET retried until it succeeds");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_whose_answer_is_lost_is_not_retried() {
    let (url, log) = scripted(|_, _, _| Answer::Drop).await;
    let error = scripted_client(&url, 4)
        .create(Kind::Group, &json!({ "name": "g" }))
        .await
        .unwrap_err();
    assert!(matches!(&error, Error::Transport { connect: false, .. }), "{error:?}");
    assert_eq!(methods(&log), ["POST"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn puts_and_deletes_are_retried_after_a_503() {
    let (url, log) = scripted(|n, method, _| match (n, method) {
        (0, _) | (2, _) => answer("503 Service Unavailable", &[], b""),
        (_, "DELETE") => answer("204 No Content", &[], b""),
        _ => json_answer(&json!({ "id": 4, "name": "n" })),
    })
    .await;
    let client = scripted_client(&url, 3);
    client
        .update(Kind::Snippet, "4", &json!({ "name": "n" }))
        .await
        .unwrap();
    client.delete(Kind::Snippet, "4").await.unwrap();
    assert_eq!(methods(&log), ["PUT", "PUT", "DELETE", "DELETE"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_carry_the_key_the_account_and_auto_assign_off() {
    let (url, log) = scripted(|_, _, _| answer("201 Created", &[], br#"{"id": "c1"}"#)).await;
    let mut config = ClientConfig::new(format!("{url}/"), Secret::new("key-123"));
    config.account_id = Some("acct-9".into());
    config.rate_limit = None;
    let client = Client::new(config).unwrap();
    client
        .create(
            Kind::Check,
            &json!({ "checkType": "ICMP", "name": "p", "request": { "hostname": "h" } }),
        )
        .await
        .unwrap();
    let request = log.lock().unwrap()[0].2.to_lowercase();
    assert!(
        request.starts_with("post /v1/checks/icmp?autoassignalerts=false http/1.1"),
        "{request}"
    );
    assert!(request.contains("authorization: bearer key-123"), "{request}");
    assert!(request.contains("x-service-account: acct-9"), "{request}");
    // The API's quirk: an ICMP create needs `heartbeat` and `script`.
    assert!(
        request.contains(r#""heartbeat":{}"#) && request.contains(r#""script":"""#),
        "{request}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_refused_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let client = scripted_client(&url, 1);
    let error = client.get(Kind::Snippet, "1").await.unwrap_err();
    assert!(
        matches!(&error, Error::Transport { connect: true, method, path, .. } if method == "GET" && path == "/v1/snippets/1"),
        "{error:?}"
    );
    assert!(error.certainly_not_applied());
    assert!(
        error
            .to_string()
            .starts_with("GET /v1/snippets/1 failed: could not connect"),
        "{error}"
    );
    assert!(Client::new(ClientConfig::new("ftp://x", Secret::new("k"))).is_err());
}
