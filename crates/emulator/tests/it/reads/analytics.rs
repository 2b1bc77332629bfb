//! Analytics of API and browser checks, from stored results.

use super::*;

#[tokio::test]
async fn api_check_analytics_from_stored_results() {
    let ts = TestServer::start().await;
    let id = api_check(
        &ts,
        "measured",
        json!({ "locations": ["eu-west-1", "us-east-1"], "runParallel": true, "tags": ["prod"] }),
    )
    .await;
    run_session(&ts, &id).await;
    run_session(&ts, &id).await;

    let path = format!("/v1/analytics/api-checks/{id}?metrics=responseTime_avg,availability,dns_p95,retries");
    let (status, body) = parts(ts.get(&path).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checkId"], id.as_str());
    assert_eq!(body["name"], "measured");
    assert_eq!(body["checkType"], "API");
    assert_eq!(body["activated"], true);
    assert_eq!(body["muted"], false);
    assert!(body["frequency"].is_number());
    assert!(body["from"].is_string() && body["to"].is_string());
    assert_eq!(body["tags"], json!(["prod"]));
    assert_eq!(body["pagination"], json!({ "page": 1, "limit": 10 }));
    for metric in ["responseTime_avg", "availability", "dns_p95", "retries"] {
        assert!(body["metadata"][metric]["label"].is_string(), "{metric}: {body}");
    }
    assert_eq!(body["metadata"]["dns_p95"]["aggregation"], "p95");
    // Series as the reference: entries of rows (not spec 2.18's strings).
    let series = body["series"].as_array().unwrap();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0]["data"].as_array().map(Vec::len), Some(1), "{body}");
    let row = &series[0]["data"][0];
    assert_eq!(row["availability"], 100.0);
    assert_eq!(row["retries"], 0.0);
    assert!(row["responseTime_avg"].as_f64().unwrap() > 0.0);
    assert!(row["dns_p95"].as_f64().unwrap() > 0.0);
    assert!(row["timestamp"].is_string());

    let (_, grouped) = parts(ts.get(&format!("{path}&groupBy=runLocation")).await).await;
    let mut locations: Vec<String> = grouped["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["data"][0]["runLocation"].as_str().unwrap().to_owned())
        .collect();
    locations.sort();
    assert_eq!(locations, ["eu-west-1", "us-east-1"]);
    let (_, paged) = parts(ts.get(&format!("{path}&groupBy=runLocation&limit=1&page=2")).await).await;
    assert_eq!(paged["series"].as_array().unwrap().len(), 1);
    assert_eq!(paged["pagination"], json!({ "page": 2, "limit": 1 }));
    let (status, by_code) = parts(
        ts.get(&format!("{path}&groupBy=statusCode&aggregationInterval=60"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{by_code}");
    let row = &by_code["series"][0]["data"][0];
    assert_eq!(row["statusCode"], 200);
    assert_eq!(by_code["series"][0]["statusCode"], 200);

    // Only failures: nothing failed.
    let (_, failures) = parts(ts.get(&format!("{path}&filterByStatus=failure")).await).await;
    assert_eq!(failures["series"], json!([]));
    let (_, all) = parts(ts.get(&format!("{path}&filterByStatus=success,failure")).await).await;
    assert_eq!(all["series"].as_array().unwrap().len(), 1);
    // A window before the runs.
    let (status, empty) = parts(ts.get(&format!("{path}&quickRange=lastMonth")).await).await;
    assert_eq!(status, 200);
    assert_eq!(empty["series"], json!([]));
    let (status, custom) = parts(
        ts.get(&format!("{path}&from={}&to={}", now_s() - 60, now_s() + 60))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(custom["series"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn analytics_validate_their_parameters() {
    let ts = TestServer::start().await;
    let api = api_check(&ts, "api", json!({})).await;
    let browser = browser_check(&ts, "browser").await;
    let api_path = format!("/v1/analytics/api-checks/{api}");
    let browser_path = format!("/v1/analytics/browser-checks/{browser}");
    for (query, field) in [
        ("", "metrics"),
        ("metrics=", "metrics"),
        ("metrics=speed", "metrics"),
        ("metrics=TTFB", "metrics"),
        ("metrics=availability_avg", "metrics"),
        ("metrics=responseTime_p42", "metrics"),
        ("metrics=responseTime&quickRange=last24Hrs", "quickRange"),
        ("metrics=responseTime&aggregationInterval=0", "aggregationInterval"),
        ("metrics=responseTime&aggregationInterval=43201", "aggregationInterval"),
        ("metrics=responseTime&filterByStatus=flaky", "filterByStatus"),
        ("metrics=responseTime&groupBy=pageIndex", "groupBy"),
        ("metrics=responseTime&limit=0", "limit"),
        ("metrics=responseTime&page=0", "page"),
        ("metrics=responseTime&from=x", "from"),
        ("metrics=responseTime&from=200&to=100", "from"),
    ] {
        assert_invalid(&ts, &format!("{api_path}?{query}"), field).await;
    }
    assert_invalid(&ts, &format!("{browser_path}?metrics=dns"), "metrics").await;
    assert_invalid(
        &ts,
        &format!("{browser_path}?metrics=TTFB&groupBy=statusCode"),
        "groupBy",
    )
    .await;
    // The check's type must fit the endpoint.
    assert_invalid(
        &ts,
        &format!("/v1/analytics/browser-checks/{api}?metrics=responseTime"),
        "id",
    )
    .await;
    assert_invalid(
        &ts,
        &format!("/v1/analytics/api-checks/{browser}?metrics=responseTime"),
        "id",
    )
    .await;
    // Every quick range is accepted.
    for range in [
        "last24Hours",
        "last7Days",
        "last30Days",
        "thisWeek",
        "thisMonth",
        "lastWeek",
        "lastMonth",
    ] {
        let (status, body) = parts(
            ts.get(&format!("{api_path}?metrics=responseTime&quickRange={range}"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{range}: {body}");
    }
}

#[tokio::test]
async fn browser_check_analytics_with_web_vitals() {
    let ts = TestServer::start().await;
    let id = browser_check(&ts, "page").await;
    run_session(&ts, &id).await;
    let path = format!(
        "/v1/analytics/browser-checks/{id}?metrics=TTFB_avg,LCP_max,CLS,consoleErrors_sum,availability&groupBy=pageIndex"
    );
    let (status, body) = parts(ts.get(&path).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checkType"], "BROWSER");
    assert_eq!(body["metadata"]["CLS"]["unit"], "score");
    assert_eq!(body["metadata"]["consoleErrors_sum"]["unit"], "count");
    let row = &body["series"][0]["data"][0];
    assert_eq!(row["pageIndex"], 0);
    assert!(row["TTFB_avg"].as_f64().unwrap() > 0.0);
    assert_eq!(row["consoleErrors_sum"], 0.0);
    assert_eq!(row["availability"], 100.0);
}
