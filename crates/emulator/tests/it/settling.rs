//! Sessions settle in the background as their time comes (issue 28): no
//! read has to finish them, so no read holds the store while it finishes
//! hundreds at once and every other request waits.

use crate::common;

use std::time::Duration;

use common::{TestServer, bodies};
use monform_emulator::store::Objects;
use serde_json::{Value, json};

#[tokio::test]
async fn sessions_settle_without_a_read() {
    let ts = TestServer::start().await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let check = ts
            .create(
                "/v1/checks/api?autoAssignAlerts=false",
                &bodies::api(&format!("c{n}")),
                201,
            )
            .await;
        ids.push(check["id"].clone());
    }
    let triggered = ts
        .create(
            "/v2/check-sessions/trigger",
            &json!({ "target": { "checkId": ids } }),
            201,
        )
        .await;
    let sessions: Vec<String> = triggered["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["checkSessionId"].as_str().unwrap().to_owned())
        .collect();
    // Sessions last 200 ms here; no request reads them meanwhile.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let db = ts.server.app.store.lock();
    for id in &sessions {
        let stored: Value = db
            .get(&ts.server.account_id, "checkSessions", id)
            .unwrap()
            .expect("the session is stored");
        assert_eq!(stored["status"], "PASSED", "{stored}");
    }
}
