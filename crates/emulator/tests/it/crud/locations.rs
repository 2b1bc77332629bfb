//! Private locations (the raw key shown once, deletes refused while in
//! use), and the fixed lists of runtimes and locations.

use super::*;

#[tokio::test]
async fn private_locations_show_their_raw_key_once_and_refuse_deletes_in_use() {
    let t = TestServer::start().await;
    let location = t
        .create(
            "/v1/private-locations",
            &json!({ "name": "Office", "slugName": "office-ams", "proxyUrl": "http://proxy:3128" }),
            201,
        )
        .await;
    let id = location["id"].as_str().expect("a string id");
    assert_timestamps(&location);
    assert_eq!(location["icon"], "location");
    let key = &location["keys"][0];
    let raw = key["rawKey"].as_str().expect("the raw key, on create only");
    let masked = key["maskedKey"].as_str().unwrap();
    assert!(
        masked.ends_with(&raw[raw.len() - 4..]) && masked.starts_with('*'),
        "{masked}"
    );
    assert!(!masked.contains(&raw[..raw.len() - 4]));

    let path = format!("/v1/private-locations/{id}");
    let read = t.read(&path).await;
    assert!(read["keys"][0].get("rawKey").is_none(), "{read}");
    assert_eq!(read["keys"][0]["maskedKey"], masked);
    let listed = t.read("/v1/private-locations").await;
    assert!(listed[0]["keys"][0].get("rawKey").is_none());
    assert_eq!(ids(&listed), [json!(id)]);

    let updated = t
        .update(&path, &json!({ "name": "Amsterdam office", "icon": "home" }), 200)
        .await;
    assert_eq!(updated["name"], "Amsterdam office");
    assert_eq!(updated["slugName"], "office-ams");
    assert_eq!(updated["keys"], read["keys"], "keys are the service's");
    assert_bumped(&location, &updated);
    let cleared = t.update(&path, &json!({ "proxyUrl": null }), 200).await;
    assert!(cleared["proxyUrl"].is_null());
    let (status, body) = t
        .call(Method::PUT, &path, Some(&json!({ "slugName": "office-rtm" })))
        .await;
    assert_invalid(status, &body, &["slugName"]);

    let (status, body) = t
        .call(
            Method::POST,
            "/v1/private-locations",
            Some(&json!({ "name": "Twin", "slugName": "office-ams" })),
        )
        .await;
    assert_error(status, &body, 409);
    let (status, body) = t
        .call(
            Method::POST,
            "/v1/private-locations",
            Some(&json!({ "name": "x", "slugName": "eu-west-1" })),
        )
        .await;
    assert_invalid(status, &body, &["slugName"]);

    // Used by a check, then by a group: 409 each time.
    let check = t
        .create(
            "/v1/checks/api",
            &with(&bodies::api("Intranet"), json!({ "privateLocations": ["office-ams"] })),
            201,
        )
        .await;
    let (status, body) = t.call(Method::DELETE, &path, None).await;
    assert_error(status, &body, 409);
    t.delete_gone(&format!("/v1/checks/{}", check["id"].as_str().unwrap()))
        .await;
    let group = t
        .create(
            "/v2/check-groups",
            &json!({ "name": "Inside", "privateLocations": ["office-ams"] }),
            201,
        )
        .await;
    let (status, body) = t.call(Method::DELETE, &path, None).await;
    assert_error(status, &body, 409);
    t.delete_gone(&format!("/v1/check-groups/{}", group["id"])).await;
    t.delete_gone(&path).await;
}

// ---- runtimes and locations ----

#[tokio::test]
async fn runtimes_and_locations_are_fixed_lists() {
    let t = TestServer::start().await;
    let runtimes = t.read("/v1/runtimes").await;
    let names: Vec<&str> = runtimes
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "2026.04", "2025.04", "2024.09", "2024.02", "2023.09", "2023.02", "2022.10"
        ]
    );
    let one = t.read("/v1/runtimes/2024.09").await;
    assert_eq!(one["name"], "2024.09");
    for field in ["multiStepSupport", "nodeJsVersion", "dependencies", "stage"] {
        assert!(!one[field].is_null(), "{field} in {one}");
    }
    let (status, body) = t.call(Method::GET, "/v1/runtimes/2020.01", None).await;
    assert_error(status, &body, 404);
    let locations = t.read("/v1/locations").await;
    assert_eq!(locations.as_array().unwrap().len(), 22);
    assert!(
        locations
            .as_array()
            .unwrap()
            .contains(&json!({ "region": "eu-west-1", "name": "Ireland" }))
    );
}
