//! Page-based lists: `limit` 1..100 (default 10), `page` >= 1 (default 1),
//! a bare array in creation order and `Content-Range: first-last/total`.

mod bytes;

use crate::common;
use common::*;

use reqwest::Method;
use serde_json::{Value, json};

/// GETs a list: status, Content-Range and body.
async fn list(t: &TestServer, path: &str) -> (u16, Option<String>, Value) {
    let response = t.get(path).await;
    let range = response
        .headers()
        .get("content-range")
        .map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = parts(response).await;
    (status, range, body)
}

fn names(body: &Value) -> Vec<String> {
    body.as_array()
        .unwrap_or_else(|| panic!("a bare array: {body}"))
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_owned())
        .collect()
}

fn numbered(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("s{i:02}")).collect()
}

#[tokio::test]
async fn pages_of_a_list() {
    let t = TestServer::start().await;
    let (status, range, body) = list(&t, "/v1/snippets").await;
    assert_eq!(
        (status, range.as_deref(), body),
        (200, Some("*/0"), json!([])),
        "an empty list"
    );

    for i in 0..25 {
        t.create("/v1/snippets", &bodies::snippet(&format!("s{i:02}")), 201)
            .await;
    }
    // Defaults: limit 10, page 1.
    let (status, range, body) = list(&t, "/v1/snippets").await;
    assert_eq!(status, 200);
    assert_eq!(range.as_deref(), Some("0-9/25"));
    assert_eq!(names(&body), numbered(0..10), "creation order");

    let (_, range, body) = list(&t, "/v1/snippets?page=2").await;
    assert_eq!(range.as_deref(), Some("10-19/25"));
    assert_eq!(names(&body), numbered(10..20));
    // The last page is partial.
    let (_, range, body) = list(&t, "/v1/snippets?page=3").await;
    assert_eq!(range.as_deref(), Some("20-24/25"));
    assert_eq!(names(&body), numbered(20..25));
    // Past the end: an empty array.
    for query in ["page=4", "page=1000", "limit=100&page=2"] {
        let (status, range, body) = list(&t, &format!("/v1/snippets?{query}")).await;
        assert_eq!(
            (status, range.as_deref(), body),
            (200, Some("*/25"), json!([])),
            "{query}"
        );
    }
    // The limits of limit.
    let (_, range, body) = list(&t, "/v1/snippets?limit=1").await;
    assert_eq!(range.as_deref(), Some("0-0/25"));
    assert_eq!(names(&body), ["s00"]);
    let (_, range, body) = list(&t, "/v1/snippets?limit=1&page=25").await;
    assert_eq!(range.as_deref(), Some("24-24/25"));
    assert_eq!(names(&body), ["s24"]);
    let (_, range, body) = list(&t, "/v1/snippets?limit=100").await;
    assert_eq!(range.as_deref(), Some("0-24/25"));
    assert_eq!(names(&body), numbered(0..25));
    let (_, range, body) = list(&t, "/v1/snippets?limit=7&page=4").await;
    assert_eq!(range.as_deref(), Some("21-24/25"));
    assert_eq!(names(&body), numbered(21..25));
    let (_, range, _) = list(&t, "/v1/snippets?limit=5&page=5").await;
    assert_eq!(range.as_deref(), Some("20-24/25"), "a last page that is exactly full");

    // Deleting shifts the pages; order stays by creation.
    let first = t.read("/v1/snippets?limit=1").await[0]["id"].clone();
    t.delete_gone(&format!("/v1/snippets/{first}")).await;
    let (_, range, body) = list(&t, "/v1/snippets?page=3").await;
    assert_eq!(range.as_deref(), Some("20-23/24"));
    assert_eq!(names(&body), numbered(21..25));
}

#[tokio::test]
async fn out_of_range_paging_is_a_400_naming_the_parameter() {
    let t = TestServer::start().await;
    let cases = [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("limit=", "limit"),
        ("limit=1.5", "limit"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=first", "page"),
    ];
    for (query, field) in cases {
        let (status, body) = t.call(Method::GET, &format!("/v1/snippets?{query}"), None).await;
        assert_invalid(status, &body, &[field]);
        assert_eq!(attribute_keys(&body), [field], "{query}: {body}");
    }
}

#[tokio::test]
async fn every_page_based_list_checks_its_paging() {
    let t = TestServer::start().await;
    let group = t.create("/v2/check-groups", &bodies::group("G"), 201).await;
    let window = t
        .create(
            "/v1/maintenance-windows",
            &json!({ "name": "w", "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T03:00:00Z" }),
            201,
        )
        .await;
    let lists = [
        "/v1/checks".to_owned(),
        "/v1/check-groups".to_owned(),
        format!("/v1/check-groups/{}/checks", group["id"]),
        format!("/v2/check-groups/{}/checks", group["id"]),
        "/v1/snippets".to_owned(),
        "/v1/variables".to_owned(),
        "/v1/alert-channels".to_owned(),
        "/v1/maintenance-windows".to_owned(),
        format!("/v1/maintenance-windows/{}/maintenances", window["id"]),
        "/v1/dashboards".to_owned(),
        "/v1/private-locations".to_owned(),
    ];
    for path in &lists {
        for (query, field) in [("limit=0", "limit"), ("limit=101", "limit"), ("page=0", "page")] {
            let (status, body) = t.call(Method::GET, &format!("{path}?{query}"), None).await;
            assert_invalid(status, &body, &[field]);
        }
        let (status, range, body) = list(&t, &format!("{path}?limit=100&page=1")).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(body.is_array(), "{path}: a bare array");
        let total = body.as_array().unwrap().len();
        let expected = if total == 0 {
            "*/0".to_owned()
        } else {
            format!("0-{}/{total}", total - 1)
        };
        assert_eq!(range.as_deref(), Some(expected.as_str()), "{path}");
        let (status, range, body) = list(&t, &format!("{path}?page=9")).await;
        assert_eq!((status, body), (200, json!([])), "{path}");
        assert_eq!(range, Some(format!("*/{total}")), "{path}");
    }
}

#[tokio::test]
async fn check_lists_page_in_creation_order_across_types() {
    let t = TestServer::start().await;
    let mut expected = Vec::new();
    for i in 0..12 {
        let name = format!("c{i:02}");
        let body = if i % 2 == 0 {
            bodies::api(&name)
        } else {
            bodies::icmp(&name)
        };
        let path = if i % 2 == 0 {
            "/v1/checks/api"
        } else {
            "/v1/checks/icmp"
        };
        t.create(path, &body, 201).await;
        expected.push(name);
    }
    let (_, range, first) = list(&t, "/v1/checks?limit=5").await;
    assert_eq!(range.as_deref(), Some("0-4/12"));
    let (_, range, second) = list(&t, "/v1/checks?limit=5&page=2").await;
    assert_eq!(range.as_deref(), Some("5-9/12"));
    let (_, range, third) = list(&t, "/v1/checks?limit=5&page=3").await;
    assert_eq!(range.as_deref(), Some("10-11/12"));
    let all: Vec<String> = [first, second, third].iter().flat_map(names).collect();
    assert_eq!(all, expected);
    // Filters page over the matching checks only.
    let (_, range, body) = list(&t, "/v1/checks?checkType=ICMP&limit=4&page=2").await;
    assert_eq!(range.as_deref(), Some("4-5/6"));
    assert_eq!(names(&body), ["c09", "c11"]);
    let (_, range, body) = list(&t, "/v1/checks?checkType=ICMP&limit=4&page=3").await;
    assert_eq!((range.as_deref(), body), (Some("*/6"), json!([])));
}
