use super::*;
use serde_json::json;

#[test]
fn objects_round_trip_in_creation_order() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    for i in 0..5 {
        db.insert("acc", "snippets", &i.to_string(), None, 0, &json!({"n": i}))
            .unwrap();
    }
    let (page, total) = db.page("acc", "snippets", 2, 2).unwrap();
    assert_eq!(total, 5);
    assert_eq!(page.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["2", "3"]);
    assert!(db.replace("acc", "snippets", "3", &json!({"n": 33})).unwrap());
    assert_eq!(db.get("acc", "snippets", "3").unwrap(), Some(json!({"n": 33})));
    assert!(db.delete("acc", "snippets", "3").unwrap());
    assert!(!db.delete("acc", "snippets", "3").unwrap());
    assert_eq!(db.next_number("acc", "groups").unwrap(), 1);
    assert_eq!(db.next_number("acc", "groups").unwrap(), 2);
}

#[test]
fn find_matches_values_and_list_items_as_text() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    let bodies = [
        json!({"slugName": "office", "groupId": 12, "privateLocations": ["office"],
               "alertChannelSubscriptions": [{"alertChannelId": 7}]}),
        json!({"slugName": "lab", "groupId": "12", "privateLocations": ["lab", "office"]}),
        json!({"slugName": "far", "groupId": 3}),
    ];
    for (i, body) in bodies.iter().enumerate() {
        db.insert("acc", "checks", &i.to_string(), None, 0, body).unwrap();
    }
    db.insert("other", "checks", "x", None, 0, &bodies[0]).unwrap();
    let ids = |rows: Vec<Row>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(db.find("acc", "checks", "$.slugName", "lab").unwrap()), ["1"]);
    assert_eq!(ids(db.find("acc", "checks", "$.groupId", "12").unwrap()), ["0", "1"]);
    assert_eq!(
        ids(db
            .find_in_list("acc", "checks", "$.privateLocations", None, "office")
            .unwrap()),
        ["0", "1"]
    );
    let subscribed = db
        .find_in_list(
            "acc",
            "checks",
            "$.alertChannelSubscriptions",
            Some("$.alertChannelId"),
            "7",
        )
        .unwrap();
    assert_eq!(ids(subscribed), ["0"]);
    assert!(db.find("acc", "checks", "$.slugName", "none").unwrap().is_empty());
}

#[test]
fn totals_follow_inserts_and_deletes() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    for i in 0..250 {
        db.insert("acc", "checks", &i.to_string(), None, 0, &json!({"n": i}))
            .unwrap();
    }
    assert!(db.delete("acc", "checks", "0").unwrap());
    let (page, total) = db.page("acc", "checks", 200, 100).unwrap();
    assert_eq!(total, 249);
    assert_eq!(page.len(), 49);
    assert_eq!(page[0].id, "201");
    let (page, total) = db.page("acc", "checks", 249, 100).unwrap();
    assert_eq!((page.len(), total), (0, 249));
    assert_eq!(db.page("acc", "groups", 0, 10).unwrap().1, 0);
}

#[test]
fn pages_read_in_order_stay_right_after_creates_and_deletes() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    let add = |i: usize| {
        db.insert("acc", "checks", &i.to_string(), None, 0, &json!({"n": i}))
            .unwrap()
    };
    (0..30).for_each(add);
    let first_ids = |offset| -> Vec<String> {
        let (page, _) = db.page("acc", "checks", offset, 10).unwrap();
        page.into_iter().map(|r| r.id).collect()
    };
    // Read in order: each page remembers where the next one starts.
    assert_eq!(first_ids(0)[0], "0");
    assert_eq!(first_ids(10)[0], "10");
    assert_eq!(first_ids(20), (20..30).map(|i| i.to_string()).collect::<Vec<_>>());
    // A create appends: the pages already read are unchanged.
    add(30);
    assert_eq!(first_ids(10)[0], "10");
    // A delete shifts every later offset: the starts are forgotten.
    assert!(db.delete("acc", "checks", "5").unwrap());
    assert_eq!(first_ids(10)[0], "11");
    assert_eq!(first_ids(20), (21..31).map(|i| i.to_string()).collect::<Vec<_>>());
    assert!(first_ids(30).is_empty());
}

#[test]
fn survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    {
        let store = Store::open(&path).unwrap();
        store.ensure_key("acc", "key").unwrap();
        store
            .lock()
            .insert("acc", "checks", "c1", None, 0, &json!({"name": "x"}))
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.account_of("key").unwrap().as_deref(), Some("acc"));
    assert_eq!(
        store.lock().get("acc", "checks", "c1").unwrap(),
        Some(json!({"name": "x"}))
    );
}

#[test]
fn a_database_from_before_the_counts_gains_them_on_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    {
        let store = Store::open(&path).unwrap();
        let db = store.lock();
        db.execute_batch(
            "DROP TRIGGER object_counts_insert; DROP TRIGGER object_counts_delete; DROP TABLE object_counts;",
        )
        .unwrap();
        for i in 0..3 {
            db.insert("acc", "checks", &i.to_string(), None, 0, &json!({})).unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let db = store.lock();
    assert_eq!(db.page("acc", "checks", 0, 10).unwrap().1, 3);
    db.insert("acc", "checks", "3", None, 0, &json!({})).unwrap();
    assert_eq!(db.page("acc", "checks", 0, 10).unwrap().1, 4);
}

#[test]
fn a_page_of_records_is_filtered_counted_and_paged_in_sqlite() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    for i in 0..6 {
        let body = json!({"alertChannelId": i % 2 + 1, "status": if i < 2 { "FAILURE" } else { "SUCCESS" }});
        db.insert("acc", "alertNotifications", &i.to_string(), None, i, &body)
            .unwrap();
    }
    db.insert("acc", "alertNotifications", "late", None, 100, &json!({}))
        .unwrap();
    let ids = |rows: Vec<Row>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let (rows, total) = db
        .records_page("acc", "alertNotifications", (0, 10), &[], (1, 2))
        .unwrap();
    assert_eq!((ids(rows), total), (vec!["4".to_owned(), "3".to_owned()], 6));
    let channel = |id: &str| Filter {
        path: "$.alertChannelId",
        text: id.into(),
        equal: true,
    };
    let (rows, total) = db
        .records_page("acc", "alertNotifications", (0, 10), &[channel("2")], (0, 10))
        .unwrap();
    assert_eq!(
        (ids(rows), total),
        (vec!["5".to_owned(), "3".to_owned(), "1".to_owned()], 3)
    );
    let succeeded = Filter {
        path: "$.status",
        text: "FAILURE".into(),
        equal: false,
    };
    let (rows, total) = db
        .records_page(
            "acc",
            "alertNotifications",
            (0, 10),
            &[channel("1"), succeeded],
            (0, 10),
        )
        .unwrap();
    assert_eq!((ids(rows), total), (vec!["4".to_owned(), "2".to_owned()], 2));
}

#[test]
fn subscriptions_follow_creates_updates_and_deletes_of_checks_and_groups() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    let subscribed = |channels: &[i64]| json!({"alertChannelSubscriptions": channels.iter().map(|c| json!({"alertChannelId": c, "activated": true})).collect::<Vec<_>>()});
    let mut check = subscribed(&[1, 2]);
    check["id"] = json!("c-1");
    db.insert("acc", "checks", "c-1", None, 0, &check).unwrap();
    let mut group = subscribed(&[2]);
    group["id"] = json!(7);
    db.insert("acc", "groups", "7", None, 0, &group).unwrap();
    db.insert("acc", "checks", "c-2", None, 0, &json!({"id": "c-2"}))
        .unwrap();
    // Another account's and another kind's lists are not subscriptions here.
    db.insert("other", "checks", "c-1", None, 0, &check).unwrap();
    db.insert("acc", "snippets", "s", None, 0, &check).unwrap();
    let of = |wanted: &[&str]| {
        let wanted: Vec<String> = wanted.iter().map(|w| (*w).to_owned()).collect();
        let mut found = Vec::new();
        db.subscriptions("acc", &wanted, &mut |s| {
            let id = match s.owner_id {
                OwnerId::Text(text) => json!(text),
                OwnerId::Number(n) => json!(n),
                OwnerId::None => Value::Null,
            };
            found.push((s.owner_kind.to_owned(), id, s.channel_id.to_owned(), s.activated));
        })
        .unwrap();
        found
    };
    let row = |kind: &str, id: Value, channel: &str, on: bool| (kind.to_owned(), id, channel.to_owned(), on);
    // By channel; each channel's checks first, then its groups.
    assert_eq!(
        of(&["1", "2", "3"]),
        [
            row("checks", json!("c-1"), "1", true),
            row("checks", json!("c-1"), "2", true),
            row("groups", json!(7), "2", true),
        ]
    );
    // Updated: the check's old subscriptions go, its new ones come, an
    // explicit `false` is deactivated and a missing `activated` is not.
    let updated = json!({"id": "c-2", "alertChannelSubscriptions": [
        {"alertChannelId": "2", "activated": false}, {"alertChannelId": 3}]});
    assert!(db.replace("acc", "checks", "c-2", &updated).unwrap());
    check["alertChannelSubscriptions"] = json!([]);
    assert!(db.replace("acc", "checks", "c-1", &check).unwrap());
    assert_eq!(
        of(&["2", "3"]),
        [
            row("checks", json!("c-2"), "2", false),
            row("groups", json!(7), "2", true),
            row("checks", json!("c-2"), "3", true),
        ]
    );
    assert!(db.delete("acc", "groups", "7").unwrap());
    assert_eq!(of(&["2"]), [row("checks", json!("c-2"), "2", false)]);
}

#[test]
fn a_database_made_before_the_subscriptions_table_gains_it_filled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("emulator.db");
    {
        let store = Store::open(&path).unwrap();
        let db = store.lock();
        let check = json!({"id": "c-1", "alertChannelSubscriptions": [{"alertChannelId": 5}]});
        db.insert("acc", "checks", "c-1", None, 0, &check).unwrap();
        db.execute_batch(
            "DROP TRIGGER subscriptions_insert; DROP TRIGGER subscriptions_update; DROP TRIGGER subscriptions_delete;
             DROP VIEW subscription_rows; DROP TABLE subscriptions;",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let db = store.lock();
    let mut found = Vec::new();
    db.subscriptions("acc", &["5".to_owned()], &mut |s| {
        found.push(matches!(s.owner_id, OwnerId::Text("c-1")));
    })
    .unwrap();
    assert_eq!(found, [true]);
}

#[test]
fn a_page_of_channels_reads_its_subscriptions_in_order_from_one_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("emulator.db");
    {
        // A database made with the index on (account_id, channel_id) only.
        let store = Store::open(&path).unwrap();
        let db = store.lock();
        db.execute_batch(
            "DROP INDEX subscriptions_listed;
             CREATE INDEX subscriptions_by_channel ON subscriptions (account_id, channel_id);",
        )
        .unwrap();
        // Groups before checks in creation order: the listing still shows checks first.
        for (kind, id, seq_note) in [
            ("groups", json!(9), 1),
            ("checks", json!("c-b"), 2),
            ("checks", json!("c-a"), 3),
        ] {
            let body = json!({"id": id, "n": seq_note, "alertChannelSubscriptions": [{"alertChannelId": 2}, {"alertChannelId": 1, "activated": false}]});
            db.insert("acc", kind, &monform_model::wire::id_text(&id), None, 0, &body)
                .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let db = store.lock();
    let indexes: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'subscriptions'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(indexes.contains(&"subscriptions_listed".to_owned()), "{indexes:?}");
    assert!(!indexes.contains(&"subscriptions_by_channel".to_owned()), "{indexes:?}");
    let mut found = Vec::new();
    db.subscriptions("acc", &["2".to_owned(), "1".to_owned()], &mut |s| {
        found.push(format!(
            "{} {} {:?} {}",
            s.channel_id, s.owner_kind, s.owner_id, s.activated
        ));
    })
    .unwrap();
    assert_eq!(
        found,
        [
            r#"1 checks Text("c-b") false"#,
            r#"1 checks Text("c-a") false"#,
            r#"1 groups Number(9) false"#,
            r#"2 checks Text("c-b") true"#,
            r#"2 checks Text("c-a") true"#,
            r#"2 groups Number(9) true"#,
        ]
    );
    let plan: Vec<String> = db
        .prepare(&format!("EXPLAIN QUERY PLAN {SUBSCRIPTIONS_OF}"))
        .unwrap()
        .query_map(["acc", "[\"1\"]"], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        plan.iter()
            .any(|step| step.contains("COVERING INDEX subscriptions_listed")),
        "{plan:?}"
    );
    assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "{plan:?}");
}

#[test]
fn auto_subscribing_channels_come_from_their_own_index() {
    let store = Store::in_memory().unwrap();
    let db = store.lock();
    let section = monform_model::Kind::AlertChannel.section();
    let on = json!({"type": "EMAIL", "autoSubscribe": true});
    db.insert("acc", section, "1", None, 0, &on).unwrap();
    db.insert(
        "acc",
        section,
        "2",
        None,
        0,
        &json!({"type": "EMAIL", "autoSubscribe": false}),
    )
    .unwrap();
    db.insert("acc", section, "3", None, 0, &json!({"type": "EMAIL"}))
        .unwrap();
    db.insert("acc", section, "4", None, 0, &on).unwrap();
    db.insert("other", section, "5", None, 0, &on).unwrap();
    db.insert("acc", "checks", "6", None, 0, &on).unwrap();
    let ids: Vec<String> = db
        .auto_subscribing_channels("acc")
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["1", "4"]);
    // Turned off by an update: the index follows the body.
    db.replace("acc", section, "1", &json!({"type": "EMAIL", "autoSubscribe": false}))
        .unwrap();
    assert_eq!(db.auto_subscribing_channels("acc").unwrap().len(), 1);
    // No other channel's body is read: the plan walks the partial index.
    let plan: Vec<String> = db
        .prepare(&format!("EXPLAIN QUERY PLAN {AUTO_SUBSCRIBING}"))
        .unwrap()
        .query_map(["acc"], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        plan.iter().any(|step| step.contains("objects_auto_subscribe")),
        "{plan:?}"
    );
}
