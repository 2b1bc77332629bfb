//! What every state backend must do, as one suite run against each (as
//! Terraform's `statemgr.TestFull`): the file backend in `local`'s tests,
//! PostgreSQL in `postgres`'s (when a test database is available). A new
//! backend passes it before anything else trusts it.
//!
//! Public behind the `test-support` feature, so a backend in another crate
//! runs the same suite (`tests/it/conformance.rs` runs it from outside,
//! as such a crate would); never part of a build of monform itself.

use crate::lock::LockError;
use crate::state::{State, StateBackend, test_entry};

/// Whether the backend under test keeps a history of its writes
/// (`StateBackend::history` returns `Some`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum History {
    Kept,
    None,
}

/// Runs every rule against the backend that `open` opens: a new handle on
/// the same storage and `project` each call, acting for the monform
/// command it is given (as two runners sharing a state would).
pub fn test_full(project: &str, history: History, open: &dyn Fn(&str) -> Box<dyn StateBackend>) {
    let state = round_trip(project, open);
    refuses_an_older_serial(project, open, &state);
    keeps_history_or_says_it_does_not(project, history, open);
    lock_is_exclusive(open);
}

/// Saved states read back whole, by another handle too; a fresh project
/// reads as serial 0 with nothing in it.
fn round_trip(project: &str, open: &dyn Fn(&str) -> Box<dyn StateBackend>) -> State {
    let backend = open("monform apply");
    let mut state = backend.load(project).expect("a fresh state loads");
    assert_eq!(
        (state.project.as_str(), state.serial, state.resources.len()),
        (project, 0, 0),
        "a fresh state"
    );
    state.serial = 1;
    state.resources.insert("checks.a".into(), test_entry("1", &["name"]));
    backend.save(&state).expect("serial 1 saves");
    assert_eq!(backend.load(project).expect("it loads"), state, "read back");
    state.serial = 2;
    state
        .resources
        .insert("groups.g".into(), test_entry("2", &["name", "tags"]));
    backend.save(&state).expect("serial 2 saves");
    let other = open("monform plan");
    assert_eq!(
        other.load(project).expect("it loads"),
        state,
        "another handle reads the same state, salt and fingerprints included"
    );
    state
}

/// A write based on an older state is refused, whoever makes it, and
/// leaves the stored state as it was; a newer one goes through.
fn refuses_an_older_serial(project: &str, open: &dyn Fn(&str) -> Box<dyn StateBackend>, stored: &State) {
    let other = open("monform state rm");
    let mut stale = stored.clone();
    stale.serial = stored.serial - 1;
    stale.resources.clear();
    let refused = other.save(&stale).expect_err("an older serial is refused");
    assert!(
        refused.to_string().contains("refusing to overwrite a newer state"),
        "{refused}"
    );
    assert_eq!(&other.load(project).expect("it loads"), stored, "nothing was written");
    stale.serial = stored.serial + 1;
    other.save(&stale).expect("a newer serial saves");
    assert_eq!(other.load(project).expect("it loads"), stale);
}

/// Newest first, at most `limit`, naming the command and the changes; or
/// `None` from a backend that keeps no history.
fn keeps_history_or_says_it_does_not(project: &str, history: History, open: &dyn Fn(&str) -> Box<dyn StateBackend>) {
    let backend = open("monform plan");
    let entries = backend.history(project, 10).expect("the history reads");
    let Some(entries) = entries else {
        assert_eq!(history, History::None, "a backend that keeps history returns it");
        return;
    };
    assert_eq!(history, History::Kept, "a backend without history returns None");
    let serials: Vec<u64> = entries.iter().map(|h| h.serial).collect();
    assert_eq!(serials, [3, 2, 1], "every write, newest first");
    let commands: Vec<&str> = entries.iter().map(|h| h.command.as_str()).collect();
    assert_eq!(commands, ["monform state rm", "monform apply", "monform apply"]);
    let changes: Vec<&str> = entries.iter().map(|h| h.changes.as_str()).collect();
    assert_eq!(changes, ["-checks.a -groups.g", "+groups.g", "+checks.a"]);
    assert!(entries[0].applied_by.contains('@'), "{}", entries[0].applied_by);
    assert_eq!(entries[0].applied_at.len(), 20, "{}", entries[0].applied_at);
    let newest = backend.history(project, 1).expect("the history reads");
    assert_eq!(newest.map(|h| h.len()), Some(1), "the limit is kept");
}

/// One holder at a time, named to the others; released on drop.
fn lock_is_exclusive(open: &dyn Fn(&str) -> Box<dyn StateBackend>) {
    let (first, second) = (open("monform apply"), open("monform destroy"));
    let guard = first.lock("monform apply").expect("a free lock is taken");
    assert!(guard.took_over.is_none(), "nobody held it");
    match second.lock("monform destroy") {
        Err(LockError::Held(holder)) => {
            assert_eq!(holder.pid, std::process::id());
            assert_eq!(holder.command, "monform apply");
        }
        Err(other) => panic!("the lock failed instead of naming its holder: {other}"),
        Ok(_) => panic!("a held lock was taken a second time"),
    }
    drop(guard);
    let again = second.lock("monform destroy").expect("a released lock is free");
    assert!(again.took_over.is_none(), "the first holder released it");
}
