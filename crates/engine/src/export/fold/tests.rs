use super::*;
use serde_json::json;

fn check(name: &str, path: &str, locations: &[&str], frequency: u32) -> Value {
    json!({
        "checkType": "API",
        "name": name,
        "frequency": frequency,
        "locations": locations,
        "request": {
            "method": "GET",
            "url": format!("https://api.example.com{path}"),
            "headers": [{"key": "Accept", "value": "application/json"}],
            "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}],
        },
    })
}

#[test]
fn look_alikes_fold_and_shapes_split_them() {
    let mut values = Vec::new();
    for (i, path) in ["/users", "/orders", "/carts", "/items"].iter().enumerate() {
        let region = if i % 2 == 0 { "eu-west-1" } else { "us-east-1" };
        values.push(check(&format!("API {}", &path[1..]), path, &[region], 5));
    }
    // Another shape (another frequency): a group of its own.
    for path in ["/a", "/b", "/c"] {
        values.push(check(&format!("Slow {}", &path[1..]), path, &["eu-west-1"], 60));
    }
    // Alone: stays as it is.
    values.push(json!({"checkType": "TCP", "name": "db", "request": {"hostname": "db", "port": 5432}}));
    let refs: Vec<&Value> = values.iter().collect();
    let found = clusters(&refs, Fold::Safe);
    assert_eq!(found, vec![vec![0, 1, 2, 3], vec![4, 5, 6]]);
    assert!(clusters(&refs, Fold::None).is_empty());
}

#[test]
fn a_definition_keeps_what_its_members_share_and_items_hold_the_rest() {
    let values = [
        check("API users", "/users", &["eu-west-1"], 5),
        check("API orders", "/orders", &["us-east-1"], 5),
        check("API carts", "/carts", &["eu-west-1", "us-east-1"], 5),
    ];
    let refs: Vec<&Value> = values.iter().collect();
    let names = ["API users", "API orders", "API carts"];
    let mut taken = HashSet::new();
    let (id, keys) = logical_ids(
        &names,
        &["api-users", "api-orders", "api-carts"],
        "api-checks",
        &mut taken,
    );
    assert_eq!(id, "api");
    assert_eq!(keys, ["users", "orders", "carts"]);
    let definition = definition(&refs, &keys, Fold::Safe).unwrap();
    assert_eq!(
        definition,
        json!({
            "forEach": {
                "users": {"name": "users", "locations": ["eu-west-1"], "url": "/users"},
                "orders": {"name": "orders", "locations": ["us-east-1"], "url": "/orders"},
                "carts": {"name": "carts", "locations": ["eu-west-1", "us-east-1"], "url": "/carts"},
            },
            "checkType": "API",
            "name": "API ${each.value.name}",
            "frequency": 5,
            "locations": "${each.value.locations}",
            "request": {
                "method": "GET",
                "url": "https://api.example.com${each.value.url}",
                "headers": [{"key": "Accept", "value": "application/json"}],
                "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}],
            },
        })
    );
    // A second definition named alike gets the next id.
    let (again, _) = logical_ids(&names, &["a", "b", "c"], "api-checks", &mut taken);
    assert_eq!(again, "api-2");
}

#[test]
fn safe_splits_on_lists_and_nested_differences_aggressive_folds_them() {
    let mut values = Vec::new();
    for (i, target) in ["200", "201", "204"].iter().enumerate() {
        let mut value = check(&format!("API {i}"), &format!("/{i}"), &["eu-west-1"], 5);
        value["request"]["assertions"][0]["target"] = json!(target);
        values.push(value);
    }
    let refs: Vec<&Value> = values.iter().collect();
    assert!(clusters(&refs, Fold::Safe).is_empty(), "an assertion differs: not safe");
    assert_eq!(clusters(&refs, Fold::Aggressive), vec![vec![0, 1, 2]]);
    let definition = definition(&refs, &["a".into(), "b".into(), "c".into()], Fold::Aggressive).unwrap();
    assert_eq!(
        definition["request"]["assertions"][0]["target"],
        json!("${each.value.target}")
    );
    assert_eq!(definition["forEach"]["c"]["target"], json!("204"));
}

#[test]
fn too_many_differences_split_by_the_fewest_distinct_values() {
    // Five fields differ: split by the first with two values (frequency).
    let values: Vec<Value> = (0..6)
        .map(|i| {
            let mut v = check(
                &format!("C {i}"),
                &format!("/{i}"),
                &[["a", "b", "c"][i % 3]],
                5 + (i as u32 % 2),
            );
            v["degradedResponseTime"] = json!(1000 + 500 * (i % 2));
            v
        })
        .collect();
    let refs: Vec<&Value> = values.iter().collect();
    let found = clusters(&refs, Fold::Safe);
    assert_eq!(
        found,
        vec![vec![0, 2, 4], vec![1, 3, 5]],
        "split by frequency, then 3 slots each"
    );
}

#[test]
fn items_hold_the_services_text_and_the_definition_the_escaped_text() {
    // `${` in the service's text: escaped in the files (`$${`), as is in items.
    let values = [
        json!({"name": "Price $${x} a", "frequency": 1}),
        json!({"name": "Price $${x} b", "frequency": 1}),
        json!({"name": "Price $${x} c", "frequency": 1}),
    ];
    let refs: Vec<&Value> = values.iter().collect();
    let keys: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let partial = definition(&refs, &keys, Fold::Safe).unwrap();
    assert_eq!(
        partial["name"],
        json!("Price ${each.value.name}"),
        "no `$` beside a substitution"
    );
    assert_eq!(partial["forEach"]["a"]["name"], json!("${x} a"));
    let whole = [json!({"n": "$${a}"}), json!({"n": "$${b}"}), json!({"n": "$${c}"})];
    let refs: Vec<&Value> = whole.iter().collect();
    let definition = definition(&refs, &keys, Fold::Safe).unwrap();
    assert_eq!(definition["n"], json!("${each.value.n}"));
    assert_eq!(definition["forEach"]["b"]["n"], json!("${b}"));
}

#[test]
fn affixes_cut_at_word_and_path_boundaries() {
    assert_eq!(
        affixes(&["https://e.com/users", "https://e.com/user-roles"]),
        Some(("https://e.com".into(), String::new()))
    );
    assert_eq!(affixes(&["Home EU", "Home US"]), Some(("Home ".into(), String::new())));
    assert_eq!(affixes(&["a", "b"]), None);
    assert_eq!(
        affixes(&["https://a.com", "https://b.com"]),
        Some(("https://".into(), ".com".into()))
    );
    assert_eq!(
        affixes(&["users (Shop)", "carts (Shop)"]),
        Some((String::new(), " (Shop)".into()))
    );
    assert_eq!(affixes(&["users (A 1)", "carts (B 1)"]), None, "never a lone `)`");
    assert_eq!(
        affixes(&["Home (EU)", "Home (US)"]),
        Some(("Home ".into(), String::new()))
    );
    assert_eq!(
        affixes(&["$a", "$b"]),
        None,
        "a `$` before a substitution would escape it"
    );
}

#[test]
fn names_that_do_not_tell_members_apart_fall_back_to_their_ids() {
    let mut taken = HashSet::from(["home".to_owned()]);
    let (id, keys) = logical_ids(
        &["Home", "Home", "Home"],
        &["home", "home-2", "home-3"],
        "url-checks",
        &mut taken,
    );
    assert_eq!(
        (id.as_str(), keys.as_slice()),
        ("home-2", &["home", "home-2", "home-3"].map(String::from)[..])
    );
}

#[test]
fn defaults_are_the_values_most_checks_share_and_all_write() {
    let values = [
        json!({"name": "a", "frequency": 10, "locations": ["eu-west-1"], "tags": ["x"]}),
        json!({"name": "b", "frequency": 10, "locations": ["eu-west-1"]}),
        json!({"name": "c", "frequency": 10, "locations": ["eu-west-1"], "tags": ["x"]}),
        json!({"name": "d", "frequency": 5, "privateLocations": ["office"]}),
    ];
    let refs: Vec<&Value> = values.iter().collect();
    let defaults = shared_defaults(&refs, &|f| f == "name");
    // tags: one check has none (a default would add them); locations: the
    // private check does not count.
    assert_eq!(
        Value::Object(defaults),
        json!({"frequency": 10, "locations": ["eu-west-1"]})
    );
}
