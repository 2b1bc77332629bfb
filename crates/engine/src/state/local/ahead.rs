//! The local state read ahead: a plan opens the project and starts reading
//! its state on a thread of its own, while the files load (at 100,000
//! checks each takes most of a second of one core). The first load takes
//! what was read if the snapshot and the journal are still the files read
//! (the same file, length and modification time: every write monform makes
//! replaces the snapshot or changes the journal's length); otherwise, or
//! if the read failed, it reads again, so a load gives what it always did
//! and says what is wrong in the same words.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::SystemTime;

use super::{LocalState, State, StateError};

/// What a file was when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stamp {
    Missing,
    /// Its metadata could not be read: never taken for unchanged.
    Unknown,
    Seen {
        len: u64,
        modified: Option<SystemTime>,
        /// Device and inode: a snapshot is replaced by a rename.
        id: (u64, u64),
    },
}

/// The snapshot's and the journal's [`Stamp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamps {
    pub snapshot: Stamp,
    pub journal: Stamp,
}

impl Stamps {
    /// Whether the files are as they were when `self` was taken.
    fn unchanged(&self, now: &Stamps) -> bool {
        let same = |then: &Stamp, now: &Stamp| *then != Stamp::Unknown && then == now;
        same(&self.snapshot, &now.snapshot) && same(&self.journal, &now.journal)
    }

    fn of(state: &LocalState) -> Stamps {
        Stamps {
            snapshot: at_path(&state.path),
            journal: at_path(&state.journal),
        }
    }
}

fn seen(metadata: &Metadata) -> Stamp {
    Stamp::Seen {
        len: metadata.len(),
        modified: metadata.modified().ok(),
        id: file_id(metadata),
    }
}

#[cfg(unix)]
fn file_id(metadata: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn file_id(_: &Metadata) -> (u64, u64) {
    (0, 0)
}

/// The stamp of an open file, taken before it is read.
pub(super) fn stamp_of(file: &File) -> Stamp {
    file.metadata().map_or(Stamp::Unknown, |m| seen(&m))
}

fn at_path(path: &Path) -> Stamp {
    match std::fs::metadata(path) {
        Ok(metadata) => seen(&metadata),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Stamp::Missing,
        Err(_) => Stamp::Unknown,
    }
}

/// A whole file and its stamp (taken first); `None` when it does not exist.
pub(super) fn read_stamped(path: &Path) -> std::io::Result<(Option<Vec<u8>>, Stamp)> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, Stamp::Missing)),
        Err(e) => return Err(e),
    };
    let stamp = stamp_of(&file);
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok((Some(bytes), stamp))
}

/// A read under way: the project it is for and its thread.
pub(super) struct Ahead {
    project: String,
    thread: JoinHandle<Result<(State, Stamps), StateError>>,
}

impl LocalState {
    /// Starts reading the state of `project` on a thread of its own; the
    /// first [`load`](super::StateBackend::load) of `project` takes it (see
    /// the module's comment). Nothing is said here: a problem is the
    /// load's to report, in its turn.
    pub fn read_ahead(&self, project: &str) {
        let reader = LocalState::at(self.path.clone(), self.journal.clone(), self.lock.clone());
        let owned = project.to_owned();
        let thread = std::thread::Builder::new()
            .name("monform-state".into())
            .spawn(move || reader.load_stamped(&owned));
        // Without a thread the load reads it, as before.
        if let Ok(thread) = thread {
            let ahead = Ahead {
                project: project.to_owned(),
                thread,
            };
            *self.ahead.lock().unwrap_or_else(|p| p.into_inner()) = Some(ahead);
        }
    }

    /// The state read ahead for `project`, if the files are still those
    /// it was read from.
    pub(super) fn take_ahead(&self, project: &str) -> Option<State> {
        let ahead = self.ahead.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        let (state, stamps) = ahead.thread.join().ok()?.ok()?;
        (ahead.project == project && stamps.unchanged(&Stamps::of(self))).then_some(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Delta, StateBackend, test_entry};
    use std::collections::BTreeMap;

    fn saved(dir: &Path, entries: usize) -> (LocalState, State) {
        let backend = LocalState::new(dir);
        let mut state = State::new("acme");
        for i in 0..entries {
            state
                .resources
                .insert(format!("checks.c{i}"), test_entry(&i.to_string(), &["name"]));
        }
        backend.save(&state).unwrap();
        (backend, state)
    }

    /// Waits for the read ahead to end: what follows surely comes after it.
    fn read(backend: &LocalState) {
        let running = || {
            let ahead = backend.ahead.lock().unwrap();
            ahead.as_ref().is_some_and(|a| !a.thread.is_finished())
        };
        while running() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_state_read_ahead_is_the_state_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let (backend, state) = saved(dir.path(), 2000);
        backend.read_ahead("acme");
        assert_eq!(backend.load("acme").unwrap(), state);
        assert!(backend.ahead.lock().unwrap().is_none(), "taken by the first load");
        assert_eq!(backend.load("acme").unwrap(), state, "later loads read the files");
        // No state yet: a fresh one, as a load gives.
        let empty = tempfile::tempdir().unwrap();
        let fresh = LocalState::new(empty.path());
        fresh.read_ahead("acme");
        let read = fresh.load("acme").unwrap();
        assert_eq!((read.serial, read.resources.len()), (0, 0));
    }

    /// Written after the read began (an apply in another terminal): the
    /// load reads the files again.
    #[test]
    fn a_change_after_the_read_ahead_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let (backend, mut state) = saved(dir.path(), 10);
        backend.read_ahead("acme");
        read(&backend);
        let delta = Delta {
            target: None,
            serial: 1,
            remove: Vec::new(),
            set: BTreeMap::from([("checks.new".to_owned(), test_entry("n", &["name"]))]),
        };
        let mut writer = backend.writer(&state).unwrap();
        writer.write(std::slice::from_ref(&delta)).unwrap();
        drop(writer);
        state.apply(&delta);
        assert_eq!(backend.load("acme").unwrap(), state, "the journal appended is read");

        backend.read_ahead("acme");
        read(&backend);
        state.serial = 5;
        state.resources.remove("checks.c0");
        backend.save(&state).unwrap();
        assert_eq!(backend.load("acme").unwrap(), state, "the snapshot replaced is read");
    }

    /// A problem is the load's, in the same words; another project's read
    /// is not taken.
    #[test]
    fn a_problem_read_ahead_is_reported_by_the_load() {
        let dir = tempfile::tempdir().unwrap();
        let (backend, _) = saved(dir.path(), 3);
        backend.read_ahead("acme");
        let other = backend.load("other").unwrap_err().to_string();
        assert_eq!(other, backend.load("other").unwrap_err().to_string());
        assert!(other.contains("acme"), "{other}");
        std::fs::write(backend.path(), b"{\"version\":2,\"serial\":").unwrap();
        backend.read_ahead("acme");
        let corrupt = backend.load("acme").unwrap_err().to_string();
        assert_eq!(corrupt, backend.load("acme").unwrap_err().to_string());
    }
}
