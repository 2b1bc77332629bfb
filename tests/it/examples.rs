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
    // Every kind the service holds; the local kind (slos) has its own
    // example, examples/slo.
    for kind in monform_model::Kind::REMOTE {
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

/// A CI example file, parsed.
fn ci_example(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(repo_root().join("examples/ci").join(name)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("examples/ci/{name}: {e}"))
}

/// Issue 43 item 1: `test --local` runs the pull request's scripts, so the
/// examples run it in a job holding no monform key and no token that can
/// write; the plan job is the one with the key.
#[test]
fn ci_examples_run_local_tests_without_credentials() {
    let workflow = ci_example("github-actions.yml");
    assert_eq!(workflow["permissions"], serde_json::json!({}), "workflow permissions");
    assert!(workflow["env"].get("MONFORM_API_KEY").is_none(), "workflow-wide key");
    let jobs = workflow["jobs"].as_object().unwrap();
    let runs = |job: &serde_json::Value, command: &str| {
        job["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains(command)))
    };
    let (name, local) = jobs
        .iter()
        .find(|(_, job)| runs(job, "test --local"))
        .expect("a job runs test --local");
    assert!(local.get("env").is_none(), "{name} has an env: {local}");
    let text = local.to_string();
    assert!(!text.contains("secrets."), "{name} reads a secret: {text}");
    for (scope, level) in local["permissions"].as_object().unwrap() {
        assert_eq!(level, "read", "{name} may write {scope}");
    }
    for step in local["steps"].as_array().unwrap() {
        if step["uses"].as_str().is_some_and(|u| u.starts_with("actions/checkout")) {
            assert_eq!(step["with"]["persist-credentials"], false, "{name}: {step}");
        }
        let run = step["run"].as_str().unwrap_or_default();
        assert!(
            !run.contains("plan") && !run.contains("apply"),
            "{name} also runs {run}"
        );
    }
    let (_, plan) = jobs
        .iter()
        .find(|(_, job)| runs(job, "monform plan"))
        .expect("a job plans");
    assert!(plan["env"].get("MONFORM_API_KEY").is_some(), "the plan job has the key");

    let pipeline = ci_example("gitlab-ci.yml");
    assert!(pipeline["variables"].get("MONFORM_API_KEY").is_none());
    let script = |job: &serde_json::Value, command: &str| {
        job["script"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s.as_str().is_some_and(|s| s.contains(command)))
    };
    let jobs = pipeline.as_object().unwrap();
    let (name, local) = jobs
        .iter()
        .find(|(_, job)| script(job, "test --local"))
        .expect("a job runs test --local");
    // The key's environment scope keeps it from a job naming no environment.
    assert!(local.get("environment").is_none(), "{name}: {local}");
    assert!(local.get("variables").is_none(), "{name}: {local}");
    assert!(
        !script(local, "monform plan") && !script(local, "monform apply"),
        "{name}: {local}"
    );
    let (_, plan) = jobs
        .iter()
        .find(|(_, job)| script(job, "monform plan"))
        .expect("a job plans");
    assert!(
        plan.get("environment").is_some(),
        "the plan job's environment gives it the key"
    );
}
