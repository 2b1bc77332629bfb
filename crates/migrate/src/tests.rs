//! The example Terraform project (examples/terraform) migrated: what the
//! files say, what the report lists, that no secret is written, and that
//! the loader reads the project without a diagnostic. The plan against the
//! service is the end-to-end test's (tests/it/migrate.rs).

use std::path::PathBuf;

use super::*;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/terraform")
}

fn migrated() -> Migration {
    let dir = example();
    migrate(&Options {
        state: Some(dir.join("terraform.show.json")),
        dir,
        project: "shop".into(),
        api_url: None,
    })
    .unwrap()
}

fn file<'m>(migration: &'m Migration, name: &str) -> &'m str {
    migration
        .files
        .get(name)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn for_each_count_modules_and_variables_translate() {
    let migration = migrated();
    let main = file(&migration, "main.yaml");
    // for_each over a variable: the variable's map in [vars].
    assert!(main.contains("  pages:\n    forEach: ${var:pages}\n"), "{main}");
    assert!(main.contains("url: ${var:base_url}${each.value}"), "{main}");
    // count: items "0", "1", count.index as each.key.
    assert!(main.contains("forEach:\n    - \"0\"\n    - \"1\""), "{main}");
    assert!(main.contains("hostname: db-${each.key}.internal.example.com"), "{main}");
    // References are logical ids.
    assert!(main.contains("group: production"), "{main}");
    assert!(main.contains("setupSnippet: auth"), "{main}");
    // file() is a script file of its own.
    assert!(main.contains("script:\n      file: scripts/login.js"), "{main}");
    assert!(file(&migration, "scripts/login.js").contains("page.goto"));
    // The provider's defaults that are not monform's come from the state.
    assert!(main.contains("degradedResponseTime: 3000"), "{main}");
    // ... but not what the check's group imposes (its alert settings).
    let pages = &main[main.find("  pages:").unwrap()..main.find("  api_health:").unwrap()];
    assert!(!pages.contains("alertSettings"), "{pages}");
    let login = &main[main.find("  login:").unwrap()..main.find("  nightly_backup:").unwrap()];
    assert!(login.contains("alertSettings"), "{login}");
    assert!(main.contains("doubleCheck: false"), "{main}");
    // The local module: its own file, ids prefixed with the call's name,
    // arguments and defaults inlined.
    let module = file(&migration, "modules/api-checks/main.yaml");
    assert!(
        module.contains("payments_endpoint:\n    forEach:\n      charges: /v1/charges"),
        "{module}"
    );
    assert!(
        module.contains("url: ${var:base_url}/payments${each.value}"),
        "{module}"
    );
    assert!(module.contains("frequency: 2"), "{module}");
    assert!(module.contains("alertChannels:\n    - oncall"), "{module}");
    let toml = file(&migration, "monform.toml");
    assert!(toml.contains("base_url = \"https://shop.example.com\""), "{toml}");
    assert!(toml.contains("team = \"shop\""), "{toml}");
    assert!(
        !toml.contains("api_token"),
        "a sensitive variable is never a [vars] entry: {toml}"
    );
}

#[test]
fn every_state_instance_is_imported() {
    let migration = migrated();
    assert_eq!(migration.imports.len(), 21);
    let imports = file(&migration, "imports.yaml");
    for entry in [
        "to: checks.pages[home]",
        "to: checks.database[1]",
        "to: checks.payments_endpoint[refunds]",
        "to: variables.API_TOKEN\n  id: API_TOKEN",
        "to: groups.production\n  id: \"301\"",
    ] {
        assert!(imports.contains(entry), "missing {entry}: {imports}");
    }
}

#[test]
fn what_is_not_translated_is_listed_with_file_and_line() {
    let migration = migrated();
    let notes: Vec<String> = migration.notes.iter().map(ToString::to_string).collect();
    let expected = [
        "main.tf:77: checks.api_health: `description` = `upper(\"health of the ${local.team} API\")`: the function `upper()` is not translated; written as the state's value (edit by hand to keep it computed)",
        "main.tf:146: `data \"checkly_static_ips\" \"all\"` is not migrated (monform has no data sources or other providers)",
    ];
    assert_eq!(notes, expected);
    let report = file(&migration, "MIGRATION.md");
    assert!(report.contains("- `main.tf:77`: checks.api_health"), "{report}");
}

#[test]
fn no_secret_is_written() {
    let migration = migrated();
    for (name, text) in &migration.files {
        for secret in [
            "whsec-fixture-never-written",
            "tok-fixture-never-written",
            "pl_fixture_key",
        ] {
            assert!(!text.contains(secret), "{name}: {text}");
        }
    }
    let main = file(&migration, "main.yaml");
    assert!(main.contains("webhookSecret: ${env:WEBHOOK_SECRET}"), "{main}");
    assert!(main.contains("value: ${env:API_TOKEN}"), "{main}");
    // Only names the service's variable: kept as written, as export keeps it.
    assert!(main.contains("value: Bearer {{API_TOKEN}}"), "{main}");
    let env: Vec<&str> = migration.env.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(env, ["API_TOKEN", "WEBHOOK_SECRET"]);
}

#[test]
fn the_loader_reads_the_migrated_project() {
    let migration = migrated();
    let out = tempfile::tempdir().unwrap();
    write(out.path(), &migration).unwrap();
    let env = |name: &str| match name {
        "API_TOKEN" | "WEBHOOK_SECRET" => Some("set".to_owned()),
        _ => None,
    };
    let loaded = monform_config::load(out.path(), &env);
    assert!(loaded.is_ok(), "{:#?}", loaded.diagnostics);
    // 16 definitions, 21 objects: forEach and count items are one resource each.
    assert_eq!(loaded.desired.resources.len(), 21);
    let refused = write(out.path(), &migration).unwrap_err().to_string();
    assert!(refused.contains("already holds a monform.toml"), "{refused}");
}

#[test]
fn a_secret_literal_and_a_computed_for_each_fall_back_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.tf"),
        r#"
resource "checkly_alert_channel" "ops" {
  opsgenie {
    name     = "Ops"
    api_key  = "og-literal-key"
    region   = "EU"
    priority = "P1"
  }
}

resource "checkly_check" "api" {
  for_each  = { for k in ["a", "b"] : k => k }
  name      = "API ${each.key}"
  type      = "API"
  activated = true
  request {
    url = "https://x/${each.key}"
  }
}
"#,
    )
    .unwrap();
    let migration = migrate(&Options {
        dir: dir.path().to_owned(),
        state: None,
        project: "p".into(),
        api_url: None,
    })
    .unwrap();
    let main = file(&migration, "main.yaml");
    assert!(!main.contains("og-literal-key"), "{main}");
    assert!(
        main.contains("apiKey: ${env:ALERTCHANNELS_OPS_CONFIG_APIKEY}"),
        "{main}"
    );
    let notes: Vec<String> = migration.notes.iter().map(ToString::to_string).collect();
    assert!(
        notes.iter().any(|n| n.starts_with("main.tf:12: checks.api: `for_each` = `{ for k in [\"a\", \"b\"] : k => k }`: a `for` expression is not translated")),
        "{notes:#?}"
    );
    assert!(notes.iter().any(|n| n.contains("no --state")), "{notes:#?}");
}

#[test]
fn ignore_changes_names_the_fields_monform_ignores() {
    let migration = migrated();
    let main = file(&migration, "main.yaml");
    assert!(
        main.contains("lifecycle:\n      ignoreChanges:\n      - description"),
        "{main}"
    );
    for (text, path) in [
        ("description", Some("description")),
        ("degraded_response_time", Some("degradedResponseTime")),
        ("request[0].headers", Some("request.headers")),
        ("all", None),
        ("tags[\"x\"] + 1", None),
    ] {
        assert_eq!(
            crate::convert::ignored_path("checkly_check", Some(&serde_json::json!("API")), text).as_deref(),
            path,
            "{text}"
        );
    }
}
