//! Folding (issue 49 item 2): an account of checks made by hand, in
//! shapes, imported (`import --all-unmanaged`) and exported as one
//! `forEach` definition per shape, with an empty plan afterwards.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
use serde_json::Value;

/// The target is 1,000 checks in 40 shapes into at most 60
/// definitions (the bench's fold row); here a fifth of it, the same 25 a
/// shape, for the test's time: at most 12 definitions.
const CHECKS: usize = 200;
const SHAPES: usize = 8;
const LIMIT: usize = SHAPES * 3 / 2;

/// The checks, made through the API with one client (not monform's files).
fn made_by_hand(emulator: &Emulator, checks: usize, shapes: usize) {
    let client = emulator.client();
    emulator.block_on(async {
        for (_, body) in monform_testkit::hand_made_checks(checks, shapes) {
            client
                .create(monform_model::Kind::Check, &body)
                .await
                .expect("a check made");
        }
    });
}

fn ok(output: &std::process::Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
}

/// The definitions of `section` in the project's resource files.
fn definitions(dir: &Path, section: &str) -> BTreeMap<String, Value> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let value: Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if let Some(map) = value[section].as_object() {
                found.extend(map.clone());
            }
        }
    }
    found
}

/// The project's top-level files, YAML parsed (the service may return an
/// object's fields in another order after the import wrote its tag).
fn files(dir: &Path) -> BTreeMap<String, Value> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name()?.to_str()?.to_owned();
            let text = path.is_file().then(|| std::fs::read_to_string(&path).unwrap())?;
            let value = match name.ends_with(".yaml") {
                true => serde_saphyr::from_str(&text).unwrap(),
                false => Value::String(text),
            };
            Some((name, value))
        })
        .collect()
}

#[test]
fn hand_made_checks_fold_into_a_definition_per_shape_and_plan_nothing() {
    let emulator = Emulator::start();
    made_by_hand(&emulator, CHECKS, SHAPES);
    let work = tempfile::tempdir().unwrap();
    let imported = work.path().join("imported");
    let output = emulator
        .monform(work.path())
        .args(["import", "--all-unmanaged", "--project", "hand", "--out"])
        .arg(&imported)
        .output()
        .unwrap();
    ok(&output, "import --all-unmanaged");
    let checks = definitions(&imported, "checks");
    assert!(
        checks.len() <= LIMIT,
        "{} definitions for {CHECKS} checks in {SHAPES} shapes:\n{}",
        checks.len(),
        checks.keys().cloned().collect::<Vec<_>>().join(", ")
    );
    let items: usize = checks
        .values()
        .map(|c| c["forEach"].as_object().map_or(1, |items| items.len()))
        .sum();
    assert_eq!(items, CHECKS, "every check is in the files once");
    assert!(
        stderr(&output).contains(&format!("{} definitions in all", checks.len())),
        "{}",
        stderr(&output)
    );
    // The header sets and assertions several definitions share are written
    // once, as `[vars]` each definition names (`[defaults]` cannot take a
    // check's `request`, and a group's `apiCheckDefaults` would change the
    // checks: the plan below stays empty).
    let toml = std::fs::read_to_string(imported.join("monform.toml")).unwrap();
    for var in [
        "headers-accept",
        "headers-accept-x-client",
        "headers-user-agent",
        "assertions-status-code-200-response-time-1500",
        "assertions-status-code-200",
    ] {
        assert!(toml.contains(var), "no [vars] {var}:\n{toml}");
    }
    for (id, check) in &checks {
        let request = &check["request"];
        for field in ["headers", "assertions"].iter().filter(|f| !request[**f].is_null()) {
            assert!(
                request[*field]
                    .as_str()
                    .is_some_and(|v| v.starts_with(&format!("${{var:{field}-"))),
                "checks.{id} writes its own {field}: {check:#}"
            );
        }
    }
    // Every check adopted, under its item's address.
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(imported.join(".monform/state.json")).unwrap()).unwrap();
    let entries = state["resources"].as_object().unwrap();
    assert_eq!(entries.len(), CHECKS);
    assert!(
        entries.keys().all(|a| a.starts_with("checks.") && a.ends_with(']')),
        "{:?}",
        entries.keys().next()
    );

    let output = emulator
        .monform(&imported)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "plan after import:\n{}\n{}",
        stdout(&output),
        stderr(&output)
    );

    // Stable: exporting the account again writes the same files (its
    // objects are now the project's; their logical ids come from names).
    let exported = work.path().join("exported");
    let output = emulator
        .monform(&imported)
        .args(["export", "--project", "hand", "--out"])
        .arg(&exported)
        .output()
        .unwrap();
    ok(&output, "export");
    assert_eq!(files(&imported), files(&exported));
    // `--fold none`: one entry per object, as before.
    let flat = work.path().join("flat");
    let output = emulator
        .monform(&imported)
        .args(["export", "--fold", "none", "--project", "hand", "--out"])
        .arg(&flat)
        .output()
        .unwrap();
    ok(&output, "export --fold none");
    assert_eq!(definitions(&flat, "checks").len(), CHECKS);
    assert!(
        !std::fs::read_to_string(flat.join("monform.toml"))
            .unwrap()
            .contains("[defaults]")
    );
}

/// One shape's definition as a person would write it: the shared text in
/// the definition, names and paths as items keyed by slugs.
#[test]
fn a_shape_reads_as_one_for_each() {
    let emulator = Emulator::start();
    made_by_hand(&emulator, 6, 2);
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let output = emulator
        .monform(work.path())
        .args(["export", "--project", "p", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    ok(&output, "export");
    insta::assert_snapshot!(
        "fold_two_shapes",
        std::fs::read_to_string(out.join("checks.yaml")).unwrap()
    );
    let output = emulator.monform(&out).arg("validate").output().unwrap();
    ok(&output, "validate");
}

/// `--fold aggressive` also folds checks whose assertions differ (safe
/// keeps them apart), and the plan after the import is still empty.
#[test]
fn aggressive_folds_differing_assertions_and_plans_nothing() {
    let emulator = Emulator::start();
    let client = emulator.client();
    emulator.block_on(async {
        for (i, status) in ["200", "201", "204", "202"].iter().enumerate() {
            let body = serde_json::json!({
                "checkType": "API", "name": format!("Orders {i}"), "frequency": 5, "locations": ["eu-west-1"],
                "request": {"method": "POST", "url": format!("https://shop.example.com/orders/{i}"),
                            "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": status}]},
            });
            client
                .create(monform_model::Kind::Check, &body)
                .await
                .expect("a check made");
        }
    });
    let work = tempfile::tempdir().unwrap();
    let safe = work.path().join("safe");
    let output = emulator
        .monform(work.path())
        .args(["export", "--project", "p", "--out"])
        .arg(&safe)
        .output()
        .unwrap();
    ok(&output, "export");
    assert_eq!(definitions(&safe, "checks").len(), 4, "safe: an assertion differs");
    let out = work.path().join("out");
    let output = emulator
        .monform(work.path())
        .args([
            "import",
            "--all-unmanaged",
            "--fold",
            "aggressive",
            "--project",
            "p",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    ok(&output, "import --fold aggressive");
    let checks = definitions(&out, "checks");
    assert_eq!(checks.len(), 1, "{checks:#?}");
    let output = emulator
        .monform(&out)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
}
