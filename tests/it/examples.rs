//! The bundled examples validate cleanly.

use crate::common;

use common::*;

#[test]
fn quickstart_validates() {
    let output = monform()
        .args(["validate", "--dir"])
        .arg(repo_root().join("examples/quickstart"))
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "7 resources in 1 file: OK\n", "{}", stderr(&output));
    assert!(output.status.success());
}

#[test]
fn full_example_validates() {
    let output = monform()
        .args(["validate", "--dir"])
        .arg(repo_root().join("examples/full"))
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "25 resources in 4 files: OK\n", "{}", stderr(&output));
    assert!(output.status.success());
}

#[test]
fn full_example_has_every_kind() {
    let env = |_: &str| None;
    let loaded = monform_config::load(&repo_root().join("examples/full"), &env);
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    for kind in monform_model::Kind::ALL {
        assert!(
            loaded.desired.resources.keys().any(|a| a.kind == *kind),
            "examples/full has no {kind}"
        );
    }
    let mut types: Vec<_> = loaded
        .desired
        .resources
        .values()
        .filter_map(|r| match &*r.resource {
            monform_model::Resource::Check(c) => Some(c.check_type()),
            _ => None,
        })
        .collect();
    types.sort();
    types.dedup();
    assert_eq!(types.len(), 10, "every check type appears: {types:?}");
}

#[test]
fn environments_example_validates_in_every_environment() {
    let output = monform()
        .args(["validate", "--dir"])
        .arg(repo_root().join("examples/environments"))
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap();
    assert_eq!(
        stdout(&output),
        "3 files: OK in every environment (production: 22 resources, staging: 17 resources)\n",
        "{}",
        stderr(&output)
    );
    assert!(output.status.success());
}

#[test]
fn reconcile_example_validates() {
    let output = monform()
        .args(["validate", "--dir"])
        .arg(repo_root().join("examples/reconcile/project"))
        .output()
        .unwrap();
    assert_eq!(stdout(&output), "5 resources in 1 file: OK\n", "{}", stderr(&output));
    assert!(output.status.success());
}
