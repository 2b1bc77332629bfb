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

mod migrations;
mod rows;
mod url;
mod writer;
use migrations::MIGRATIONS;
use url::url_secrets;
pub use url::{redact_url, scrub_url_secrets};
use writer::RowWriter;

use crate::lock::{Holder, LockError, LockGuard, host_name};

/// The first key of every advisory lock monform takes (`mfrm`), so its locks
/// never collide with another application's one-key locks.
const LOCK_NAMESPACE: i32 = 0x6d66_726d;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// History rows keep what their write changed for this many of the latest
/// serials; older rows keep who, when, the command and the addresses.
pub const HISTORY_BODIES: i64 = 100;

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
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()));
        Actor::of_user(command, user)
    }

    /// The actor of `command` run by `user` (as the caller's environment
    /// names it; else this process's user from the system).
    pub fn of_user(command: &str, user: Option<String>) -> Actor {
        let user = user
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
                target: state.target.clone(),
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

    fn record_call(&self, project: &str, call: &crate::state::CallRecord) -> Result<(), StateError> {
        self.insert_call(project, call)
    }

    fn calls(&self, project: &str, limit: usize) -> Result<Vec<crate::state::CallRecord>, StateError> {
        self.read_calls(project, limit)
    }
}

impl PostgresState {
    fn insert_call(&self, project: &str, call: &crate::state::CallRecord) -> Result<(), StateError> {
        let inner = &self.inner;
        inner.block(async {
            query(
                "INSERT INTO monform_calls (project, by_user, client, tool, plan_hash, outcome)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(project)
            .bind(&call.by)
            .bind(&call.client)
            .bind(&call.tool)
            .bind(&call.plan_hash)
            .bind(&call.outcome)
            .execute(&inner.pool)
            .await
            .map(|_| ())
            .map_err(|e| inner.error("cannot record the call", e))
        })
    }

    fn read_calls(&self, project: &str, limit: usize) -> Result<Vec<crate::state::CallRecord>, StateError> {
        let inner = &self.inner;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = inner.block(async {
            query(
                "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
                        by_user, client, tool, plan_hash, outcome
                 FROM monform_calls WHERE project = $1 ORDER BY at DESC LIMIT $2",
            )
            .bind(project)
            .bind(limit)
            .fetch_all(&inner.pool)
            .await
            .map_err(|e| inner.error("cannot read the calls", e))
        })?;
        rows.iter()
            .map(|row| {
                Ok(crate::state::CallRecord {
                    at: row.try_get(0)?,
                    by: row.try_get(1)?,
                    client: row.try_get(2)?,
                    tool: row.try_get(3)?,
                    plan_hash: row.try_get(4)?,
                    outcome: row.try_get(5)?,
                })
            })
            .collect::<Result<Vec<_>, sqlx_core::Error>>()
            .map_err(|e| inner.error("cannot read the calls", e))
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

#[cfg(test)]
mod tests;
