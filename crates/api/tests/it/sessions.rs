//! Test sessions, results and the report against the in-process emulator:
//! a completion call that times out is `None` (408, not retried), not an
//! error.

use std::time::{Duration, Instant};

use monform_api::{RunStatus, TestSessionRequest};
use monform_emulator::Config;
use monform_model::Kind;
use monform_testkit::targets::{HttpTarget, Reply};
use serde_json::json;

/// A loopback HTTP server answering 200 to everything.
fn target() -> String {
    HttpTarget::start(|_| Reply::new("200 OK", "text/plain", "ok")).url()
}

#[tokio::test(flavor = "multi_thread")]
async fn await_returns_none_on_408_then_the_final_session() {
    let server = monform_testkit::start_emulator_with(Config {
        rate_limit: None,
        session_duration: Duration::from_millis(1500),
        ..Config::default()
    })
    .await;
    let client = monform_testkit::client_for(&server);
    let check = client
        .create(
            Kind::Check,
            &json!({
                "checkType": "API", "name": "Orders", "frequency": 10, "locations": ["eu-west-1"],
                "request": { "method": "GET", "url": format!("{}/orders", target()) },
            }),
        )
        .await
        .expect("check created");

    let session = client
        .trigger_test_session(&TestSessionRequest {
            name: "t".into(),
            run_location: "eu-west-1".into(),
            check_ids: vec![check.id.clone()],
            tags: Vec::new(),
        })
        .await
        .expect("triggered");
    assert_eq!(session.status, "RUNNING");

    let before = client.requests_sent();
    let started = Instant::now();
    let first = client.await_test_session(&session.id, 1).await.expect("no error");
    assert!(first.is_none(), "still running after 1 s");
    assert_eq!(client.requests_sent() - before, 1, "a 408 is not retried");
    assert!(started.elapsed() < Duration::from_millis(1400));

    let done = client
        .await_test_session(&session.id, 30)
        .await
        .expect("no error")
        .expect("final");
    assert_eq!(done.status, "PASSED");
    assert_eq!(done.results.len(), 1);
    assert_eq!(done.results[0].check_id, check.id);
    assert_eq!(done.results[0].status, RunStatus::Passed);
    assert!(done.results[0].response_time.is_some());

    let report = client.reporting("last24Hrs").await.expect("report");
    assert!(report.iter().any(|e| e.check_id == check.id && e.check_type == "API"));
    assert_eq!(client.last_result(&check.id).await.expect("results"), None);
    let missing = client.last_result("00000000-0000-0000-0000-000000000000").await;
    assert_eq!(missing.err().and_then(|e| e.status()), Some(404));
}
