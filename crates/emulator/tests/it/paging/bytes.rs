//! Every list page of a varied account, byte for byte what the emulator
//! answered before list pages were written from the stored text
//! (`routes/stored.rs`). `tests/fixtures/list-pages/varied.json` holds the
//! account's stored objects (checks subscribed to channels of every type,
//! activated or not, in and out of groups; groups with and without
//! `apiCheckDefaults`; an auto-subscribing channel; plain, locked and secret
//! variables; private locations with keys; a status page with services;
//! snippets, a maintenance window, a dashboard) and the pages the previous
//! binary served from them.

use monform_emulator::Config;
use monform_emulator::store::Objects;
use serde_json::Value;

use crate::common::TestServer;

#[tokio::test]
async fn every_list_page_is_the_bytes_the_previous_emulator_answered() {
    let fixture: Value =
        serde_json::from_str(include_str!("../../fixtures/list-pages/varied.json")).expect("the fixture parses");
    let account = fixture["account"].as_str().expect("an account");
    let ts = TestServer::with(Config {
        rate_limit: None,
        execute_checks: false,
        account_id: Some(account.to_owned()),
        ..Config::default()
    })
    .await;
    {
        let db = ts.server.app.store.lock();
        for object in fixture["objects"].as_array().expect("objects") {
            let text = |i: usize| object[i].as_str().map(str::to_owned);
            let stored = text(4).expect("a body");
            let body: Value = serde_json::from_str(&stored).expect("a stored body parses");
            // Stored as it was: the comparison is of the same text.
            assert_eq!(body.to_string(), stored);
            let (kind, id) = (text(0).expect("a kind"), text(1).expect("an id"));
            let at = object[3].as_i64().expect("a time");
            db.insert(account, &kind, &id, text(2).as_deref(), at, &body)
                .expect("stored");
        }
    }
    let pages = fixture["pages"].as_array().expect("pages");
    assert!(pages.len() > 50);
    for page in pages {
        let path = page["path"].as_str().expect("a path");
        let response = ts.get(path).await;
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().expect("text").to_owned())
        };
        assert_eq!(header("content-type").as_deref(), Some("application/json"), "{path}");
        assert_eq!(header("content-range").as_deref(), page["range"].as_str(), "{path}");
        let body = response.text().await.expect("a body");
        assert_eq!(body, page["body"].as_str().expect("a body"), "{path}");
    }
}
