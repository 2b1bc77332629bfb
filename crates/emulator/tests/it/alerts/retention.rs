//! Retention: old results dropped, their roll-ups kept for reports.

use super::*;

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
