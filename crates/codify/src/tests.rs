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

fn load(dir: &tempfile::TempDir) -> Loaded {
    let loaded = monform_config::load(dir.path(), &|_| None);
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    loaded
}

fn drift(kind: Kind, id: &str, fields: &[(&str, Value)]) -> Drifted {
    Drifted {
        address: Address::new(kind, id),
        deleted: false,
        fields: fields
            .iter()
            .map(|(p, v)| DriftedField {
                path: (*p).into(),
                service: Some(v.clone()),
                conflict: None,
            })
            .collect(),
    }
}

const TOML: &str = "[project]\nname = \"p\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n\n[vars]\nbase = \"https://example.com\"\nshared = \"https://shared.example.com\"\n";

const YAML: &str = r#"# Checks of the shop.
checks:
  web:
    checkType: API   # the main one
    name: 'Web shop'
    frequency: 5
    tags:
      - web
      - shop
    request: { method: GET, url: "${var:base}/" }
  other:
    checkType: API
    name: Other
    request:
      method: GET
      url: ${var:shared}
  more:
    checkType: API
    name: More
    request: { method: GET, url: "${var:shared}" }

  api:
    forEach:
      orders: { path: /orders, freq: 5 }
      users: { path: /users, freq: 10 }
    checkType: API
    name: "API ${each.key}"
    frequency: ${each.value.freq}
    request: { method: GET, url: "https://x${each.value.path}" }
"#;

#[test]
fn literal_fields_are_edited_in_place_and_nothing_else_moves() {
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", YAML)]);
    let loaded = load(&dir);
    let drifted = [drift(
        Kind::Check,
        "web",
        &[
            ("name", json!("Web shop (EU)")),
            ("frequency", json!(1)),
            ("tags", json!(["web", "shop", "it's"])),
        ],
    )];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert_eq!(codified.files.len(), 1);
    let after = &codified.files[0].after;
    assert_eq!(
        after,
        &YAML
            .replace("'Web shop'", "'Web shop (EU)'")
            .replace("frequency: 5\n", "frequency: 1\n")
            .replace("      - shop\n", "      - shop\n      - it's\n")
    );
    assert!(codified.diff().starts_with("--- a/checks.yaml\n+++ b/checks.yaml\n"));
}

#[test]
fn defaults_variables_and_items_go_where_they_come_from() {
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", YAML)]);
    let loaded = load(&dir);
    let drifted = [
        drift(
            Kind::Check,
            "web",
            &[
                ("locations", json!(["us-east-1"])),
                ("request.url", json!("https://example.com/new")),
            ],
        ),
        drift(Kind::Check, "api[users]", &[("frequency", json!(30))]),
        drift(Kind::Check, "other", &[("request.url", json!("https://o"))]),
    ];
    let codified = codify(&loaded, &drifted, &Options::default());
    let after = &codified.files[0].after;
    assert!(
        after.contains("    request: { method: GET, url: \"${var:base}/\" }\n    locations: [us-east-1]\n"),
        "{after}"
    );
    assert!(after.contains("users: { path: /users, freq: 30 }"), "{after}");
    assert!(after.contains("      url: https://o\n"), "{after}");
    // `request.url` of `web` is a whole `${var:}` in a larger string: a hand edit.
    let notes: Vec<_> = codified
        .fields
        .iter()
        .map(|f| (f.address.to_string(), f.path.as_str(), f.note.is_some()))
        .collect();
    assert!(notes.contains(&("checks.web".into(), "locations", true)), "{notes:?}");
    assert!(
        notes.contains(&("checks.other".into(), "request.url", true)),
        "{notes:?}"
    );
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.hand_edits);
    assert_eq!(codified.hand_edits[0].path.as_deref(), Some("request.url"));
    assert!(codified.hand_edits[0].why.contains("interpolation"));
}

#[test]
fn edit_vars_changes_a_variable_used_once_only() {
    let toml = TOML.replace(
        "shared = \"https://shared.example.com\"\n",
        "shared = \"https://shared.example.com\"\nonly = \"https://only\"\n",
    );
    let yaml = YAML.replace("url: \"${var:shared}\" }", "url: \"${var:only}\" }").replace("  api:\n", "  third:\n    checkType: API\n    name: Third\n    request: { method: GET, url: \"${var:shared}\" }\n  api:\n");
    let dir = project(&[("monform.toml", &toml), ("checks.yaml", &yaml)]);
    let loaded = load(&dir);
    let drifted = [
        drift(Kind::Check, "more", &[("request.url", json!("https://only/v2"))]),
        drift(Kind::Check, "other", &[("request.url", json!("https://other"))]),
    ];
    let codified = codify(
        &loaded,
        &drifted,
        &Options {
            edit_vars: true,
            ..Options::default()
        },
    );
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    let names: Vec<&str> = codified.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["monform.toml", "checks.yaml"]);
    assert!(codified.files[0].after.contains("only = \"https://only/v2\"\n"));
    // `shared` is used twice: the resource gets a literal.
    assert!(
        codified.files[1].after.contains("      url: https://other\n"),
        "{}",
        codified.files[1].after
    );
    assert!(!codified.files[1].after.contains("https://only/v2"));
}

#[test]
fn shared_definition_fields_change_only_when_every_item_drifted_alike() {
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", YAML)]);
    let loaded = load(&dir);
    let one = [drift(Kind::Check, "api[orders]", &[("name", json!("Orders"))])];
    let codified = codify(&loaded, &one, &Options::default());
    assert!(codified.files.is_empty());
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.hand_edits);
    let both = [
        drift(Kind::Check, "api[orders]", &[("activated", json!(false))]),
        drift(Kind::Check, "api[users]", &[("activated", json!(false))]),
    ];
    let codified = codify(&loaded, &both, &Options::default());
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert!(codified.files[0].after.contains("  api:\n    forEach:"));
    assert!(
        codified.files[0]
            .after
            .ends_with("url: \"https://x${each.value.path}\" }\n    activated: false\n"),
        "{}",
        codified.files[0].after
    );
    assert_eq!(codified.fields.len(), 2);
}

#[test]
fn toml_values_and_new_fields_keep_the_rest() {
    let checks = "# the API\n[checks.web]\ncheckType = \"API\"\nname = 'Web'   # shown\nfrequency = 5\n\n[checks.web.request]\nmethod = \"GET\"\nurl = \"https://example.com\"\n";
    let dir = project(&[("monform.toml", TOML), ("checks.toml", checks)]);
    let loaded = load(&dir);
    let drifted = [drift(
        Kind::Check,
        "web",
        &[
            ("name", json!("Web 2")),
            ("activated", json!(false)),
            ("request.followRedirects", json!(false)),
            ("tags", json!(["a"])),
        ],
    )];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert_eq!(
        codified.files[0].after,
        "# the API\n[checks.web]\ncheckType = \"API\"\nname = 'Web 2'   # shown\nfrequency = 5\nactivated = false\ntags = [\"a\"]\n\n[checks.web.request]\nmethod = \"GET\"\nurl = \"https://example.com\"\nfollowRedirects = false\n"
    );
}

#[test]
fn secrets_are_listed_never_written() {
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", YAML)]);
    let loaded = load(&dir);
    let drifted = [Drifted {
        address: Address::new(Kind::Check, "web"),
        deleted: false,
        fields: vec![DriftedField {
            path: "request.headers".into(),
            service: None,
            conflict: None,
        }],
    }];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert!(codified.files.is_empty());
    assert_eq!(codified.secrets.len(), 1);
}

#[test]
fn an_anchored_value_is_a_hand_edit_and_an_alias_becomes_a_literal() {
    let yaml = "checks:\n  a:\n    checkType: API\n    name: A\n    tags: &t [x, y]\n    request: { method: GET, url: https://a }\n  b:\n    checkType: API\n    name: B\n    tags: *t   # shared\n    request: { method: GET, url: https://b }\n";
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", yaml)]);
    let loaded = load(&dir);
    let drifted = [
        drift(Kind::Check, "a", &[("tags", json!(["x"]))]),
        drift(Kind::Check, "b", &[("tags", json!(["x", "y", "z"]))]),
    ];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert_eq!(codified.files[0].after, yaml.replace("tags: *t ", "tags: [x, y, z] "));
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.hand_edits);
    assert!(codified.hand_edits[0].why.contains("anchored (`&t`)"));
}

#[test]
fn block_lists_are_rewritten_in_block_style_at_their_column() {
    let yaml = "checks:\n  a:\n    checkType: API\n    name: A\n    request:\n      method: GET\n      url: https://a\n      assertions:\n        - source: STATUS_CODE\n          comparison: EQUALS\n          target: \"200\"\n    frequency: 5\n";
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", yaml)]);
    let loaded = load(&dir);
    let assertions = json!([
        {"source": "STATUS_CODE", "comparison": "EQUALS", "target": "201"},
        {"source": "RESPONSE_TIME", "comparison": "LESS_THAN", "target": "500"}
    ]);
    let drifted = [drift(Kind::Check, "a", &[("request.assertions", assertions)])];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert_eq!(
        codified.files[0].after,
        yaml.replace(
            "          target: \"200\"\n",
            "          target: \"201\"\n        - source: RESPONSE_TIME\n          comparison: LESS_THAN\n          target: \"500\"\n"
        )
    );
}

#[test]
fn for_each_file_and_data_file_items_are_hand_edits() {
    let yaml = "checks:\n  e2e:\n    forEachFile: \"e2e/*.spec.js\"\n    checkType: BROWSER\n    name: \"E2E ${each.key}\"\n    script: { file: \"${each.value}\" }\n  rows:\n    forEach: { file: rows.json }\n    checkType: API\n    name: \"Row ${each.key}\"\n    frequency: ${each.value.freq}\n    request: { method: GET, url: https://rows }\n";
    let dir = project(&[
        ("monform.toml", TOML),
        ("checks.yaml", yaml),
        ("rows.json", "[{\"key\": \"first\", \"freq\": 5}]"),
    ]);
    std::fs::create_dir(dir.path().join("e2e")).unwrap();
    std::fs::write(dir.path().join("e2e/login.spec.js"), "// login\n").unwrap();
    let loaded = load(&dir);
    let drifted = [
        drift(Kind::Check, "e2e[login]", &[("frequency", json!(30))]),
        drift(Kind::Check, "rows[first]", &[("frequency", json!(30))]),
    ];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert!(codified.files.is_empty());
    let whys: Vec<&str> = codified.hand_edits.iter().map(|h| h.why.as_str()).collect();
    assert_eq!(whys.len(), 2, "{whys:?}");
    assert!(whys[0].contains("forEachFile"), "{whys:?}");
    assert!(whys[1].contains("data file"), "{whys:?}");
    assert_eq!(codified.hand_edits[1].service, Some(json!(30)));
}

#[test]
fn toml_for_each_items_and_variables() {
    let checks = "[checks.api]\ncheckType = \"API\"\nname = \"API ${each.key}\"\nfrequency = \"${each.value.freq}\"\nrequest = { method = \"GET\", url = \"${var:base}\" }\n\n[checks.api.forEach]\norders = { path = \"/orders\", freq = 5 }  # busy\nusers = { path = \"/users\", freq = 10 }\n";
    let dir = project(&[("monform.toml", TOML), ("checks.toml", checks)]);
    let loaded = load(&dir);
    let drifted = [
        drift(Kind::Check, "api[orders]", &[("frequency", json!(1))]),
        drift(Kind::Check, "api[users]", &[("request.url", json!("https://v2"))]),
    ];
    let codified = codify(
        &loaded,
        &drifted,
        &Options {
            edit_vars: true,
            ..Options::default()
        },
    );
    // One item's URL changed, and both items read the variable: not for
    // the variable, nor for the definition they share.
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.hand_edits);
    assert_eq!(codified.files.len(), 1);
    assert_eq!(
        codified.files[0].after,
        checks.replace("freq = 5 }  # busy", "freq = 1 }  # busy")
    );
    let both = [
        drift(Kind::Check, "api[orders]", &[("request.url", json!("https://v2"))]),
        drift(Kind::Check, "api[users]", &[("request.url", json!("https://v2"))]),
    ];
    let codified = codify(
        &loaded,
        &both,
        &Options {
            edit_vars: true,
            ..Options::default()
        },
    );
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    let names: Vec<&str> = codified.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["monform.toml"]);
    assert_eq!(
        codified.files[0].after,
        TOML.replace("base = \"https://example.com\"", "base = \"https://v2\"")
    );
}

#[test]
fn items_from_a_variable_are_found_in_their_definition() {
    let toml = format!("{TOML}regions = {{ eu = {{ freq = 5 }} }}\n");
    let yaml = "checks:\n  r:\n    forEach: \"${var:regions}\"\n    checkType: API\n    name: \"R ${each.key}\"\n    frequency: ${each.value.freq}\n    request: { method: GET, url: https://r }\n";
    let dir = project(&[("monform.toml", &toml), ("checks.yaml", yaml)]);
    let loaded = load(&dir);
    let drifted = [drift(
        Kind::Check,
        "r[eu]",
        &[("frequency", json!(1)), ("activated", json!(false))],
    )];
    let codified = codify(&loaded, &drifted, &Options::default());
    // The shared definition takes the field every item (one) changed.
    assert_eq!(codified.files[0].name, "checks.yaml");
    assert!(
        codified.files[0]
            .after
            .ends_with("url: https://r }\n    activated: false\n")
    );
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.hand_edits);
    assert!(
        codified.hand_edits[0].why.contains("variable"),
        "{:?}",
        codified.hand_edits
    );
}

#[test]
fn an_edit_that_would_not_read_back_is_a_hand_edit_and_the_others_are_made() {
    // A dotted key's table has no text of its own to add an entry to.
    let checks = "[checks.web]\ncheckType = \"API\"\nname = \"Web\"\nrequest.method = \"GET\"\nrequest.url = \"https://example.com\"\n";
    let dir = project(&[("monform.toml", TOML), ("checks.toml", checks)]);
    let loaded = load(&dir);
    let drifted = [drift(
        Kind::Check,
        "web",
        &[("name", json!("Web 2")), ("request.followRedirects", json!(false))],
    )];
    let codified = codify(&loaded, &drifted, &Options::default());
    assert_eq!(codified.files[0].after, checks.replace("\"Web\"", "\"Web 2\""));
    assert_eq!(codified.hand_edits.len(), 1, "{:?}", codified.hand_edits);
    assert_eq!(codified.hand_edits[0].path.as_deref(), Some("request.followRedirects"));
    assert!(codified.hand_edits[0].why.contains("read back"));
}

/// Issue 43: text from the service is written so that it reads back as
/// itself, with nothing substituted, wherever it goes: the resource's own
/// line (YAML and TOML, each quoting), a list, a new field, a variable
/// (`--edit-vars`), a `forEach` definition; a `forEach` item, which is not
/// substituted, as it is.
#[test]
fn every_write_reads_back_as_the_service_text_with_nothing_substituted() {
    const TOML: &str = "[project]\nname = \"p\"\n\n[vars]\nonly = \"https://a.example.com/\"\n";
    const YAML: &str = r#"checks:
  web:
    checkType: API
    name: 'Web'
    tags: [web]
    request: { method: GET, url: "${var:only}" }
  plain:
    checkType: API
    name: Plain
    request:
      method: GET
      url: "https://p.example.com/"
  api:
    forEach:
      orders: { title: Orders }
      users: { title: Users }
    checkType: API
    name: "${each.value.title}"
    request: { method: GET, url: "https://x.example.com/" }
"#;
    const INFRA: &str = "[checks.db]\ncheckType = \"TCP\"\nname = 'Database'\nrequest = { hostname = \"db.example.com\", port = 5432 }\n";
    let dir = project(&[("monform.toml", TOML), ("checks.yaml", YAML), ("infra.toml", INFRA)]);
    let loaded = load(&dir);
    let url = json!("https://y.example.com/?q=${env:LEAK}");
    let drifted = [
        drift(
            Kind::Check,
            "web",
            &[
                ("name", json!("x ${env:LEAK}")),
                ("tags", json!(["web", "${env:LEAK}", "$${kept}", "$$${env:LEAK}"])),
                ("request.url", json!("https://a.example.com/${env:LEAK}")),
            ],
        ),
        drift(
            Kind::Check,
            "plain",
            &[
                ("name", json!("${var:only}")),
                ("request.url", json!("https://p.example.com/${each.key}")),
                (
                    "request.headers",
                    json!([{"key": "X-Note", "value": "${env:LEAK}", "locked": false}]),
                ),
            ],
        ),
        drift(
            Kind::Check,
            "api[orders]",
            &[("name", json!("${env:LEAK} orders")), ("request.url", url.clone())],
        ),
        drift(Kind::Check, "api[users]", &[("request.url", url)]),
        drift(Kind::Check, "db", &[("name", json!("db ${env:LEAK} $${x}"))]),
    ];
    let codified = codify(
        &loaded,
        &drifted,
        &Options {
            edit_vars: true,
            ..Options::default()
        },
    );
    assert!(codified.hand_edits.is_empty(), "{:?}", codified.hand_edits);
    assert_eq!(codified.fields.len(), 10, "{:?}", codified.fields);
    write(&codified).unwrap();
    let reloaded = monform_config::load(dir.path(), &|_| Some("LEAKED".to_owned()));
    assert!(reloaded.is_ok(), "{:?}", reloaded.diagnostics);
    for resource in &drifted {
        let json = reloaded.desired.resources[&resource.address].resource.to_json();
        assert!(!json.to_string().contains("LEAKED"), "{}: {json}", resource.address);
        for field in &resource.fields {
            assert_eq!(
                FieldPath::parse(&field.path).get(&json),
                field.service.as_ref(),
                "{}.{}",
                resource.address,
                field.path
            );
        }
    }
    // What was written reads as text a second time too: codify again
    // changes nothing.
    let again = codify(
        &load(&dir),
        &drifted,
        &Options {
            edit_vars: true,
            ..Options::default()
        },
    );
    assert!(again.hand_edits.is_empty(), "{:?}", again.hand_edits);
    for file in &again.files {
        assert_eq!(file.before, file.after, "{}", file.name);
    }
}
