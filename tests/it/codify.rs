//! `monform codify` (issue 33): changes made in the service written back
//! into the files, as a reviewer would write them.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::check_named as check;

use crate::common::{Emulator, Monform, assert_run, git_repository, stderr, stdout};

const PROJECT: &str = r#"[project]
name = "codify"

[defaults]
locations = ["eu-west-1"]

[vars]
cart_url = "https://shop.example.com/cart"
"#;

const CHECKS: &str = r#"# Shop monitors. Comments, order, quoting and anchors stay as written.
checks:
  homepage:
    checkType: URL      # the front door
    name: 'Homepage'
    frequency: 5
    tags: &shop [shop, web]
    request:
      url: https://www.example.com/
      followRedirects: true   # the CDN redirects

  cart:
    checkType: API
    name: "Cart API"
    group: shop
    tags: *shop
    request: { method: GET, url: "${var:cart_url}" }

  login:
    checkType: API
    name: Login
    request: { method: POST, url: https://shop.example.com/login }

  api:
    forEach:
      orders: { path: /orders, frequency: 5 }
      users: { path: /users, frequency: 10 }
    checkType: API
    name: "API ${each.key}"
    frequency: ${each.value.frequency}
    request: { method: GET, url: "https://api.example.com${each.value.path}" }

  ping:
    forEach: [alpha, beta]
    checkType: ICMP
    name: "Ping ${each.key}"
    request: { hostname: "${each.key}.example.com" }

groups:
  shop:
    name: Shop
    locations: [us-east-1]   # the group's locations override its checks'
"#;

const INFRA: &str = r#"# Infrastructure, in TOML.
[checks.db]
checkType = "TCP"
name = 'Database'   # the primary
frequency = 10
request = { hostname = "db.example.com", port = 5432 }
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), PROJECT).unwrap();
    std::fs::write(dir.path().join("checks.yaml"), CHECKS).unwrap();
    std::fs::write(dir.path().join("infra.toml"), INFRA).unwrap();
    dir
}

fn run(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).args(args).output().unwrap()
}

/// Changes the check named `name` in the service, as the web UI would.
fn edit_check(emulator: &Emulator, name: &str, change: impl FnOnce(&Value) -> Value) {
    let current = check(emulator, name);
    let id = current["id"]
        .as_str()
        .map_or_else(|| current["id"].to_string(), str::to_owned);
    let path = format!(
        "/v1/checks/{}/{id}",
        current["checkType"].as_str().unwrap().to_lowercase()
    );
    emulator.call("PUT", &path, Some(change(&current)));
}

/// Every kind of drift the fixture has, made through the API.
fn drift(emulator: &Emulator) {
    edit_check(emulator, "Homepage", |c| {
        let mut request = c["request"].clone();
        request["followRedirects"] = json!(false);
        json!({"name": "Homepage (EU)", "frequency": 10, "muted": true, "request": request,
               "locations": ["eu-west-1", "us-east-1"]})
    });
    edit_check(emulator, "Cart API", |c| {
        let mut tags = c["tags"].clone();
        tags.as_array_mut().unwrap().push(json!("cart"));
        let mut request = c["request"].clone();
        request["url"] = json!("https://shop.example.com/basket");
        // The group overrides it: written, with a note.
        json!({"tags": tags, "request": request, "locations": ["ap-southeast-2"]})
    });
    edit_check(emulator, "Login", |c| {
        let mut request = c["request"].clone();
        request["headers"] = json!([{"key": "Authorization", "value": "Bearer ui-secret-token"}]);
        json!({"request": request})
    });
    edit_check(emulator, "API users", |_| json!({"frequency": 30}));
    edit_check(emulator, "API orders", |c| {
        let mut request = c["request"].clone();
        request["url"] = json!("https://api.example.com/orders/v2");
        json!({"request": request})
    });
    edit_check(
        emulator,
        "Database",
        |_| json!({"name": "Database (primary)", "muted": true}),
    );
    // Every item of a list forEach alike: the definition takes it once.
    edit_check(emulator, "Ping alpha", |_| json!({"muted": true}));
    edit_check(emulator, "Ping beta", |_| json!({"muted": true}));
}

#[test]
fn codify_writes_each_drifted_value_where_it_comes_from() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    emulator.applied(dir);
    let clean = run(&emulator, dir, &["codify", "--check"]);
    assert_eq!(clean.status.code(), Some(0), "{}{}", stdout(&clean), stderr(&clean));
    drift(&emulator);

    // The diff, the notes and the hand edits; exit 3 for the hand edits.
    let checked = assert_run!("check", emulator.monform(dir).args(["codify", "--check"]));
    assert_eq!(checked.status.code(), Some(3));
    assert!(!stdout(&checked).contains("ui-secret-token") && !stderr(&checked).contains("ui-secret-token"));
    assert_eq!(
        std::fs::read_to_string(dir.join("checks.yaml")).unwrap(),
        CHECKS,
        "--check writes nothing"
    );

    let written = run(&emulator, dir, &["codify", "--write"]);
    assert_eq!(written.status.code(), Some(3), "{}", stderr(&written));
    // Byte for byte the files outside the edited values.
    let expected = CHECKS
        .replacen("name: 'Homepage'", "name: 'Homepage (EU)'", 1)
        .replacen("frequency: 5\n", "frequency: 10\n", 1)
        .replacen("followRedirects: true   #", "followRedirects: false   #", 1)
        .replacen(
            "the CDN redirects\n",
            "the CDN redirects\n    muted: true\n    locations: [eu-west-1, us-east-1]\n",
            1,
        )
        .replacen("tags: *shop", "tags: [shop, web, cart]", 1)
        .replacen(
            "url: \"${var:cart_url}\" }\n",
            "url: \"https://shop.example.com/basket\" }\n    locations: [ap-southeast-2]\n",
            1,
        )
        .replacen(
            "users: { path: /users, frequency: 10 }",
            "users: { path: /users, frequency: 30 }",
            1,
        )
        .replacen(
            "request: { hostname: \"${each.key}.example.com\" }\n",
            "request: { hostname: \"${each.key}.example.com\" }\n    muted: true\n",
            1,
        );
    assert_eq!(std::fs::read_to_string(dir.join("checks.yaml")).unwrap(), expected);
    let infra = INFRA
        .replacen("name = 'Database'", "name = 'Database (primary)'", 1)
        .replacen("port = 5432 }\n", "port = 5432 }\nmuted = true\n", 1);
    assert_eq!(std::fs::read_to_string(dir.join("infra.toml")).unwrap(), infra);
    assert_eq!(std::fs::read_to_string(dir.join("monform.toml")).unwrap(), PROJECT);

    // What was codified is no change any more; what needs a person still is.
    let planned = run(
        &emulator,
        dir,
        &[
            "plan",
            "--detailed-exitcode",
            "--exclude",
            "checks.login",
            "--exclude",
            "checks.api[orders]",
        ],
    );
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
    let again = run(&emulator, dir, &["codify", "--check"]);
    assert_eq!(again.status.code(), Some(3));
    assert!(stdout(&again).is_empty(), "{}", stdout(&again));
}

#[test]
fn target_exclude_and_edit_vars() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    emulator.applied(dir);
    drift(&emulator);
    // Exit 2, a diff of infra.toml alone (not checks.yaml).
    let mut only = emulator.monform(dir);
    assert_run!("target_only", only.args(["codify", "--check", "--target", "checks.db"]));
    let excluded = run(
        &emulator,
        dir,
        &[
            "codify",
            "--check",
            "--exclude",
            "checks.login",
            "--exclude",
            "checks.api[*]",
        ],
    );
    assert_eq!(excluded.status.code(), Some(2), "{}", stderr(&excluded));
    // The variable used by `cart` alone takes the service's value.
    let vars = run(
        &emulator,
        dir,
        &["codify", "--write", "--edit-vars", "--target", "checks.cart"],
    );
    assert_eq!(vars.status.code(), Some(0), "{}", stderr(&vars));
    let toml = std::fs::read_to_string(dir.join("monform.toml")).unwrap();
    assert_eq!(toml, PROJECT.replace("/cart\"", "/basket\""));
    // checks.yaml still says "${var:cart_url}".
    insta::assert_snapshot!(
        "edit_vars_checks_yaml",
        std::fs::read_to_string(dir.join("checks.yaml")).unwrap()
    );
    let planned = run(
        &emulator,
        dir,
        &["plan", "--detailed-exitcode", "--target", "checks.cart"],
    );
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
}

#[test]
fn branch_makes_one_commit_listing_addresses_and_fields() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    git_repository(dir, ("Test", "test@example.com"), ".monform/\n");
    let git = |args: &[&str]| crate::common::git(dir, args);
    emulator.applied(dir);
    drift(&emulator);
    let branched = run(
        &emulator,
        dir,
        &[
            "codify",
            "--branch",
            "codify/ui-fixes",
            "--target",
            "checks.db",
            "--target",
            "checks.homepage",
        ],
    );
    assert_eq!(branched.status.code(), Some(0), "{}", stderr(&branched));
    assert_eq!(git(&["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "codify/ui-fixes");
    assert_eq!(git(&["rev-list", "--count", "main..HEAD"]).trim(), "1");
    insta::assert_snapshot!("branch_commit", git(&["log", "-1", "--format=%an <%ae>%n%B", "--stat"]));
    assert_eq!(git(&["status", "--porcelain"]), "", "everything edited is committed");
}

/// The field each kind's drift changes in `every_kind_and_check_type...`,
/// and how: a name for most, what else for the kinds without one.
fn ui_edit(kind: monform_model::Kind, object: &Value) -> Option<(String, Value)> {
    use monform_model::Kind;
    let renamed = |field: &str| {
        let name = object[field].as_str()?;
        Some((field.to_owned(), json!(format!("{name} (from the UI)"))))
    };
    match kind {
        Kind::Dashboard => renamed("header"),
        // The secret one cannot be seen; the other takes a new value.
        Kind::Variable if object["secret"] == json!(true) => None,
        Kind::Variable => Some(("value".into(), json!("https://www2.example.com"))),
        // Not written in the files: a new field on the resource.
        Kind::AlertChannel => Some(("sendRecovery".into(), json!(false))),
        _ => renamed("name"),
    }
}

/// Every kind and every check type (examples/full): each object changed
/// through the API, `codify --write`, then `plan` shows no change.
#[test]
fn every_kind_and_check_type_plans_clean_after_codify_write() {
    use monform_model::Kind;
    let emulator = Emulator::start();
    let project = crate::common::copy_example("full");
    let dir = project.path();
    let with_secrets = |args: &[&str]| {
        let mut command = emulator.monform(dir);
        command.args(args);
        for (name, value) in crate::common::FULL_EXAMPLE_SECRETS {
            command.env(name, value);
        }
        command.output().unwrap()
    };
    let applied = with_secrets(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let mut changed = Vec::new();
    for kind in Kind::REMOTE {
        let endpoints = kind.endpoints();
        let listed = emulator.call("GET", &format!("{}?limit=100", endpoints.list), None);
        let objects = listed.get("entries").cloned().unwrap_or(listed);
        for object in objects.as_array().into_iter().flatten() {
            let Some((field, value)) = ui_edit(*kind, object) else {
                continue;
            };
            let id = &object[kind.id_field()];
            let id = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
            let check_type = object["checkType"]
                .as_str()
                .and_then(|t| serde_json::from_value(json!(t)).ok());
            let path = monform_model::endpoints::path(endpoints.update, Some(&id), check_type);
            emulator.call("PUT", &path, Some(json!({ field.as_str(): value })));
            changed.push(format!("{kind}/{field}"));
        }
    }
    for kind in Kind::REMOTE {
        assert!(
            changed.iter().any(|c| c.starts_with(&format!("{kind}/"))),
            "no {kind} changed: {changed:?}"
        );
    }
    let drifted = with_secrets(&["plan", "--detailed-exitcode"]);
    assert_eq!(drifted.status.code(), Some(2), "{}", stdout(&drifted));
    let written = with_secrets(&["codify", "--write"]);
    assert_eq!(
        written.status.code(),
        Some(0),
        "{}{}",
        stdout(&written),
        stderr(&written)
    );
    let planned = with_secrets(&["plan", "--detailed-exitcode"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stdout(&planned));
    // Each check type's object was among those changed.
    let types = emulator.call("GET", "/v1/checks?limit=100", None);
    let mut types: Vec<&str> = types
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["name"].as_str().is_some_and(|n| n.ends_with("(from the UI)")))
        .filter_map(|c| c["checkType"].as_str())
        .collect();
    types.sort_unstable();
    types.dedup();
    assert_eq!(types.len(), 10, "{types:?}");
}

/// Objects made in the service that no project owns: new files with
/// `import` entries; the next apply adopts them and the plan is clean.
#[test]
fn include_unmanaged_writes_new_files_with_import_entries() {
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    emulator.applied(dir);
    emulator.call(
        "POST",
        "/v1/checks/api?autoAssignAlerts=false",
        Some(json!({"name": "Made in the UI", "locations": ["eu-west-1"],
                    "request": {"method": "GET", "url": "https://ui.example.com/"}})),
    );
    emulator.call(
        "POST",
        "/v1/snippets",
        Some(json!({"name": "UI helper", "script": "console.log(1)"})),
    );
    let checked = assert_run!(
        "include_unmanaged",
        emulator.monform(dir).args(["codify", "--check", "--include-unmanaged"])
    );
    assert_eq!(checked.status.code(), Some(2));
    assert!(!dir.join("unmanaged").exists(), "--check writes nothing");
    let written = run(&emulator, dir, &["codify", "--write", "--include-unmanaged"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    // Exit 2: the written files import the unmanaged objects.
    let mut planned = emulator.monform(dir);
    assert_run!("unmanaged_import_plan", planned.args(["plan", "--detailed-exitcode"]));
    let adopted = run(&emulator, dir, &["apply", "--auto-approve"]);
    assert!(adopted.status.success(), "{}", stderr(&adopted));
    let clean = run(&emulator, dir, &["plan", "--detailed-exitcode"]);
    assert_eq!(clean.status.code(), Some(0), "{}", stdout(&clean));
    let again = run(&emulator, dir, &["codify", "--check", "--include-unmanaged"]);
    assert_eq!(again.status.code(), Some(0), "{}{}", stdout(&again), stderr(&again));
}

/// The reconciler's drift policy `codify`: the service's values committed
/// on a new branch (working tree, index and HEAD left alone), the drift
/// reported with the branch's name.
#[test]
fn reconcile_codify_policy_commits_drift_on_a_branch() {
    let emulator = Emulator::start();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("monform.toml"),
        "[project]\nname = \"rec\"\n\n[reconcile]\ndrift = \"codify\"\n",
    )
    .unwrap();
    let checks = "checks:\n  web:\n    checkType: API\n    name: Web   # shown on the page\n    frequency: 5\n    locations: [eu-west-1]\n    request: { method: GET, url: https://example.com/ }\n";
    std::fs::write(root.join("checks.yaml"), checks).unwrap();
    git_repository(root, ("Reconciler", "rec@example.com"), ".monform/\nevents.jsonl\n");
    let git = |args: &[&str]| crate::common::git(root, args);
    emulator.applied(root);
    edit_check(&emulator, "Web", |_| json!({"frequency": 15}));

    let events = root.join("events.jsonl");
    let once = run(
        &emulator,
        root,
        &["reconcile", "--once", "--events", events.to_str().unwrap()],
    );
    assert_eq!(once.status.code(), Some(2), "{}", stderr(&once));
    let events = std::fs::read_to_string(&events).unwrap();
    let codified: Value = events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "codified")
        .unwrap_or_else(|| panic!("no codified event: {events}"));
    let branch = codified["branch"].as_str().unwrap().to_owned();
    assert!(branch.starts_with("monform/codify-rec-"), "{branch}");
    let drift = events.lines().find(|l| l.contains("\"event\":\"drift\"")).unwrap();
    assert!(drift.contains(&format!("\"codifiedBranch\":\"{branch}\"")), "{drift}");
    assert_eq!(
        git(&["show", &format!("{branch}:checks.yaml")]),
        checks.replace("frequency: 5", "frequency: 15")
    );
    insta::assert_snapshot!("codified_commit_message", git(&["log", "-1", "--format=%B", &branch]));
    // Nothing here moved: the files, the branch checked out, the index.
    assert_eq!(std::fs::read_to_string(root.join("checks.yaml")).unwrap(), checks);
    assert_eq!(git(&["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "main");
    assert_eq!(git(&["status", "--porcelain"]), "");
    // Reported once: the next interval makes no second branch.
    let again = run(&emulator, root, &["reconcile", "--once"]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(git(&["branch", "--list", "monform/*"]).lines().count(), 1);
}

mod both_sides;
mod environments;
