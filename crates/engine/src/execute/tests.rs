use super::*;
use crate::differ::tests::desired_of;
use crate::plan::Reason;
use crate::state::local::LocalState;
use serde_json::json;

/// A plan of creates, none waiting for another.
fn creates(addresses: &[Address]) -> Plan {
    let mut plan = Plan {
        project: "p".into(),
        ..Plan::default()
    };
    for (i, address) in addresses.iter().enumerate() {
        plan.order.add_node(i);
        plan.changes.push(Change {
            address: address.clone(),
            action: Action::Create,
            remote_id: None,
            from: None,
            reason: Reason::New,
            fields: Vec::new(),
            unchanged: 0,
            remote_version: None,
            deferred: None,
        });
    }
    plan
}

/// The service answers a create with an id the state holds for another
/// address of the kind (its first group id, 1, which the state has for
/// `groups.old`): that create fails, naming both addresses and the id, the
/// state keeps `groups.old`'s entry and gains none for `groups.new`; the
/// rest of the apply goes on (a channel whose id is 1 too, of another kind).
#[tokio::test]
async fn a_created_id_the_state_holds_for_another_address_is_refused() {
    let server = monform_testkit::start_emulator().await;
    let client = monform_testkit::client_for(&server);
    let project = tempfile::tempdir().unwrap();
    let backend = LocalState::new(project.path());
    let mut state = State::new("p");
    state
        .resources
        .insert("groups.old".into(), crate::state::test_entry("1", &["name"]));
    // `groups.old` is wanted (an entry of an object neither wanted nor
    // found is dropped first); the plan leaves it alone.
    let desired = desired_of(&[
        (Kind::Group, "old", json!({ "name": "Old" })),
        (Kind::Group, "new", json!({ "name": "New" })),
        (
            Kind::AlertChannel,
            "ops",
            json!({ "type": "EMAIL", "config": { "address": "ops@example.com" } }),
        ),
    ]);
    let group = Address::new(Kind::Group, "new");
    let channel = Address::new(Kind::AlertChannel, "ops");
    let plan = creates(&[channel.clone(), group.clone()]);
    let input = ApplyInput {
        client: &client,
        plan: &plan,
        desired: &desired,
        actual: &Actual::default(),
        backend: &backend,
    };
    let options = ApplyOptions {
        parallelism: 1,
        ..ApplyOptions::default()
    };
    let (report, state) = apply(input, state, &options, &|_| {})
        .await
        .expect("the state is written");

    let [(failed, action, error)] = &report.failed[..] else {
        panic!("one failure: {:?}", report.failed);
    };
    assert_eq!((failed, *action), (&group, Action::Create));
    assert_eq!(
        error,
        "the service answered the create of groups.new with id 1, which the state already holds for groups.old: \
         not recorded, so that the two do not claim one object (a service that hands out an id twice; \
         look the object up in the service before the next apply)"
    );
    assert_eq!(report.done, [(channel, Action::Create)]);
    assert_eq!(state.resources["groups.old"].remote_id, "1", "the old entry stays");
    assert!(
        !state.resources.contains_key("groups.new"),
        "{:?}",
        state.resources.keys()
    );
    assert_eq!(
        state.resources["alertChannels.ops"].remote_id, "1",
        "another kind's id 1"
    );
}

/// The count follows the state's changes: an id written, replaced, and
/// removed is held, then not.
#[test]
fn held_ids_follow_the_state() {
    let mut state = State::new("p");
    state
        .resources
        .insert("checks.a".into(), crate::state::test_entry("c1", &[]));
    let mut held = HeldIds::of(&state);
    let b = Address::new(Kind::Check, "b");
    assert_eq!(held.holder(&state, &b, "c1").as_deref(), Some("checks.a"));
    assert_eq!(
        held.holder(&state, &Address::new(Kind::Check, "a"), "c1"),
        None,
        "its own"
    );
    assert_eq!(
        held.holder(&state, &Address::new(Kind::Group, "b"), "c1"),
        None,
        "another kind"
    );
    let mut moved = crate::state::test_entry("c2", &[]);
    moved.retired = vec!["c1".into()];
    let delta = Delta {
        set: [("checks.a".to_owned(), moved)].into(),
        ..Delta::default()
    };
    held.follow(&state, &delta);
    state.apply(&delta);
    assert_eq!(
        held.holder(&state, &b, "c1").as_deref(),
        Some("checks.a"),
        "a retired object"
    );
    let delta = Delta {
        remove: vec!["checks.a".to_owned()],
        ..Delta::default()
    };
    held.follow(&state, &delta);
    state.apply(&delta);
    assert_eq!(held.holder(&state, &b, "c1"), None);
    assert_eq!(held.holder(&state, &b, "c2"), None);
    assert_eq!(held.len(), 0, "nothing left counted");
}
