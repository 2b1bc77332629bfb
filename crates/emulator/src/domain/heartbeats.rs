//! Heartbeat pings: the monitored job calls `GET|POST /ping/{token}` (the
//! check's `heartbeat.pingUrl`, served without a key); the runner judges a
//! run from the last one (`monform_runner`: late after period + grace).
//!
//! Choice: each ping replaces the check's `heartbeatPings` record (id: the
//! check id) holding the last ping time and a count.

use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

use crate::app::App;
use crate::clock;
use crate::store::Objects;
use monform_runner::Heartbeats;

/// Record kind: the last ping of a heartbeat check (id and parent: check id).
pub const PINGS: &str = "heartbeatPings";

/// Records a ping for `token`. Returns the check id, or `None` for an
/// unknown token.
pub fn record_ping(app: &App, token: &str) -> rusqlite::Result<Option<String>> {
    app.store.transaction(|tx| {
        let found: Option<(String, String)> = tx
            .query_row(
                "SELECT account_id, id FROM objects WHERE kind = 'checks'
                 AND json_extract(body, '$.heartbeat.pingToken') = ?1",
                params![token],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((account, check_id)) = found else {
            return Ok(None);
        };
        let now = clock::now();
        let count = tx
            .get(&account, PINGS, &check_id)?
            .and_then(|p| p["count"].as_i64())
            .unwrap_or(0)
            + 1;
        let record = json!({
            "checkId": check_id,
            "lastPingAt": clock::format(now),
            "lastPingAtMs": now.timestamp_millis(),
            "count": count,
        });
        if !tx.replace(&account, PINGS, &check_id, &record)? {
            tx.insert(
                &account,
                PINGS,
                &check_id,
                Some(&check_id),
                now.timestamp_millis(),
                &record,
            )?;
        }
        Ok(Some(check_id))
    })
}

/// The pings recorded for one account, as the runner reads them.
pub struct StoredPings<'a> {
    pub app: &'a App,
    pub account: &'a str,
}

impl Heartbeats for StoredPings<'_> {
    fn last_ping_ms(&self, check: &Value) -> Result<Option<i64>, String> {
        let check_id = check["id"].as_str().unwrap_or_default();
        match self.app.store.lock().get(self.account, PINGS, check_id) {
            Ok(record) => Ok(record.and_then(|r| r["lastPingAtMs"].as_i64())),
            Err(e) => Err(e.to_string()),
        }
    }
}
