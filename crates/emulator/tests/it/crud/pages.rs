//! Status pages and their services, and dashboards.

use super::*;

#[tokio::test]
async fn status_page_services_answer_200_on_create_and_list_with_cursors() {
    let t = TestServer::start().await;
    let service = t
        .create("/v1/status-pages/services", &json!({ "name": "Checkout" }), 200)
        .await;
    let id = service["id"].as_str().expect("a string id");
    assert_eq!(service["name"], "Checkout");
    assert_eq!(service["accountId"], t.server.account_id.as_str());
    assert_timestamps(&service);
    let path = format!("/v1/status-pages/services/{id}");
    assert_eq!(t.read(&path).await, service);
    let updated = t.update(&path, &json!({ "name": "Payments" }), 200).await;
    assert_eq!(updated["name"], "Payments");
    assert_eq!(updated["accountId"], service["accountId"]);
    assert_bumped(&service, &updated);
    let (status, body) = t
        .call(Method::POST, "/v1/status-pages/services", Some(&json!({})))
        .await;
    assert_invalid(status, &body, &["name"]);

    for name in ["Search", "Login"] {
        t.create("/v1/status-pages/services", &json!({ "name": name }), 200)
            .await;
    }
    let first = t.read("/v1/status-pages/services?limit=2").await;
    assert_eq!(first["length"], 2);
    assert_eq!(first["entries"].as_array().unwrap().len(), 2);
    assert_eq!(first["entries"][0]["name"], "Payments");
    let next = first["nextId"].as_str().expect("a cursor to the third");
    let second = t
        .read(&format!("/v1/status-pages/services?limit=2&nextId={next}"))
        .await;
    assert_eq!(second["length"], 1);
    assert_eq!(second["entries"][0]["name"], "Login");
    assert!(second["nextId"].is_null());
    let all = t.read("/v1/status-pages/services").await;
    assert_eq!(all["length"], 3);
    assert!(all["nextId"].is_null());

    t.delete_gone(&path).await;
}

#[tokio::test]
async fn status_pages_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let service = t
        .create("/v1/status-pages/services", &json!({ "name": "Checkout" }), 200)
        .await;
    let body = json!({ "name": "Shop status", "url": "shop-status", "cards": [{ "name": "Core", "services": [{ "id": service["id"] }] }] });
    let page = t.create("/v1/status-pages", &body, 201).await;
    let id = page["id"].as_str().expect("a string id");
    assert_timestamps(&page);
    assert_eq!(page["defaultTheme"], "AUTO");
    assert_eq!(page["isPrivate"], false);
    assert_eq!(page["cards"][0]["services"][0]["id"], service["id"]);
    let path = format!("/v1/status-pages/{id}");
    assert_eq!(t.read(&path).await, page);

    // The url is unique.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/status-pages",
            Some(&json!({ "name": "Other", "url": "shop-status" })),
        )
        .await;
    assert_error(status, &body, 409);
    // Card services must exist.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/status-pages",
            Some(&json!({ "name": "x", "url": "x", "cards": [{ "name": "c", "services": [{ "id": "nope" }] }] })),
        )
        .await;
    assert_invalid(status, &body, &["cards[0].services[0]"]);

    let updated = t
        .update(
            &path,
            &json!({ "description": "All systems", "defaultTheme": "DARK" }),
            200,
        )
        .await;
    assert_eq!(updated["description"], "All systems");
    assert_eq!(updated["defaultTheme"], "DARK");
    assert_eq!(updated["url"], "shop-status");
    assert_bumped(&page, &updated);
    let cleared = t.update(&path, &json!({ "description": null }), 200).await;
    assert!(cleared["description"].is_null());
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "description": "x".repeat(501) })))
        .await;
    assert_invalid(status, &body, &["description"]);

    for url in ["second", "third"] {
        t.create("/v1/status-pages", &json!({ "name": url, "url": url }), 201)
            .await;
    }
    let first = t.read("/v1/status-pages?limit=2").await;
    assert_eq!(first["length"], 2);
    assert_eq!(first["entries"][0]["id"], id);
    let next = first["nextId"].as_str().unwrap();
    let rest = t.read(&format!("/v1/status-pages?limit=2&nextId={next}")).await;
    assert_eq!(rest["length"], 1);
    assert_eq!(rest["entries"][0]["url"], "third");
    assert!(rest["nextId"].is_null());
    for query in ["limit=0", "limit=101", "nextId=nope"] {
        let (status, body) = t.call(Method::GET, &format!("/v1/status-pages?{query}"), None).await;
        assert_error(status, &body, 400);
    }

    t.delete_gone(&path).await;
    // Its url is free again.
    t.create(
        "/v1/status-pages",
        &json!({ "name": "again", "url": "shop-status" }),
        201,
    )
    .await;
}

// ---- dashboards ----

#[tokio::test]
async fn dashboards_are_created_read_listed_updated_and_deleted() {
    let t = TestServer::start().await;
    let dashboard = t
        .create(
            "/v1/dashboards",
            &json!({ "header": "Shop", "customUrl": "shop-board", "customDomain": "status.example.com" }),
            201,
        )
        .await;
    let id = dashboard["dashboardId"].as_str().expect("a string id");
    assert_timestamps(&dashboard);
    assert_eq!(dashboard["width"], "FULL");
    assert_eq!(dashboard["refreshRate"], 60);
    assert_eq!(dashboard["checksPerPage"], 15);
    assert_eq!(dashboard["tags"], json!([]));
    // The reference's numeric id beside the string one that names it.
    assert_eq!(dashboard["id"], 1);
    let path = format!("/v1/dashboards/{id}");
    assert_eq!(t.read(&path).await, dashboard);
    assert_eq!(ids(&t.read("/v1/dashboards").await), [json!(id)]);

    // The custom URL is taken.
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/dashboards",
            Some(&json!({ "header": "Copy", "customUrl": "shop-board" })),
        )
        .await;
    assert_error(status, &body, 409);

    let updated = t
        .update(&path, &json!({ "header": "Shop (prod)", "tags": ["prod"] }), 200)
        .await;
    assert_eq!(updated["header"], "Shop (prod)");
    assert_eq!(updated["tags"], json!(["prod"]));
    assert_eq!(updated["dashboardId"], id);
    assert_eq!(updated["customUrl"], "shop-board");
    assert_bumped(&dashboard, &updated);
    // Keeping its own URL is not a clash.
    t.update(&path, &json!({ "customUrl": "shop-board" }), 200).await;
    let cleared = t.update(&path, &json!({ "customDomain": null }), 200).await;
    assert!(cleared["customDomain"].is_null());
    // Taking another dashboard's URL is.
    let other = t
        .create(
            "/v1/dashboards",
            &json!({ "header": "Blog", "customUrl": "blog-board" }),
            201,
        )
        .await;
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "customUrl": "blog-board" })))
        .await;
    assert_error(status, &body, 409);
    let (status, body) = t.call(Method::PUT, &path, Some(&json!({ "checksPerPage": 21 }))).await;
    assert_invalid(status, &body, &["checksPerPage"]);

    t.delete_gone(&path).await;
    t.delete_gone(&format!("/v1/dashboards/{}", other["dashboardId"].as_str().unwrap()))
        .await;
}
