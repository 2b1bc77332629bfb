//! Retries, check alerts, alert notifications and retention end to end,
//! with real targets on loopback only: the tiny HTTP servers of
//! `common::targets` (steered to fail or pass), a closed TCP port, and
//! recorders standing in for webhook and Slack endpoints.

use crate::common;

use std::time::{Duration, Instant};

use common::targets::*;
use common::*;
use monform_emulator::Config;
use monform_emulator::store::Objects;
use serde_json::{Value, json};

mod channels;
mod incidents;
mod retention;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Creates an alert channel; returns its body.
async fn channel(ts: &TestServer, body: Value) -> Value {
    ts.create("/v1/alert-channels", &body, 201).await
}

fn subscribed(channels: &[&Value]) -> Value {
    json!(
        channels
            .iter()
            .map(|c| json!({ "alertChannelId": c["id"], "activated": true }))
            .collect::<Vec<_>>()
    )
}

fn webhook(url: String) -> Value {
    json!({ "type": "WEBHOOK", "config": { "name": "hook", "url": url, "method": "POST" } })
}

/// Own alert settings (useGlobalAlertSettings false).
fn settings(threshold: u32, reminders: u32, interval: u32, parallel: Option<u32>) -> Value {
    json!({
        "useGlobalAlertSettings": false,
        "alertSettings": {
            "escalationType": "RUN_BASED",
            "runBasedEscalation": { "failedRunThreshold": threshold },
            "reminders": { "amount": reminders, "interval": interval },
            "parallelRunFailureThreshold": { "enabled": parallel.is_some(), "percentage": parallel.unwrap_or(10) },
        },
    })
}

fn merged(mut a: Value, b: Value) -> Value {
    for (key, value) in b.as_object().unwrap() {
        a[key] = value.clone();
    }
    a
}

#[tokio::test]
async fn a_failing_check_alerts_and_notifies_a_webhook_until_it_recovers() {
    let ts = emulator().await;
    let target = steered_target().await;
    let hook = Recorder::start(200, "{\"received\":true}").await;
    let hook_channel = channel(
        &ts,
        json!({ "type": "WEBHOOK", "config": {
            "name": "hook", "url": hook.url("/hook"), "method": "POST",
            "headers": [{ "key": "Authorization", "value": "Bearer s3cret" }],
            "queryParameters": [{ "key": "source", "value": "monform" }],
            "template": "{\"type\": \"{{ALERT_TYPE}}\", \"check\": \"{{CHECK_NAME}}\", \"location\": \"{{RUN_LOCATION}}\", \"code\": \"{{STATUS_CODE}}\"}",
            "webhookSecret": "shh",
        } }),
    )
    .await;
    let id = api_check(
        &ts,
        target.addr,
        "/switch",
        json!({ "doubleCheck": false, "alertChannelSubscriptions": subscribed(&[&hook_channel]) }),
    )
    .await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let session = run_session(&ts, &id).await;
    assert_eq!(session["status"], "FAILED", "{session}");

    // The alert.
    let alerts = check_alerts(&ts).await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let alert = &alerts[0];
    assert_eq!(alert["alertType"], "ALERT_FAILURE");
    assert_eq!(alert["checkId"], id.as_str());
    assert_eq!(alert["name"], "api /switch");
    assert_eq!(alert["checkType"], "API");
    assert_eq!(alert["runLocation"], "eu-west-1");
    assert_eq!(alert["statusCode"], "500");
    assert!(alert["error"].as_str().unwrap().contains("500"), "{alert}");
    assert!(alert["responseTime"].is_number() && alert["created_at"].is_string());

    // The webhook got the filled-in template.
    let received = hook.wait_for(1).await;
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/hook"));
    assert_eq!(request.query.as_deref(), Some("source=monform"));
    assert_eq!(request.headers["authorization"], "Bearer s3cret");
    assert_eq!(request.headers["content-type"], "application/json");
    assert!(request.headers["x-monform-signature"].starts_with("sha256="));
    let body: Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(
        body,
        json!({ "type": "ALERT_FAILURE", "check": "api /switch", "location": "eu-west-1", "code": "500" })
    );

    // The notification record, secrets masked.
    let notifications = settled_notifications(&ts).await;
    assert_eq!(notifications.len(), 1, "{notifications:?}");
    let n = &notifications[0];
    assert_eq!(n["status"], "SUCCESS", "{n}");
    assert_eq!(n["type"], "WEBHOOK");
    assert_eq!(n["notificationResult"], "{\"received\":true}");
    assert_eq!(n["checkAlertId"], alert["id"]);
    assert_eq!(n["checkId"], id.as_str());
    assert_eq!(n["checkType"], "API");
    assert_eq!(n["alertChannelId"], hook_channel["id"]);
    assert_eq!(n["checkResultId"], session["results"][0]["checkResultId"]);
    assert!(n["timestamp"].is_string());
    let config = n["alertConfig"].to_string();
    assert!(!config.contains("s3cret") && !config.contains("shh"), "{config}");
    assert_eq!(n["alertConfig"]["headers"][0]["key"], "Authorization");

    // The error group, on the result too.
    let groups = ts.read(&format!("/v1/error-groups/checks/{id}")).await;
    assert_eq!(groups.as_array().unwrap().len(), 1, "{groups}");
    assert_eq!(session["results"][0]["errorGroupIds"], json!([groups[0]["id"]]));

    // Still failing: the alert stays open (no reminders by default).
    assert_eq!(run_session(&ts, &id).await["status"], "FAILED");
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE"]);

    // Recovery.
    target.failing.store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_session(&ts, &id).await["status"], "PASSED");
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE", "ALERT_RECOVERY"]);
    let received = hook.wait_for(2).await;
    assert_eq!(received.len(), 2);
    let body: Value = serde_json::from_str(&received[1].body).unwrap();
    assert_eq!(body["type"], "ALERT_RECOVERY");
    assert_eq!(body["code"], "200");
    let notifications = settled_notifications(&ts).await;
    assert_eq!(notifications.len(), 2);
    assert!(notifications.iter().all(|n| n["status"] == "SUCCESS"));

    // Report figures: one of three runs passed.
    let report = report_of(&ts, &id, "").await;
    assert_eq!(report["aggregate"]["successRatio"], json!(0.3333), "{report}");
    assert!(report["aggregate"]["avg"].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn degraded_timed_out_tcp_and_passing_checks_alert_as_they_should() {
    let ts = emulator().await;
    let target = http_target().await;
    let hook = Recorder::start(204, "").await;
    let hook_channel = channel(&ts, webhook(hook.url("/")).clone()).await;
    let subscriptions = subscribed(&[&hook_channel]);
    let extra = |more: Value| {
        merged(
            json!({ "doubleCheck": false, "alertChannelSubscriptions": subscriptions }),
            more,
        )
    };

    let passing = api_check(&ts, target, "/ok", extra(json!({}))).await;
    let degraded = api_check(&ts, target, "/slow", extra(json!({ "degradedResponseTime": 100 }))).await;
    let hung = api_check(
        &ts,
        target,
        "/hang",
        extra(json!({ "degradedResponseTime": 100, "maxResponseTime": 400 })),
    )
    .await;
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let tcp = create(
        &ts,
        "tcp",
        extra(json!({ "name": "tcp closed", "request": { "hostname": "127.0.0.1", "port": closed } })),
    )
    .await;

    assert_eq!(run_session(&ts, &passing).await["status"], "PASSED");
    assert_eq!(run_session(&ts, &degraded).await["status"], "DEGRADED");
    assert_eq!(run_session(&ts, &hung).await["status"], "TIMED_OUT");
    let session = run_session(&ts, &tcp).await;
    assert_eq!(session["status"], "FAILED");
    assert_eq!(session["results"][0]["hasErrors"], true);

    assert!(alert_types(&ts, &passing).await.is_empty());
    assert_eq!(alert_types(&ts, &degraded).await, ["ALERT_DEGRADED"]);
    assert_eq!(alert_types(&ts, &hung).await, ["ALERT_FAILURE"]);
    assert_eq!(alert_types(&ts, &tcp).await, ["ALERT_FAILURE"]);
    let tcp_alert = check_alerts(&ts)
        .await
        .into_iter()
        .find(|a| a["checkId"] == tcp.as_str())
        .unwrap();
    assert_eq!(tcp_alert["checkType"], "TCP");
    assert!(tcp_alert["statusCode"].is_null());
    assert!(tcp_alert["error"].as_str().unwrap().contains("cannot connect"));

    // Three notifications, delivered (204 with an empty body).
    let received = hook.wait_for(3).await;
    assert_eq!(received.len(), 3);
    let types: Vec<Value> = received
        .iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap()["alertType"].clone())
        .collect();
    assert_eq!(types.iter().filter(|t| *t == "ALERT_FAILURE").count(), 2, "{types:?}");
    assert!(types.contains(&json!("ALERT_DEGRADED")));
    let notifications = settled_notifications(&ts).await;
    assert_eq!(notifications.len(), 3);
    assert!(
        notifications.iter().all(|n| n["status"] == "SUCCESS"),
        "{notifications:?}"
    );

    // Error groups only for failures; report figures per check.
    for (check, groups) in [(&passing, 0), (&degraded, 0), (&hung, 1), (&tcp, 1)] {
        let list = ts.read(&format!("/v1/error-groups/checks/{check}")).await;
        assert_eq!(list.as_array().unwrap().len(), groups, "{check}: {list}");
    }
    assert_eq!(
        report_of(&ts, &passing, "").await["aggregate"]["successRatio"],
        json!(1.0)
    );
    let slow = report_of(&ts, &degraded, "").await;
    assert_eq!(slow["aggregate"]["successRatio"], json!(1.0));
    assert!(slow["aggregate"]["p95"].as_f64().unwrap() >= 300.0, "{slow}");
    assert_eq!(report_of(&ts, &hung, "").await["aggregate"]["successRatio"], json!(0.0));
}

#[tokio::test]
async fn failed_runs_are_retried_as_attempts() {
    let ts = emulator().await;
    let target = steered_target().await;
    let always = api_check(
        &ts,
        target.addr,
        "/fail-first/9/always",
        json!({ "retryStrategy": { "type": "LINEAR", "baseBackoffSeconds": 1, "maxRetries": 2, "sameRegion": true } }),
    )
    .await;
    let session = run_session(&ts, &always).await;
    assert_eq!(session["status"], "FAILED");
    assert_eq!(
        session["results"].as_array().unwrap().len(),
        1,
        "the session lists the FINAL result"
    );
    assert_eq!(session["results"][0]["attempts"], 2);
    let list = |filter: &'static str| {
        let ts = &ts;
        let always = always.clone();
        async move {
            ts.read(&format!("/v1/check-results/{always}?resultType={filter}"))
                .await
        }
    };
    let all = list("ALL").await;
    assert_eq!(all.as_array().unwrap().len(), 3, "{all}");
    let sequence = &all[0]["sequenceId"];
    assert!(all.as_array().unwrap().iter().all(|r| &r["sequenceId"] == sequence));
    let attempts = list("ATTEMPT").await;
    let mut numbers: Vec<i64> = attempts
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["attempts"].as_i64().unwrap())
        .collect();
    numbers.sort();
    assert_eq!(numbers, [0, 1]);
    assert!(attempts.as_array().unwrap().iter().all(|r| r["resultType"] == "ATTEMPT"
        && r["hasFailures"] == true
        && r["runLocation"] == "eu-west-1"
        && r["errorGroupIds"].as_array().unwrap().len() == 1));
    let finals = list("FINAL").await;
    assert_eq!(finals.as_array().unwrap().len(), 1);
    assert_eq!(finals[0]["attempts"], 2);
    // The listing defaults to FINAL.
    assert_eq!(listed_results(&ts, &always).await.len(), 1);
    // Attempts are not alerts: one run, one alert.
    assert_eq!(alert_types(&ts, &always).await, ["ALERT_FAILURE"]);

    // doubleCheck (the default): one retry, in another location; it passes.
    let flaky = api_check(
        &ts,
        target.addr,
        "/fail-first/1/flaky",
        json!({ "locations": ["eu-west-1", "us-east-1"] }),
    )
    .await;
    let session = run_session(&ts, &flaky).await;
    assert_eq!(session["status"], "PASSED", "{session}");
    assert_eq!(session["results"][0]["runLocation"], "us-east-1");
    let attempts = ts.read(&format!("/v1/check-results/{flaky}?resultType=ATTEMPT")).await;
    assert_eq!(attempts.as_array().unwrap().len(), 1);
    assert_eq!(attempts[0]["runLocation"], "eu-west-1");
    assert!(alert_types(&ts, &flaky).await.is_empty());

    // onlyOn NETWORK_ERROR: a 500 is not retried.
    let network = api_check(
        &ts,
        target.addr,
        "/fail-first/9/network",
        json!({ "retryStrategy": { "type": "FIXED", "baseBackoffSeconds": 0, "maxRetries": 3, "onlyOn": ["NETWORK_ERROR"] } }),
    )
    .await;
    run_session(&ts, &network).await;
    let all = ts.read(&format!("/v1/check-results/{network}?resultType=ALL")).await;
    assert_eq!(all.as_array().unwrap().len(), 1, "{all}");
}

#[tokio::test]
async fn a_failed_run_threshold_of_two_needs_two_failing_sessions() {
    let ts = emulator().await;
    let target = steered_target().await;
    let id = api_check(
        &ts,
        target.addr,
        "/switch",
        merged(json!({ "doubleCheck": false }), settings(2, 0, 5, None)),
    )
    .await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    run_session(&ts, &id).await;
    assert!(alert_types(&ts, &id).await.is_empty());
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE"]);
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE"]);
    target.failing.store(false, std::sync::atomic::Ordering::SeqCst);
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE", "ALERT_RECOVERY"]);
}

/// Moves the time of the check's last alert back by `minutes` (the store's
/// clock for reminder intervals), so a test need not wait.
fn rewind_last_alert(ts: &TestServer, check_id: &str, minutes: i64) {
    let db = ts.server.app.store.lock();
    let account = &ts.server.account_id;
    let mut state = db.get(account, "alertStates", check_id).unwrap().unwrap();
    state["lastAlertMs"] = json!(state["lastAlertMs"].as_i64().unwrap() - minutes * 60_000);
    db.replace(account, "alertStates", check_id, &state).unwrap();
}

#[tokio::test]
async fn reminders_come_at_most_amount_times_and_interval_apart() {
    let ts = emulator().await;
    let target = steered_target().await;
    let hook = Recorder::start(200, "ok").await;
    let hook_channel = channel(&ts, webhook(hook.url("/"))).await;
    let id = api_check(
        &ts,
        target.addr,
        "/switch",
        merged(
            json!({ "doubleCheck": false, "alertChannelSubscriptions": subscribed(&[&hook_channel]) }),
            settings(1, 1, 1, None),
        ),
    )
    .await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE"]);
    // Within the interval: no reminder.
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE"]);
    rewind_last_alert(&ts, &id, 2);
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE", "ALERT_FAILURE_REMAIN"]);
    // The one reminder allowed was sent.
    rewind_last_alert(&ts, &id, 2);
    run_session(&ts, &id).await;
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE", "ALERT_FAILURE_REMAIN"]);
    let received = hook.wait_for(2).await;
    let types: Vec<Value> = received
        .iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap()["alertType"].clone())
        .collect();
    assert_eq!(types, [json!("ALERT_FAILURE"), json!("ALERT_FAILURE_REMAIN")]);
}

#[tokio::test]
async fn the_parallel_run_failure_threshold_decides_when_a_run_failed() {
    let ts = emulator().await;
    let target = steered_target().await;
    // Every other request fails: one of the two parallel locations fails.
    let parallel = |name: &str, percentage: u32| {
        merged(
            json!({ "doubleCheck": false, "runParallel": true, "locations": ["eu-west-1", "us-east-1"],
                "request": { "url": format!("http://{}/alternate/{name}", target.addr), "method": "GET" } }),
            settings(1, 0, 5, Some(percentage)),
        )
    };
    let tolerant = api_check(&ts, target.addr, "/", parallel("tolerant", 100)).await;
    let strict = api_check(&ts, target.addr, "/", parallel("strict", 50)).await;
    let session = run_session(&ts, &tolerant).await;
    assert_eq!(session["status"], "FAILED", "one location failed: {session}");
    assert_eq!(session["results"].as_array().unwrap().len(), 2);
    assert!(alert_types(&ts, &tolerant).await.is_empty(), "1 of 2 is under 100 %");
    run_session(&ts, &strict).await;
    assert_eq!(
        alert_types(&ts, &strict).await,
        ["ALERT_FAILURE"],
        "1 of 2 reaches 50 %"
    );
}

#[tokio::test]
async fn muting_and_maintenance_windows_suppress_alerts_and_notifications() {
    let ts = emulator().await;
    let target = steered_target().await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let hook = Recorder::start(200, "ok").await;
    let hook_channel = channel(&ts, webhook(hook.url("/"))).await;
    let base = |more: Value| {
        merged(
            json!({ "doubleCheck": false, "alertChannelSubscriptions": subscribed(&[&hook_channel]) }),
            more,
        )
    };
    let muted = api_check(&ts, target.addr, "/switch", base(json!({ "muted": true }))).await;
    let group = ts
        .create(
            "/v2/check-groups?autoAssignAlerts=false",
            &json!({ "name": "quiet", "muted": true }),
            201,
        )
        .await;
    let in_muted_group = api_check(&ts, target.addr, "/switch", base(json!({ "groupId": group["id"] }))).await;
    let now = now_ms();
    ts.create(
        "/v1/maintenance-windows",
        &json!({ "name": "deploy", "tags": ["maint"], "startsAt": iso(now - 3_600_000), "endsAt": iso(now + 3_600_000) }),
        201,
    )
    .await;
    ts.create(
        "/v1/maintenance-windows",
        &json!({ "name": "over", "tags": ["other"], "startsAt": iso(now - 7_200_000), "endsAt": iso(now - 3_600_000) }),
        201,
    )
    .await;
    let in_maintenance = api_check(&ts, target.addr, "/switch", base(json!({ "tags": ["maint"] }))).await;
    let control = api_check(&ts, target.addr, "/switch", base(json!({ "tags": ["other"] }))).await;
    for check in [&muted, &in_muted_group, &in_maintenance, &control] {
        assert_eq!(run_session(&ts, check).await["status"], "FAILED");
    }
    let alerts = check_alerts(&ts).await;
    assert_eq!(alerts.len(), 1, "only the control check alerts: {alerts:?}");
    assert_eq!(alerts[0]["checkId"], control.as_str());
    let notifications = settled_notifications(&ts).await;
    assert_eq!(notifications.len(), 1, "{notifications:?}");
    assert_eq!(notifications[0]["checkId"], control.as_str());
    assert_eq!(hook.wait_for(1).await.len(), 1);

    // Unmuted and still failing: the alert comes on the next failed run.
    ts.update(&format!("/v1/checks/api/{muted}"), &json!({ "muted": false }), 200)
        .await;
    run_session(&ts, &muted).await;
    assert_eq!(alert_types(&ts, &muted).await, ["ALERT_FAILURE"]);
}

#[tokio::test]
async fn test_sessions_raise_no_alerts() {
    let ts = emulator().await;
    let target = steered_target().await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let hook = Recorder::start(200, "ok").await;
    let hook_channel = channel(&ts, webhook(hook.url("/"))).await;
    api_check(
        &ts,
        target.addr,
        "/switch",
        json!({ "tags": ["ci"], "alertChannelSubscriptions": subscribed(&[&hook_channel]) }),
    )
    .await;
    let created = ts
        .create(
            "/v1/test-sessions/trigger",
            &json!({ "name": "ci", "runLocation": "eu-west-1", "target": { "matchTags": [["ci"]] },
                "retryStrategy": { "type": "FIXED", "baseBackoffSeconds": 0, "maxRetries": 1 } }),
            201,
        )
        .await;
    let id = created["testSessionId"].as_str().unwrap();
    let done = ts
        .read(&format!("/v1/test-sessions/{id}/completion?maxWaitSeconds=10"))
        .await;
    assert_eq!(done["status"], "FAILED");
    assert_eq!(done["results"][0]["attempts"], 1, "retried once: {done}");
    assert!(check_alerts(&ts).await.is_empty());
    assert!(settled_notifications(&ts).await.is_empty());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(hook.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn scheduled_runs_alert_too() {
    let ts = scheduling_emulator().await;
    let target = steered_target().await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let id = api_check(
        &ts,
        target.addr,
        "/switch",
        json!({ "frequency": 1, "doubleCheck": false }),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while alert_types(&ts, &id).await.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(alert_types(&ts, &id).await, ["ALERT_FAILURE"]);
    ts.server.shutdown().await.unwrap();
}
