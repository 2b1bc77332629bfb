//! Issue 45: an edit made in one environment's service, and a value
//! written through `${each.value.X:-default}`.

use super::*;
use monform_engine::ops::DriftedField;
use monform_model::Kind;
use serde_json::json;

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn load(dir: &tempfile::TempDir, environment: Option<&str>) -> Loaded {
    let loaded = monform_config::load_environment(dir.path(), &|_| None, environment);
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    loaded
}

fn drift(id: &str, path: &str, value: Value) -> Drifted {
    Drifted {
        address: Address::new(Kind::Check, id),
        deleted: false,
        fields: vec![DriftedField {
            path: path.into(),
            service: Some(value),
            conflict: None,
        }],
    }
}

const ENVIRONMENTS: &str = r#"[project]
name = "shop"

[vars]
site = "https://shop.example.com"

[environments.staging]
vars = { site = "https://staging.example.com" }

[environments.production]
vars = { site = "https://www.example.com" }
"#;

const CHECKS: &str = r#"checks:
  home:
    checkType: URL
    name: Home
    request: { url: "${var:site}" }
  e2e:
    environments: [production]
    checkType: URL
    name: E2E
    request: { url: "https://www.example.com/e2e" }
"#;

#[test]
fn an_edit_in_one_environment_is_refused_in_a_shared_definition_with_the_choices() {
    let dir = project(&[("monform.toml", ENVIRONMENTS), ("checks.yaml", CHECKS)]);
    let loaded = load(&dir, Some("production"));
    let codified = codify(&loaded, &[drift("home", "muted", json!(true))], &Options::default());
    assert!(codified.files.is_empty(), "{:?}", codified.diff());
    assert_eq!(codified.hand_edits.len(), 1);
    assert_eq!(
        codified.hand_edits[0].why,
        "changed in environment production, and staging reads the same definition: not written (see the note)"
    );
    assert_eq!(codified.notes.len(), 1, "said once");
    let choices = &codified.notes[0];
    assert!(
        choices.contains("`environments: [production]`")
            && choices.contains("[environments.production] vars")
            && choices.contains("--all-environments"),
        "{choices}"
    );

    // A definition production alone reads takes it.
    let codified = codify(&loaded, &[drift("e2e", "muted", json!(true))], &Options::default());
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert!(
        codified.files[0].after.contains("/e2e\" }\n    muted: true\n"),
        "{}",
        codified.files[0].after
    );

    // --all-environments writes the shared one, and says who else changes.
    let all = Options {
        all_environments: true,
        ..Options::default()
    };
    let codified = codify(&loaded, &[drift("home", "muted", json!(true))], &all);
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    let note = codified.fields[0].note.as_deref().unwrap_or_default();
    assert!(note.contains("staging changes too"), "{note}");

    // Without environments loaded nothing changes.
    let checks = CHECKS.replace("    environments: [production]\n", "");
    let plain = project(&[
        (
            "monform.toml",
            "[project]\nname = \"p\"\n[vars]\nsite = \"https://x\"\n",
        ),
        ("checks.yaml", &checks),
    ]);
    let codified = codify(
        &load(&plain, None),
        &[drift("home", "muted", json!(true))],
        &Options::default(),
    );
    assert!(codified.hand_edits.is_empty() && codified.files.len() == 1);
}

#[test]
fn edit_vars_in_an_environment_writes_that_environments_value() {
    let dir = project(&[("monform.toml", ENVIRONMENTS), ("checks.yaml", CHECKS)]);
    let edit_vars = Options {
        edit_vars: true,
        ..Options::default()
    };
    let loaded = load(&dir, Some("production"));
    let codified = codify(
        &loaded,
        &[drift("home", "request.url", json!("https://www2.example.com"))],
        &edit_vars,
    );
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert_eq!(codified.files.len(), 1);
    assert_eq!(
        codified.files[0].after,
        ENVIRONMENTS.replace(
            "vars = { site = \"https://www.example.com\" }",
            "vars = { site = \"https://www2.example.com\" }"
        )
    );
    // Without --edit-vars the literal would go into the shared definition: refused.
    let codified = codify(
        &loaded,
        &[drift("home", "request.url", json!("https://www2.example.com"))],
        &Options::default(),
    );
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.diff());

    // An environment that does not set the variable gets its own value.
    let toml = ENVIRONMENTS.replace(
        "[environments.production]\nvars = { site = \"https://www.example.com\" }\n",
        "[environments.production]\nproject = \"shop\"\n",
    );
    let dir = project(&[("monform.toml", &toml), ("checks.yaml", CHECKS)]);
    let loaded = load(&dir, Some("production"));
    let codified = codify(
        &loaded,
        &[drift("home", "request.url", json!("https://www2.example.com"))],
        &edit_vars,
    );
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert!(
        codified.files[0].after.ends_with(
            "[environments.production]\nproject = \"shop\"\nvars = { site = \"https://www2.example.com\" }\n"
        ),
        "{}",
        codified.files[0].after
    );
    let note = codified.fields[0].note.as_deref().unwrap_or_default();
    assert!(
        note.contains("own value in environment production ([vars] unchanged)"),
        "{note}"
    );
}

#[test]
fn each_value_with_a_default_edits_the_item_or_gives_it_the_field() {
    let toml = "[project]\nname = \"p\"\n\n[vars]\napi_frequency = 10\n";
    let yaml = r#"checks:
  api:
    forEach:
      orders: { path: /orders, frequency: 5 }
      users: { path: /users }
    checkType: API
    name: "API ${each.key}"
    frequency: ${each.value.frequency:-${var:api_frequency}}
    request: { method: GET, url: "https://api.example.com${each.value.path}" }
"#;
    let dir = project(&[("monform.toml", toml), ("checks.yaml", yaml)]);
    let loaded = load(&dir, None);
    let codified = codify(
        &loaded,
        &[
            drift("api[orders]", "frequency", json!(1)),
            drift("api[users]", "frequency", json!(30)),
        ],
        &Options::default(),
    );
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    let after = &codified.files[0].after;
    assert_eq!(
        after,
        &yaml
            .replace(
                "orders: { path: /orders, frequency: 5 }",
                "orders: { path: /orders, frequency: 1 }"
            )
            .replace("users: { path: /users }", "users: { path: /users, frequency: 30 }")
    );
    let notes: Vec<Option<&str>> = codified.fields.iter().map(|f| f.note.as_deref()).collect();
    assert_eq!(
        notes,
        [
            None,
            Some("the item set no frequency, so `${var:api_frequency}` applied: the item now sets it")
        ]
    );
    // Read back: the files now give each item the service's value.
    let again = load(&project(&[("monform.toml", toml), ("checks.yaml", after)]), None);
    let frequency = |id: &str| {
        again.desired.resources[&Address::new(Kind::Check, id)]
            .resource
            .to_json()["frequency"]
            .clone()
    };
    assert_eq!(
        (frequency("api[orders]"), frequency("api[users]")),
        (json!(1), json!(30))
    );
}

#[test]
fn a_conflict_is_listed_and_written_only_when_taking_the_service() {
    let toml = "[project]\nname = \"p\"\n";
    let yaml = "checks:\n  api:\n    checkType: API\n    name: API\n    maxResponseTime: 7000\n    request: { method: GET, url: \"https://api.example.com\" }\n";
    let dir = project(&[("monform.toml", toml), ("checks.yaml", yaml)]);
    let loaded = load(&dir, None);
    let mut drifted = drift("api", "maxResponseTime", json!(9000));
    drifted.fields[0].conflict = Some(monform_engine::Conflict {
        applied: Some(json!(5000)),
        service: Some(json!(9000)),
        files: json!(7000),
        files_default: false,
    });
    let codified = codify(&loaded, std::slice::from_ref(&drifted), &Options::default());
    assert!(codified.files.is_empty() && codified.fields.is_empty());
    assert_eq!(codified.conflicts.len(), 1);
    let conflict = &codified.conflicts[0];
    assert_eq!(
        (
            conflict.path.as_str(),
            &conflict.applied,
            &conflict.service,
            &conflict.files
        ),
        ("maxResponseTime", &Some(json!(5000)), &Some(json!(9000)), &json!(7000))
    );
    let taken = codify(
        &loaded,
        &[drifted],
        &Options {
            take_service: true,
            ..Options::default()
        },
    );
    assert!(taken.conflicts.is_empty());
    assert_eq!(taken.files[0].after, yaml.replace("7000", "9000"));
    let note = taken.fields[0].note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("a conflict: the files' change (7000) is replaced"),
        "{note}"
    );
}
