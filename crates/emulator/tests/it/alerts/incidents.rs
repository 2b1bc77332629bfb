//! Checks that trigger incidents on their status page service.

use super::*;

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
