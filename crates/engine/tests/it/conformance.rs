//! The state backend conformance suite, run from outside the engine
//! through its `test-support` feature, as a backend in another crate would
//! run it: the file backend always, PostgreSQL when a test database is
//! there (`MONFORM_REQUIRE_POSTGRES=1` makes it required), and a backend
//! implemented here, outside the engine, with only its public names.

use monform_engine::conformance::{History, test_full};
use monform_engine::{
    Actor, Delta, HistoryEntry, LocalState, LockError, LockGuard, PostgresState, State, StateBackend, StateError,
    StateWriter,
};

#[test]
fn the_file_backend_passes_the_suite_from_another_crate() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().to_owned();
    test_full("acme", History::None, &|_| Box::new(LocalState::new(&path)));
}

#[test]
fn postgres_passes_the_suite_from_another_crate() {
    let Some(url) = monform_testkit::postgres_url() else {
        return;
    };
    let project = format!("it-{}", uuid::Uuid::new_v4().simple());
    test_full(&project, History::Kept, &|command| {
        Box::new(PostgresState::open(&url, &project, Actor::current(command)).expect("the test database opens"))
    });
}

/// A backend of another crate: its own type implementing `StateBackend`
/// (here over the file backend, which keeps its storage).
struct Outside(LocalState);

struct OutsideWriter(Box<dyn StateWriter>);

impl StateWriter for OutsideWriter {
    fn write(&mut self, changes: &[Delta]) -> Result<(), StateError> {
        self.0.write(changes)
    }

    fn finish(self: Box<Self>, state: &State) -> Result<(), StateError> {
        self.0.finish(state)
    }
}

impl StateBackend for Outside {
    fn load(&self, project: &str) -> Result<State, StateError> {
        self.0.load(project)
    }

    fn save(&self, state: &State) -> Result<(), StateError> {
        self.0.save(state)
    }

    fn describe(&self) -> String {
        format!("outside over {}", self.0.describe())
    }

    fn writer(&self, state: &State) -> Result<Box<dyn StateWriter>, StateError> {
        Ok(Box::new(OutsideWriter(self.0.writer(state)?)))
    }

    fn lock(&self, command: &str) -> Result<LockGuard, LockError> {
        self.0.lock(command)
    }

    fn history(&self, project: &str, limit: usize) -> Result<Option<Vec<HistoryEntry>>, StateError> {
        self.0.history(project, limit)
    }
}

#[test]
fn a_backend_implemented_in_another_crate_runs_the_suite() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().to_owned();
    test_full("acme", History::None, &|_| Box::new(Outside(LocalState::new(&path))));
}
