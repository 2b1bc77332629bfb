//! The state in rows: `monform_state` holds a project's serial and the
//! rest of its header (salt, format version), `monform_state_resources`
//! one row per entry. A write touches the header, the rows it changes and
//! one history row, so its cost grows with the change, not the project.

use serde_json::Value;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::PgConnection;

use super::HISTORY_BODIES;
use crate::state::{Delta, State, StateError};

/// A state as stored: serial, header (the state without its entries) and
/// the entries.
pub struct Stored {
    pub serial: i64,
    pub header: Value,
    pub entries: Vec<(String, Value)>,
}

/// Reads a project's state, `None` when it has none. `tx` is a
/// transaction that sees one snapshot (`REPEATABLE READ`).
pub async fn read(tx: &mut PgConnection, project: &str) -> Result<Option<Stored>, sqlx_core::Error> {
    let Some(row) = query("SELECT serial, body FROM monform_state WHERE project = $1")
        .bind(project)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Ok(None);
    };
    let rows = query("SELECT address, entry FROM monform_state_resources WHERE project = $1")
        .bind(project)
        .fetch_all(&mut *tx)
        .await?;
    let entries = rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx_core::Error>>()?;
    Ok(Some(Stored {
        serial: row.try_get(0)?,
        header: row.try_get(1)?,
        entries,
    }))
}

/// The state without its entries, as `monform_state.body` keeps it.
pub fn header(state: &State) -> Value {
    serde_json::json!({
        "version": state.version,
        "serial": state.serial,
        "project": state.project,
        "salt": state.salt,
        "target": state.target,
    })
}

/// One write: `delta` over the state at serial `expected` (`None`: the
/// project has no state yet).
pub struct Write<'a> {
    pub state_header: Value,
    pub project: &'a str,
    pub expected: Option<i64>,
    pub delta: &'a Delta,
    /// `user@host` and the command, for the history.
    pub by: &'a str,
    pub command: &'a str,
    /// The history's text of what changed.
    pub changes: String,
}

/// Why a write did not happen.
pub enum Refused {
    /// The state is not at the expected serial (another writer was first).
    Moved,
    Sql(sqlx_core::Error),
}

impl From<sqlx_core::Error> for Refused {
    fn from(e: sqlx_core::Error) -> Refused {
        Refused::Sql(e)
    }
}

/// Writes `write` in the transaction `tx`; the caller commits.
pub async fn write(tx: &mut PgConnection, write: Write<'_>) -> Result<(), Refused> {
    let serial = i64::try_from(write.delta.serial).map_err(|e| Refused::Sql(sqlx_core::Error::Encode(e.into())))?;
    let written = match write.expected {
        Some(expected) => {
            query(
                "UPDATE monform_state SET serial = $2, body = $3, updated_at = now(), updated_by = $4
                 WHERE project = $1 AND serial = $5",
            )
            .bind(write.project)
            .bind(serial)
            .bind(&write.state_header)
            .bind(write.by)
            .bind(expected)
            .execute(&mut *tx)
            .await?
        }
        None => {
            query(
                "INSERT INTO monform_state (project, serial, body, updated_at, updated_by)
                 VALUES ($1, $2, $3, now(), $4) ON CONFLICT (project) DO NOTHING",
            )
            .bind(write.project)
            .bind(serial)
            .bind(&write.state_header)
            .bind(write.by)
            .execute(&mut *tx)
            .await?
        }
    };
    if written.rows_affected() != 1 {
        return Err(Refused::Moved);
    }
    if write.expected.is_none() {
        // Rows without a header row are left from nothing monform wrote.
        query("DELETE FROM monform_state_resources WHERE project = $1")
            .bind(write.project)
            .execute(&mut *tx)
            .await?;
    }
    if !write.delta.remove.is_empty() {
        query("DELETE FROM monform_state_resources WHERE project = $1 AND address = ANY($2)")
            .bind(write.project)
            .bind(&write.delta.remove)
            .execute(&mut *tx)
            .await?;
    }
    if !write.delta.set.is_empty() {
        let addresses: Vec<&str> = write.delta.set.keys().map(String::as_str).collect();
        let entries: Vec<Value> = write
            .delta
            .set
            .values()
            .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
            .collect();
        query(
            "INSERT INTO monform_state_resources (project, address, entry, serial)
             SELECT $1, address, entry, $4 FROM unnest($2::text[], $3::jsonb[]) AS u(address, entry)
             ON CONFLICT (project, address) DO UPDATE SET entry = EXCLUDED.entry, serial = EXCLUDED.serial",
        )
        .bind(write.project)
        .bind(&addresses)
        .bind(&entries)
        .bind(serial)
        .execute(&mut *tx)
        .await?;
    }
    let body = serde_json::to_value(write.delta).unwrap_or(Value::Null);
    query(
        "INSERT INTO monform_state_history (project, serial, body, applied_at, applied_by, command, changes)
         VALUES ($1, $2, $3, now(), $4, $5, $6)",
    )
    .bind(write.project)
    .bind(serial)
    .bind(&body)
    .bind(write.by)
    .bind(write.command)
    .bind(&write.changes)
    .execute(&mut *tx)
    .await?;
    query(
        "UPDATE monform_state_history SET body = NULL
         WHERE project = $1 AND serial <= $2 AND body IS NOT NULL",
    )
    .bind(write.project)
    .bind(serial - HISTORY_BODIES)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The history's text of what a write changed: `+address` added,
/// `~address` changed, `-address` removed; at most 20 named.
pub fn summarize(mut parts: Vec<String>) -> String {
    const SHOWN: usize = 20;
    if parts.len() > SHOWN {
        let more = parts.len() - SHOWN;
        parts.truncate(SHOWN);
        parts.push(format!("and {more} more"));
    }
    parts.join(" ")
}

/// A stored state as a `State`, or why it is not one.
pub fn assemble(stored: Stored) -> Result<State, String> {
    let mut header = stored.header;
    let resources: serde_json::Map<String, Value> = stored.entries.into_iter().collect();
    if let Value::Object(map) = &mut header {
        map.insert("resources".into(), Value::Object(resources));
        map.insert("serial".into(), Value::from(stored.serial));
    }
    serde_json::from_value::<State>(header)
        .map(State::upgrade)
        .map_err(|e| e.to_string())
}

/// Turns a refused write into the backend's error.
pub fn refused(
    error: Refused,
    conflict: impl FnOnce() -> StateError,
    sql: impl FnOnce(sqlx_core::Error) -> StateError,
) -> StateError {
    match error {
        Refused::Moved => conflict(),
        Refused::Sql(e) => sql(e),
    }
}
