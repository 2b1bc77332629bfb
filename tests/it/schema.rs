//! `monform schema` prints the committed schema; the committed file is fresh.

use crate::common;

use common::*;

#[test]
fn committed_schema_is_current() {
    let committed = std::fs::read_to_string(repo_root().join("schema/resource-file.schema.json")).unwrap_or_default();
    let generated = monform_model::schema::document_text();
    if committed != generated {
        if std::env::var_os("MONFORM_UPDATE_SCHEMA").is_some() {
            std::fs::write(repo_root().join("schema/resource-file.schema.json"), &generated).unwrap();
        } else {
            panic!(
                "schema/resource-file.schema.json is stale: run `MONFORM_UPDATE_SCHEMA=1 cargo test -p monform --test it schema::`"
            );
        }
    }
}

#[test]
fn committed_project_schema_is_current() {
    let path = repo_root().join("schema/monform.schema.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = monform_config::project_schema::project_schema_text();
    if committed != generated {
        if std::env::var_os("MONFORM_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        } else {
            panic!(
                "schema/monform.schema.json is stale: run `MONFORM_UPDATE_SCHEMA=1 cargo test -p monform --test it schema::`"
            );
        }
    }
}

#[test]
fn schema_command_prints_the_project_schema() {
    let output = monform().args(["schema", "--project"]).output().unwrap();
    assert!(output.status.success());
    assert_eq!(stdout(&output), monform_config::project_schema::project_schema_text());
}

#[test]
fn schema_command_prints_draft_07() {
    let output = monform().arg("schema").output().unwrap();
    assert!(output.status.success());
    let schema: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(stdout(&output), monform_model::schema::document_text());
}
