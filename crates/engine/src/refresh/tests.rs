use super::*;
use serde_json::Value;

/// A project of three checks and one group, loaded from files.
fn project(edit: &str) -> Desired {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
    let text = format!(
        "groups:\n  web: {{ name: Web, concurrency: 1, locations: [eu-west-1] }}\nchecks:\n  a: {{ checkType: HEARTBEAT, name: A, group: web, heartbeat: {{ period: 1, periodUnit: hours, grace: 1, graceUnit: hours }} }}\n  b: {{ checkType: HEARTBEAT, name: {edit}, heartbeat: {{ period: 1, periodUnit: hours, grace: 1, graceUnit: hours }} }}\n"
    );
    std::fs::write(dir.path().join("c.yaml"), text).unwrap();
    let loaded = monform_config::load(dir.path(), &|_| None);
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    loaded.desired
}

/// The state as an apply of `desired` records it, plus `extra` addresses.
fn applied(desired: &Desired, extra: &[&str]) -> State {
    let mut state = State::new("p");
    let keys: Vec<String> = desired
        .resources
        .keys()
        .map(ToString::to_string)
        .chain(extra.iter().map(|s| s.to_string()))
        .collect();
    for (n, key) in keys.into_iter().enumerate() {
        let address: Address = key.parse().unwrap();
        let mut entry = crate::state::test_entry(&format!("{}", n + 1), &[]);
        if let Some(r) = desired.resources.get(&address) {
            let json = managed(address.kind, r.resource.to_json());
            entry.applied = state.fingerprint(&json);
            entry.fields = crate::forms::field_fingerprints(address.kind, &json, &[], &state);
            entry.managed = json.as_object().unwrap().keys().cloned().collect();
        }
        state.resources.insert(key, entry);
    }
    state
}

#[test]
fn changed_reads_what_the_files_changed_or_removed_and_trusts_the_rest() {
    let before = project("B");
    let state = applied(&before, &["checks.gone"]);
    let after = project("B renamed");
    let selection = select(&after, &state, Refresh::Changed);
    let read: Vec<String> = selection.read.iter().map(|(a, _)| a.to_string()).collect();
    assert_eq!(read, ["checks.b", "checks.gone"]);
    let trusted: Vec<String> = selection.trusted.keys().map(ToString::to_string).collect();
    assert_eq!(trusted, ["checks.a", "groups.web"]);
    assert!(selection.trusted.values().all(|u| !u.edited));

    // Nothing edited: nothing read.
    assert!(
        select(&before, &applied(&before, &[]), Refresh::Changed)
            .read
            .is_empty()
    );
}

#[test]
fn changed_reads_the_objects_replaces_retired_whatever_the_files_say() {
    let desired = project("B");
    let mut state = applied(&desired, &[]);
    let entry = state.resources.get_mut("checks.a").expect("applied");
    entry.retired = vec!["old-a".into()];
    let selection = select(&desired, &state, Refresh::Changed);
    // Nothing edited: its own object trusted, the one a replace left read.
    assert!(selection.read.is_empty());
    let retired: Vec<(String, &str)> = selection
        .retired
        .iter()
        .map(|(a, id)| (a.to_string(), id.as_str()))
        .collect();
    assert_eq!(retired, [("checks.a".to_owned(), "old-a")]);
    // Offline: nothing read.
    assert!(select(&desired, &state, Refresh::None).retired.is_empty());
}

#[test]
fn none_reads_nothing_and_marks_what_the_files_changed() {
    let state = applied(&project("B"), &[]);
    let selection = select(&project("B renamed"), &state, Refresh::None);
    assert!(selection.read.is_empty());
    let edited: Vec<String> = selection
        .trusted
        .iter()
        .filter(|(_, u)| u.edited)
        .map(|(a, _)| a.to_string())
        .collect();
    assert_eq!(edited, ["checks.b"]);
}

#[test]
fn a_trusted_integer_id_is_sent_as_a_number() {
    let trusted = Unrefreshed {
        remote_id: "12".into(),
        version: None,
        edited: false,
    };
    assert_eq!(trusted.id_value(Kind::Group), serde_json::json!(12));
    assert_eq!(trusted.id_value(Kind::Check), serde_json::json!("12"));
}

#[test]
fn an_offline_plan_updates_the_edited_field_and_deletes_by_the_states_id() {
    let state = applied(&project("B"), &["checks.gone"]);
    let after = project("B renamed");
    let actual = Actual {
        unrefreshed: select(&after, &state, Refresh::None).trusted,
        ..Actual::default()
    };
    let plan = crate::differ::plan("p", &after, &actual, &state, &Default::default());
    let shown: Vec<(String, crate::plan::Action)> =
        plan.changes.iter().map(|c| (c.address.to_string(), c.action)).collect();
    use crate::plan::Action::*;
    assert_eq!(
        shown,
        [
            ("checks.a".to_owned(), Noop),
            ("checks.b".to_owned(), Update),
            ("checks.gone".to_owned(), Delete),
            ("groups.web".to_owned(), Noop),
        ]
    );
    let b = &plan.changes[1];
    let fields: Vec<(&str, Option<&Value>)> = b.fields.iter().map(|f| (f.path.as_str(), f.after.as_ref())).collect();
    assert_eq!(fields, [("name", Some(&serde_json::json!("B renamed")))]);
    assert_eq!(b.fields[0].before, None);
    assert_eq!(plan.changes[2].remote_id.as_deref(), Some("4"));
    assert_eq!(plan.refreshed.not_refreshed, 4);
}
