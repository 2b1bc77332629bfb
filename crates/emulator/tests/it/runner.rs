//! The local runner end to end, with real targets on loopback only: a tiny
//! HTTP server (200, 500, slow, hung), a TCP listener, and the emulator's own
//! heartbeat ping endpoint. Sessions finish from real runs.

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::targets::*;
use common::*;
use monform_emulator::Config;
use monform_emulator::domain::sessions::runs::{self as runner, RunStatus};
use monform_emulator::store::Objects;
use serde_json::{Value, json};
use tokio::net::TcpListener;

#[tokio::test]
async fn a_passing_api_check_passes_with_its_assertions() {
    let ts = emulator().await;
    let target = http_target().await;
    let id = api_check(
        &ts,
        target,
        "/ok",
        json!({ "request": {
            "url": format!("http://{target}/ok"), "method": "GET",
            "headers": [{ "key": "X-Test", "value": "1" }],
            "queryParameters": [{ "key": "q", "value": "v" }],
            "assertions": [
                { "source": "STATUS_CODE", "comparison": "EQUALS", "target": "200" },
                { "source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "up" },
                { "source": "JSON_BODY", "property": "$.items[0].id", "comparison": "GREATER_THAN", "target": "5" },
                { "source": "HEADERS", "property": "content-type", "comparison": "CONTAINS", "target": "json" },
                { "source": "TEXT_BODY", "comparison": "CONTAINS", "target": "items" },
                { "source": "RESPONSE_TIME", "comparison": "LESS_THAN", "target": "5000" },
            ],
        } }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    assert_eq!(session["status"], "PASSED", "{session}");
    let result = &session["results"][0];
    assert_eq!(result["hasFailures"], false, "{result}");
    assert_eq!(result["hasErrors"], false);
    assert!(result["responseTime"].as_f64().unwrap() < 5000.0);
    let records = listed_results(&ts, &id).await;
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record["resultType"], "FINAL");
    assert_eq!(record["errorGroupIds"], json!([]));
    assert_eq!(record["apiCheckResult"]["response"]["status"], 200);
    let assertions = record["apiCheckResult"]["assertions"].as_array().unwrap();
    assert_eq!(assertions.len(), 6);
    assert!(assertions.iter().all(|a| a["passed"] == true), "{assertions:?}");
}

#[tokio::test]
async fn a_failing_api_check_fails_and_groups_its_error() {
    let ts = emulator().await;
    let target = http_target().await;
    let id = api_check(&ts, target, "/fail", json!({})).await;
    let first = run_session(&ts, &id).await;
    assert_eq!(first["status"], "FAILED", "{first}");
    let result = &first["results"][0];
    assert_eq!(result["hasFailures"], true, "{result}");
    assert!(result["error"].as_str().unwrap().contains("500"), "{result}");
    // A second failure with the same message lands in the same error group.
    let second = run_session(&ts, &id).await;
    assert_eq!(second["status"], "FAILED");
    let (status, groups) = parts(ts.get(&format!("/v1/error-groups/checks/{id}")).await).await;
    assert_eq!(status, 200);
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    let group_id = groups[0]["id"].clone();
    let records = listed_results(&ts, &id).await;
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r["errorGroupIds"] == json!([group_id.clone()])));
    assert_eq!(records[0]["hasFailures"], true);

    // A failing assertion fails a 200, and shouldFail passes the 500.
    let wrong = api_check(
        &ts,
        target,
        "/ok",
        json!({ "request": { "url": format!("http://{target}/ok"),
            "assertions": [{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": "201" }] } }),
    )
    .await;
    let session = run_session(&ts, &wrong).await;
    assert_eq!(session["status"], "FAILED");
    assert!(session["results"][0]["error"].as_str().unwrap().contains("STATUS_CODE"));
    let inverted = api_check(&ts, target, "/fail", json!({ "shouldFail": true })).await;
    assert_eq!(run_session(&ts, &inverted).await["status"], "PASSED");
}

#[tokio::test]
async fn a_slow_api_check_is_degraded() {
    let ts = emulator().await;
    let target = http_target().await;
    let id = api_check(
        &ts,
        target,
        "/slow",
        json!({ "degradedResponseTime": 100, "maxResponseTime": 5000 }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    assert_eq!(session["status"], "DEGRADED", "{session}");
    assert_eq!(session["results"][0]["isDegraded"], true);
    assert!(session["results"][0]["responseTime"].as_f64().unwrap() >= 300.0);
}

#[tokio::test]
async fn a_hung_target_times_out_at_max_response_time() {
    let ts = emulator().await;
    let target = http_target().await;
    let id = api_check(
        &ts,
        target,
        "/hang",
        json!({ "degradedResponseTime": 100, "maxResponseTime": 400 }),
    )
    .await;
    let started = Instant::now();
    let session = run_session(&ts, &id).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(session["status"], "TIMED_OUT", "{session}");
    let records = listed_results(&ts, &id).await;
    assert_eq!(records[0]["overMaxResponseTime"], true);
    assert_eq!(records[0]["hasFailures"], true);
}

#[tokio::test]
async fn a_test_session_fails_when_one_of_its_checks_fails() {
    let ts = emulator().await;
    let target = http_target().await;
    let good = api_check(&ts, target, "/ok", json!({ "tags": ["smoke"] })).await;
    let bad = api_check(&ts, target, "/fail", json!({ "tags": ["smoke"] })).await;
    let (status, created) = parts(
        ts.post(
            "/v1/test-sessions/trigger",
            &json!({ "name": "deploy", "runLocation": "eu-west-1", "target": { "matchTags": [["smoke"]] } }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["testSessionId"].as_str().unwrap();
    let (status, done) = parts(
        ts.get(&format!("/v1/test-sessions/{id}/completion?maxWaitSeconds=10"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "FAILED", "{done}");
    let results = done["results"].as_array().unwrap();
    let of = |check: &str| results.iter().find(|r| r["checkId"] == check).unwrap();
    assert_eq!(of(&good)["status"], "PASSED");
    assert_eq!(of(&bad)["status"], "FAILED");
    assert_eq!(of(&bad)["hasFailures"], true);
    assert_eq!(done["errorGroupIds"], of(&bad)["errorGroupIds"]);
    assert_eq!(done["errorGroupIds"].as_array().unwrap().len(), 1);
    // Test sessions record no check results.
    assert!(listed_results(&ts, &bad).await.is_empty());
}

#[tokio::test]
async fn tcp_checks_pass_and_fail() {
    let ts = emulator().await;
    let target = tcp_target().await;
    let good = create(
        &ts,
        "tcp",
        json!({ "name": "tcp ok", "request": {
            "hostname": "127.0.0.1", "port": target.port(), "data": "PING",
            "assertions": [
                { "source": "RESPONSE_DATA", "comparison": "CONTAINS", "target": "PONG PING" },
                { "source": "RESPONSE_TIME", "comparison": "LESS_THAN", "target": "5000" },
            ],
        } }),
    )
    .await;
    let session = run_session(&ts, &good).await;
    assert_eq!(session["status"], "PASSED", "{session}");

    let wrong = create(
        &ts,
        "tcp",
        json!({ "name": "tcp wrong answer", "request": {
            "hostname": "127.0.0.1", "port": target.port(), "data": "PING",
            "assertions": [{ "source": "RESPONSE_DATA", "comparison": "EQUALS", "target": "HELLO" }],
        } }),
    )
    .await;
    assert_eq!(run_session(&ts, &wrong).await["status"], "FAILED");

    // A port nobody listens on.
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let refused = create(
        &ts,
        "tcp",
        json!({ "name": "tcp closed", "request": { "hostname": "127.0.0.1", "port": closed } }),
    )
    .await;
    let session = run_session(&ts, &refused).await;
    assert_eq!(session["status"], "FAILED", "{session}");
    assert_eq!(session["results"][0]["hasErrors"], true);
    assert!(
        session["results"][0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect")
    );
}

#[tokio::test]
async fn heartbeats_pass_when_pinged_and_fail_when_late() {
    let ts = emulator().await;
    let body = |name: &str| json!({ "name": name, "heartbeat": { "period": 1, "periodUnit": "seconds", "grace": 0, "graceUnit": "seconds" } });
    let pinged = create(&ts, "heartbeat", body("pinged")).await;
    let silent = create(&ts, "heartbeat", body("silent")).await;
    let stored = |id: &str| {
        ts.server
            .app
            .store
            .lock()
            .get(&ts.server.account_id, "checks", id)
            .unwrap()
            .unwrap()
    };
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The ping URL needs no key, by GET or POST.
    let ping_url = stored(&pinged)["heartbeat"]["pingUrl"].as_str().unwrap().to_owned();
    assert!(ping_url.starts_with("/ping/"));
    let response = ts.client.get(ts.url(&ping_url)).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let response = ts.client.post(ts.url(&ping_url)).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let response = ts.client.get(ts.url("/ping/not-a-token")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 404);

    let app = &ts.server.app;
    let account = &ts.server.account_id;
    let outcome = runner::execute(app, account, &stored(&pinged)).await;
    assert_eq!(outcome.status, RunStatus::Passed, "{outcome:?}");
    let outcome = runner::execute(app, account, &stored(&silent)).await;
    assert_eq!(outcome.status, RunStatus::Failed, "{outcome:?}");
    assert!(outcome.error.unwrap().contains("no ping"));
}

#[tokio::test]
async fn browser_checks_run_where_chromium_is_else_say_so() {
    let ts = emulator().await;
    let script = "await page.setContent('<title>Local</title>')\nexpect(await page.title()).toBe('Local')";
    let id = create(
        &ts,
        "browser",
        json!({ "name": "Browser", "script": script, "locations": ["eu-west-1"] }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    let result = &session["results"][0];
    match monform_runner::BrowserSetup::discover(None).missing(true) {
        None => assert_eq!(session["status"], "PASSED", "{session}"),
        Some(_) => {
            assert_eq!(session["status"], "FAILED");
            let error = result["error"].as_str().unwrap();
            assert!(error.contains("does not execute BROWSER"), "{error}");
            assert_eq!(result["hasErrors"], true);
        }
    }
}

/// Issue 43 item 1: the emulator's runs start scripts with an environment
/// built from nothing, not the server's own (here the test's: cargo sets
/// CARGO_MANIFEST_DIR and CARGO_PKG_NAME for it).
#[tokio::test]
async fn browser_scripts_see_none_of_the_servers_environment() {
    if monform_runner::BrowserSetup::discover(None).missing(true).is_some() {
        monform_testkit::skipped("no Node.js, playwright-core or Chromium (MONFORM_REQUIRE_BROWSER=1 fails instead)");
        return;
    }
    let ts = emulator().await;
    let script = "const leaked = ['CARGO_MANIFEST_DIR', 'CARGO_PKG_NAME', 'MONFORM_API_KEY', 'GITHUB_TOKEN']\n\
                  .filter((n) => n in process.env)\n\
                  if (leaked.length) throw new Error('leaked ' + leaked.join(','))\n\
                  await page.setContent('<title>Clean</title>')\nexpect(await page.title()).toBe('Clean')";
    let id = create(
        &ts,
        "browser",
        json!({ "name": "Environment", "script": script, "locations": ["eu-west-1"] }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    assert_eq!(session["status"], "PASSED", "{session}");
}

#[tokio::test]
async fn setup_snippets_named_by_id_run_before_the_request() {
    let ts = emulator().await;
    let target = http_target().await;
    let snippet = ts
        .create(
            "/v1/snippets",
            &json!({ "name": "fix path", "script": "request.url = request.url.replace('/nowhere', '/ok')" }),
            201,
        )
        .await;
    let id = api_check(
        &ts,
        target,
        "/nowhere",
        json!({
            "setupSnippetId": snippet["id"],
            "request": {
                "url": format!("http://{target}/nowhere"), "method": "GET",
                "assertions": [{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": "200" }],
            },
        }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    // The emulator runs scripts where it found Node.js, playwright-core and
    // Chromium at start (as for browser checks); elsewhere they are skipped.
    match monform_runner::BrowserSetup::discover(None).missing(true) {
        // The snippet moved the request to /ok before it was sent.
        None => assert_eq!(session["status"], "PASSED", "{session}"),
        Some(missing) => assert_eq!(session["status"], "FAILED", "{missing}: {session}"),
    }
}

/// A UDP name server answering every A query with 10.0.0.1 (and NXDOMAIN
/// for names starting with `missing`).
async fn dns_target() -> SocketAddr {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buffer = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buffer).await {
            let mut answer = buffer[..n].to_vec();
            answer[2] |= 0x80;
            if &answer[13..20] == b"missing" {
                answer[3] = (answer[3] & 0xF0) | 3;
            } else {
                answer[7] = 1;
                answer.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1]);
            }
            let _ = socket.send_to(&answer, from).await;
        }
    });
    addr
}

#[tokio::test]
async fn dns_checks_query_a_name_server() {
    let ts = emulator().await;
    let server = dns_target().await;
    let body = |name: &str, query: &str, assertions: Value| {
        json!({ "name": name, "request": {
            "query": query, "recordType": "A", "nameServer": "127.0.0.1", "port": server.port(),
            "assertions": assertions,
        } })
    };
    let good = create(
        &ts,
        "dns",
        body(
            "dns ok",
            "shop.test",
            json!([
                { "source": "RESPONSE_CODE", "comparison": "EQUALS", "target": "NOERROR" },
                { "source": "TEXT_ANSWER", "comparison": "CONTAINS", "target": "10.0.0.1" },
                { "source": "JSON_ANSWER", "property": "$.Answer[0].data", "comparison": "EQUALS", "target": "10.0.0.1" },
            ]),
        ),
    )
    .await;
    let session = run_session(&ts, &good).await;
    assert_eq!(session["status"], "PASSED", "{session}");
    let missing = create(&ts, "dns", body("dns missing", "missing.test", json!([]))).await;
    let session = run_session(&ts, &missing).await;
    assert_eq!(session["status"], "FAILED", "{session}");
    assert!(session["results"][0]["error"].as_str().unwrap().contains("NXDOMAIN"));
}

#[tokio::test]
async fn icmp_checks_ping_loopback_or_say_why_not() {
    let ts = emulator().await;
    let id = create(
        &ts,
        "icmp",
        json!({ "name": "ping", "request": { "hostname": "127.0.0.1", "pingCount": 2 }, "heartbeat": {}, "script": "" }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    let result = &session["results"][0];
    match session["status"].as_str().unwrap() {
        // The kernel allows unprivileged ICMP sockets here.
        "PASSED" => assert_eq!(result["hasErrors"], false),
        // It does not: the error says so.
        "FAILED" => {
            assert_eq!(result["hasErrors"], true, "{result}");
            assert!(result["error"].as_str().unwrap().contains("ICMP socket"), "{result}");
        }
        other => panic!("unexpected status {other}: {session}"),
    }
}

#[tokio::test]
async fn the_scheduler_runs_activated_checks_and_stops_with_the_server() {
    let ts = scheduling_emulator().await;
    let target = http_target().await;
    let on = api_check(&ts, target, "/ok", json!({ "frequency": 1 })).await;
    let off = api_check(&ts, target, "/fail", json!({ "frequency": 1, "activated": false })).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let records = loop {
        let records = listed_results(&ts, &on).await;
        if !records.is_empty() || Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(records.len(), 1, "one run within the first minute");
    assert_eq!(records[0]["hasFailures"], false, "{}", records[0]);
    assert!(listed_results(&ts, &off).await.is_empty());
    ts.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn runs_cut_short_by_a_stop_run_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        db: Some(dir.path().join("emulator.sqlite")),
        rate_limit: None,
        session_duration: Duration::from_millis(20),
        ..Config::default()
    };
    let target = http_target().await;
    let first = TestServer::with(config.clone()).await;
    let id = api_check(&first, target, "/slow", json!({ "degradedResponseTime": 5000 })).await;
    let (status, body) = parts(
        first
            .post("/v2/check-sessions/trigger", &json!({ "target": { "checkId": [id] } }))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let session = body["sessions"][0]["checkSessionId"].as_str().unwrap().to_owned();
    // Stops while the run (300 ms) is still going: the run is abandoned.
    first.server.shutdown().await.unwrap();
    let second = TestServer::with(config).await;
    let (status, done) = parts(
        second
            .get(&format!("/v2/check-sessions/{session}/completion?maxWaitSeconds=10"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "PASSED", "{done}");
    assert!(done["results"][0]["responseTime"].as_f64().unwrap() >= 300.0);
}

#[tokio::test]
async fn api_requests_carry_method_headers_query_body_and_basic_auth() {
    let ts = emulator().await;
    let target = http_target().await;
    let assert_json = |property: &str, target: &str| json!({ "source": "JSON_BODY", "property": property, "comparison": "EQUALS", "target": target });
    let id = api_check(
        &ts,
        target,
        "/echo",
        json!({ "request": {
            "url": format!("http://{target}/echo"), "method": "POST",
            "headers": [{ "key": "X-Test", "value": "yes" }],
            "queryParameters": [{ "key": "page", "value": "2" }],
            "body": "{\"a\":1}", "bodyType": "JSON",
            "basicAuth": { "username": "user", "password": "secret" },
            "assertions": [
                assert_json("$.method", "POST"),
                assert_json("$.query", "page=2"),
                assert_json("$.body", "{\"a\":1}"),
                assert_json("$.contentType", "application/json"),
                assert_json("$.test", "yes"),
                assert_json("$.authorization", "Basic dXNlcjpzZWNyZXQ="),
            ],
        } }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    assert_eq!(session["status"], "PASSED", "{session}");

    // With followRedirects off the run sees the 307 itself; on, the page it leads to.
    let id = api_check(
        &ts,
        target,
        "/redirect",
        json!({ "request": {
            "url": format!("http://{target}/redirect"), "followRedirects": false,
            "assertions": [{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": "307" }],
        } }),
    )
    .await;
    assert_eq!(run_session(&ts, &id).await["status"], "PASSED");
    let id = api_check(
        &ts,
        target,
        "/redirect",
        json!({ "request": {
            "url": format!("http://{target}/redirect"),
            "assertions": [{ "source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "up" }],
        } }),
    )
    .await;
    assert_eq!(run_session(&ts, &id).await["status"], "PASSED");
}

#[tokio::test]
async fn variables_are_substituted_in_requests() {
    let ts = emulator().await;
    let target = http_target().await;
    ts.create(
        "/v1/variables",
        &json!({ "key": "TARGET", "value": target.to_string(), "secret": true }),
        201,
    )
    .await;
    let id = api_check(
        &ts,
        target,
        "/ok",
        json!({ "request": { "url": "http://{{TARGET}}/ok", "method": "GET" } }),
    )
    .await;
    let session = run_session(&ts, &id).await;
    assert_eq!(session["status"], "PASSED", "{session}");
    // The secret's value is masked in what the result reports.
    let records = listed_results(&ts, &id).await;
    assert_eq!(records[0]["apiCheckResult"]["request"]["url"], "http://*****/ok");
}
