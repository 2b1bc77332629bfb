//! The local backend: `.monform/state.json`, a snapshot (`format`), and
//! beside it `.monform/state.journal`, the changes recorded since
//! (`journal`). An apply appends each batch of changes to the journal with
//! one fsync and folds the journal into the snapshot at its end (temp file,
//! fsync, rename, then the journal removed) when the snapshot is small or
//! the journal has grown to a quarter of it: a small change to a large
//! project writes in proportion to the change, not a 40 MB snapshot. An
//! apply that finds a journal appends to it, cutting off a record a crash
//! left half-written. Reading replays the journal's records newer than the
//! snapshot's serial, so a read never needs a fold.
//!
//! A plan's state may be read ahead, on a thread of its own while the
//! files load (`ahead.rs`): the first load takes it when the files are
//! still the ones read.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Delta, State, StateBackend, StateError, StateWriter, format, journal};

mod ahead;

use ahead::{Ahead, Stamps};

/// A file's content, `None` when it does not exist.
type Bytes = Option<Vec<u8>>;

/// Snapshots smaller than this are rewritten at the end of every apply
/// that changed something (it costs little, and the files stay one).
const FOLD_ALWAYS_BELOW: u64 = 1 << 20;

/// `.monform/state.json` of the project, its journal and its lock
/// (`.monform/state.<env>.json`, `state.<env>.journal` and `lock.<env>`
/// for an environment).
pub struct LocalState {
    path: PathBuf,
    journal: PathBuf,
    lock: PathBuf,
    /// The state being read ahead ([`LocalState::read_ahead`]).
    ahead: Mutex<Option<Ahead>>,
}

impl LocalState {
    pub fn new(project_dir: &Path) -> LocalState {
        let dir = project_dir.join(".monform");
        LocalState::at(dir.join("state.json"), dir.join("state.journal"), dir.join("lock"))
    }

    /// The state of one environment: files and a lock of its own.
    pub fn for_environment(project_dir: &Path, environment: &str) -> LocalState {
        let dir = project_dir.join(".monform");
        LocalState::at(
            dir.join(format!("state.{environment}.json")),
            dir.join(format!("state.{environment}.journal")),
            dir.join(format!("lock.{environment}")),
        )
    }

    fn at(path: PathBuf, journal: PathBuf, lock: PathBuf) -> LocalState {
        LocalState {
            path,
            journal,
            lock,
            ahead: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `.monform/calls.jsonl` (`calls.<env>.jsonl`): the calls agents made
    /// through `monform mcp`, the local state's history of them.
    pub fn calls_path(&self) -> PathBuf {
        let name = self.path.file_name().and_then(|n| n.to_str()).unwrap_or("state.json");
        let calls = format!("calls{}l", name.strip_prefix("state").unwrap_or(".json"));
        self.path.with_file_name(calls)
    }

    /// `.monform/state.journal` (`state.<env>.journal`).
    pub fn journal_path(&self) -> PathBuf {
        self.journal.clone()
    }

    /// The snapshot, made the state as it is read (`format::read`), and
    /// the journal, read once; `None` for a missing file. With what the
    /// files were before they were read ([`Stamps`]): a change after it is
    /// seen by a later load.
    fn read(&self) -> Result<(Option<State>, Bytes, Stamps), StateError> {
        // A fold may replace the snapshot and remove the journal between
        // the two reads: the snapshot is read through a handle and, if the
        // path names another file by the end, both are read again.
        for _ in 0..5 {
            let (snapshot, opened, snapshot_stamp) = match File::open(&self.path) {
                Ok(mut file) => {
                    let stamp = ahead::stamp_of(&file);
                    let state = format::read(&mut file, &self.path.display().to_string())?;
                    (Some(state), Some(file), stamp)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None, ahead::Stamp::Missing),
                Err(e) => return Err(self.read_error(&self.path, e)),
            };
            let journal_path = self.journal_path();
            let (journal, journal_stamp) = match ahead::read_stamped(&journal_path) {
                Ok(read) => read,
                Err(e) => return Err(self.read_error(&journal_path, e)),
            };
            if same_file(opened.as_ref(), &self.path) {
                let stamps = Stamps {
                    snapshot: snapshot_stamp,
                    journal: journal_stamp,
                };
                return Ok((snapshot, journal, stamps));
            }
        }
        Err(self.read_error(&self.path, std::io::Error::other("it kept changing while being read")))
    }

    /// The state as [`StateBackend::load`] reads it, with the files' [`Stamps`].
    fn load_stamped(&self, project: &str) -> Result<(State, Stamps), StateError> {
        let (snapshot, journal, stamps) = self.read()?;
        let path = self.path.display().to_string();
        let mut state = snapshot.unwrap_or_else(|| State::new(project));
        if state.project != project {
            return Err(StateError::Project {
                path,
                found: state.project,
                expected: project.to_owned(),
            });
        }
        if let Some(bytes) = journal {
            let base = state.serial;
            let journal_path = self.journal_path().display().to_string();
            for delta in journal::decode(&bytes, &journal_path)? {
                if delta.serial > base {
                    state.apply(&delta);
                }
            }
        }
        Ok((state, stamps))
    }

    fn read_error(&self, path: &Path, source: std::io::Error) -> StateError {
        StateError::Read {
            path: path.display().to_string(),
            source,
        }
    }

    fn write_error(&self, path: &Path) -> impl Fn(std::io::Error) -> StateError {
        let path = path.display().to_string();
        move |source| StateError::Write {
            path: path.clone(),
            source,
        }
    }

    /// Whether a journal of `journal_len` bytes is folded into the snapshot
    /// now: always for a small snapshot, else once the journal holds a
    /// quarter of its bytes (reads replay it, so waiting loses nothing).
    fn should_fold(&self, journal_len: u64) -> bool {
        let snapshot = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        snapshot < FOLD_ALWAYS_BELOW || journal_len.saturating_mul(4) >= snapshot
    }

    /// Writes the whole state as the snapshot (temp file, fsync, rename),
    /// then removes the journal it supersedes.
    fn write_snapshot(&self, state: &State) -> Result<(), StateError> {
        let write = self.write_error(&self.path);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(&write)?;
        // A crash leaves either the old snapshot or the new one.
        crate::durable::write_with(&self.path, |out| format::write(state, out)).map_err(&write)?;
        // The journal's records are all in the snapshot now (and, should its
        // removal not last, at or below its serial: skipped when read).
        match std::fs::remove_file(self.journal_path()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.write_error(&self.journal_path())(e)),
        }
        crate::durable::sync_dir(dir);
        Ok(())
    }
}

#[cfg(unix)]
fn same_file(opened: Option<&File>, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let now = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let then = opened.and_then(|f| f.metadata().ok()).map(|m| (m.dev(), m.ino()));
    now == then
}

#[cfg(not(unix))]
fn same_file(_: Option<&File>, _: &Path) -> bool {
    true
}

impl StateBackend for LocalState {
    fn load(&self, project: &str) -> Result<State, StateError> {
        if let Some(state) = self.take_ahead(project) {
            return Ok(state);
        }
        self.load_stamped(project).map(|(state, _)| state)
    }

    fn save(&self, state: &State) -> Result<(), StateError> {
        // As PostgreSQL does: a serial never goes down, so a save based on
        // a state read before another monform's write cannot undo it.
        let stored = self.load(&state.project)?.serial;
        if stored > state.serial {
            return Err(StateError::Newer {
                path: self.path.display().to_string(),
                stored,
                writing: state.serial,
            });
        }
        self.write_snapshot(state)
    }

    fn writer(&self, state: &State) -> Result<Box<dyn StateWriter>, StateError> {
        let backend = LocalState::at(self.path.clone(), self.journal.clone(), self.lock.clone());
        let journal = backend.journal_path();
        // Left by a crash or by an apply that did not fold: `state` (loaded
        // under the lock) holds its records. Appends must never follow a
        // torn record: fold, or cut the journal back to its whole records.
        if let Ok(bytes) = std::fs::read(&journal) {
            if backend.should_fold(bytes.len() as u64) {
                backend.write_snapshot(state)?;
            } else {
                let valid = journal::valid_len(&bytes);
                if valid < bytes.len() {
                    let write = backend.write_error(&journal);
                    let file = std::fs::OpenOptions::new().write(true).open(&journal).map_err(&write)?;
                    file.set_len(valid as u64).map_err(&write)?;
                    file.sync_all().map_err(&write)?;
                }
            }
        }
        let unborn = (!backend.path.exists()).then(|| state.clone());
        Ok(Box::new(LocalWriter {
            backend,
            journal: None,
            unborn,
            dirty: false,
            buffer: Vec::new(),
        }))
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn lock(&self, command: &str) -> Result<crate::lock::LockGuard, crate::lock::LockError> {
        crate::lock::acquire(&self.lock, command)
    }

    /// One JSON line appended to `.monform/calls.jsonl` (`calls.<env>.jsonl`),
    /// synced before it returns.
    fn record_call(&self, _project: &str, call: &crate::state::CallRecord) -> Result<(), StateError> {
        let path = self.calls_path();
        let write = self.write_error(&path);
        let mut line = serde_json::to_vec(call).map_err(|e| write(std::io::Error::other(e)))?;
        line.push(b'\n');
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(&write)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(&write)?;
        file.write_all(&line).map_err(&write)?;
        file.sync_data().map_err(&write)
    }

    fn calls(&self, _project: &str, limit: usize) -> Result<Vec<crate::state::CallRecord>, StateError> {
        let path = self.calls_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.read_error(&path, e)),
        };
        // A line torn by a crash is skipped, not an error.
        Ok(text
            .lines()
            .rev()
            .filter_map(|line| serde_json::from_str(line).ok())
            .take(limit)
            .collect())
    }
}

struct LocalWriter {
    backend: LocalState,
    /// The journal, open for appending once the first change comes.
    journal: Option<File>,
    /// The state as the apply found it while no snapshot exists: written
    /// before the first record, so the salt is never only in memory.
    unborn: Option<State>,
    /// Records were appended: the end folds them.
    dirty: bool,
    buffer: Vec<u8>,
}

impl StateWriter for LocalWriter {
    fn write(&mut self, changes: &[Delta]) -> Result<(), StateError> {
        if let Some(state) = self.unborn.take() {
            self.backend.write_snapshot(&state)?;
        }
        let path = self.backend.journal_path();
        let write = self.backend.write_error(&path);
        if self.journal.is_none() {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(&write)?;
            crate::durable::sync_dir(path.parent().unwrap_or(Path::new(".")));
            self.journal = Some(file);
        }
        self.buffer.clear();
        for delta in changes {
            journal::encode(delta, &mut self.buffer);
        }
        let file = self
            .journal
            .as_mut()
            .ok_or_else(|| write(std::io::Error::other("journal not open")))?;
        file.write_all(&self.buffer).map_err(&write)?;
        file.sync_data().map_err(&write)?;
        self.dirty = true;
        Ok(())
    }

    fn finish(self: Box<Self>, state: &State) -> Result<(), StateError> {
        let journal_len = self
            .journal
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len());
        if self.dirty && self.backend.should_fold(journal_len) {
            drop(self.journal);
            self.backend.write_snapshot(state)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{ResourceState, test_entry};
    use std::collections::BTreeMap;

    fn entry(id: &str) -> ResourceState {
        test_entry(id, &["name", "frequency"])
    }

    fn set(serial: u64, address: &str, id: &str) -> Delta {
        Delta {
            target: None,
            serial,
            remove: Vec::new(),
            set: BTreeMap::from([(address.to_owned(), entry(id))]),
        }
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(".monform"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn local_state_round_trips_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalState::new(dir.path());
        let mut state = backend.load("acme").unwrap();
        assert_eq!(state.serial, 0);
        state.serial = 3;
        state.resources.insert("checks.a".into(), entry("x"));
        backend.save(&state).unwrap();
        assert_eq!(backend.load("acme").unwrap(), state);
        assert!(matches!(backend.load("other"), Err(StateError::Project { .. })));
        assert_eq!(files(dir.path()), ["state.json"], "no temporary file is left behind");
    }

    /// A version 1 file as monform wrote it: pretty, every entry with its
    /// field names, 32-digit fingerprints.
    const VERSION_1: &str = r#"{
  "version": 1,
  "serial": 12,
  "project": "acme",
  "salt": "5f0c1e2d3b4a49788d6e7f8091a2b3c4",
  "resources": {
    "alertChannels.ops": {
      "remoteId": "17",
      "version": "2026-11-20T08:00:00.000Z",
      "applied": "00112233445566778899aabbccddeeff",
      "secrets": {
        "config.url": "ffeeddccbbaa99887766554433221100"
      },
      "preventDestroy": true,
      "managed": [
        "config",
        "type"
      ]
    },
    "checks.home": {
      "remoteId": "1c9f6a52-8a0e-4a43-9d0c-3f2b1f9a7e11",
      "version": "2026-11-20T08:00:01.000Z",
      "applied": "0123456789abcdef0123456789abcdef",
      "managed": [
        "checkType",
        "frequency",
        "name"
      ]
    },
    "checks.shop": {
      "remoteId": "2d0e7b63-9b1f-4b54-8e1d-4a3c2e0b8f22",
      "applied": "fedcba9876543210fedcba9876543210",
      "managed": [
        "checkType",
        "frequency",
        "name"
      ]
    },
    "variables.TOKEN": {
      "remoteId": "TOKEN",
      "applied": "abcdefabcdefabcdefabcdefabcdefab"
    }
  }
}"#;

    #[test]
    fn a_version_1_state_is_migrated_without_loss() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalState::new(dir.path());
        std::fs::create_dir_all(dir.path().join(".monform")).unwrap();
        std::fs::write(backend.path(), VERSION_1).unwrap();
        let old: serde_json::Value = serde_json::from_str(VERSION_1).unwrap();

        let state = backend.load("acme").unwrap();
        assert_eq!((state.version, state.serial), (2, 12));
        assert_eq!(state.salt, old["salt"]);
        assert_eq!(state.resources.len(), 4);
        for (address, entry) in &state.resources {
            let before = &old["resources"][address];
            assert_eq!(entry.remote_id, before["remoteId"].as_str().unwrap(), "{address}");
            assert_eq!(entry.version.as_deref(), before["version"].as_str(), "{address}");
            assert_eq!(entry.prevent_destroy, before["preventDestroy"] == true, "{address}");
            let names: Vec<&str> = before["managed"]
                .as_array()
                .map(|a| a.iter().filter_map(|n| n.as_str()).collect())
                .unwrap_or_default();
            assert_eq!(
                entry.managed.iter().map(String::as_str).collect::<Vec<_>>(),
                names,
                "{address}"
            );
            // A fingerprint is the first 16 digits of the same hash.
            assert!(before["applied"].as_str().unwrap().starts_with(&entry.applied));
            assert_eq!(entry.applied.len(), 16);
        }
        let channel = &state.resources["alertChannels.ops"];
        assert_eq!(channel.secrets["config.url"], "ffeeddccbbaa9988");
        // A secret fingerprinted by version 1 still matches its value.
        let value = serde_json::json!("https://hooks.example.com/x");
        let mut bytes = state.salt.as_bytes().to_vec();
        bytes.push(0);
        bytes.extend_from_slice(b"\"https://hooks.example.com/x\"");
        let version_1: String = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(&bytes))
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(version_1.starts_with(&state.fingerprint(&value)));

        // Written back in version 2: smaller, and read back the same.
        backend.save(&state).unwrap();
        let written = std::fs::read_to_string(backend.path()).unwrap();
        assert!(written.starts_with("{\"version\":2,"), "{written}");
        assert!(written.len() < VERSION_1.len(), "{} bytes", written.len());
        assert_eq!(backend.load("acme").unwrap(), state);
    }

    #[test]
    fn changes_go_to_the_journal_and_are_folded_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalState::new(dir.path());
        let mut state = backend.load("acme").unwrap();
        let mut writer = backend.writer(&state).unwrap();
        assert!(!backend.path().exists(), "nothing is written before a change");
        for (serial, delta) in [set(1, "checks.a", "1"), set(2, "checks.b", "2")]
            .into_iter()
            .enumerate()
        {
            writer.write(std::slice::from_ref(&delta)).unwrap();
            state.apply(&delta);
            assert_eq!(state.serial, serial as u64 + 1);
        }
        // The service applied to travels in the journal too (issue 27 item 5).
        let remove = Delta {
            target: Some(crate::state::Target {
                api_url: "local".into(),
                account: Some("a1".into()),
            }),
            serial: 3,
            remove: vec!["checks.a".into()],
            set: BTreeMap::new(),
        };
        writer.write(std::slice::from_ref(&remove)).unwrap();
        state.apply(&remove);
        assert!(state.target.is_some());
        assert_eq!(files(dir.path()), ["state.journal", "state.json"]);
        // The snapshot is the empty state (its salt); the journal the rest.
        assert_eq!(backend.load("acme").unwrap(), state, "read = snapshot + journal");
        writer.finish(&state).unwrap();
        assert_eq!(files(dir.path()), ["state.json"]);
        assert_eq!(backend.load("acme").unwrap(), state);
        // A writer that wrote nothing writes nothing.
        let before = std::fs::read(backend.path()).unwrap();
        backend.writer(&state).unwrap().finish(&state).unwrap();
        assert_eq!(std::fs::read(backend.path()).unwrap(), before);
    }

    #[test]
    fn a_crash_leaves_a_journal_that_is_read_then_folded_by_the_next_writer() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalState::new(dir.path());
        let mut state = backend.load("acme").unwrap();
        state.serial = 5;
        state.resources.insert("checks.old".into(), entry("0"));
        backend.save(&state).unwrap();
        let mut writer = backend.writer(&state).unwrap();
        writer
            .write(&[set(6, "checks.a", "1"), set(7, "checks.b", "2")])
            .unwrap();
        // Killed: no finish, and a record cut short at the end.
        drop(writer);
        let mut torn = Vec::new();
        journal::encode(&set(8, "checks.c", "3"), &mut torn);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(backend.journal_path())
            .unwrap();
        file.write_all(&torn[..torn.len() / 2]).unwrap();
        drop(file);

        let loaded = backend.load("acme").unwrap();
        assert_eq!(loaded.serial, 7, "the torn record is ignored");
        let ids: Vec<&str> = loaded.resources.values().map(|r| r.remote_id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "0"]);

        // The next apply folds first, then appends to a fresh journal.
        let mut writer = backend.writer(&loaded).unwrap();
        assert_eq!(files(dir.path()), ["state.json"]);
        writer.write(&[set(8, "checks.c", "3")]).unwrap();
        drop(writer);
        assert_eq!(backend.load("acme").unwrap().resources.len(), 4);

        // A fold killed between the rename and the journal's removal:
        // records at or below the snapshot's serial are not applied again.
        let mut folded = backend.load("acme").unwrap();
        folded.resources.remove("checks.c");
        folded.serial = 9;
        std::fs::write(backend.path(), format::encode(&folded)).unwrap();
        assert_eq!(backend.load("acme").unwrap(), folded);
    }

    #[test]
    fn a_small_change_to_a_large_state_stays_in_the_journal_until_it_grows() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalState::new(dir.path());
        let mut state = backend.load("acme").unwrap();
        for i in 0..12_000 {
            state.resources.insert(format!("checks.c{i}"), entry(&i.to_string()));
        }
        backend.save(&state).unwrap();
        let snapshot = std::fs::read(backend.path()).unwrap();
        assert!(snapshot.len() as u64 > FOLD_ALWAYS_BELOW, "{}", snapshot.len());

        let mut writer = backend.writer(&state).unwrap();
        writer.write(&[set(1, "checks.new", "n1")]).unwrap();
        writer.finish(&state).unwrap();
        assert_eq!(
            std::fs::read(backend.path()).unwrap(),
            snapshot,
            "the snapshot is not rewritten"
        );
        let loaded = backend.load("acme").unwrap();
        assert_eq!(loaded.resources["checks.new"].remote_id, "n1");

        // A crash cut a record short: the next apply cuts it off and appends.
        let mut torn = Vec::new();
        journal::encode(&set(2, "checks.lost", "x"), &mut torn);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(backend.journal_path())
            .unwrap();
        file.write_all(&torn[..torn.len() / 2]).unwrap();
        drop(file);
        let mut writer = backend.writer(&loaded).unwrap();
        writer.write(&[set(2, "checks.next", "n2")]).unwrap();
        drop(writer);
        let loaded = backend.load("acme").unwrap();
        assert_eq!(loaded.serial, 2);
        assert!(loaded.resources.contains_key("checks.next") && !loaded.resources.contains_key("checks.lost"));

        // Once the journal holds a quarter of the snapshot, the end folds it.
        let mut writer = backend.writer(&loaded).unwrap();
        let mut grown = loaded.clone();
        let batch: Vec<Delta> = (0..3000)
            .map(|i| set(3 + i, &format!("checks.c{i}"), &format!("m{i}")))
            .collect();
        for delta in &batch {
            grown.apply(delta);
        }
        writer.write(&batch).unwrap();
        writer.finish(&grown).unwrap();
        assert_eq!(files(dir.path()), ["state.json"]);
        assert_eq!(backend.load("acme").unwrap(), grown);
    }

    #[test]
    fn the_file_backend_passes_the_conformance_suite() {
        use crate::conformance::{History, test_full};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        test_full("acme", History::None, &|_| Box::new(LocalState::new(&path)));
    }

    #[test]
    fn each_environment_has_its_own_state_and_lock() {
        let dir = tempfile::tempdir().unwrap();
        let staging = LocalState::for_environment(dir.path(), "staging");
        let production = LocalState::for_environment(dir.path(), "production");
        staging.save(&State::new("acme-staging")).unwrap();
        assert!(dir.path().join(".monform/state.staging.json").is_file());
        assert_eq!(
            production.load("acme").unwrap().serial,
            0,
            "a fresh state: nothing saved for production"
        );
        assert!(!dir.path().join(".monform/state.production.json").exists());
        let _held = staging.lock("test").unwrap();
        assert!(production.lock("test").is_ok(), "environments do not share a lock");
        assert!(staging.lock("test").is_err());
    }
}
