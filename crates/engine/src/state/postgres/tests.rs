use super::migrations::VERSION_1;
use super::*;
use crate::state::ResourceState;
use std::collections::BTreeMap;

fn entry(id: &str) -> ResourceState {
    ResourceState {
        remote_id: id.into(),
        version: None,
        applied: "f".into(),
        secrets: BTreeMap::new(),
        prevent_destroy: false,
        managed: Default::default(),
        fields: Default::default(),
        normal: Default::default(),
        retired: Vec::new(),
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

/// The test database, or `None` (saying why) when there is none and
/// `MONFORM_REQUIRE_POSTGRES` does not require one.
fn database() -> Option<String> {
    monform_testkit::postgres_url()
}

fn unique_project() -> String {
    format!("unit-{}", uuid::Uuid::new_v4().simple())
}

fn open(url: &str, project: &str, command: &str) -> PostgresState {
    PostgresState::open(url, project, Actor::current(command)).expect("the test database opens")
}

#[test]
fn postgres_passes_the_conformance_suite() {
    use crate::conformance::{History, test_full};
    let Some(url) = database() else { return };
    let project = unique_project();
    test_full(&project, History::Kept, &|command| {
        Box::new(open(&url, &project, command))
    });
    // Opening again finds the schema up to date, and the state of another
    // project is a fresh one.
    let again = open(&url, &project, "monform plan");
    assert!(matches!(again.load("someone-else"), Ok(s) if s.serial == 0));
}

fn delta(serial: u64, remove: &[&str], set: &[(&str, &str)]) -> Delta {
    Delta {
        target: None,
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
