use rusqlite::Connection;
use serde_json::json;

use super::*;
use crate::routes::params::paged;
use crate::store::{Objects, Store};

const ACCOUNT: &str = "acc";

#[test]
fn what_serde_json_writes_is_canonical() {
    let values = [
        json!({ "a": "tab\t nl\n cr\r ff\u{c} bs\u{8} nul\u{0} us\u{1f} del\u{7f}", "b": [1, -2, 0, u64::MAX] }),
        json!({ "quote \" back \\ slash /": "é ✓ \u{2028} 😀", "n": null, "t": true, "o": {} }),
        json!({ "minus": -10, "nested": [[{ "x": "" }], []] }),
    ];
    for value in values {
        let text = value.to_string();
        assert!(head(&text).is_some(), "{text}");
    }
}

#[test]
fn text_the_round_trip_would_change_is_not_kept() {
    for text in [
        r#"{"a": 1}"#,
        "{\"a\":1}\n",
        r#"{"a":"\/"}"#,
        r#"{"a":"\u00e9"}"#,
        r#"{"a":"\u000a"}"#,
        r#"{"a":"\u001F"}"#,
        r#"{"a":-0}"#,
        r#"{"a":[-0,1]}"#,
        r#"{"a":1.50}"#,
        r#"{"a":[{"b":1e3}]}"#,
        r#"{"a":1E3}"#,
        r#"{"a":1e20}"#,
        r#"{"a":0.10000000000000001}"#,
        r#"{"a":100000000000000000000}"#,
        r#"{"a":01}"#,
        r#"{"id":1,"id":2}"#,
        r#"{"name":"a","name":"b"}"#,
        r#"{"a":{"x":1,"y":2,"x":3}}"#,
        "{\"a\":\"raw\u{1}control\"}",
        r#"{"a":tru}"#,
        r#"{"a":[1,]}"#,
        r#"{"a":1}{"#,
        r#"{"alertChannelSubscriptions":[{"x":0.10}]}"#,
        r#"[1]"#,
        r#"{"a":"#,
        r#"{"a":"x"#,
        r#"{"a":"\"#,
        r#"{"a":"\u00"#,
        "",
    ] {
        assert!(head(text).is_none(), "{text}");
    }
    assert!(head(r#"{"a":"\u001f \" \\ \n"}"#).is_some());
    // Numbers serde_json writes back digit for digit are kept, floats too.
    for text in [
        r#"{"a":1.5,"b":25.0,"c":-0.0,"d":1e+20,"e":[0,-1,999999999999999999]}"#,
        r#"{"alertChannelSubscriptions":[{"x":0.1}]}"#,
        r#"{"a":18446744073709551615,"b":-9223372036854775808}"#,
    ] {
        assert!(head(text).is_some(), "{text}");
    }
    assert!(head(r#"{"a":"\\","b":"\"","c":"\u0000\u001e"}"#).is_some());
}

#[test]
fn a_head_keeps_what_the_presentation_reads() {
    let head = head(r#"{"name":"x","id":7,"alertChannelSubscriptions":[{"alertChannelId":1}],"autoSubscribe":true}"#)
        .expect("kept");
    assert_eq!(head.value("id"), &json!(7));
    assert_eq!(
        head.value("alertChannelSubscriptions"),
        &json!([{ "alertChannelId": 1 }])
    );
    assert_eq!(head.value("secret"), &Value::Null);
    assert!(head.has(AUTO_SUBSCRIBE_FIELD) && !head.has("alertChannels") && !head.has("subscriptions"));
}

const AUTO_SUBSCRIBE_FIELD: &str = "autoSubscribe";

/// A varied account, stored as the handlers store objects.
fn varied() -> Store {
    let store = Store::in_memory().expect("store");
    let db = store.lock();
    let put = |kind: &str, id: &str, body: Value| db.insert(ACCOUNT, kind, id, None, 0, &body).expect("insert");
    put(
        "alertChannels",
        "1",
        json!({ "id": 1, "type": "EMAIL", "config": { "address": "a@example.com" } }),
    );
    put(
        "alertChannels",
        "2",
        json!({ "id": 2, "type": "WEBHOOK", "autoSubscribe": true,
            "config": { "url": "https://h", "name": "hook \"é\"", "method": "POST", "headers": [{ "key": "A", "value": "b" }] } }),
    );
    put(
        "alertChannels",
        "3",
        json!({ "id": 3, "type": "SLACK", "config": { "url": "https://s" } }),
    );
    put(
        "alertChannels",
        "4",
        json!({ "id": 4, "type": "SMS", "config": { "number": "+1", "name": "p" } }),
    );
    put("alertChannels", "5", json!({ "id": 5, "type": "PIGEON", "config": {} }));
    // One with the fields its presentation sets already stored: replaced in place.
    put(
        "alertChannels",
        "6",
        json!({ "id": 6, "type": "EMAIL", "subscriptions": [1], "config": {} }),
    );
    for n in 0..30 {
        let subscriptions: Vec<Value> = (1..=6)
            .filter(|c| (n >> (c - 1)) & 1 == 1)
            .map(|c| json!({ "alertChannelId": if n % 4 == 0 { json!(c) } else { json!(c.to_string()) }, "activated": n % 3 != 0 }))
            .chain((n == 7).then(|| json!({ "alertChannelId": 99, "activated": true })))
            .collect();
        let mut check = json!({
            "id": format!("c{n}"), "name": format!("check {n}\t\u{1}"), "checkType": "API",
            "request": { "url": format!("https://example.com/{n}"), "method": "GET" },
            "alertChannelSubscriptions": subscriptions, "tags": ["a", "b"], "frequency": n,
        });
        match n {
            3 => check["degradedResponseTime"] = json!(1.5),
            4 => check["alertChannels"] = json!({ "stale": true }),
            5 => check = json!({ "id": "c5" }),
            6 => check["groupId"] = json!(2),
            _ => {}
        }
        put("checks", &format!("c{n}"), check);
    }
    put(
        "groups",
        "1",
        json!({ "id": 1, "name": "plain", "alertChannelSubscriptions": [] }),
    );
    put(
        "groups",
        "2",
        json!({ "id": 2, "name": "defaults", "apiCheckDefaults": { "url": "https://b", "headers": [] },
            "alertChannelSubscriptions": [{ "alertChannelId": 1, "activated": false }] }),
    );
    put(
        "variables",
        "PLAIN",
        json!({ "key": "PLAIN", "value": "v", "secret": false }),
    );
    put(
        "variables",
        "TOKEN",
        json!({ "key": "TOKEN", "value": "s3cr3t", "secret": true }),
    );
    put(
        "variables",
        "LOCKED",
        json!({ "key": "LOCKED", "value": "l", "locked": true }),
    );
    put(
        "snippets",
        "1",
        json!({ "id": 1, "name": "s", "script": "console.log('\\u0001')" }),
    );
    put(
        "privateLocations",
        "office",
        json!({ "id": "office", "name": "Office", "slugName": "office", "keys": [] }),
    );
    put(
        "dashboards",
        "d",
        json!({ "dashboardId": "d", "customUrl": "d", "id": 1 }),
    );
    drop(db);
    store
}

/// The page as the handlers answered it before: every body parsed, presented
/// as a `Value`, serialised.
fn through_values(db: &Connection, kind: Kind, paging: Paging) -> (String, Option<String>) {
    let (rows, total) = db
        .page(ACCOUNT, kind.section(), paging.offset(), paging.limit)
        .expect("page");
    let context = Context::load(db, ACCOUNT, kind, rows.iter().map(|r| &r.body)).expect("context");
    let items = rows
        .into_iter()
        .map(|r| present::present(kind, r.body, &context))
        .collect();
    answer(paged(items, total, paging))
}

/// The page as `respond` answers it from the stored text.
fn through_text(db: &Connection, kind: Kind, paging: Paging) -> (String, Option<String>) {
    let (texts, total) = db
        .page_text(ACCOUNT, kind.section(), paging.offset(), paging.limit)
        .expect("page");
    let rows: Vec<Listed> = texts.into_iter().map(|text| Listed::of(kind, text)).collect();
    let context = Context::load(db, ACCOUNT, kind, &rows).expect("context");
    answer(respond(kind, rows, &context, total, paging))
}

fn answer(response: Response) -> (String, Option<String>) {
    let headers = response.headers();
    assert_eq!(headers[axum::http::header::CONTENT_TYPE], "application/json");
    let range = headers
        .get(axum::http::header::CONTENT_RANGE)
        .map(|v| v.to_str().expect("text").to_owned());
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let body = runtime
        .block_on(axum::body::to_bytes(response.into_body(), usize::MAX))
        .expect("body");
    (String::from_utf8(body.to_vec()).expect("utf-8"), range)
}

#[test]
fn every_kind_s_pages_are_the_bytes_the_values_gave() {
    let store = varied();
    let db = store.lock();
    let kinds = [
        Kind::Check,
        Kind::AlertChannel,
        Kind::Group,
        Kind::Variable,
        Kind::Snippet,
        Kind::PrivateLocation,
        Kind::Dashboard,
        Kind::MaintenanceWindow,
    ];
    for kind in kinds {
        for (limit, page) in [(100, 1), (7, 1), (7, 2), (7, 5), (1, 1), (10, 99)] {
            let paging = Paging { limit, page };
            let (text, text_range) = through_text(&db, kind, paging);
            let (values, values_range) = through_values(&db, kind, paging);
            assert_eq!(text, values, "{kind:?} limit {limit} page {page}");
            assert_eq!(text_range, values_range, "{kind:?} limit {limit} page {page}");
        }
    }
    // What the comparison covers: spliced checks, and ones the slow way.
    let (texts, _) = db.page_text(ACCOUNT, "checks", 0, 100).expect("page");
    let kept = texts
        .into_iter()
        .filter(|text| matches!(Listed::of(Kind::Check, text.clone()), Listed::Text(..)))
        .count();
    assert_eq!(kept, 30, "the one holding a float too");
    let (checks, _) = through_text(&db, Kind::Check, Paging { limit: 100, page: 1 });
    assert!(checks.contains(r#""alertChannels":{"email":[{"address":"a@example.com"}],"webhook":[{"url":"https://h""#));
    assert!(checks.contains(r#""degradedResponseTime":1.5"#));
    let (variables, _) = through_text(&db, Kind::Variable, Paging { limit: 100, page: 1 });
    assert!(variables.contains(r#""key":"TOKEN","value":null"#) && !variables.contains("s3cr3t"));
}
