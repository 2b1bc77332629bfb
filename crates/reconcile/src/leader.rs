//! One reconciler of a project at a time (issue 30 item 5). With the local
//! state, an exclusive `flock` on `.monform/reconcile.<project>.lock`; with
//! the PostgreSQL state, a session advisory lock on a connection of the
//! leader's own: PostgreSQL releases it when that connection ends, so a
//! leader killed with SIGKILL hands over as soon as its socket closes, and
//! the replicas waiting for it (polling each second) take it. Neither is a
//! protocol of monform's own. The PostgreSQL leader also keeps its drift
//! memory there (one row per project), so a new leader does not report a
//! drift the old one already did.

use std::path::Path;
use std::time::Duration;

use monform_engine::ops;
use sqlx_core::connection::Connection;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgConnectOptions, PgConnection};

use crate::report::{Memory, MemoryStore};

/// The first key of the leadership lock (`mfrc`): not the apply lock's
/// (`mfrm`), which the leader takes too, for each apply.
const LEADER_NAMESPACE: i32 = 0x6d66_7263;

/// How often a waiting replica tries again.
pub const POLL: Duration = Duration::from_secs(1);

/// Leadership held: dropping it lets another replica lead.
pub enum Leadership {
    /// The open lock file (the `flock` goes with it).
    Local(std::fs::File),
    Postgres(PgConnection),
}

/// Tries to lead with the local lock file; `Ok(None)` when another
/// reconciler of the project holds it.
pub fn try_local(dir: &Path, project: &str) -> Result<Option<Leadership>, String> {
    use std::os::fd::AsRawFd;
    let folder = dir.join(".monform");
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let path = folder.join(format!("reconcile.{project}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns; no memory is shared.
    let got = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    Ok(got.then_some(Leadership::Local(file)))
}

/// A connection for leadership and the drift memory.
pub async fn connect(url: &str) -> Result<PgConnection, String> {
    let options: PgConnectOptions = url
        .parse::<PgConnectOptions>()
        .map_err(|e| format!("MONFORM_STATE_URL is not a valid PostgreSQL URL: {e}"))?
        .application_name("monform reconcile");
    let connecting = PgConnection::connect_with(&options);
    let mut connection = tokio::time::timeout(Duration::from_secs(15), connecting)
        .await
        .map_err(|_| "cannot connect to PostgreSQL: no answer in 15 s".to_owned())?
        .map_err(|e| {
            format!(
                "cannot connect to PostgreSQL: {}",
                ops::scrub_url_secrets(&e.to_string(), url)
            )
        })?;
    query("CREATE TABLE IF NOT EXISTS monform_reconcile_memory (project text PRIMARY KEY, memory jsonb NOT NULL)")
        .execute(&mut connection)
        .await
        .map_err(|e| format!("cannot create monform_reconcile_memory: {e}"))?;
    Ok(connection)
}

/// Tries to lead over `connection`; gives it back when another leads.
pub async fn try_postgres(
    mut connection: PgConnection,
    project: &str,
) -> Result<Result<Leadership, PgConnection>, String> {
    let got: bool = query("SELECT pg_try_advisory_lock($1, hashtext($2))")
        .bind(LEADER_NAMESPACE)
        .bind(project)
        .fetch_one(&mut connection)
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| format!("cannot take the leadership lock: {e}"))?;
    Ok(if got {
        Ok(Leadership::Postgres(connection))
    } else {
        Err(connection)
    })
}

impl Leadership {
    /// Whether it is still held: a PostgreSQL connection that broke lost it.
    pub async fn holds(&mut self) -> bool {
        match self {
            Leadership::Local(_) => true,
            Leadership::Postgres(connection) => connection.ping().await.is_ok(),
        }
    }

    pub async fn load_memory(&mut self, project: &str, local: &dyn MemoryStore) -> Result<Memory, String> {
        match self {
            Leadership::Local(_) => local.load(),
            Leadership::Postgres(connection) => {
                let row = query("SELECT memory::text FROM monform_reconcile_memory WHERE project = $1")
                    .bind(project)
                    .fetch_optional(&mut *connection)
                    .await
                    .map_err(|e| format!("cannot read the drift memory: {e}"))?;
                match row {
                    Some(row) => {
                        let text: String = row.try_get(0).map_err(|e| e.to_string())?;
                        serde_json::from_str(&text).map_err(|e| e.to_string())
                    }
                    None => Ok(Memory::default()),
                }
            }
        }
    }

    pub async fn save_memory(&mut self, project: &str, memory: &Memory, local: &dyn MemoryStore) -> Result<(), String> {
        match self {
            Leadership::Local(_) => local.save(memory),
            Leadership::Postgres(connection) => {
                let text = serde_json::to_string(memory).map_err(|e| e.to_string())?;
                query(
                    "INSERT INTO monform_reconcile_memory (project, memory) VALUES ($1, $2::jsonb) \
                     ON CONFLICT (project) DO UPDATE SET memory = EXCLUDED.memory",
                )
                .bind(project)
                .bind(text)
                .execute(&mut *connection)
                .await
                .map(|_| ())
                .map_err(|e| format!("cannot write the drift memory: {e}"))
            }
        }
    }
}
