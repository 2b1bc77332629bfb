//! The client against the in-process emulator: paging, CRUD, error
//! messages.

use futures_util::future::try_join_all;
use monform_api::{Client, ClientConfig, Error, Secret};
use monform_model::Kind;
use monform_testkit::{client_for, served, served_during, start_emulator};
use serde_json::{Value, json};

/// Creates `n` objects of `kind` with bodies from `body(i)`, 16 at a time.
async fn create_many(client: &Client, kind: Kind, n: usize, body: impl Fn(usize) -> Value) {
    let bodies: Vec<Value> = (0..n).map(body).collect();
    for chunk in bodies.chunks(16) {
        try_join_all(chunk.iter().map(|b| client.create(kind, b)))
            .await
            .expect("created");
    }
}

/// Creates `n` snippets named `snippet {i}`.
async fn create_snippets(client: &Client, n: usize) {
    create_many(
        client,
        Kind::Snippet,
        n,
        |i| json!({ "name": format!("snippet {i}"), "script": "x" }),
    )
    .await;
}

fn ids_are_unique(objects: &[monform_api::Remote]) -> bool {
    let mut ids: Vec<&str> = objects.iter().map(|o| o.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len() == objects.len() && ids.iter().all(|id| !id.is_empty())
}

#[tokio::test(flavor = "multi_thread")]
async fn list_all_reads_every_page_once() {
    let server = start_emulator().await;
    let client = client_for(&server);
    create_snippets(&client, 250).await;
    let sent = client.requests_sent();
    let (snippets, gets) = served_during(&server, Some("GET"), client.list_all(Kind::Snippet)).await;
    let snippets = snippets.unwrap();
    assert_eq!(snippets.len(), 250);
    assert!(ids_are_unique(&snippets));
    assert_eq!(gets, 3, "250 objects at 100 a page are 3 pages");
    assert_eq!(client.requests_sent() - sent, 3);
    let mut names: Vec<String> = snippets
        .iter()
        .map(|s| s.body()["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = (0..250).map(|i| format!("snippet {i}")).collect();
    expected.sort();
    assert_eq!(names, expected, "every object once, none twice");
    let _ = server.shutdown().await;
}

/// `list_each` hands over the same objects as `list_all`, in the same
/// order, a page at a time; of a cursor listing too.
#[tokio::test(flavor = "multi_thread")]
async fn list_each_hands_over_each_page_in_order() {
    let server = start_emulator().await;
    let client = client_for(&server);
    create_snippets(&client, 250).await;
    create_many(
        &client,
        Kind::StatusPageService,
        120,
        |i| json!({ "name": format!("service {i}") }),
    )
    .await;
    for kind in [Kind::Snippet, Kind::StatusPageService] {
        let whole: Vec<String> = client.list_all(kind).await.unwrap().into_iter().map(|o| o.id).collect();
        let mut pages = Vec::new();
        let mut ids = Vec::new();
        let (done, gets) = served_during(
            &server,
            Some("GET"),
            client.list_each(kind, |page| {
                pages.push(page.len());
                ids.extend(page.into_iter().map(|o| o.id));
            }),
        )
        .await;
        done.unwrap();
        assert_eq!(ids, whole, "{kind:?}: the same objects in the same order");
        assert_eq!(gets, pages.len() as u64, "{kind:?}: one request a page");
        let expected: &[usize] = if kind == Kind::Snippet {
            &[100, 100, 50]
        } else {
            &[100, 20]
        };
        assert_eq!(pages, expected, "{kind:?}");
    }
    let _ = server.shutdown().await;
}

/// Waits until `client` has sent `n` requests since `sent` (at most 2 s).
async fn until_sent(client: &monform_api::Client, sent: u64, n: u64) -> u64 {
    for _ in 0..200 {
        if client.requests_sent() - sent >= n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    client.requests_sent() - sent
}

/// A kind of more pages than `ahead_pages` is read whole ahead of being
/// asked for and taken by the next `list_all` of its kind; the one after
/// reads the service again.
#[tokio::test(flavor = "multi_thread")]
async fn a_prefetched_listing_is_taken_once_by_the_next_list_all() {
    let server = start_emulator().await;
    let mut config = monform_api::ClientConfig::new(server.url(), monform_api::Secret::new(server.api_key.clone()));
    config.rate_limit = None;
    config.account_id = Some(server.account_id.clone());
    config.ahead_pages = 1;
    let client = monform_api::Client::new(config).unwrap();
    create_many(&client, Kind::Group, 150, |i| json!({ "name": format!("group {i}") })).await;
    let sent = client.requests_sent();
    let served_before = served(&server, Some("GET"));
    client.prefetch(&[Kind::Group]);
    client.prefetch(&[Kind::Group]);
    assert_eq!(until_sent(&client, sent, 2).await, 2, "one listing, started once");
    // Counted as sent before the emulator read the page: the create below
    // must come after both pages were served.
    for _ in 0..200 {
        if served(&server, Some("GET")) - served_before >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    create_many(&client, Kind::Group, 1, |_| json!({ "name": "made after the listing" })).await;
    let sent = client.requests_sent();
    let groups = client.list_all(Kind::Group).await.unwrap();
    assert_eq!(groups.len(), 150, "the listing read before the create");
    assert_eq!(client.requests_sent(), sent, "taken, not read again");
    let groups = client.list_all(Kind::Group).await.unwrap();
    assert_eq!(groups.len(), 151, "read again: the prefetched listing is taken once");
    let _ = server.shutdown().await;
}

/// A kind of `ahead_pages` pages or fewer has only its first page read
/// ahead: `list_all` reads the rest when asked.
#[tokio::test(flavor = "multi_thread")]
async fn a_small_kind_has_only_its_first_page_read_ahead() {
    let server = start_emulator().await;
    let client = client_for(&server);
    create_many(&client, Kind::Group, 150, |i| json!({ "name": format!("group {i}") })).await;
    let sent = client.requests_sent();
    client.prefetch(&[Kind::Group]);
    assert_eq!(until_sent(&client, sent, 1).await, 1);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(client.requests_sent() - sent, 1, "the first page only");
    let groups = client.list_all(Kind::Group).await.unwrap();
    assert_eq!(groups.len(), 150);
    assert!(ids_are_unique(&groups));
    assert_eq!(client.requests_sent() - sent, 2, "the second page read when asked");
    let _ = server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_all_of_exact_pages_and_of_nothing() {
    let server = start_emulator().await;
    let client = client_for(&server);
    let (empty, gets) = served_during(&server, Some("GET"), client.list_all(Kind::Group)).await;
    assert!(empty.unwrap().is_empty());
    assert_eq!(gets, 1, "an empty list is one request");
    create_many(&client, Kind::Group, 200, |i| json!({ "name": format!("group {i}") })).await;
    let (groups, gets) = served_during(&server, Some("GET"), client.list_all(Kind::Group)).await;
    let groups = groups.unwrap();
    assert_eq!(groups.len(), 200);
    assert!(ids_are_unique(&groups));
    assert_eq!(gets, 2, "exactly two full pages: no third, empty request");
    let _ = server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_all_follows_the_cursor_of_status_pages() {
    let server = start_emulator().await;
    let client = client_for(&server);
    create_many(
        &client,
        Kind::StatusPageService,
        230,
        |i| json!({ "name": format!("service {i}") }),
    )
    .await;
    let (services, gets) = served_during(&server, Some("GET"), client.list_all(Kind::StatusPageService)).await;
    let services = services.unwrap();
    assert_eq!(services.len(), 230);
    assert!(ids_are_unique(&services));
    assert_eq!(gets, 3, "230 services at 100 a page are 3 cursor requests");

    create_many(
        &client,
        Kind::StatusPage,
        120,
        |i| json!({ "name": format!("page {i}"), "url": format!("page-{i}") }),
    )
    .await;
    let (pages, gets) = served_during(&server, Some("GET"), client.list_all(Kind::StatusPage)).await;
    let pages = pages.unwrap();
    assert_eq!(pages.len(), 120);
    assert!(ids_are_unique(&pages));
    assert_eq!(gets, 2);
    let _ = server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn create_get_update_delete() {
    let server = start_emulator().await;
    let client = client_for(&server);
    let body = json!({
        "checkType": "URL", "name": "Home", "frequency": 10,
        "request": { "url": "https://example.com" }, "tags": ["a"],
    });
    let created = client.create(Kind::Check, &body).await.unwrap();
    assert!(!created.id.is_empty());
    assert_eq!(created.kind, Kind::Check);
    assert_eq!(created.body()["name"], "Home");
    assert_eq!(
        created.body()["alertChannelSubscriptions"],
        json!([]),
        "never auto-subscribed (autoAssignAlerts=false)"
    );
    assert!(created.version().is_some(), "updated_at is the version");

    let read = client.get(Kind::Check, &created.id).await.unwrap().expect("exists");
    assert_eq!(read.id, created.id);
    assert_eq!(read.body()["request"]["url"], "https://example.com");

    let update = json!({ "checkType": "URL", "name": "Home page", "request": { "url": "https://example.org" } });
    let updated = client.update(Kind::Check, &created.id, &update).await.unwrap();
    assert_eq!(updated.id, created.id);
    assert_eq!(updated.body()["name"], "Home page");
    assert_eq!(updated.body()["tags"], json!(["a"]), "fields left out are kept");
    let read = client.get(Kind::Check, &created.id).await.unwrap().unwrap();
    assert_eq!(read.body()["request"]["url"], "https://example.org");

    client.delete(Kind::Check, &created.id).await.unwrap();
    assert!(
        client.get(Kind::Check, &created.id).await.unwrap().is_none(),
        "404 is None"
    );
    client
        .delete(Kind::Check, &created.id)
        .await
        .expect("deleting what is gone counts as deleted");
    assert!(
        client
            .get(Kind::Check, "00000000-0000-4000-8000-000000000000")
            .await
            .unwrap()
            .is_none()
    );
    let _ = server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn variables_are_addressed_by_key() {
    let server = start_emulator().await;
    let client = client_for(&server);
    let created = client
        .create(
            Kind::Variable,
            &json!({ "key": "API TOKEN/1", "value": "s", "secret": true }),
        )
        .await
        .unwrap();
    assert_eq!(created.id, "API TOKEN/1");
    let read = client.get(Kind::Variable, "API TOKEN/1").await.unwrap().unwrap();
    assert_eq!(read.body()["value"], Value::Null, "secret values are never returned");
    client
        .update(Kind::Variable, "API TOKEN/1", &json!({ "value": "t", "secret": true }))
        .await
        .unwrap();
    client.delete(Kind::Variable, "API TOKEN/1").await.unwrap();
    assert!(client.get(Kind::Variable, "API TOKEN/1").await.unwrap().is_none());
    let _ = server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_name_method_path_status_message_and_attributes() {
    let server = start_emulator().await;
    let client = client_for(&server);
    let bad =
        json!({ "checkType": "URL", "name": "Home", "frequency": 7, "request": { "url": "https://example.com" } });
    let error = client.create(Kind::Check, &bad).await.unwrap_err();
    let Error::Status(status) = &error else {
        panic!("expected a status error, got {error:?}")
    };
    assert_eq!(status.status, 400);
    assert_eq!(status.method, "POST");
    assert_eq!(status.path, "/v1/checks/url");
    assert!(status.attributes.contains_key("frequency"), "{:?}", status.attributes);
    assert!(!error.is_transient());
    let text = error.to_string();
    for part in [
        "POST",
        "/v1/checks/url",
        "400",
        "Bad Request",
        &status.message,
        "frequency",
    ] {
        assert!(text.contains(part), "`{part}` missing from: {text}");
    }
    assert_ne!(status.message, "no message");

    let missing = client
        .update(Kind::Group, "999999", &json!({ "name": "x" }))
        .await
        .unwrap_err();
    assert_eq!(missing.status(), Some(404));
    let text = missing.to_string();
    assert!(text.starts_with("PUT /v2/check-groups/999999 failed: 404"), "{text}");

    let mut config = ClientConfig::new(server.url(), Secret::new("wrong-key"));
    config.rate_limit = None;
    config.max_retries = 0;
    let stranger = Client::new(config).unwrap();
    let denied = stranger.list_all(Kind::Check).await.unwrap_err();
    assert_eq!(denied.status(), Some(401), "{denied}");
    let text = denied.to_string();
    assert!(text.contains("GET /v1/checks") && text.contains("401"), "{text}");
    assert!(!text.contains("wrong-key"), "the key never shows: {text}");
    assert!(!format!("{:?}", ClientConfig::new("http://x", Secret::new("wrong-key"))).contains("wrong-key"));
    let _ = server.shutdown().await;
}

/// However many requests its callers start at once, the client keeps at
/// most `max_in_flight` connections busy: a service serving no more
/// connections than that answers every one. Unbounded, the 256 GETs below
/// opened 256 connections; those past the server's limit waited in its
/// backlog unanswered until they timed out (the read-back of a 1% apply of
/// 100,000 checks, 1,000 GETs at once against the emulator's 512).
#[tokio::test(flavor = "multi_thread")]
async fn requests_in_flight_stay_within_the_connections_a_service_serves() {
    let server = monform_emulator::start_local(monform_emulator::Config {
        rate_limit: None,
        // Twice the client's bound: a finished request's connection goes
        // back to the pool a moment after its permit is released, so the
        // next request may open one more connection meanwhile.
        connections: monform_emulator::listen::Limits {
            max_connections: 2 * monform_api::DEFAULT_MAX_IN_FLIGHT,
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .expect("emulator starts");
    let mut config = ClientConfig::new(server.url(), Secret::new(server.api_key.clone()));
    config.rate_limit = None;
    config.account_id = Some(server.account_id.clone());
    // A request left waiting fails, rather than being retried on a
    // connection another request has freed meanwhile.
    config.timeout = std::time::Duration::from_secs(5);
    config.max_retries = 0;
    let gets = 4 * monform_api::DEFAULT_MAX_IN_FLIGHT;
    let client = Client::new(config.clone()).unwrap();
    let created = client
        .create(Kind::Snippet, &json!({ "name": "shared", "script": "x" }))
        .await
        .unwrap();
    let found = try_join_all((0..gets).map(|_| client.get(Kind::Snippet, &created.id)))
        .await
        .expect("every GET answered");
    assert_eq!(found.iter().flatten().count(), gets);
    // The same GETs from a client without the bound: some are never served.
    config.max_in_flight = gets;
    let unbounded = Client::new(config).unwrap();
    let error = try_join_all((0..gets).map(|_| unbounded.get(Kind::Snippet, &created.id)))
        .await
        .expect_err("more connections than the service serves");
    assert!(error.to_string().contains("timed out"), "{error}");
    let _ = server.shutdown().await;
}
