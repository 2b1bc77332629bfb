//! The state backend conformance suite, run from outside the engine
//! through its `test-support` feature, as a backend in another crate would
//! run it: the file backend always, PostgreSQL when a test database is
//! there (`MONFORM_REQUIRE_POSTGRES=1` makes it required).

use monform_engine::conformance::{History, test_full};
use monform_engine::{Actor, LocalState, PostgresState};

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
