//! One apply at a time per project. The guard is the same for every state
//! backend; this module also has the local one: a lock file next to the
//! state, naming its holder. A lock left by a process that no longer exists
//! (on this host) is taken over with a warning. The PostgreSQL backend's
//! lock is in `state::postgres`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    pub host: String,
    pub started_at: String,
    pub command: String,
}

impl Holder {
    pub fn current(command: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            host: host_name(),
            started_at: chrono_like_now(),
            command: command.to_owned(),
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` (pid {} on {}, started {})",
            self.command, self.pid, self.host, self.started_at
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another monform is applying this project: {0}")]
    Held(Holder),
    #[error("cannot take the lock {path}: {source}")]
    Io { path: String, source: std::io::Error },
    /// The lock's store failed (a PostgreSQL error, password redacted).
    #[error("cannot take the lock: {0}")]
    Backend(String),
}

/// The project's apply lock, whatever the backend: held until dropped.
pub struct LockGuard {
    release: Option<Box<dyn FnOnce() + Send>>,
    /// A stale lock that was taken over, to warn about.
    pub took_over: Option<Holder>,
}

impl LockGuard {
    /// A lock that `release` gives back (called once, on drop).
    pub fn new(release: impl FnOnce() + Send + 'static, took_over: Option<Holder>) -> LockGuard {
        LockGuard {
            release: Some(Box::new(release)),
            took_over,
        }
    }
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard").field("took_over", &self.took_over).finish()
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
    }
}

/// Takes the lock at `path`, or says who holds it.
pub fn acquire(path: &Path, command: &str) -> Result<LockGuard, LockError> {
    let io = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let me = Holder::current(command);
    let mut took_over = None;
    for _ in 0..3 {
        match create_with(path, &me) {
            Ok(()) => {
                let path: PathBuf = path.to_owned();
                return Ok(LockGuard::new(
                    move || {
                        let _ = std::fs::remove_file(path);
                    },
                    took_over,
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = std::fs::read_to_string(path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Holder>(&t).ok());
                match holder {
                    Some(holder) if is_alive(&holder) => return Err(LockError::Held(holder)),
                    stale => {
                        // The holder is gone (or the file is unreadable,
                        // which a lock made whole never is): take over.
                        let _ = std::fs::remove_file(path);
                        took_over = stale;
                    }
                }
            }
            Err(e) => return Err(io(e)),
        }
    }
    Err(io(std::io::Error::other("the lock keeps changing hands")))
}

/// Creates the lock file at `path` with its holder already in it, or fails
/// with `AlreadyExists`: the holder is written to a file of this process
/// first and linked into place, so nobody ever reads a lock half written
/// (and takes an empty one for a stale one).
fn create_with(path: &Path, holder: &Holder) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("lock");
    let draft = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&draft)?;
        file.write_all(serde_json::to_string(holder).unwrap_or_default().as_bytes())?;
        file.sync_all()?;
        std::fs::hard_link(&draft, path)
    })();
    let _ = std::fs::remove_file(&draft);
    written
}

/// A holder on another host cannot be checked: it counts as alive.
fn is_alive(holder: &Holder) -> bool {
    if holder.host != host_name() {
        return true;
    }
    if holder.pid == std::process::id() {
        return true;
    }
    // Without /proc there is no way to tell: assume the holder is alive.
    !Path::new("/proc").is_dir() || Path::new(&format!("/proc/{}", holder.pid)).exists()
}

pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown host".to_owned())
}

fn chrono_like_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = seconds / 86_400;
    let (h, m, s) = ((seconds % 86_400) / 3600, (seconds % 3600) / 60, seconds % 60);
    // Civil date from days since 1970 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_and_stale_locks_are_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let first = acquire(&path, "monform apply").unwrap();
        let Err(LockError::Held(holder)) = acquire(&path, "monform apply") else {
            panic!("second lock taken")
        };
        assert_eq!(holder.pid, std::process::id());
        drop(first);
        // A lock of a process that does not exist.
        let stale = Holder {
            pid: u32::MAX - 1,
            ..Holder::current("monform apply")
        };
        std::fs::write(&path, serde_json::to_string(&stale).unwrap()).unwrap();
        let taken = acquire(&path, "monform apply").unwrap();
        assert_eq!(taken.took_over.as_ref().map(|h| h.pid), Some(u32::MAX - 1));
    }

    #[test]
    fn a_lock_is_never_seen_without_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let guard = acquire(&path, "monform apply").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(serde_json::from_str::<Holder>(&text).is_ok(), "{text:?}");
        // Nothing but the lock is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["lock"]);
        drop(guard);
        assert!(!path.exists());
        // Taken and given back in a loop while read: never read empty.
        let taker = {
            let path = path.clone();
            std::thread::spawn(move || {
                for _ in 0..300 {
                    drop(acquire(&path, "monform apply").unwrap());
                }
            })
        };
        while !taker.is_finished() {
            if let Ok(text) = std::fs::read_to_string(&path) {
                assert!(serde_json::from_str::<Holder>(&text).is_ok(), "read {text:?}");
            }
        }
        taker.join().unwrap();
    }

    #[test]
    fn dates_are_iso() {
        let now = chrono_like_now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20"));
    }
}
