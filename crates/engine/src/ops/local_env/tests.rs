use std::path::Path;

use super::*;
use crate::ops::{TestRequest, local_checks};

/// The environment the files are loaded under: every name has a value.
fn env(name: &str) -> Option<String> {
    match name {
        "WHERE" => Some("eu-west-1".to_owned()),
        _ => Some(format!("value-of-{name}")),
    }
}

/// `files` (path, text) loaded, and each check's refusal (`None`: it runs).
fn refusals(files: &[(&str, &str)]) -> Vec<(String, Option<UnpassedEnv>)> {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let loaded = monform_config::load(dir.path(), &env);
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    let project = loaded.project.expect("a project");
    local_checks(&loaded.desired, Path::new("/p"), &TestRequest::default())
        .unwrap()
        .into_iter()
        .map(|c| (c.address.to_string(), unpassed_env(&c.env_reads, &project)))
        .collect()
}

fn fields(refusal: &Option<UnpassedEnv>) -> Vec<(&str, Vec<&str>)> {
    refusal
        .iter()
        .flat_map(|r| &r.reads)
        .map(|r| (r.field.as_str(), r.names.iter().map(String::as_str).collect()))
        .collect()
}

const API: &str = "checkType: API\n    frequency: 5\n    locations: [eu-west-1]";

/// Each way a value of the environment reaches what the runner sends or a
/// script reads: the check's own fields, `[vars]`, `[defaults]`, its
/// group's variables and API defaults, a snippet, a project variable.
#[test]
fn every_read_of_the_effective_definition_is_named_and_pass_env_public_env_allow() {
    let toml = "[project]\nname = \"p\"\npass-env = [\"PASSED\"]\npublic-env = [\"REGION\"]\n\n[vars]\nbase = \"https://${env:HOST}\"\n\n[defaults]\ntags = [\"${env:OWNER}\"]\n";
    let checks = format!(
        r#"groups:
  web:
    name: Web
    concurrency: 1
    environmentVariables: [{{ key: G, value: "${{env:GROUP_SECRET}}" }}]
    apiCheckDefaults: {{ headers: [{{ key: X, value: "${{env:DEFAULT_HEADER}}" }}] }}
    setupSnippet: sign
snippets:
  sign: {{ name: Sign, script: "x = '${{env:SNIPPET}}'" }}
checks:
  leak:
    {API}
    name: Leak
    group: web
    request:
      method: GET
      url: "${{var:base}}/?q=${{env:IN_URL}}"
      headers: [{{ key: X-Leak, value: "${{env:LEAK_MARKER}}" }}]
  passed:
    {API}
    name: "${{env:REGION}}"
    request: {{ method: GET, url: "https://example.com/${{env:PASSED}}" }}
"#
    );
    let got = refusals(&[("monform.toml", toml), ("checks.yaml", &checks)]);
    let leak = &got[0];
    assert_eq!(leak.0, "checks.leak");
    assert_eq!(
        fields(&leak.1),
        vec![
            ("request.url", vec!["HOST", "IN_URL"]),
            ("request.headers[0].value", vec!["LEAK_MARKER"]),
            ("tags[0]", vec!["OWNER"]),
            (
                "groups.web.environmentVariables[0].value (its group)",
                vec!["GROUP_SECRET"]
            ),
            (
                "groups.web.apiCheckDefaults.headers[0].value (its group)",
                vec!["DEFAULT_HEADER"]
            ),
            ("snippets.sign.script (its setup snippet)", vec!["SNIPPET"]),
        ]
    );
    let shown = leak.1.as_ref().unwrap().to_string();
    assert!(!shown.contains("value-of-"), "{shown}");
    assert!(shown.ends_with(
        "hint: list HOST, IN_URL, LEAK_MARKER, OWNER, GROUP_SECRET, DEFAULT_HEADER and SNIPPET in [project] pass-env to let test --local use them"
    ), "{shown}");
    // PASSED is passed on purpose, REGION is public; OWNER comes from [defaults].
    assert_eq!(got[1].0, "checks.passed");
    assert_eq!(fields(&got[1].1), vec![("tags[0]", vec!["OWNER"])]);
}

/// A project variable goes into every check's run; a `secret: true`
/// variable written in the files is theirs to use; a field the group
/// imposes replaces the check's own value, which is then not sent.
#[test]
fn project_variables_count_for_every_check_a_literal_secret_does_not() {
    let toml = "[project]\nname = \"p\"\n";
    let checks = format!(
        r#"variables:
  TOKEN: {{ value: "${{env:GITHUB_TOKEN}}", secret: true }}
  LITERAL: {{ value: "written-in-the-files", secret: true }}
groups:
  web: {{ name: Web, concurrency: 1, locations: [us-east-1] }}
checks:
  a:
    {API}
    name: A
    request: {{ method: GET, url: "https://example.com/{{{{LITERAL}}}}" }}
"#
    );
    let got = refusals(&[("monform.toml", toml), ("checks.yaml", &checks)]);
    assert_eq!(
        fields(&got[0].1),
        vec![("variables.TOKEN.value (a project variable)", vec!["GITHUB_TOKEN"])]
    );

    let checks = r#"variables:
  LITERAL: { value: "written-in-the-files", secret: true }
groups:
  web: { name: Web, concurrency: 1, locations: [us-east-1] }
checks:
  a:
    checkType: API
    frequency: 5
    group: web
    locations: ["${env:WHERE}"]
    name: A
    request: { method: GET, url: "https://example.com/{{LITERAL}}" }
"#;
    let got = refusals(&[("monform.toml", toml), ("checks.yaml", checks)]);
    assert_eq!(got[0].1, None);
}

#[test]
fn the_refusal_names_fields_and_variables_never_a_value() {
    let refusal = UnpassedEnv {
        reads: vec![EnvRead {
            field: "request.headers[0].value".into(),
            names: vec!["LEAK_MARKER".into()],
        }],
    };
    assert_eq!(
        refusal.to_string(),
        "not run: it holds values of monform's environment that [project] pass-env does not list\n\
         request.headers[0].value reads `${env:LEAK_MARKER}`\n\
         hint: list LEAK_MARKER in [project] pass-env to let test --local use it"
    );
}
