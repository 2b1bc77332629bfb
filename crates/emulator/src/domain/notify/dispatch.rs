//! The dispatcher: one task per server sending queued requests outside
//! the store's lock and recording how each went.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{ALERT_NOTIFICATIONS, OUTBOX, POLL, QUEUED, RESULT_LIMIT, SEND_TIMEOUT};
use crate::app::AppState;
use crate::clock::{iso, now_ms};
use crate::store::Objects;

/// Sends queued requests until the server stops (started by `start`).
pub async fn dispatch(app: AppState) {
    // Built when something is first queued: a client reads the system's
    // roots of trust (35 ms in a debug build), and most servers (every
    // test's) never send a notification.
    let mut client: Option<reqwest::Client> = None;
    let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut stopped = app.stopped.subscribe();
    loop {
        let queued = QUEUED.notified();
        tokio::pin!(queued);
        queued.as_mut().enable();
        match outbox(&app) {
            Ok(items) if items.is_empty() => {}
            Ok(items) => {
                let client = match &client {
                    Some(client) => client.clone(),
                    None => match sender() {
                        Ok(built) => client.insert(built).clone(),
                        Err(e) => {
                            tracing::warn!("alert notifications will not be sent: cannot build an HTTP client: {e}");
                            return;
                        }
                    },
                };
                for (account, id, request) in items {
                    let fresh = in_flight.lock().map(|mut s| s.insert(id.clone())).unwrap_or(false);
                    if fresh {
                        let (app, client, in_flight) = (app.clone(), client.clone(), in_flight.clone());
                        tokio::spawn(async move {
                            let (status, result) = send(&client, &request).await;
                            if let Err(e) = settle(&app, &account, &id, status, &result) {
                                tracing::warn!(notification = %id, "cannot record a notification: {e}");
                            }
                            if let Ok(mut set) = in_flight.lock() {
                                set.remove(&id);
                            }
                        });
                    }
                }
            }
            Err(e) => tracing::warn!("cannot read the notification outbox: {e}"),
        }
        tokio::select! {
            _ = &mut queued => {}
            _ = tokio::time::sleep(POLL) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
    }
}

/// The client notifications are sent with.
fn sender() -> reqwest::Result<reqwest::Client> {
    monform_http::client()
        .timeout(SEND_TIMEOUT)
        .redirect(reqwest::redirect::Policy::limited(3))
        .build()
}

/// Every queued request: (account, notification id, request).
fn outbox(app: &AppState) -> rusqlite::Result<Vec<(String, String, Value)>> {
    let db = app.store.lock();
    let mut statement = db.prepare_cached("SELECT account_id, id, body FROM objects WHERE kind = ?1 ORDER BY ts")?;
    statement
        .query_map([OUTBOX], |r| {
            let body: String = r.get(2)?;
            Ok((r.get(0)?, r.get(1)?, serde_json::from_str(&body).unwrap_or(Value::Null)))
        })?
        .collect()
}

/// Sends one queued request: SUCCESS or FAILURE, and what came back.
async fn send(client: &reqwest::Client, request: &Value) -> (&'static str, String) {
    let method = reqwest::Method::from_bytes(request["method"].as_str().unwrap_or("POST").as_bytes())
        .unwrap_or(reqwest::Method::POST);
    let Some(url) = request["url"].as_str() else {
        return ("FAILURE", "not sent: the channel has no url".to_owned());
    };
    let mut builder = client.request(method, url);
    let query: Vec<(String, String)> = serde_json::from_value(request["query"].clone()).unwrap_or_default();
    if !query.is_empty() {
        builder = builder.query(&query);
    }
    let headers: Vec<(String, String)> = serde_json::from_value(request["headers"].clone()).unwrap_or_default();
    for (key, value) in headers {
        builder = builder.header(key, value);
    }
    if let Some(body) = request["body"].as_str() {
        builder = builder.body(body.to_owned());
    }
    match builder.send().await {
        Ok(response) => {
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            let verdict = if status.is_success() { "SUCCESS" } else { "FAILURE" };
            let text = if text.is_empty() && !status.is_success() {
                format!("HTTP {status}")
            } else {
                text
            };
            (verdict, truncate(text))
        }
        // reqwest's message names the URL; only the kind of failure is kept.
        Err(e) => ("FAILURE", truncate(format!("not delivered: {}", describe(&e)))),
    }
}

fn describe(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "cannot connect"
    } else if error.is_builder() {
        "invalid request (url or header)"
    } else {
        "transport error"
    }
}

fn truncate(mut text: String) -> String {
    if text.len() > RESULT_LIMIT {
        let mut end = RESULT_LIMIT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// Records how sending went and empties the notification's outbox entry.
fn settle(app: &AppState, account: &str, id: &str, status: &str, result: &str) -> rusqlite::Result<()> {
    app.store.transaction(|tx| {
        if let Some(mut record) = tx.get(account, ALERT_NOTIFICATIONS, id)? {
            record["status"] = json!(status);
            record["notificationResult"] = json!(result);
            record["timestamp"] = json!(iso(now_ms()));
            tx.replace(account, ALERT_NOTIFICATIONS, id, &record)?;
        }
        tx.delete(account, OUTBOX, id)?;
        Ok(())
    })
}
