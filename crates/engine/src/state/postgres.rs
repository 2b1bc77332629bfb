//! The PostgreSQL state backend, for teams whose applies run on many
//! machines (design decision 2). `[state] backend = "postgres"`; the URL
//! comes from `MONFORM_STATE_URL` and its password is never shown: every
//! message names the URL with the password as `***`.
//!
//! Tables, created and migrated by monform on first use (one advisory
//! transaction lock serialises concurrent first uses):
//!
//! - `monform_state`: one row per project, the state as `jsonb` and its serial;
//! - `monform_state_history`: one row per write (serial, when, who, command,
//!   what changed), with the body of the last [`HISTORY_BODIES`] writes;
//! - `monform_locks`: who holds a project's apply lock.
//!
//! Every save is one transaction: the state row (only if the write's serial
//! is newer than the stored one, so two writers can never overwrite each
//! other silently) and its history row. The apply lock is a session-level
//! `pg_try_advisory_lock` on a connection of its own, held for the whole
//! apply; its holder (pid, host, start, command) is written beside it so the
//! second apply fails at once naming the first. A holder that dies loses
//! its session and so the lock; its row is then stale and replaced.
//!
//! The trait is synchronous, so the backend owns a small tokio runtime and
//! runs each call on it: from async code the call hops to a scoped thread,
//! as a runtime cannot block on another from its own threads.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use sqlx_core::connection::Connection;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};

use super::{HistoryEntry, State, StateBackend, StateError};
use crate::lock::{Holder, LockError, LockGuard, host_name};

/// The first key of every advisory lock monform takes (`mfrm`), so its locks
/// never collide with another application's one-key locks.
const LOCK_NAMESPACE: i32 = 0x6d66_726d;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// History rows keep the whole state for this many of the latest serials;
/// older rows keep who, when, the command and what changed.
pub const HISTORY_BODIES: i64 = 100;

/// The schema, one list of statements per version. Never edit a released
/// version: add one.
const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE monform_state (
        project    text PRIMARY KEY,
        serial     bigint NOT NULL,
        body       jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL
    )",
    "CREATE TABLE monform_state_history (
        project    text NOT NULL,
        serial     bigint NOT NULL,
        body       jsonb,
        applied_at timestamptz NOT NULL DEFAULT now(),
        applied_by text NOT NULL,
        command    text NOT NULL,
        changes    text NOT NULL DEFAULT '',
        PRIMARY KEY (project, serial)
    )",
    "CREATE TABLE monform_locks (
        project     text PRIMARY KEY,
        pid         bigint NOT NULL,
        host        text NOT NULL,
        started_at  text NOT NULL,
        command     text NOT NULL,
        session_pid integer NOT NULL,
        locked_at   timestamptz NOT NULL DEFAULT now()
    )",
]];

/// Who writes: recorded in the history and beside the lock.
#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    /// `user@host`.
    pub by: String,
    /// The monform command, e.g. `monform apply`.
    pub command: String,
}

impl Actor {
    pub fn current(command: &str) -> Actor {
        let user = ["USER", "LOGNAME", "USERNAME"]
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
            .or_else(user_of_this_process)
            .unwrap_or_else(|| "unknown".to_owned());
        Actor {
            by: format!("{user}@{}", host_name()),
            command: command.to_owned(),
        }
    }
}

/// The name of the user running this process, from /etc/passwd, when the
/// environment does not say (containers often set no USER).
fn user_of_this_process() -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let uid = std::fs::metadata("/proc/self").ok()?.uid().to_string();
        let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
        passwd.lines().find_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            (fields.nth(1)? == uid).then(|| name.to_owned())
        })
    }
    #[cfg(not(unix))]
    None
}

/// The state of one project in a PostgreSQL database.
pub struct PostgresState {
    inner: Arc<Inner>,
    project: String,
    actor: Actor,
    /// The state as last loaded or saved, to tell what a save changes
    /// without reading the old body back.
    last: Mutex<Option<State>>,
}

struct Inner {
    runtime: Option<tokio::runtime::Runtime>,
    pool: PgPool,
    options: PgConnectOptions,
    /// The URL with its password as `***`.
    location: String,
    /// Texts never to show: the password as written and decoded.
    secrets: Vec<String>,
}

impl Inner {
    /// Runs `future` on the backend's runtime and waits for it, from sync
    /// or async code alike.
    fn block<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let handle = self
            .runtime
            .as_ref()
            .expect("the runtime lives as long as the backend")
            .handle();
        if tokio::runtime::Handle::try_current().is_err() {
            return handle.block_on(future);
        }
        std::thread::scope(|scope| {
            scope
                .spawn(|| handle.block_on(future))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// A message with every form of the password replaced by `***`.
    fn scrub(&self, text: String) -> String {
        self.secrets
            .iter()
            .filter(|s| !s.is_empty())
            .fold(text, |text, secret| text.replace(secret.as_str(), "***"))
    }

    fn error(&self, what: &str, error: impl std::fmt::Display) -> StateError {
        StateError::Postgres {
            location: self.location.clone(),
            detail: self.scrub(format!("{what}: {error}")),
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            let pool = self.pool.clone();
            let close = async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), pool.close()).await;
            };
            if tokio::runtime::Handle::try_current().is_err() {
                runtime.block_on(close);
            } else {
                std::thread::scope(|scope| {
                    let _ = scope.spawn(|| runtime.block_on(close)).join();
                });
            }
            // Dropping a runtime from async code panics; this does not.
            runtime.shutdown_background();
        }
    }
}

impl PostgresState {
    /// Connects to `url` and brings the schema up to date. `actor` is
    /// recorded with every write and with the lock.
    pub fn open(url: &str, project: &str, actor: Actor) -> Result<PostgresState, StateError> {
        let location = redact_url(url);
        let secrets = url_secrets(url);
        let scrub = |text: String| {
            secrets
                .iter()
                .filter(|s| !s.is_empty())
                .fold(text, |text, secret| text.replace(secret.as_str(), "***"))
        };
        let invalid = |detail: String| StateError::Postgres {
            location: location.clone(),
            detail: scrub(detail),
        };
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(invalid(
                "MONFORM_STATE_URL must be a postgres:// or postgresql:// URL".to_owned(),
            ));
        }
        let options: PgConnectOptions = url
            .parse::<PgConnectOptions>()
            .map_err(|e| invalid(format!("not a valid PostgreSQL URL: {e}")))?
            .application_name("monform");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("monform-postgres")
            .enable_all()
            .build()
            .map_err(|e| invalid(format!("cannot start a runtime: {e}")))?;
        let pool = {
            // The pool starts its maintenance task on the current runtime.
            let _entered = runtime.enter();
            PgPoolOptions::new()
                .max_connections(2)
                .min_connections(0)
                .acquire_timeout(CONNECT_TIMEOUT)
                .connect_lazy_with(options.clone())
        };
        let inner = Arc::new(Inner {
            runtime: Some(runtime),
            pool,
            options,
            location,
            secrets,
        });
        let backend = PostgresState {
            inner,
            project: project.to_owned(),
            actor,
            last: Mutex::new(None),
        };
        backend.migrate()?;
        Ok(backend)
    }

    /// The URL with the password as `***`.
    pub fn location(&self) -> &str {
        &self.inner.location
    }

    /// Creates or upgrades monform's tables.
    fn migrate(&self) -> Result<(), StateError> {
        let inner = &self.inner;
        inner.block(async {
            // A connection of its own: a refused connection fails at once with
            // its reason, where the pool would retry until its timeout.
            let mut connection = tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&inner.options))
                .await
                .map_err(|_| inner.error("cannot connect", format!("no answer in {CONNECT_TIMEOUT:?}")))?
                .map_err(|e| inner.error("cannot connect", e))?;
            let fail = |e| inner.error("cannot create monform's tables", e);
            let mut tx = connection.begin().await.map_err(fail)?;
            query("SELECT pg_advisory_xact_lock($1, 0)")
                .bind(LOCK_NAMESPACE)
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            query(
                "CREATE TABLE IF NOT EXISTS monform_schema_migrations (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )",
            )
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
            let current: i32 = query("SELECT coalesce(max(version), 0) FROM monform_schema_migrations")
                .fetch_one(&mut *tx)
                .await
                .and_then(|row| row.try_get(0))
                .map_err(fail)?;
            let known = MIGRATIONS.len() as i32;
            if current > known {
                return Err(inner.error(
                    "the schema is newer than this monform",
                    format!("version {current}, this monform knows up to {known}: upgrade monform"),
                ));
            }
            for (version, statements) in MIGRATIONS.iter().enumerate().skip(current as usize) {
                for statement in *statements {
                    query(statement).execute(&mut *tx).await.map_err(fail)?;
                }
                query("INSERT INTO monform_schema_migrations (version) VALUES ($1)")
                    .bind(version as i32 + 1)
                    .execute(&mut *tx)
                    .await
                    .map_err(fail)?;
            }
            tx.commit().await.map_err(fail)?;
            let _ = connection.close().await;
            Ok(())
        })
    }

    fn remember(&self, state: &State) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(state.clone());
        }
    }
}

impl StateBackend for PostgresState {
    fn load(&self, project: &str) -> Result<State, StateError> {
        let inner = &self.inner;
        let body: Option<Value> = inner.block(async {
            let row = query("SELECT body FROM monform_state WHERE project = $1")
                .bind(project)
                .fetch_optional(&inner.pool)
                .await
                .map_err(|e| inner.error("cannot read", e))?;
            row.map(|r| r.try_get::<Value, _>(0))
                .transpose()
                .map_err(|e| inner.error("cannot read", e))
        })?;
        let Some(body) = body else {
            return Ok(State::new(project));
        };
        let state: State = serde_json::from_value(body).map_err(|e| StateError::Corrupt {
            path: format!("{} (project {project})", inner.location),
            detail: e.to_string(),
        })?;
        if state.project != project {
            return Err(StateError::Project {
                path: inner.location.clone(),
                found: state.project,
                expected: project.to_owned(),
            });
        }
        self.remember(&state);
        Ok(state)
    }

    fn save(&self, state: &State) -> Result<(), StateError> {
        let inner = &self.inner;
        let body = serde_json::to_value(state).map_err(|e| inner.error("cannot encode the state", e))?;
        let serial = i64::try_from(state.serial).map_err(|e| inner.error("serial out of range", e))?;
        let last = self.last.lock().ok().and_then(|l| l.clone());
        inner.block(async {
            let fail = |e| inner.error("cannot write", e);
            let mut tx = inner.pool.begin().await.map_err(fail)?;
            let current = query("SELECT serial FROM monform_state WHERE project = $1 FOR UPDATE")
                .bind(&state.project)
                .fetch_optional(&mut *tx)
                .await
                .map_err(fail)?
                .map(|row| row.try_get::<i64, _>(0))
                .transpose()
                .map_err(fail)?;
            if let Some(current) = current
                && current >= serial
            {
                return Err(conflict(inner, current, serial));
            }
            let previous = match (current, last) {
                (None, _) => None,
                (Some(current), Some(last)) if last.serial as i64 == current => Some(last),
                (Some(_), _) => {
                    let row = query("SELECT body FROM monform_state WHERE project = $1")
                        .bind(&state.project)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(fail)?;
                    let body: Value = row.try_get(0).map_err(fail)?;
                    serde_json::from_value(body).ok()
                }
            };
            let written = query(
                "INSERT INTO monform_state (project, serial, body, updated_at, updated_by)
                 VALUES ($1, $2, $3, now(), $4)
                 ON CONFLICT (project) DO UPDATE
                 SET serial = EXCLUDED.serial, body = EXCLUDED.body,
                     updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
                 WHERE monform_state.serial < EXCLUDED.serial",
            )
            .bind(&state.project)
            .bind(serial)
            .bind(&body)
            .bind(&self.actor.by)
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
            if written.rows_affected() != 1 {
                return Err(conflict(inner, serial, serial));
            }
            query(
                "INSERT INTO monform_state_history (project, serial, body, applied_at, applied_by, command, changes)
                 VALUES ($1, $2, $3, now(), $4, $5, $6)",
            )
            .bind(&state.project)
            .bind(serial)
            .bind(&body)
            .bind(&self.actor.by)
            .bind(&self.actor.command)
            .bind(changes(previous.as_ref(), state))
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
            query(
                "UPDATE monform_state_history SET body = NULL
                 WHERE project = $1 AND serial <= $2 AND body IS NOT NULL",
            )
            .bind(&state.project)
            .bind(serial - HISTORY_BODIES)
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
            tx.commit().await.map_err(fail)
        })?;
        self.remember(state);
        Ok(())
    }

    fn describe(&self) -> String {
        format!("{} (project {})", self.inner.location, self.project)
    }

    fn lock(&self, command: &str) -> Result<LockGuard, LockError> {
        let inner = self.inner.clone();
        let project = self.project.clone();
        let me = Holder::current(command);
        let fail = |what: &str, e: sqlx_core::Error| {
            LockError::Backend(inner.scrub(format!("{}: {what}: {e}", inner.location)))
        };
        let taken = inner.block(async {
            let mut connection = tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&inner.options))
                .await
                .map_err(|_| {
                    LockError::Backend(format!(
                        "{}: cannot connect: no answer in {CONNECT_TIMEOUT:?}",
                        inner.location
                    ))
                })?
                .map_err(|e| fail("cannot connect", e))?;
            let got: bool = query("SELECT pg_try_advisory_lock($1, hashtext($2))")
                .bind(LOCK_NAMESPACE)
                .bind(&project)
                .fetch_one(&mut connection)
                .await
                .and_then(|row| row.try_get(0))
                .map_err(|e| fail("cannot take the advisory lock", e))?;
            if !got {
                let holder = holder_of(&mut connection, &project).await;
                let _ = connection.close().await;
                return Err(match holder {
                    Some(holder) => LockError::Held(holder),
                    None => LockError::Backend(format!(
                        "another monform holds the lock of project `{project}` in {}; it has not said who yet",
                        inner.location
                    )),
                });
            }
            let stale = read_holder(&mut connection, &project).await.ok().flatten();
            query(
                "INSERT INTO monform_locks (project, pid, host, started_at, command, session_pid, locked_at)
                 VALUES ($1, $2, $3, $4, $5, pg_backend_pid(), now())
                 ON CONFLICT (project) DO UPDATE
                 SET pid = EXCLUDED.pid, host = EXCLUDED.host, started_at = EXCLUDED.started_at,
                     command = EXCLUDED.command, session_pid = EXCLUDED.session_pid,
                     locked_at = EXCLUDED.locked_at",
            )
            .bind(&project)
            .bind(i64::from(me.pid))
            .bind(&me.host)
            .bind(&me.started_at)
            .bind(&me.command)
            .execute(&mut connection)
            .await
            .map_err(|e| fail("cannot record the lock's holder", e))?;
            Ok((connection, stale))
        })?;
        let (connection, took_over) = taken;
        let release_inner = self.inner.clone();
        let release = move || {
            let mut connection = connection;
            let inner = release_inner;
            inner.block(async {
                // Closing the session releases the lock in any case; the
                // explicit unlock and row delete keep things tidy.
                let _ = query("DELETE FROM monform_locks WHERE project = $1 AND session_pid = pg_backend_pid()")
                    .bind(&project)
                    .execute(&mut connection)
                    .await;
                let _ = query("SELECT pg_advisory_unlock($1, hashtext($2))")
                    .bind(LOCK_NAMESPACE)
                    .bind(&project)
                    .execute(&mut connection)
                    .await;
                let _ = connection.close().await;
            });
        };
        Ok(LockGuard::new(release, took_over))
    }

    fn history(&self, project: &str, limit: usize) -> Result<Option<Vec<HistoryEntry>>, StateError> {
        let inner = &self.inner;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = inner.block(async {
            query(
                "SELECT serial,
                        to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
                        applied_by, command, changes
                 FROM monform_state_history WHERE project = $1
                 ORDER BY serial DESC LIMIT $2",
            )
            .bind(project)
            .bind(limit)
            .fetch_all(&inner.pool)
            .await
            .map_err(|e| inner.error("cannot read the history", e))
        })?;
        let entries = rows
            .iter()
            .map(|row| {
                Ok(HistoryEntry {
                    serial: row.try_get::<i64, _>(0)?.max(0) as u64,
                    applied_at: row.try_get(1)?,
                    applied_by: row.try_get(2)?,
                    command: row.try_get(3)?,
                    changes: row.try_get(4)?,
                })
            })
            .collect::<Result<Vec<_>, sqlx_core::Error>>()
            .map_err(|e| inner.error("cannot read the history", e))?;
        Ok(Some(entries))
    }
}

fn conflict(inner: &Inner, stored: i64, writing: i64) -> StateError {
    inner.error(
        "refusing to overwrite a newer state",
        format!(
            "it is at serial {stored}, this write is serial {writing}: another monform changed it meanwhile; plan again"
        ),
    )
}

async fn read_holder(connection: &mut PgConnection, project: &str) -> Result<Option<Holder>, sqlx_core::Error> {
    let row = query("SELECT pid, host, started_at, command FROM monform_locks WHERE project = $1")
        .bind(project)
        .fetch_optional(connection)
        .await?;
    row.map(|row| {
        Ok(Holder {
            pid: u32::try_from(row.try_get::<i64, _>(0)?).unwrap_or(0),
            host: row.try_get(1)?,
            started_at: row.try_get(2)?,
            command: row.try_get(3)?,
        })
    })
    .transpose()
}

/// The holder of a lock another session just took: its row may lag the
/// lock by a moment, so wait for it a little.
async fn holder_of(connection: &mut PgConnection, project: &str) -> Option<Holder> {
    for _ in 0..20 {
        if let Ok(Some(holder)) = read_holder(connection, project).await {
            return Some(holder);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// What a write changes: `+address` added, `~address` changed, `-address`
/// removed; at most 20 named.
fn changes(before: Option<&State>, after: &State) -> String {
    let empty = Default::default();
    let old = before.map_or(&empty, |s| &s.resources);
    let mut parts: Vec<String> = Vec::new();
    for (address, entry) in &after.resources {
        match old.get(address) {
            None => parts.push(format!("+{address}")),
            Some(previous) if previous != entry => parts.push(format!("~{address}")),
            Some(_) => {}
        }
    }
    parts.extend(
        old.keys()
            .filter(|a| !after.resources.contains_key(*a))
            .map(|a| format!("-{a}")),
    );
    const SHOWN: usize = 20;
    if parts.len() > SHOWN {
        let more = parts.len() - SHOWN;
        parts.truncate(SHOWN);
        parts.push(format!("and {more} more"));
    }
    parts.join(" ")
}

/// A connection URL fit to show: the password (in the user part or a
/// `password=` parameter) replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_parameters(url);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{user_info}@{host}"),
        },
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{}", redact_parameters(tail))
}

/// `password=...` and `sslpassword=...` values as `***`, in a query string
/// or a `key=value` connection string.
fn redact_parameters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_password_key(rest) {
        let value_start = at + rest[at..].find('=').map_or(0, |i| i + 1);
        out.push_str(&rest[..value_start]);
        let value_end = rest[value_start..]
            .find(['&', ' ', '#'])
            .map_or(rest.len(), |i| value_start + i);
        out.push_str("***");
        rest = &rest[value_end..];
    }
    out.push_str(rest);
    out
}

fn find_password_key(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("password=") {
        let at = from + found;
        let start = if lower[..at].ends_with("ssl") { at - 3 } else { at };
        let boundary = start == 0 || matches!(lower.as_bytes()[start - 1], b'?' | b'&' | b' ');
        if boundary {
            return Some(start);
        }
        from = at + "password=".len();
    }
    None
}

/// Every form of the password in `url`: as written and percent-decoded.
fn url_secrets(url: &str) -> Vec<String> {
    let mut secrets = Vec::new();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if let Some((user_info, _)) = authority.rsplit_once('@')
        && let Some((_, password)) = user_info.split_once(':')
    {
        secrets.push(password.to_owned());
    }
    let lower = url.to_ascii_lowercase();
    for key in ["password=", "sslpassword="] {
        let mut from = 0;
        while let Some(found) = lower[from..].find(key) {
            let start = from + found + key.len();
            let end = url[start..].find(['&', ' ', '#']).map_or(url.len(), |i| start + i);
            secrets.push(url[start..end].to_owned());
            from = end;
        }
    }
    let decoded: Vec<String> = secrets.iter().map(|s| percent_decode(s)).collect();
    secrets.extend(decoded);
    secrets.retain(|s| !s.is_empty());
    // Longest first, so a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(high * 16 + low);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ResourceState;
    use std::collections::BTreeMap;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            redact_url("postgres://monform:s3cr%40t@db.internal:5432/state?sslmode=require"),
            "postgres://monform:***@db.internal:5432/state?sslmode=require"
        );
        assert_eq!(
            redact_url("postgresql://db/state?user=x&password=hunter2&sslmode=verify-full"),
            "postgresql://db/state?user=x&password=***&sslmode=verify-full"
        );
        assert_eq!(
            redact_url("postgres://u@h/d?sslpassword=k"),
            "postgres://u@h/d?sslpassword=***"
        );
        assert_eq!(redact_url("host=db password=pw user=u"), "host=db password=*** user=u");
        assert_eq!(redact_url("postgres://h/d"), "postgres://h/d");
        let secrets = url_secrets("postgres://monform:s3cr%40t@db/state?password=other");
        assert!(secrets.contains(&"s3cr%40t".to_owned()));
        assert!(secrets.contains(&"s3cr@t".to_owned()));
        assert!(secrets.contains(&"other".to_owned()));
    }

    fn entry(id: &str) -> ResourceState {
        ResourceState {
            remote_id: id.into(),
            version: None,
            applied: "f".into(),
            secrets: BTreeMap::new(),
            prevent_destroy: false,
            managed: Vec::new(),
            fields: Default::default(),
        }
    }

    #[test]
    fn changes_name_what_was_added_changed_and_removed() {
        let mut before = State::new("p");
        before.resources.insert("checks.a".into(), entry("1"));
        before.resources.insert("checks.b".into(), entry("2"));
        let mut after = before.clone();
        after.resources.remove("checks.a");
        after.resources.insert("checks.b".into(), entry("3"));
        after.resources.insert("groups.c".into(), entry("4"));
        assert_eq!(changes(Some(&before), &after), "~checks.b +groups.c -checks.a");
        assert_eq!(changes(None, &before), "+checks.a +checks.b");
        let mut many = State::new("p");
        for i in 0..25 {
            many.resources.insert(format!("checks.c{i:02}"), entry("1"));
        }
        assert!(changes(None, &many).ends_with("and 5 more"));
    }

    /// The test database, or `None` (saying why) when there is none.
    fn database() -> Option<String> {
        let url = std::env::var("MONFORM_TEST_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty());
        if url.is_none() {
            eprintln!("skipped: MONFORM_TEST_POSTGRES_URL is not set (no PostgreSQL could be started; see .ci/run)");
        }
        url
    }

    fn unique_project() -> String {
        format!("unit-{}", uuid::Uuid::new_v4().simple())
    }

    fn open(url: &str, project: &str, command: &str) -> PostgresState {
        PostgresState::open(url, project, Actor::current(command)).expect("the test database opens")
    }

    #[test]
    fn postgres_state_round_trips_with_history_and_refuses_older_writes() {
        let Some(url) = database() else { return };
        let project = unique_project();
        let backend = open(&url, &project, "monform apply");
        // Opening again finds the schema up to date.
        drop(open(&url, &project, "monform plan"));
        let mut state = backend.load(&project).unwrap();
        assert_eq!((state.serial, state.resources.len()), (0, 0));
        state.serial = 1;
        state.resources.insert("checks.a".into(), entry("1"));
        backend.save(&state).unwrap();
        state.serial = 2;
        state.resources.insert("groups.g".into(), entry("2"));
        backend.save(&state).unwrap();

        let other = open(&url, &project, "monform state rm");
        assert_eq!(
            other.load(&project).unwrap(),
            state,
            "another runner reads the same state"
        );
        assert!(matches!(other.load("someone-else"), Ok(s) if s.serial == 0));
        let history = other.history(&project, 10).unwrap().unwrap();
        let serials: Vec<u64> = history.iter().map(|h| h.serial).collect();
        assert_eq!(serials, [2, 1]);
        assert_eq!(history[0].command, "monform apply");
        assert_eq!(history[0].changes, "+groups.g");
        assert_eq!(history[1].changes, "+checks.a");
        assert!(history[0].applied_by.contains('@'));
        assert_eq!(history[0].applied_at.len(), 20, "{}", history[0].applied_at);

        // A write based on an older state is refused, whoever makes it.
        let mut stale = state.clone();
        stale.resources.clear();
        let refused = other.save(&stale).unwrap_err().to_string();
        assert!(refused.contains("refusing to overwrite a newer state"), "{refused}");
        assert_eq!(backend.load(&project).unwrap(), state);
        stale.serial = 3;
        other.save(&stale).unwrap();
        assert_eq!(
            other.history(&project, 1).unwrap().unwrap()[0].changes,
            "-checks.a -groups.g"
        );
    }

    #[test]
    fn postgres_history_keeps_bodies_of_the_latest_serials_only() {
        let Some(url) = database() else { return };
        let project = unique_project();
        let backend = open(&url, &project, "monform apply");
        let mut state = backend.load(&project).unwrap();
        for serial in 1..=(HISTORY_BODIES as u64 + 5) {
            state.serial = serial;
            backend.save(&state).unwrap();
        }
        let inner = &backend.inner;
        let (rows, bodies): (i64, i64) = inner.block(async {
            let row = query("SELECT count(*), count(body) FROM monform_state_history WHERE project = $1")
                .bind(&project)
                .fetch_one(&inner.pool)
                .await
                .unwrap();
            (row.get(0), row.get(1))
        });
        assert_eq!((rows, bodies), (HISTORY_BODIES + 5, HISTORY_BODIES));
    }

    #[test]
    fn postgres_lock_is_exclusive_names_its_holder_and_is_released_on_drop() {
        let Some(url) = database() else { return };
        let project = unique_project();
        let first = open(&url, &project, "monform apply");
        let second = open(&url, &project, "monform apply");
        let guard = first.lock("monform apply").unwrap();
        assert!(guard.took_over.is_none());
        let Err(LockError::Held(holder)) = second.lock("monform destroy") else {
            panic!("the second lock was taken")
        };
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.command, "monform apply");
        assert_eq!(holder.host, host_name());
        let message = LockError::Held(holder).to_string();
        assert!(
            message.contains("another monform is applying this project"),
            "{message}"
        );
        // Another project is not affected.
        let elsewhere = open(&url, &unique_project(), "monform apply");
        drop(elsewhere.lock("monform apply").unwrap());
        drop(guard);
        let again = second.lock("monform destroy").unwrap();
        assert!(again.took_over.is_none(), "the first holder's row was removed");
        drop(again);

        // A holder that died keeps its row but not its lock: taken over.
        let inner = &first.inner;
        inner.block(async {
            query(
                "INSERT INTO monform_locks (project, pid, host, started_at, command, session_pid)
                 VALUES ($1, 4242, 'gone-runner', '2026-01-01T00:00:00Z', 'monform apply', 0)",
            )
            .bind(&project)
            .execute(&inner.pool)
            .await
            .unwrap();
        });
        let taken = first.lock("monform apply").unwrap();
        assert_eq!(taken.took_over.as_ref().map(|h| h.host.as_str()), Some("gone-runner"));
    }

    #[test]
    fn postgres_errors_never_show_the_password() {
        let Some(url) = database() else { return };
        let Some((start, rest)) = url.split_once("://") else {
            return;
        };
        let Some((user_info, host)) = rest.rsplit_once('@') else {
            return;
        };
        let user = user_info.split(':').next().unwrap_or(user_info);
        let wrong = format!("{start}://{user}:Wr0ng-Pa55-xyz@{host}");
        let error = PostgresState::open(&wrong, "p", Actor::current("monform plan"))
            .err()
            .expect("a wrong password is refused")
            .to_string();
        assert!(!error.contains("Wr0ng-Pa55-xyz"), "{error}");
        assert!(error.contains(":***@"), "{error}");
    }
}
