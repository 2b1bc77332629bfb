//! Requests waiting for the store do not stall the server (issue 28): on a
//! runtime with two workers, as `monform serve` has on 2 cores, a slow store
//! operation in flight and more requests waiting for the store than there
//! are workers still leave the server answering what does not need the
//! store. The slow operation is the test itself holding the store's lock:
//! what a large trigger or a slow listing does, for as long as the test
//! wants, so the order of the answers is certain.

use std::time::Duration;

use monform_emulator::{Config, Server};

/// Far longer than any answer needs: only a hang guard. Before the fix the
/// request below was never answered while the store was held.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn two_worker_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime starts")
}

#[test]
fn a_request_is_answered_while_the_store_is_held_and_others_wait_for_it() {
    let server_runtime = two_worker_runtime();
    let server: Server = server_runtime.block_on(monform_testkit::start_emulator_with(Config {
        rate_limit: None,
        execute_checks: false,
        ..Config::default()
    }));
    // The client on a runtime of its own: the server's workers are what is tested.
    let client_runtime = two_worker_runtime();
    let client = monform_http::client().build().expect("an HTTP client");
    let base = server.url();

    let held = server.app.store.lock();
    // More requests waiting for the store than the server has workers.
    let waiting: Vec<_> = (0..6)
        .map(|_| {
            let request = client
                .get(format!("{base}/v1/checks"))
                .bearer_auth(&server.api_key)
                .send();
            client_runtime.spawn(request)
        })
        .collect();
    // Let them reach the store's lock before the request that needs none.
    std::thread::sleep(Duration::from_millis(500));
    let cheap = client_runtime
        .block_on(async { tokio::time::timeout(HANG_GUARD, client.get(format!("{base}/openapi.json")).send()).await });
    let answered_while_held = matches!(&cheap, Ok(Ok(response)) if response.status().is_success());
    let finished_while_held = waiting.iter().filter(|w| w.is_finished()).count();
    drop(held);

    assert!(
        answered_while_held,
        "GET /openapi.json was not answered while the store was held: {cheap:?}"
    );
    assert_eq!(
        finished_while_held, 0,
        "a request that needs the store did not wait for it"
    );
    for request in waiting {
        let response = client_runtime
            .block_on(async { tokio::time::timeout(HANG_GUARD, request).await })
            .expect("answered once the store is free")
            .expect("task ran")
            .expect("request sent");
        assert_eq!(response.status(), 200, "GET /v1/checks once the store is free");
    }
    server_runtime.block_on(server.shutdown()).expect("server stops");
}
