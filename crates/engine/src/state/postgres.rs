//! The PostgreSQL state backend, for teams whose applies run on many
//! machines (design decision 2). `[state] backend = "postgres"`; the URL
//! comes from `MONFORM_STATE_URL` and its password is never shown: every
//! message names the URL with the password as `***`.
//!
//! Tables, created and migrated by monform on first use (one advisory
//! transaction lock serialises concurrent first uses):
//!
//! - `monform_state`: one row per project, its serial and the rest of the
//!   state's header (salt, format version) as `jsonb`;
//! - `monform_state_resources`: one row per entry (`rows`);
//! - `monform_state_history`: one row per write (serial, when, who, command,
//!   what changed), with what the write changed (a `Delta`) for the last
//!   [`HISTORY_BODIES`] serials;
//! - `monform_locks`: who holds a project's apply lock.
//!
//! Every write is one transaction: the header row (only over the serial it
//! started from, so two writers can never overwrite each other silently),
//! the rows of the entries it changed, and its history row. An apply
//! writes each batch of completed changes so (`RowWriter`); a whole `save`
//! (`state rm`, `import`...) writes what differs from the stored state. The apply lock is a session-level
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

use sqlx_core::connection::Connection;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};

use super::{Delta, HistoryEntry, State, StateBackend, StateError, StateWriter};

mod rows;
use crate::lock::{Holder, LockError, LockGuard, host_name};

/// The first key of every advisory lock monform takes (`mfrm`), so its locks
/// never collide with another application's one-key locks.
const LOCK_NAMESPACE: i32 = 0x6d66_726d;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// History rows keep what their write changed for this many of the latest
/// serials; older rows keep who, when, the command and the addresses.
pub const HISTORY_BODIES: i64 = 100;

/// The schema, one list of statements per version. Never edit a released
/// version: add one.
const MIGRATIONS: &[&[&str]] = &[VERSION_1, VERSION_2];

const VERSION_1: &[&str] = &[
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
];

/// One row per entry, so a write touches only what changed. Each project's
/// entries move out of its body into rows; history rows keep their bodies
/// as they were (whole states), newer ones hold what their write changed.
const VERSION_2: &[&str] = &[
    "CREATE TABLE monform_state_resources (
        project text NOT NULL,
        address text NOT NULL,
        entry   jsonb NOT NULL,
        serial  bigint NOT NULL,
        PRIMARY KEY (project, address)
    )",
    "INSERT INTO monform_state_resources (project, address, entry, serial)
     SELECT s.project, r.key, r.value, s.serial
     FROM monform_state s, jsonb_each(coalesce(s.body->'resources', '{}'::jsonb)) AS r",
    "UPDATE monform_state SET body = body - 'resources'",
];

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
        let stored = inner.block(async {
            let fail = |e| inner.error("cannot read", e);
            let mut tx = inner.pool.begin().await.map_err(fail)?;
            // The header and the rows of one moment.
            query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
            let stored = rows::read(&mut tx, project).await.map_err(fail)?;
            tx.commit().await.map_err(fail)?;
            Ok::<_, StateError>(stored)
        })?;
        let Some(stored) = stored else {
            return Ok(State::new(project));
        };
        let state = rows::assemble(stored).map_err(|detail| StateError::Corrupt {
            path: format!("{} (project {project})", inner.location),
            detail,
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

    /// Writes what differs from the stored state: the rows of the entries
    /// that changed, the header, a history row.
    fn save(&self, state: &State) -> Result<(), StateError> {
        let inner = &self.inner;
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
                (None, _) => State::new(&state.project),
                (Some(current), Some(last)) if last.serial as i64 == current => last,
                (Some(_), _) => {
                    let stored = rows::read(&mut tx, &state.project).await.map_err(fail)?;
                    stored
                        .and_then(|s| rows::assemble(s).ok())
                        .unwrap_or_else(|| State::new(&state.project))
                }
            };
            let delta = Delta::between(&previous, state);
            let changes = rows::summarize(delta.describe(&|a| previous.resources.contains_key(a)));
            let write = rows::Write {
                state_header: rows::header(state),
                project: &state.project,
                expected: current,
                delta: &delta,
                by: &self.actor.by,
                command: &self.actor.command,
                changes,
            };
            rows::write(&mut tx, write)
                .await
                .map_err(|e| rows::refused(e, || conflict(inner, serial, serial), fail))?;
            tx.commit().await.map_err(fail)
        })?;
        self.remember(state);
        Ok(())
    }

    fn writer(&self, state: &State) -> Result<Box<dyn StateWriter>, StateError> {
        Ok(Box::new(RowWriter {
            inner: self.inner.clone(),
            actor: self.actor.clone(),
            header: State {
                version: state.version,
                serial: state.serial,
                project: state.project.clone(),
                salt: state.salt.clone(),
                resources: Default::default(),
            },
            // Where the state row is when the apply starts (it has none when
            // the load found none).
            stored: self.last.lock().is_ok_and(|l| l.is_some()).then_some(state.serial),
            known: state.resources.keys().cloned().collect(),
        }))
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

/// An apply's writer: each batch is one transaction writing the rows of
/// the entries it changed, the header's serial and a history row.
struct RowWriter {
    inner: Arc<Inner>,
    actor: Actor,
    /// The state's header (no entries), its serial the last written.
    header: State,
    /// The serial stored now; `None` while the project has no state row.
    stored: Option<u64>,
    /// The addresses in the state, to tell `+` from `~` in the history.
    known: std::collections::HashSet<String>,
}

impl StateWriter for RowWriter {
    fn write(&mut self, changes: &[Delta]) -> Result<(), StateError> {
        let Some((first, rest)) = changes.split_first() else {
            return Ok(());
        };
        let mut delta = first.clone();
        rest.iter().for_each(|next| delta.merge(next));
        self.header.serial = delta.serial;
        let inner = &self.inner;
        let expected = self.stored.map(|s| s as i64);
        let changes = rows::summarize(delta.describe(&|a| self.known.contains(a)));
        let write = rows::Write {
            state_header: rows::header(&self.header),
            project: &self.header.project,
            expected,
            delta: &delta,
            by: &self.actor.by,
            command: &self.actor.command,
            changes,
        };
        inner.block(async {
            let fail = |e| inner.error("cannot write", e);
            let mut tx = inner.pool.begin().await.map_err(fail)?;
            let moved = || {
                inner.error(
                    "refusing to overwrite a newer state",
                    "another monform changed it during this apply; plan again",
                )
            };
            rows::write(&mut tx, write)
                .await
                .map_err(|e| rows::refused(e, moved, fail))?;
            tx.commit().await.map_err(fail)
        })?;
        self.stored = Some(delta.serial);
        for address in &delta.remove {
            self.known.remove(address);
        }
        self.known.extend(delta.set.into_keys());
        Ok(())
    }

    /// Every change is in its rows already.
    fn finish(self: Box<Self>, _: &State) -> Result<(), StateError> {
        Ok(())
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
        let describe = |before: &State, after: &State| {
            let known = |a: &str| before.resources.contains_key(a);
            rows::summarize(Delta::between(before, after).describe(&known))
        };
        assert_eq!(describe(&before, &after), "~checks.b +groups.c -checks.a");
        assert_eq!(describe(&State::new("p"), &before), "+checks.a +checks.b");
        let mut many = State::new("p");
        for i in 0..25 {
            many.resources.insert(format!("checks.c{i:02}"), entry("1"));
        }
        assert!(describe(&State::new("p"), &many).ends_with("and 5 more"));
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

    fn delta(serial: u64, remove: &[&str], set: &[(&str, &str)]) -> Delta {
        Delta {
            serial,
            remove: remove.iter().map(|a| a.to_string()).collect(),
            set: set.iter().map(|(a, id)| (a.to_string(), entry(id))).collect(),
        }
    }

    /// How many entry rows the project has, and the serials that wrote them.
    fn rows_of(backend: &PostgresState, project: &str) -> Vec<(String, i64)> {
        let inner = &backend.inner;
        inner.block(async {
            query("SELECT address, serial FROM monform_state_resources WHERE project = $1 ORDER BY address")
                .bind(project)
                .fetch_all(&inner.pool)
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect()
        })
    }

    #[test]
    fn postgres_apply_writes_only_the_rows_of_what_changed() {
        let Some(url) = database() else { return };
        let project = unique_project();
        let backend = open(&url, &project, "monform apply");
        let mut state = backend.load(&project).unwrap();
        state.serial = 1;
        state.resources.insert("checks.a".into(), entry("1"));
        state.resources.insert("checks.b".into(), entry("2"));
        backend.save(&state).unwrap();

        let mut writer = backend.writer(&state).unwrap();
        let batches = [
            vec![delta(2, &[], &[("checks.c", "3")])],
            vec![delta(3, &["checks.a"], &[]), delta(4, &[], &[("checks.b", "4")])],
        ];
        for batch in &batches {
            writer.write(batch).unwrap();
            batch.iter().for_each(|d| state.apply(d));
        }
        writer.finish(&state).unwrap();
        assert_eq!(open(&url, &project, "monform plan").load(&project).unwrap(), state);
        // Each row carries the serial that last wrote it: b and c only were rewritten.
        let rows = rows_of(&backend, &project);
        assert_eq!(rows, [("checks.b".to_owned(), 4), ("checks.c".to_owned(), 2)]);
        let history = backend.history(&project, 10).unwrap().unwrap();
        let changes: Vec<(u64, &str)> = history.iter().map(|h| (h.serial, h.changes.as_str())).collect();
        assert_eq!(
            changes,
            [(4, "~checks.b -checks.a"), (2, "+checks.c"), (1, "+checks.a +checks.b")]
        );

        // A writer whose serial another one moved is refused.
        let mut late = backend
            .writer(&State {
                serial: 1,
                ..state.clone()
            })
            .unwrap();
        let other = open(&url, &project, "monform apply");
        let current = other.load(&project).unwrap();
        let mut ahead = other.writer(&current).unwrap();
        ahead.write(&[delta(5, &[], &[("checks.d", "5")])]).unwrap();
        let refused = late.write(&[delta(5, &[], &[("checks.e", "6")])]).unwrap_err();
        assert!(
            refused.to_string().contains("refusing to overwrite a newer state"),
            "{refused}"
        );
        assert!(!rows_of(&backend, &project).iter().any(|(a, _)| a == "checks.e"));
    }

    #[test]
    fn postgres_schema_1_is_migrated_without_loss() {
        let Some(url) = database() else { return };
        let schema = format!("m_{}", uuid::Uuid::new_v4().simple());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let sql = |statements: Vec<String>| {
            runtime.block_on(async {
                let mut connection = PgConnection::connect(&url).await.unwrap();
                for statement in statements {
                    query(&statement).execute(&mut connection).await.unwrap();
                }
                let _ = connection.close().await;
            })
        };
        let mut setup = vec![
            format!("CREATE SCHEMA {schema}"),
            format!("SET search_path TO {schema}"),
        ];
        setup.extend(VERSION_1.iter().map(|s| s.to_string()));
        let body = r#"{"version": 1, "serial": 7, "project": "old", "salt": "s4lt",
            "resources": {
                "checks.a": {"remoteId": "1", "version": "v1", "applied": "0123456789abcdef0123456789abcdef",
                             "managed": ["name", "frequency"]},
                "alertChannels.b": {"remoteId": "2", "applied": "ffffffffffffffffffffffffffffffff",
                                    "secrets": {"config.url": "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb"},
                                    "preventDestroy": true}
            }}"#;
        setup.extend([
            "CREATE TABLE monform_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())".into(),
            "INSERT INTO monform_schema_migrations (version) VALUES (1)".into(),
            format!("INSERT INTO monform_state (project, serial, body, updated_by) VALUES ('old', 7, '{body}', 'me@here')"),
            format!("INSERT INTO monform_state_history (project, serial, body, applied_by, command) VALUES ('old', 7, '{body}', 'me@here', 'monform apply')"),
        ]);
        sql(setup);
        let separator = if url.contains('?') { '&' } else { '?' };
        let in_schema = format!("{url}{separator}options=-c%20search_path%3D{schema}");
        let backend = open(&in_schema, "old", "monform plan");
        let state = backend.load("old").unwrap();
        let old: State = serde_json::from_str(body).unwrap();
        assert_eq!(
            state,
            old.clone().upgrade(),
            "every entry, fingerprints cut to 16 digits"
        );
        assert_eq!(
            state.resources["alertChannels.b"].secrets["config.url"],
            "aaaaaaaaaaaaaaaa"
        );
        assert_eq!(state.serial, 7);
        assert_eq!(rows_of(&backend, "old").len(), 2);
        assert_eq!(backend.history("old", 5).unwrap().unwrap()[0].serial, 7);
        // And it goes on from there.
        let mut writer = backend.writer(&state).unwrap();
        writer.write(&[delta(8, &["checks.a"], &[])]).unwrap();
        assert_eq!(backend.load("old").unwrap().resources.len(), 1);
        sql(vec![format!("DROP SCHEMA {schema} CASCADE")]);
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
