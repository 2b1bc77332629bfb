//! What each kind of channel does with an alert: Slack posts, email (into
//! the emulator's mailbox, `GET /-/mailbox`), and the channel's own flags.

use super::*;

#[tokio::test]
async fn slack_posts_email_reaches_the_mailbox_and_channel_flags_are_followed() {
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
    assert_eq!(email_n["status"], "SUCCESS", "{email_n}");
    assert!(
        email_n["notificationResult"]
            .as_str()
            .unwrap()
            .starts_with("delivered to the emulator's mailbox"),
        "{email_n}"
    );
    let mail = ts.read("/-/mailbox").await;
    let mail = mail.as_array().unwrap();
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0]["to"], "ops@example.com");
    assert_eq!(mail[0]["source"], "alert");
    assert_eq!(mail[0]["alertChannelId"], email["id"]);
    assert!(mail[0]["subject"].as_str().unwrap().contains("is failing"), "{mail:?}");
    let broken_n = of(&broken);
    assert_eq!(broken_n["status"], "FAILURE");
    assert_eq!(broken_n["notificationResult"], "nope");
    assert_eq!(broken_server.wait_for(1).await.len(), 1);
    assert!(quiet_server.requests.lock().unwrap().is_empty());
    // The hasFailures filter lists the one that failed.
    let failed = ts.read("/v1/alert-notifications?hasFailures=true").await;
    assert_eq!(failed.as_array().unwrap().len(), 1);
}
