use super::*;
use crate::state::ResourceState;
use serde_json::json;

#[test]
fn yaml_keeps_strings_that_look_like_other_things() {
    let value = json!({"checks": {"2026": {"name": "2026", "a": "yes", "b": "null", "c": "1.0",
        "d": "#abc", "e": "a: b", "f": "line one\nline two\n", "g": " padded ", "h": "~", "i": "-x"}}});
    let text = serde_saphyr::to_string(&value).unwrap();
    let back: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(back, value, "{text}");
}

#[test]
fn unmanaged_objects_have_no_tag_and_no_state_entry() {
    let remote = |kind, id: &str, body| Remote::with_id(kind, id, &body);
    let objects = vec![
        remote(Kind::Check, "a", json!({"tags": ["monform:shop/a"]})),
        remote(Kind::Check, "b", json!({"tags": ["team:x"]})),
        remote(Kind::Snippet, "1", json!({"name": "Ours"})),
        remote(Kind::Snippet, "2", json!({"name": "Theirs"})),
    ];
    let mut state = State::new("shop");
    state.resources.insert(
        "snippets.ours".into(),
        ResourceState {
            remote_id: "1".into(),
            version: None,
            applied: String::new(),
            secrets: BTreeMap::new(),
            prevent_destroy: false,
            managed: Default::default(),
            fields: Default::default(),
            normal: Default::default(),
            retired: Vec::new(),
        },
    );
    // `shop` is seen by its tag but keeps no record yet: the owner of
    // snippet 2 cannot be told until it does, or unless included.
    let owners = Owners::new(objects.iter());
    let found = unmanaged(objects.clone(), &owners, Some(&state), &[]);
    let ids: Vec<&str> = found.objects.iter().map(|r| r.id.as_str()).collect();
    assert_eq!((ids, found.unknown.len(), found.others), (vec!["b"], 1, 1));
    let found = unmanaged(objects.clone(), &owners, Some(&state), &["snippets:2".to_owned()]);
    let ids: Vec<&str> = found.objects.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["b", "2"]);
    let mut objects = objects;
    let record = crate::ownership::Record::of_state(&state);
    objects.push(remote(
        Kind::Variable,
        &crate::ownership::record_key("shop"),
        record.body(),
    ));
    let owners = Owners::new(objects.iter());
    let found = unmanaged(objects, &owners, None, &[]);
    let ids: Vec<&str> = found.objects.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        (ids, found.others),
        (vec!["b", "2"], 1),
        "the record says snippet 1 is shop's"
    );
}

#[test]
fn slugs() {
    assert_eq!(slug("Homepage Ping"), "homepage-ping");
    assert_eq!(slug("  API: /v1/users  "), "api-v1-users");
    assert_eq!(slug("_private"), "x_private");
    assert_eq!(slug("!!!"), "x");
    assert_eq!(slug(&"a".repeat(100)).len(), 64);
}

#[test]
fn exports_with_logical_references_and_secrets() {
    let objects = vec![
        Remote::with_id(
            Kind::Group,
            "7",
            &json!({"id": 7, "name": "Prod", "tags": ["monform:x/prod"], "created_at": "t"}),
        ),
        Remote::with_id(
            Kind::Check,
            "c1",
            &json!({"id": "c1", "checkType": "API", "name": "Home", "groupId": 7, "heartbeat": {},
                "request": {"url": "https://e.com", "method": "GET"}}),
        ),
        Remote::with_id(
            Kind::Variable,
            "TOKEN",
            &json!({"key": "TOKEN", "value": null, "secret": true}),
        ),
    ];
    let exported = export(objects, SplitBy::Kind, Fold::None, &Default::default());
    let checks = &exported.files["checks.yaml"];
    assert!(checks.contains("group: prod"), "{checks}");
    assert!(!checks.contains("heartbeat"), "{checks}");
    let variables = &exported.files["variables.yaml"];
    assert!(variables.contains("${env:TOKEN}"), "{variables}");
    assert_eq!(exported.env.len(), 1);
    assert!(!exported.files["groups.yaml"].contains("monform:"));
}

/// Issue 43: the service's text is written escaped, so that the loader
/// reads it back as itself and substitutes nothing in it; a secret's own
/// placeholder is the one substitution written, whatever other strings say.
#[test]
fn service_text_reads_back_as_itself_and_only_placeholders_substitute() {
    let objects = |name: &str| {
        vec![Remote::with_id(
            Kind::Check,
            "c1",
            &json!({"id": "c1", "checkType": "API", "name": name,
                "tags": ["${env:LEAK}", "$${kept}"],
                "request": {"url": "https://e.com/${env:LEAK}", "method": "GET",
                    "headers": [{"key": "Authorization", "value": "Bearer x"}]}}),
        )]
    };
    let first = export(objects("x"), SplitBy::Kind, Fold::None, &Default::default());
    let placeholder = format!("${{env:{}}}", first.env[0].name);
    // A name spelling the placeholder of the check's own secret.
    let exported = export(objects(&placeholder), SplitBy::Kind, Fold::None, &Default::default());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        project_toml("p", None, &Default::default(), &Default::default()),
    )
    .unwrap();
    for (name, text) in &exported.files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let loaded = monform_config::load(dir.path(), &|_| Some("LEAKED".to_owned()));
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    let (_, check) = loaded.desired.resources.iter().next().unwrap();
    let json = check.resource.to_json();
    assert_eq!(json["name"], json!(placeholder));
    assert_eq!(json["tags"], json!(["${env:LEAK}", "$${kept}"]));
    assert_eq!(json["request"]["url"], json!("https://e.com/${env:LEAK}"));
    assert_eq!(json["request"]["headers"][0]["value"], json!("LEAKED"));
}

#[test]
fn only_references_to_the_services_variables_are_not_secrets() {
    for kept in ["{{API_TOKEN}}", "Bearer {{API_TOKEN}}", " {{ A }}{{B_2}} "] {
        assert!(names_service_variables(kept), "{kept}");
    }
    for secret in [
        "s3cret",
        "Bearer s3cret",
        "Bearer",
        "x{{A}}",
        "{{A}} x",
        "{{A-B}}",
        "{{}}",
        "{{A",
        "",
    ] {
        assert!(!names_service_variables(secret), "{secret}");
    }
}

/// Folding writes a header set and assertions two checks share once, in
/// `[vars]`; the loader gives each check its lists back as they were.
#[test]
fn shared_header_sets_and_assertions_become_vars_that_load_as_they_were() {
    let headers = json!([{"key": "Accept", "value": "application/json"}]);
    let assertions = json!([{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}]);
    let check = |id: &str, method: &str, frequency: u32| {
        Remote::with_id(
            Kind::Check,
            id,
            &json!({"checkType": "API", "name": format!("Check {id}"), "frequency": frequency,
                    "request": {"method": method, "url": format!("https://{id}.example.com"),
                                "headers": headers, "assertions": assertions}}),
        )
    };
    // Two checks (too few to fold into one definition), one with a list of its own.
    let lone = Remote::with_id(
        Kind::Check,
        "c",
        &json!({"checkType": "API", "name": "Check c", "request": {"method": "GET", "url": "https://c.example.com",
                "headers": [{"key": "X-Lone", "value": "1"}]}}),
    );
    let objects = vec![check("a", "GET", 1), check("b", "POST", 10), lone];
    let exported = export(objects.clone(), SplitBy::Kind, Fold::Safe, &Default::default());
    assert_eq!(
        exported.vars.keys().collect::<Vec<_>>(),
        ["assertions-status-code-200", "headers-accept"]
    );
    let files = &exported.files["checks.yaml"];
    assert_eq!(files.matches("${var:headers-accept}").count(), 2, "{files}");
    assert!(files.contains("X-Lone"), "a list no other check has stays: {files}");
    // Loaded, the checks are those of the files written without folding.
    let load = |exported: &Exported| {
        let dir = tempfile::tempdir().unwrap();
        let toml = project_toml("p", None, &exported.defaults, &exported.vars);
        std::fs::write(dir.path().join("monform.toml"), &toml).unwrap();
        for (name, text) in &exported.files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let loaded = monform_config::load(dir.path(), &|_| None);
        assert!(loaded.is_ok(), "{:?}\n{toml}", loaded.diagnostics);
        loaded
            .desired
            .resources
            .iter()
            .map(|(a, r)| (a.clone(), r.resource.to_json()))
            .collect::<BTreeMap<_, _>>()
    };
    let flat = export(objects, SplitBy::Kind, Fold::None, &Default::default());
    assert!(flat.vars.is_empty());
    assert_eq!(load(&exported), load(&flat));
}
