//! What every route shares: authentication (401, 403), unknown ids and
//! routes (404), wrong methods (405), conflicts (409), bodies (400, 413,
//! 415), always with the error body `{statusCode, error, message,
//! attributes}`; `/openapi.json`; and data surviving a restart.

use crate::common;
use common::*;

use monform_emulator::Config;
use reqwest::Method;
use serde_json::{Value, json};

/// A sample of routes of every kind and method, with a valid body where one is needed.
fn sample_routes() -> Vec<(Method, &'static str, Option<Value>)> {
    vec![
        (Method::GET, "/v1/checks", None),
        (Method::GET, "/v1/checks/00000000-0000-0000-0000-000000000000", None),
        (Method::POST, "/v1/checks/icmp", Some(bodies::icmp("x"))),
        (
            Method::PUT,
            "/v1/checks/00000000-0000-0000-0000-000000000000",
            Some(json!({})),
        ),
        (Method::DELETE, "/v1/checks/00000000-0000-0000-0000-000000000000", None),
        (Method::GET, "/v1/check-groups", None),
        (Method::POST, "/v2/check-groups", Some(bodies::group("g"))),
        (Method::PUT, "/v2/check-groups/1", Some(bodies::group("g"))),
        (Method::GET, "/v1/check-groups/1/checks", None),
        (Method::POST, "/v1/snippets", Some(bodies::snippet("s"))),
        (Method::GET, "/v1/variables/KEY", None),
        (
            Method::PUT,
            "/v1/alert-channels/1/subscriptions",
            Some(json!({ "checkId": "x", "activated": true })),
        ),
        (Method::GET, "/v1/maintenance-windows/1/maintenances", None),
        (
            Method::PATCH,
            "/v1/maintenance-windows/1/maintenances/m",
            Some(json!({})),
        ),
        (Method::GET, "/v1/status-pages", None),
        (Method::POST, "/v1/status-pages/services", Some(json!({ "name": "s" }))),
        (Method::DELETE, "/v1/dashboards/d", None),
        (Method::GET, "/v1/private-locations", None),
        (Method::GET, "/v1/runtimes", None),
        (Method::GET, "/v1/runtimes/2025.04", None),
        (Method::GET, "/v1/locations", None),
    ]
}

#[tokio::test]
async fn requests_without_a_valid_key_are_401() {
    // Many 401s from one address: past the default limit they would be 429s.
    let t = TestServer::with(monform_emulator::Config {
        rate_limit: None,
        auth_failure_limit: None,
        execute_checks: false,
        ..monform_emulator::Config::default()
    })
    .await;
    let wrong_scheme = format!("Token {}", t.server.api_key);
    for (method, path, body) in sample_routes() {
        let credentials = [
            None,
            Some("Basic dXNlcjpwYXNz"),
            Some("Bearer"),
            Some("Bearer "),
            Some(wrong_scheme.as_str()),
            Some("Bearer mf_dev_not_a_key"),
        ];
        for authorization in credentials {
            let mut request = t.client.request(method.clone(), t.url(path));
            if let Some(value) = authorization {
                request = request.header("authorization", value);
            }
            if let Some(body) = &body {
                request = request.json(body);
            }
            let (status, response) = parts(request.send().await.unwrap()).await;
            assert_error(status, &response, 401);
            assert!(
                response["message"].as_str().unwrap().to_lowercase().contains("key")
                    || response["message"].as_str().unwrap().contains("Authorization"),
                "{method} {path} with {authorization:?}: {response}"
            );
        }
    }
    // Nothing was created by the refused requests.
    assert_eq!(t.read("/v1/checks").await, json!([]));
    assert_eq!(t.read("/v1/snippets").await, json!([]));
    // The scheme is case-insensitive.
    let response = t
        .client
        .get(t.url("/v1/checks"))
        .header("authorization", format!("bearer {}", t.server.api_key))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn another_accounts_header_is_403() {
    let t = TestServer::start().await;
    for (method, path, body) in sample_routes() {
        let mut request = t
            .request(method.clone(), path)
            .header("x-service-account", "someone-else");
        if let Some(body) = &body {
            request = request.json(body);
        }
        let (status, response) = parts(request.send().await.unwrap()).await;
        assert_error(status, &response, 403);
    }
    assert_eq!(t.read("/v1/checks").await, json!([]), "nothing created");
    // The key's own account is fine, as is leaving the header out.
    let own = t
        .request(Method::POST, "/v1/snippets")
        .header("x-service-account", &t.server.account_id)
        .json(&bodies::snippet("mine"))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 201);
    assert_eq!(t.read("/v1/snippets").await.as_array().unwrap().len(), 1);
    // The key is checked before the account.
    let (status, body) = parts(
        t.client
            .get(t.url("/v1/checks"))
            .header("x-service-account", "someone-else")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 401);
}

#[tokio::test]
async fn configured_keys_belong_to_the_configured_account() {
    let config = Config {
        api_keys: vec!["key-one".into(), "key-two".into()],
        account_id: Some("acct-1".into()),
        rate_limit: None,
        ..Config::default()
    };
    let t = TestServer::with(config).await;
    assert_eq!(t.server.api_key, "key-one");
    assert_eq!(t.server.account_id, "acct-1");
    for key in ["key-one", "key-two"] {
        let response = t
            .client
            .post(t.url("/v1/snippets"))
            .bearer_auth(key)
            .header("x-service-account", "acct-1")
            .json(&bodies::snippet(key))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{key}");
    }
    // Both keys see the same account's objects.
    let listed = t
        .client
        .get(t.url("/v1/snippets"))
        .bearer_auth("key-two")
        .send()
        .await
        .unwrap();
    let (_, body) = parts(listed).await;
    assert_eq!(body.as_array().unwrap().len(), 2);
    let (status, body) = parts(
        t.client
            .get(t.url("/v1/snippets"))
            .bearer_auth("mf_dev_x")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 401);
}

#[tokio::test]
async fn unknown_ids_and_routes_are_404() {
    let t = TestServer::start().await;
    let unknown = [
        "/v1/checks/00000000-0000-0000-0000-000000000000",
        "/v1/checks/not-a-uuid",
        "/v1/check-groups/42",
        "/v1/check-groups/abc",
        "/v1/check-groups/42/checks",
        "/v2/check-groups/42/checks",
        "/v1/snippets/42",
        "/v1/variables/NOPE",
        "/v1/alert-channels/42",
        "/v1/maintenance-windows/42",
        "/v1/maintenance-windows/42/maintenances",
        "/v1/status-pages/nope",
        "/v1/status-pages/services/nope",
        "/v1/dashboards/nope",
        "/v1/private-locations/nope",
        "/v1/runtimes/1999.01",
    ];
    for path in unknown {
        let (status, body) = t.call(Method::GET, path, None).await;
        assert_error(status, &body, 404);
    }
    let updates = [
        (
            "/v1/checks/00000000-0000-0000-0000-000000000000",
            json!({ "heartbeat": {}, "script": "" }),
        ),
        ("/v1/checks/icmp/00000000-0000-0000-0000-000000000000", json!({})),
        ("/v2/check-groups/42", json!({ "name": "x" })),
        ("/v1/snippets/42", json!({ "name": "x" })),
        ("/v1/variables/NOPE", json!({ "value": "x" })),
        ("/v1/alert-channels/42", json!({ "sendRecovery": true })),
        ("/v1/maintenance-windows/42", json!({ "name": "x" })),
        ("/v1/status-pages/nope", json!({ "name": "x" })),
        ("/v1/status-pages/services/nope", json!({ "name": "x" })),
        ("/v1/dashboards/nope", json!({ "header": "x" })),
        ("/v1/private-locations/nope", json!({ "name": "x" })),
    ];
    for (path, body) in &updates {
        let (status, response) = t.call(Method::PUT, path, Some(body)).await;
        assert_error(status, &response, 404);
    }
    for path in unknown
        .iter()
        .filter(|p| !p.ends_with("checks") && !p.ends_with("maintenances") && !p.contains("runtimes"))
    {
        let (status, body) = t.call(Method::DELETE, path, None).await;
        assert_error(status, &body, 404);
    }
    // Unknown routes, with and without a key.
    for path in ["/v1/nothing", "/v3/checks", "/v1/checks/icmp/1/extra", "/"] {
        let (status, body) = t.call(Method::GET, path, None).await;
        assert_error(status, &body, 404);
        let (status, body) = parts(t.client.get(t.url(path)).send().await.unwrap()).await;
        assert_error(status, &body, 404);
    }
}

#[tokio::test]
async fn wrong_methods_are_405() {
    let t = TestServer::start().await;
    let cases = [
        (Method::PATCH, "/v1/checks"),
        (Method::DELETE, "/v1/checks"),
        (Method::POST, "/v1/checks"),
        (Method::POST, "/v1/checks/00000000-0000-0000-0000-000000000000"),
        (Method::GET, "/v1/checks/icmp/00000000-0000-0000-0000-000000000000"),
        (Method::POST, "/v1/check-groups"),
        (Method::PUT, "/v1/check-groups/1"),
        (Method::GET, "/v2/check-groups/1"),
        (Method::DELETE, "/v1/snippets"),
        (Method::POST, "/v1/variables/KEY"),
        (Method::GET, "/v1/alert-channels/1/subscriptions"),
        (Method::PUT, "/v1/maintenance-windows/1/maintenances/m"),
        (Method::DELETE, "/v1/runtimes/2025.04"),
        (Method::POST, "/v1/locations"),
    ];
    for (method, path) in cases {
        let (status, body) = t.call(method.clone(), path, Some(&json!({}))).await;
        assert_error(status, &body, 405);
    }
}

#[tokio::test]
async fn conflicts_are_409() {
    let t = TestServer::start().await;
    t.create("/v1/variables", &json!({ "key": "K", "value": "v" }), 201)
        .await;
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/variables",
            Some(&json!({ "key": "K", "value": "w" })),
        )
        .await;
    assert_error(status, &body, 409);
    assert_eq!(t.read("/v1/variables/K").await["value"], "v", "the first is kept");

    let group = t.create("/v2/check-groups", &bodies::group("G"), 201).await;
    t.create(
        "/v1/checks/icmp",
        &with(&bodies::icmp("in"), json!({ "groupId": group["id"] })),
        201,
    )
    .await;
    let (status, body) = t
        .call(Method::DELETE, &format!("/v1/check-groups/{}", group["id"]), None)
        .await;
    assert_error(status, &body, 409);
    t.read(&format!("/v1/check-groups/{}", group["id"])).await;

    let location = t
        .create(
            "/v1/private-locations",
            &json!({ "name": "Lab", "slugName": "lab" }),
            201,
        )
        .await;
    t.create(
        "/v1/checks/icmp",
        &with(&bodies::icmp("lab"), json!({ "privateLocations": ["lab"] })),
        201,
    )
    .await;
    let (status, body) = t
        .call(
            Method::DELETE,
            &format!("/v1/private-locations/{}", location["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_error(status, &body, 409);

    t.create("/v1/dashboards", &json!({ "header": "A", "customUrl": "taken" }), 201)
        .await;
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/dashboards",
            Some(&json!({ "header": "B", "customUrl": "taken" })),
        )
        .await;
    assert_error(status, &body, 409);
    assert_eq!(t.read("/v1/dashboards").await.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn bodies_must_be_json_objects_of_at_most_1_mib() {
    let t = TestServer::start().await;
    for (method, path) in [
        (Method::POST, "/v1/snippets"),
        (Method::POST, "/v1/checks/icmp"),
        (Method::PUT, "/v2/check-groups/1"),
        (Method::PATCH, "/v1/maintenance-windows/1/maintenances/m"),
    ] {
        // Not JSON: 415.
        for content_type in [None, Some("text/plain"), Some("application/x-www-form-urlencoded")] {
            let mut request = t.request(method.clone(), path).body("name=x");
            if let Some(content_type) = content_type {
                request = request.header("content-type", content_type);
            }
            let (status, body) = parts(request.send().await.unwrap()).await;
            assert_error(status, &body, 415);
        }
        // JSON that does not parse, or is not an object: 400.
        for text in ["{\"name\": ", "[]", "\"x\"", "null", ""] {
            let request = t
                .request(method.clone(), path)
                .header("content-type", "application/json")
                .body(text);
            let (status, body) = parts(request.send().await.unwrap()).await;
            assert_error(status, &body, 400);
        }
    }
    // A charset parameter and a +json type are JSON.
    let request = t
        .request(Method::POST, "/v1/snippets")
        .header("content-type", "application/json; charset=utf-8")
        .body(bodies::snippet("a").to_string());
    assert_eq!(request.send().await.unwrap().status(), 201);
    let request = t
        .request(Method::POST, "/v1/snippets")
        .header("content-type", "application/vnd.api+json")
        .body(bodies::snippet("b").to_string());
    assert_eq!(request.send().await.unwrap().status(), 201);

    // Over 1 MiB: 413.
    let big = bodies::snippet(&"x".repeat(1024 * 1024 + 1));
    let (status, body) = t.call(Method::POST, "/v1/snippets", Some(&big)).await;
    assert_error(status, &body, 413);
    // Just under: accepted.
    let fits = bodies::snippet(&"x".repeat(1024 * 1024 - 100));
    let (status, _) = t.call(Method::POST, "/v1/snippets", Some(&fits)).await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn openapi_lists_every_route_and_needs_no_key() {
    let t = TestServer::start().await;
    let response = t.client.get(t.url("/openapi.json")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let document: Value = response.json().await.unwrap();
    assert!(document["openapi"].as_str().unwrap().starts_with("3."));
    let paths = document["paths"].as_object().expect("paths");
    let table = monform_emulator::routes::table();
    assert!(table.len() > 60, "{} routes", table.len());
    let mut served = 0;
    for route in &table {
        let operation = &paths
            .get(&route.path)
            .unwrap_or_else(|| panic!("{} is in /openapi.json", route.path))[&route.method.to_lowercase()];
        assert!(
            operation.is_object(),
            "{} {} is in /openapi.json",
            route.method,
            route.path
        );
        assert_eq!(operation["summary"], route.summary.as_str());
        for name in route
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        {
            let declared = operation["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == name && p["in"] == "path");
            assert!(declared, "{} {} declares {name}", route.method, route.path);
        }
        if route.body.is_some() {
            assert!(operation["requestBody"]["content"]["application/json"]["schema"].is_object());
        }
        served += 1;
    }
    let documented: usize = paths.values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(documented, served, "/openapi.json lists exactly the table's routes");
    // References inside the document resolve.
    let text = document.to_string();
    let schemas = document["components"]["schemas"].as_object().unwrap();
    for piece in text.split("\"#/components/schemas/").skip(1) {
        let name = &piece[..piece.find('"').unwrap()];
        assert!(schemas.contains_key(name), "{name} is defined");
    }
    // It is the same with a key, and for every account.
    assert_eq!(t.read("/openapi.json").await, document);
    let (status, _) = parts(
        t.client
            .get(t.url("/openapi.json"))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn everything_survives_a_restart_on_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("emulator.db");
    let config = || Config {
        db: Some(db.clone()),
        rate_limit: None,
        ..Config::default()
    };

    let t = TestServer::with(config()).await;
    let (key, account) = (t.server.api_key.clone(), t.server.account_id.clone());
    assert!(key.starts_with("mf_dev_"), "{key}");
    let channel = t
        .create("/v1/alert-channels", &bodies::email_channel("ops@example.com"), 201)
        .await;
    let group = t.create("/v2/check-groups", &bodies::group("G"), 201).await;
    let check = t
        .create(
            "/v1/checks/icmp",
            &with(&bodies::icmp("Ping"), json!({ "groupId": group["id"] })),
            201,
        )
        .await;
    let snippet = t.create("/v1/snippets", &bodies::snippet("s"), 201).await;
    let secret = t
        .create(
            "/v1/variables",
            &json!({ "key": "TOKEN", "value": "t", "secret": true }),
            201,
        )
        .await;
    let location = t
        .create(
            "/v1/private-locations",
            &json!({ "name": "Lab", "slugName": "lab" }),
            201,
        )
        .await;
    let service = t
        .create("/v1/status-pages/services", &json!({ "name": "Svc" }), 200)
        .await;
    let window = t
        .create(
            "/v1/maintenance-windows",
            &json!({ "name": "w", "startsAt": "2026-12-01T02:00:00Z", "endsAt": "2026-12-01T03:00:00Z" }),
            201,
        )
        .await;
    let dashboard = t
        .create("/v1/dashboards", &json!({ "header": "D", "customUrl": "dash" }), 201)
        .await;
    let check_path = format!("/v1/checks/{}", check["id"].as_str().unwrap());
    let updated = t
        .update(
            &format!("/v1/checks/icmp/{}", check["id"].as_str().unwrap()),
            &json!({ "muted": true }),
            200,
        )
        .await;
    let paths = [
        check_path.clone(),
        format!("/v1/alert-channels/{}", channel["id"]),
        format!("/v1/check-groups/{}", group["id"]),
        format!("/v1/check-groups/{}/checks", group["id"]),
        format!("/v1/snippets/{}", snippet["id"]),
        "/v1/variables/TOKEN".to_owned(),
        format!("/v1/private-locations/{}", location["id"].as_str().unwrap()),
        format!("/v1/status-pages/services/{}", service["id"].as_str().unwrap()),
        format!("/v1/maintenance-windows/{}", window["id"]),
        format!("/v1/maintenance-windows/{}/maintenances", window["id"]),
        format!("/v1/dashboards/{}", dashboard["dashboardId"].as_str().unwrap()),
        "/v1/checks".to_owned(),
    ];
    let mut before = Vec::new();
    for path in &paths {
        before.push(t.read(path).await);
    }
    assert_eq!(before[0], updated);
    let TestServer { server, client } = t;
    drop(client);
    server.shutdown().await.expect("clean shutdown");

    let t = TestServer::with(config()).await;
    assert_eq!(t.server.api_key, key, "the development key is reused");
    assert_eq!(t.server.account_id, account);
    for (path, expected) in paths.iter().zip(&before) {
        assert_eq!(&t.read(path).await, expected, "{path} after the restart");
    }
    assert!(t.read("/v1/variables/TOKEN").await["value"].is_null());
    assert!(secret["value"].is_null());
    // Numbering continues where it stopped; uniqueness still holds.
    let next = t.create("/v2/check-groups", &bodies::group("H"), 201).await;
    assert_eq!(next["id"], group["id"].as_i64().unwrap() + 1);
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/variables",
            Some(&json!({ "key": "TOKEN", "value": "x" })),
        )
        .await;
    assert_error(status, &body, 409);
    let (status, body) = t
        .call(Method::DELETE, &format!("/v1/check-groups/{}", group["id"]), None)
        .await;
    assert_error(status, &body, 409);
    // And changes after the restart persist too.
    t.delete_gone(&check_path).await;
    let TestServer { server, client } = t;
    drop(client);
    server.shutdown().await.expect("clean shutdown");
    let t = TestServer::with(config()).await;
    let (status, body) = t.call(Method::GET, &check_path, None).await;
    assert_error(status, &body, 404);
    assert_eq!(t.read("/v1/check-groups").await.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn an_in_memory_emulator_starts_empty_each_time() {
    let first = TestServer::start().await;
    first.create("/v1/snippets", &bodies::snippet("s"), 201).await;
    let second = TestServer::start().await;
    assert_ne!(first.server.api_key, second.server.api_key);
    assert_eq!(second.read("/v1/snippets").await, json!([]));
    // One emulator's key means nothing to another.
    let (status, body) = parts(
        second
            .client
            .get(second.url("/v1/snippets"))
            .bearer_auth(&first.server.api_key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 401);
}
