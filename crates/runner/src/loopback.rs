//! Every check type run through [`Runner`] against real targets on
//! loopback, without any service: an HTTP server, a TCP listener, a name
//! server answering with hickory-proto messages, and 127.0.0.1 for ICMP.

use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::rdata::{A, MX, TXT};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UdpSocket};

use crate::{Heartbeats, Job, RunStatus, Runner, RunnerConfig, Variables};

async fn serve(router: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// `/ok` (200 JSON), `/fail` (500, counting calls), `/slow` (300 ms), `/hang`.
async fn http_target(fails: Arc<AtomicUsize>) -> SocketAddr {
    serve(
        Router::new()
            .route(
                "/ok",
                get(|| async { axum::Json(json!({ "status": "up", "items": [{ "id": 7 }] })) }),
            )
            .route(
                "/fail",
                get(move || async move {
                    fails.fetch_add(1, Ordering::SeqCst);
                    (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom")
                }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    "slow"
                }),
            )
            .route(
                "/hang",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    "late"
                }),
            )
            .route(
                "/echo",
                get(|headers: axum::http::HeaderMap| async move {
                    headers
                        .get("x-token")
                        .map(|v| v.to_str().unwrap_or_default().to_owned())
                        .unwrap_or_default()
                }),
            ),
    )
    .await
}

fn runner() -> Runner {
    Runner::new(RunnerConfig {
        backoff_second: Duration::from_millis(1),
        max_wait: None,
    })
}

async fn execute(check: &Value) -> crate::Outcome {
    let variables = Variables::new();
    runner()
        .execute(Job {
            check,
            variables: &variables,
            heartbeats: None,
            location: "eu-west-1",
        })
        .await
}

fn api(url: String, assertions: Value) -> Value {
    json!({ "checkType": "API", "maxResponseTime": 2000, "degradedResponseTime": 200,
            "request": { "method": "GET", "url": url, "assertions": assertions } })
}

#[tokio::test]
async fn http_checks_pass_fail_degrade_and_time_out() {
    let addr = http_target(Arc::default()).await;
    let ok = execute(&api(
        format!("http://{addr}/ok"),
        json!([
            { "source": "STATUS_CODE", "comparison": "EQUALS", "target": "200" },
            { "source": "JSON_BODY", "property": "$.items[0].id", "comparison": "EQUALS", "target": "7" },
        ]),
    ))
    .await;
    assert_eq!(ok.status, RunStatus::Passed, "{ok:?}");
    assert_eq!(ok.api_result["response"]["status"], 200);
    assert!(ok.assertions.iter().all(|a| a.passed));

    let wrong = execute(&api(
        format!("http://{addr}/ok"),
        json!([{ "source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "down" }]),
    ))
    .await;
    assert_eq!(wrong.status, RunStatus::Failed);
    assert!(wrong.has_failures && wrong.error.unwrap().contains("$.status"));

    let error = execute(&api(format!("http://{addr}/fail"), json!([]))).await;
    assert_eq!(error.status, RunStatus::Failed);
    assert!(error.error.unwrap().contains("500"));

    let mut should_fail = api(format!("http://{addr}/fail"), json!([]));
    should_fail["shouldFail"] = json!(true);
    assert_eq!(execute(&should_fail).await.status, RunStatus::Passed);

    let slow = execute(&api(format!("http://{addr}/slow"), json!([]))).await;
    assert_eq!(slow.status, RunStatus::Degraded, "{slow:?}");

    let mut hang = api(format!("http://{addr}/hang"), json!([]));
    hang["maxResponseTime"] = json!(300);
    let hung = execute(&hang).await;
    assert_eq!(hung.status, RunStatus::TimedOut);
    assert!(hung.response_time >= 300.0 && hung.response_time < 5000.0);

    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let refused = execute(&api(format!("http://{closed}/ok"), json!([]))).await;
    assert!(refused.has_errors && refused.status == RunStatus::Failed, "{refused:?}");
}

#[tokio::test]
async fn variables_are_substituted_and_secrets_masked() {
    let addr = http_target(Arc::default()).await;
    let check = json!({ "checkType": "API", "request": {
        "method": "GET", "url": "http://{{HOST}}/echo",
        "headers": [{ "key": "x-token", "value": "{{TOKEN}}" }],
        "assertions": [{ "source": "TEXT_BODY", "comparison": "EQUALS", "target": "nope" }] } });
    let mut variables = Variables::new();
    variables.insert("HOST", addr.to_string(), false);
    variables.insert("TOKEN", "hunter2", true);
    let outcome = runner()
        .execute(Job {
            check: &check,
            variables: &variables,
            heartbeats: None,
            location: "eu-west-1",
        })
        .await;
    // The target saw the secret; the outcome does not show it.
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(outcome.assertions[0].actual, json!("*****"));
    assert!(!crate::to_record(&outcome).to_string().contains("hunter2"));
}

#[tokio::test]
async fn failed_runs_are_retried_per_the_strategy() {
    let fails = Arc::new(AtomicUsize::new(0));
    let addr = http_target(fails.clone()).await;
    let mut check = api(format!("http://{addr}/fail"), json!([]));
    check["locations"] = json!(["eu-west-1", "us-east-1"]);
    check["retryStrategy"] = json!({ "type": "LINEAR", "baseBackoffSeconds": 5, "maxRetries": 2, "sameRegion": false });
    let variables = Variables::new();
    let job = Job {
        check: &check,
        variables: &variables,
        heartbeats: None,
        location: "eu-west-1",
    };
    let attempts = runner().run(job).await;
    assert_eq!(fails.load(Ordering::SeqCst), 3);
    let locations: Vec<&str> = attempts.iter().map(|a| a.location.as_str()).collect();
    assert_eq!(locations, ["eu-west-1", "us-east-1", "eu-west-1"]);
    assert!(attempts.iter().all(|a| a.outcome.status == RunStatus::Failed));
    // Backoffs of 5 and 10 nominal seconds, a millisecond each here.
    assert!(attempts[2].started_ms - attempts[0].finished_ms >= 15);
    let ok = api(format!("http://{addr}/ok"), check["retryStrategy"].clone());
    assert_eq!(runner().run(Job { check: &ok, ..job }).await.len(), 1);
}

#[tokio::test]
async fn tcp_checks_exchange_data() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = [0u8; 64];
            let n = stream.read(&mut buffer).await.unwrap_or(0);
            let _ = stream.write_all(&[b"pong:", &buffer[..n]].concat()).await;
        }
    });
    let check = |port: u16, target: &str| {
        json!({ "checkType": "TCP", "request": { "hostname": "127.0.0.1", "port": port, "data": "ping",
            "assertions": [{ "source": "RESPONSE_DATA", "comparison": "EQUALS", "target": target }] } })
    };
    let ok = execute(&check(addr.port(), "pong:ping")).await;
    assert_eq!(ok.status, RunStatus::Passed, "{ok:?}");
    assert_eq!(ok.details["responseData"], "pong:ping");
    assert_eq!(execute(&check(addr.port(), "other")).await.status, RunStatus::Failed);
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let refused = execute(&check(closed.port(), "x")).await;
    assert!(refused.has_errors && refused.error.unwrap().contains("cannot connect"));
}

/// A UDP name server built on hickory-proto: `shop.test` has an A, an MX
/// and a TXT record; every other name is NXDOMAIN.
async fn dns_target() -> SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buffer = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buffer).await {
            let Ok(query) = Message::from_vec(&buffer[..n]) else {
                continue;
            };
            let mut answer = Message::response(query.metadata.id, query.metadata.op_code);
            let question = query.queries[0].clone();
            let name = question.name().clone();
            if name == Name::from_str("shop.test.").unwrap() {
                let data = match question.query_type() {
                    RecordType::MX => RData::MX(MX::new(10, Name::from_str("mail.shop.test.").unwrap())),
                    RecordType::TXT => RData::TXT(TXT::new(vec!["v=spf1 ".into(), "-all".into()])),
                    _ => RData::A(A::new(10, 0, 0, 1)),
                };
                answer.answers.push(Record::from_rdata(name, 60, data));
            } else {
                answer.metadata.response_code = ResponseCode::NXDomain;
            }
            answer.add_query(question);
            let _ = socket.send_to(&answer.to_vec().unwrap(), from).await;
        }
    });
    addr
}

#[tokio::test]
async fn dns_checks_query_a_name_server() {
    let server = dns_target().await;
    let check = |query: &str, record_type: &str, assertions: Value| {
        json!({ "checkType": "DNS", "request": { "query": query, "recordType": record_type,
            "nameServer": "127.0.0.1", "port": server.port(), "assertions": assertions } })
    };
    let ok = execute(&check(
        "shop.test",
        "A",
        json!([
            { "source": "RESPONSE_CODE", "comparison": "EQUALS", "target": "NOERROR" },
            { "source": "TEXT_ANSWER", "comparison": "EQUALS", "target": "shop.test. 60 IN A 10.0.0.1" },
            { "source": "JSON_ANSWER", "property": "$.Answer[0].data", "comparison": "EQUALS", "target": "10.0.0.1" },
            { "source": "JSON_ANSWER", "property": "$.Answer[0].type", "comparison": "EQUALS", "target": "1" },
        ]),
    ))
    .await;
    assert_eq!(ok.status, RunStatus::Passed, "{ok:?}");
    let mx = execute(&check("shop.test", "MX", json!([]))).await;
    assert_eq!(mx.details["textAnswer"], "shop.test. 60 IN MX 10 mail.shop.test.");
    let txt = execute(&check("shop.test", "TXT", json!([]))).await;
    assert_eq!(txt.details["answer"]["Answer"][0]["data"], "v=spf1 -all");
    let missing = execute(&check("missing.test", "A", json!([]))).await;
    assert_eq!(missing.status, RunStatus::Failed);
    assert!(missing.error.unwrap().contains("NXDOMAIN"));
    // Asserting the code itself makes NXDOMAIN a pass.
    let expected = execute(&check(
        "missing.test",
        "A",
        json!([{ "source": "RESPONSE_CODE", "comparison": "EQUALS", "target": "NXDOMAIN" }]),
    ))
    .await;
    assert_eq!(expected.status, RunStatus::Passed, "{expected:?}");
    let bad_type = execute(&check("shop.test", "SRV", json!([]))).await;
    assert!(bad_type.error.unwrap().contains("not a record type"));
}

#[tokio::test]
async fn icmp_checks_ping_loopback_or_say_why_not() {
    let check = json!({ "checkType": "ICMP", "request": { "hostname": "127.0.0.1", "pingCount": 2,
        "assertions": [{ "source": "LATENCY", "property": "avg", "comparison": "LESS_THAN", "target": "1000" }] } });
    let outcome = execute(&check).await;
    match outcome.status {
        // The kernel allows unprivileged ICMP sockets here.
        RunStatus::Passed => assert_eq!(outcome.details["received"], 2),
        // It does not (net.ipv4.ping_group_range): the error says so.
        RunStatus::Failed => assert!(
            outcome.error.unwrap().contains("ICMP socket"),
            "skipped: no ICMP socket"
        ),
        other => panic!("unexpected {other:?}"),
    }
}

struct Pings(Option<i64>);

impl Heartbeats for Pings {
    fn last_ping_ms(&self, check: &Value) -> Result<Option<i64>, String> {
        assert_eq!(check["id"], "hb");
        Ok(self.0)
    }
}

#[tokio::test]
async fn heartbeats_are_judged_from_the_callers_pings() {
    let check = json!({ "id": "hb", "checkType": "HEARTBEAT", "created_at": "2026-01-01T00:00:00.000Z",
        "heartbeat": { "period": 1, "periodUnit": "hours", "grace": 0, "graceUnit": "seconds" } });
    let variables = Variables::new();
    let run = |pings: Pings| {
        let (check, variables) = (&check, &variables);
        async move {
            let job = Job {
                check,
                variables,
                heartbeats: Some(&pings),
                location: "eu-west-1",
            };
            runner().execute(job).await
        }
    };
    let recent = Pings(Some(chrono::Utc::now().timestamp_millis()));
    assert_eq!(run(recent).await.status, RunStatus::Passed);
    let late = run(Pings(None)).await;
    assert_eq!(late.status, RunStatus::Failed);
    assert!(late.error.unwrap().contains("no ping"));
    let elsewhere = execute(&check).await;
    assert!(!elsewhere.executed && elsewhere.error.unwrap().contains("pings the service receives"));
}

#[tokio::test]
async fn browser_types_are_not_executed() {
    let outcome = execute(&json!({ "checkType": "BROWSER", "script": "" })).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(!outcome.executed && outcome.error.unwrap().contains("does not execute BROWSER"));
}

#[tokio::test]
async fn an_unknown_type_is_an_error_that_names_it() {
    let outcome = execute(&json!({ "checkType": "SMTP" })).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap_or_default();
    assert!(outcome.has_errors && !outcome.executed, "{error}");
    assert!(
        error.starts_with("cannot run this check: unknown CheckType `SMTP` (expected one of AGENTIC, API,"),
        "{error}"
    );
    assert!(!error.contains("not executed"), "{error}");
    let missing = execute(&json!({ "request": { "url": "http://127.0.0.1:9" } })).await;
    assert!(missing.error.unwrap_or_default().contains("unknown CheckType ``"));
}
