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
async fn slack_posts_email_has_no_transport_and_channel_flags_are_followed() {
    let ts = emulator().await;
    let target = steered_target().await;
    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let slack_server = Recorder::start(200, "ok").await;
    let broken_server = Recorder::start(500, "nope").await;
    let quiet_server = Recorder::start(200, "ok").await;
    let slack = channel(
        &ts,
        json!({ "type": "SLACK", "config": { "url": slack_server.url("/services/T0/B0/XYZ"), "channel": "#ops" } }),
    )
    .await;
    let email = channel(
        &ts,
        json!({ "type": "EMAIL", "config": { "address": "ops@example.com" } }),
    )
    .await;
    let broken = channel(&ts, webhook(broken_server.url("/"))).await;
    let quiet = channel(
        &ts,
        merged(webhook(quiet_server.url("/")), json!({ "sendFailure": false })),
    )
    .await;
    // Slack through the group's subscription, the others the check's own.
    let group = ts
        .create(
            "/v2/check-groups?autoAssignAlerts=false",
            &json!({ "name": "team", "alertChannelSubscriptions": subscribed(&[&slack]) }),
            201,
        )
        .await;
    let id = api_check(
        &ts,
        target.addr,
        "/switch",
        json!({ "doubleCheck": false, "groupId": group["id"],
            "alertChannelSubscriptions": subscribed(&[&email, &broken, &quiet]) }),
    )
    .await;
    run_session(&ts, &id).await;

    let posted = slack_server.wait_for(1).await;
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].method, "POST");
    assert_eq!(posted[0].path, "/services/T0/B0/XYZ");
    let body: Value = serde_json::from_str(&posted[0].body).unwrap();
    let text = body["text"].as_str().unwrap();
    assert!(text.contains("ALERT_FAILURE") && text.contains("api /switch"), "{text}");
    assert_eq!(body["channel"], "#ops");

    let notifications = settled_notifications(&ts).await;
    assert_eq!(
        notifications.len(),
        3,
        "no notification for sendFailure false: {notifications:?}"
    );
    let of = |channel: &Value| {
        notifications
            .iter()
            .find(|n| n["alertChannelId"] == channel["id"])
            .unwrap_or_else(|| panic!("{channel} in {notifications:?}"))
            .clone()
    };
    let slack_n = of(&slack);
    assert_eq!(
        (slack_n["type"].as_str(), slack_n["status"].as_str()),
        (Some("SLACK"), Some("SUCCESS"))
    );
    assert_eq!(slack_n["notificationResult"], "ok");
    assert!(!slack_n["alertConfig"].to_string().contains("XYZ"), "{slack_n}");
    let email_n = of(&email);
    assert_eq!(email_n["status"], "FAILURE");
    assert!(
        email_n["notificationResult"]
            .as_str()
            .unwrap()
            .contains("no transport for EMAIL")
    );
    let broken_n = of(&broken);
    assert_eq!(broken_n["status"], "FAILURE");
    assert_eq!(broken_n["notificationResult"], "nope");
    assert_eq!(broken_server.wait_for(1).await.len(), 1);
    assert!(quiet_server.requests.lock().unwrap().is_empty());
    // The hasFailures filter lists the two that failed.
    let failed = ts.read("/v1/alert-notifications?hasFailures=true").await;
    assert_eq!(failed.as_array().unwrap().len(), 2);
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

fn old_result(check_id: &str, id: &str, stopped: i64, ms: f64, failed: bool, result_type: &str) -> Value {
    json!({
        "id": id, "checkId": check_id, "name": "api /ok", "checkType": "API", "resultType": result_type,
        "hasFailures": failed, "hasErrors": false, "isCancelled": false, "isDegraded": false,
        "responseTime": ms, "runLocation": "eu-west-1", "startedAt": iso(stopped - 10), "stoppedAt": iso(stopped),
        "attempts": 0, "errorGroupIds": [],
    })
}

#[tokio::test]
async fn retention_drops_old_results_and_keeps_roll_ups_for_reports() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        db: Some(dir.path().join("emulator.sqlite")),
        rate_limit: None,
        session_duration: Duration::from_millis(20),
        ..Config::default()
    };
    let ts = TestServer::with(config.clone()).await;
    let target = http_target().await;
    let id = api_check(&ts, target, "/ok", json!({ "doubleCheck": false })).await;
    assert_eq!(run_session(&ts, &id).await["status"], "PASSED");
    let now = now_ms();
    let day = 24 * 3_600_000;
    let old = now - 40 * day;
    {
        let db = ts.server.app.store.lock();
        let account = &ts.server.account_id;
        for (i, (ms, failed)) in [(100.0, false), (200.0, true), (300.0, false), (400.0, false)]
            .into_iter()
            .enumerate()
        {
            let at = old + i as i64 * 1000;
            let record = old_result(&id, &format!("old-{i}"), at, ms, failed, "FINAL");
            db.insert(account, "checkResults", &format!("old-{i}"), Some(&id), at, &record)
                .unwrap();
        }
        let attempt = old_result(&id, "old-attempt", old, 999.0, true, "ATTEMPT");
        db.insert(account, "checkResults", "old-attempt", Some(&id), old, &attempt)
            .unwrap();
        // Another old hour.
        let later = old + 2 * day;
        let record = old_result(&id, "old-later", later, 500.0, false, "FINAL");
        db.insert(account, "checkResults", "old-later", Some(&id), later, &record)
            .unwrap();
    }
    let seconds = |ms: i64| ms / 1000;
    let old_window = format!("?from={}&to={}", seconds(old - 60_000), seconds(old + 3_600_000));
    let raw = ts
        .read(&format!("/v1/check-results/{id}{old_window}&resultType=ALL"))
        .await;
    assert_eq!(raw.as_array().unwrap().len(), 5, "before the sweep: {raw}");

    let deleted = {
        let db = ts.server.app.store.lock();
        monform_emulator::domain::retention::sweep(&db, now).unwrap()
    };
    assert_eq!(deleted, 6);
    let raw = ts
        .read(&format!("/v1/check-results/{id}{old_window}&resultType=ALL"))
        .await;
    assert!(raw.as_array().unwrap().is_empty(), "{raw}");
    // The recent result stays.
    assert_eq!(listed_results(&ts, &id).await.len(), 1);

    // The report over the old hour reads the roll-up.
    let report = report_of(&ts, &id, &old_window).await;
    let aggregate = &report["aggregate"];
    assert_eq!(aggregate["successRatio"], json!(0.75), "{report}");
    assert_eq!(aggregate["avg"], json!(250.0));
    let p95 = aggregate["p95"].as_f64().unwrap();
    assert!((385.0..=400.0).contains(&p95), "{report}");
    // Analytics over the old hour read the roll-up as the results it stands for.
    let analytics = ts
        .read(&format!(
            "/v1/analytics/api-checks/{id}{old_window}&metrics=availability,responseTime_avg,responseTime_max"
        ))
        .await;
    let rows: Vec<Value> = analytics["series"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|entry| entry["data"].as_array().unwrap().clone())
        .collect();
    assert_eq!(rows.len(), 1, "{analytics}");
    assert_eq!(rows[0]["availability"], json!(75.0), "{analytics}");
    let avg = rows[0]["responseTime_avg"].as_f64().unwrap();
    assert!((243.0..=257.0).contains(&avg), "{analytics}");
    assert_eq!(rows[0]["responseTime_max"], json!(400.0), "{analytics}");
    // Over old and new together: roll-ups and the raw result.
    let everything = format!("?from={}&to={}", seconds(old - 60_000), seconds(now_ms() + 1000));
    let report = report_of(&ts, &id, &everything).await;
    assert_eq!(report["aggregate"]["successRatio"], json!(0.8333), "{report}");

    // A start sweeps too.
    ts.server.shutdown().await.unwrap();
    {
        let ts = TestServer::with(config.clone()).await;
        let stale = old_result(&id, "stale", old, 100.0, true, "FINAL");
        ts.server
            .app
            .store
            .lock()
            .insert(&ts.server.account_id, "checkResults", "stale", Some(&id), old, &stale)
            .unwrap();
        ts.server.shutdown().await.unwrap();
    }
    let ts = TestServer::with(config).await;
    assert!(
        ts.server
            .app
            .store
            .lock()
            .get(&ts.server.account_id, "checkResults", "stale")
            .unwrap()
            .is_none()
    );
    let report = report_of(&ts, &id, &old_window).await;
    assert_eq!(report["aggregate"]["successRatio"], json!(0.6), "{report}");
}

#[tokio::test]
async fn a_check_with_trigger_incident_opens_and_resolves_an_incident_on_its_service() {
    let ts = emulator().await;
    let target = steered_target().await;
    let service = ts
        .create("/v1/status-pages/services", &json!({ "name": "Checkout" }), 200)
        .await;
    let id = api_check(
        &ts,
        target.addr,
        "/switch",
        json!({ "doubleCheck": false, "triggerIncident": {
            "serviceId": service["id"], "severity": "MAJOR", "name": "Checkout down",
            "description": "Payments fail", "notifySubscribers": false,
        } }),
    )
    .await;
    assert_eq!(ts.read("/v1/status-pages/incidents").await["length"], 0);

    target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_session(&ts, &id).await["status"], "FAILED");
    run_session(&ts, &id).await; // still failing: no second incident
    let listed = ts
        .read(&format!(
            "/v1/status-pages/incidents?serviceId={}",
            service["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(listed["length"], 1, "{listed}");
    let incident = &listed["entries"][0];
    assert_eq!(incident["name"], "Checkout down");
    assert_eq!(incident["severity"], "MAJOR");
    assert_eq!(incident["lastUpdateStatus"], "INVESTIGATING");
    assert_eq!(incident["services"][0]["id"], service["id"]);
    assert_eq!(incident["incidentUpdates"][0]["description"], "Payments fail");
    let path = format!("/v1/status-pages/incidents/{}", incident["id"].as_str().unwrap());
    assert_eq!(&ts.read(&path).await, incident);
    assert_eq!(ts.read("/v1/status-pages/incidents?serviceId=other").await["length"], 0);

    target.failing.store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_session(&ts, &id).await["status"], "PASSED");
    let resolved = ts.read(&path).await;
    assert_eq!(resolved["lastUpdateStatus"], "RESOLVED", "{resolved}");
    let statuses: Vec<&str> = resolved["incidentUpdates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["INVESTIGATING", "RESOLVED"]);
    assert!(resolved["duration"].is_number());
    assert_eq!(ts.read("/v1/status-pages/incidents").await["length"], 1);
    let (status, _) = ts
        .call(reqwest::Method::GET, "/v1/status-pages/incidents/nope", None)
        .await;
    assert_eq!(status, 404);
}
