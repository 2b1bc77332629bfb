use super::*;
use crate::forms::file_form;
use monform_model::Kind;
use serde_json::json;

/// The view reads every field as the files' form would have it.
#[test]
fn an_actual_view_reads_as_the_files_form() {
    let remote = Remote::with_id(
        Kind::Check,
        "c1",
        &json!({
            "id": "c1", "checkType": "API", "name": "Home", "groupId": 7,
            "alertChannelSubscriptions": [
                { "alertChannelId": 3, "activated": true },
                { "alertChannelId": 4, "activated": false }
            ],
            "privateLocations": ["office-ams"],
            "tags": ["web", "monform:shop/home"],
            "request": { "url": "https://example.com", "method": "GET" }
        }),
    );
    let names = Names::from_pairs(
        [
            (Kind::Group, json!(7), "shop".to_owned()),
            (Kind::AlertChannel, json!(3), "ops".to_owned()),
            (Kind::PrivateLocation, json!("office-ams"), "office".to_owned()),
        ]
        .into_iter(),
    );
    let body = remote.body();
    let whole = file_form(Kind::Check, &remote, &names);
    let view = ActualView::new(Kind::Check, &remote, &names);
    let fields = whole
        .as_object()
        .unwrap()
        .keys()
        .chain(body.as_object().unwrap().keys());
    for field in fields {
        assert_eq!(view.get(field), whole.get(field), "{field}");
    }
    assert_eq!(view.get("group"), Some(&json!("shop")));
    assert_eq!(view.get("groupId"), None);
    assert_eq!(view.get("alertChannels"), Some(&json!(["ops"])));
    assert_eq!(view.get("tags"), Some(&json!(["web"])));
    // Texts are given only where they read as the files' form.
    assert_eq!(view.text("name"), Some(r#""Home""#));
    assert_eq!(
        view.text("request"),
        Some(r#"{"url":"https://example.com","method":"GET"}"#)
    );
    for field in [
        "tags",
        "groupId",
        "group",
        "alertChannels",
        "alertChannelSubscriptions",
        "privateLocations",
        "missing",
    ] {
        assert!(view.text(field).is_none(), "{field}");
    }
    assert_eq!(view.version(), None);
}

/// A `Desired` of `resources` as given (no files): shared with the executor's tests.
pub(crate) fn desired_of(resources: &[(Kind, &str, serde_json::Value)]) -> Desired {
    let mut desired = Desired::default();
    for (kind, id, value) in resources {
        desired.insert(monform_config::DesiredResource {
            address: Address::new(*kind, *id),
            resource: Box::new(monform_model::Resource::from_json(*kind, value.clone()).expect("a valid resource")),
            span: monform_config::source::Span::new(0, 0, 0),
            references: Vec::new(),
            own_fields: Vec::new(),
            sensitive: Vec::new(),
            env_reads: Vec::new(),
        });
    }
    desired.link();
    desired
}

fn position(plan: &Plan, address: &str) -> usize {
    plan.changes
        .iter()
        .position(|c| c.address.to_string() == address)
        .unwrap_or_else(|| panic!("{address} is not in the plan"))
}

/// A delete waits for the update of the object that stops referencing it,
/// although its address sorts first.
#[test]
fn a_delete_comes_after_the_change_that_stops_referencing_it() {
    let request = json!({ "url": "https://example.com", "method": "GET" });
    let desired = desired_of(&[(
        Kind::Check,
        "home",
        json!({ "checkType": "API", "name": "Home", "request": request }),
    )]);
    let mut actual = Actual::default();
    actual.owned.insert(
        Address::new(Kind::AlertChannel, "ops"),
        Remote::with_id(
            Kind::AlertChannel,
            "3",
            &json!({ "id": 3, "type": "EMAIL", "config": { "address": "ops@example.com" } }),
        ),
    );
    actual.owned.insert(
        Address::new(Kind::Check, "home"),
        Remote::with_id(
            Kind::Check,
            "c1",
            &json!({
                "id": "c1", "checkType": "API", "name": "Home", "request": request,
                "alertChannelSubscriptions": [{ "alertChannelId": 3, "activated": true }]
            }),
        ),
    );
    let plan = plan("p", &desired, &actual, &State::new("p"), &PlanOptions::default());
    let delete = position(&plan, "alertChannels.ops");
    assert_eq!(plan.changes[delete].action, Action::Delete);
    assert!(position(&plan, "checks.home") < delete, "{:?}", plan.changes);
}

/// A create waits for the delete of the object holding a unique value it
/// needs (a snippet's name), although its address sorts first.
#[test]
fn a_create_comes_after_the_delete_that_frees_its_unique_value() {
    let desired = desired_of(&[(Kind::Snippet, "a", json!({ "name": "Login", "script": "x" }))]);
    let mut actual = Actual::default();
    actual.owned.insert(
        Address::new(Kind::Snippet, "b"),
        Remote::with_id(Kind::Snippet, "5", &json!({ "id": 5, "name": "Login", "script": "x" })),
    );
    actual.owned.insert(
        Address::new(Kind::Snippet, "c"),
        Remote::with_id(Kind::Snippet, "6", &json!({ "id": 6, "name": "Other", "script": "x" })),
    );
    let plan = plan("p", &desired, &actual, &State::new("p"), &PlanOptions::default());
    let create = position(&plan, "snippets.a");
    assert_eq!(plan.changes[create].action, Action::Create);
    assert!(position(&plan, "snippets.b") < create, "{:?}", plan.changes);
    // The other delete frees nothing the create needs: address order.
    assert!(create < position(&plan, "snippets.c"), "{:?}", plan.changes);
}

/// A state that applied `applied` to `checks.home` (remote `c1`) at `version`.
fn applied_state(kind: Kind, address: &str, applied: &serde_json::Value, version: &str) -> State {
    let mut state = State::new("p");
    let mut entry = crate::state::test_entry("c1", &[]);
    entry.version = Some(version.to_owned());
    entry.fields = field_fingerprints(kind, applied, &[], &state);
    entry.secrets = crate::forms::secret_fingerprints(kind, applied, &[], &state);
    state.resources.insert(address.to_owned(), entry);
    state
}

/// Changed in the files and in the service since the last apply: a
/// conflict with the three values; the service alone, drift; an object the
/// service did not touch (same version), never a conflict.
#[test]
fn a_field_changed_on_both_sides_is_a_conflict_with_its_three_values() {
    let check = |time: u64| {
        json!({ "checkType": "API", "name": "Home", "maxResponseTime": time,
                "request": { "url": "https://example.com", "method": "GET" } })
    };
    let state = applied_state(Kind::Check, "checks.home", &check(5000), "2026-11-22T10:00:00.000Z");
    let desired = desired_of(&[(Kind::Check, "home", check(7000))]);
    let remote = |time: u64, version: &str| {
        let mut body = check(time);
        body["id"] = json!("c1");
        body["updated_at"] = json!(version);
        Remote::with_id(Kind::Check, "c1", &body)
    };
    let planned = |remote: Remote| {
        let mut actual = Actual::default();
        actual.owned.insert(Address::new(Kind::Check, "home"), remote);
        plan("p", &desired, &actual, &state, &PlanOptions::default()).changes[0].clone()
    };
    let change = planned(remote(9000, "2026-11-22T11:00:00.000Z"));
    assert_eq!(change.reason, Reason::Conflict, "{change:?}");
    let field = change
        .fields
        .iter()
        .find(|f| f.path == "maxResponseTime")
        .expect("maxResponseTime changes");
    assert_eq!(
        field.conflict,
        Some(crate::plan::Conflict {
            applied: Some(json!(5000)),
            service: Some(json!(9000)),
            files: json!(7000),
            files_default: false,
        })
    );
    assert!(!field.drift);
    // The service as applied: a file edit alone.
    let change = planned(remote(5000, "2026-11-22T11:00:00.000Z"));
    assert_eq!(change.reason, Reason::ConfigChanged, "{change:?}");
    // The same version: whatever form its value takes, nobody edited it.
    let change = planned(remote(9000, "2026-11-22T10:00:00.000Z"));
    assert!(change.fields.iter().all(|f| f.conflict.is_none()), "{change:?}");
}

/// A secret variable's value is never returned; its version moving says
/// it was set in the service (drift), or a conflict when the files set it too.
#[test]
fn a_secret_variable_set_in_the_service_is_drift_or_a_conflict() {
    let variable = |value: &str| json!({ "value": value, "secret": true });
    let state = applied_state(
        Kind::Variable,
        "variables.TOKEN",
        &variable("one"),
        "2026-11-22T10:00:00.000Z",
    );
    let planned = |files: &str, version: &str| {
        let desired = desired_of(&[(Kind::Variable, "TOKEN", variable(files))]);
        let mut actual = Actual::default();
        actual.owned.insert(
            Address::new(Kind::Variable, "TOKEN"),
            Remote::with_id(
                Kind::Variable,
                "TOKEN",
                &json!({ "key": "TOKEN", "value": null, "secret": true, "locked": false, "updated_at": version }),
            ),
        );
        plan("p", &desired, &actual, &state, &PlanOptions::default()).changes[0].clone()
    };
    let same = planned("one", "2026-11-22T10:00:00.000Z");
    assert_eq!(same.action, Action::Noop, "{same:?}");
    let rotated = planned("one", "2026-11-22T11:00:00.000Z");
    assert_eq!((rotated.action, rotated.reason), (Action::Update, Reason::Drift));
    let field = &rotated.fields[0];
    assert_eq!(
        (field.path.as_str(), field.sensitive, field.drift),
        ("value", true, true)
    );
    let both = planned("two", "2026-11-22T11:00:00.000Z");
    assert_eq!(both.reason, Reason::Conflict);
    let conflict = both.fields[0].conflict.clone().expect("a conflict");
    assert_eq!(conflict.service, None);
    let shown = format!("{:?}", (&conflict.applied, &conflict.files));
    assert!(shown.contains("(sensitive, fingerprint ") && !shown.contains("one") && !shown.contains("two"));
}
