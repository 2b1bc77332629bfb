//! Issue 43 items 2 and 7: a value of a non-public `${env:}` never appears
//! in a diagnostic (it is named by its variable), and never becomes a
//! `forEach` key.

use super::*;

const MARKER: &str = "zq-diag-marker";

fn env(name: &str) -> Option<String> {
    match name {
        "MARKER_VAR" => Some(MARKER.into()),
        "LONG_VAR" => Some(MARKER.repeat(40)),
        "REGION" => Some("eu-west-1".into()),
        _ => None,
    }
}

fn load_files(files: &[(&str, &str)]) -> (tempfile::TempDir, Loaded) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let loaded = load(dir.path(), &env);
    (dir, loaded)
}

/// Every text of a diagnostic and of those related to it.
fn texts(diagnostic: &Diagnostic) -> Vec<String> {
    let mut found = vec![
        diagnostic.message.clone(),
        diagnostic.label.clone(),
        diagnostic.help.clone().unwrap_or_default(),
    ];
    found.extend(diagnostic.related.iter().flat_map(texts));
    found
}

/// Asserts no diagnostic of `loaded` shows the marker, and returns them.
fn clean(loaded: &Loaded) -> Vec<&Diagnostic> {
    let all: Vec<&Diagnostic> = loaded.diagnostics.iter().chain(&loaded.warnings).collect();
    for diagnostic in &all {
        for text in texts(diagnostic) {
            assert!(!text.contains(MARKER), "the value shown: {text}");
            // Nor a did-you-mean built from it.
            assert!(!text.contains("did you mean"), "{text}");
        }
    }
    all
}

fn at<'d>(diagnostics: &[&'d Diagnostic], field: &str) -> &'d Diagnostic {
    diagnostics
        .iter()
        .find(|d| d.message.starts_with(field))
        .unwrap_or_else(|| panic!("no diagnostic at {field}: {diagnostics:#?}"))
}

#[test]
fn diagnostics_name_the_variable_never_the_value() {
    let (_dir, loaded) = load_files(&[
        (
            "monform.toml",
            "[project]\nname = \"p\"\n\n[vars]\nmethod = \"${env:MARKER_VAR}\"\n\n[defaults]\ndegradedResponseTime = \"${env:MARKER_VAR}\"\n",
        ),
        (
            "checks.yaml",
            r#"alertChannels:
  zq-diag-markr: { type: EMAIL, config: { address: "a@example.com" } }
groups:
  g: { name: G, locations: [eu-west-1] }
checks:
  c1:
    checkType: API
    name: c1
    frequency: ${env:MARKER_VAR}
    description: "${env:LONG_VAR}"
    locations: ["${env:MARKER_VAR}"]
    alertChannels: ["${env:MARKER_VAR}"]
    request: { method: "${var:method}", url: "https://example.com/${env:REGION}" }
    lifecycle: { ignoreChanges: ["${env:MARKER_VAR}"] }
  c2:
    checkType: "${env:MARKER_VAR}"
    name: c2
  c3:
    checkType: BROWSER
    name: c3
    script: { file: "${env:MARKER_VAR}.js" }
"#,
        ),
    ]);
    let all = clean(&loaded);
    for (field, says) in [
        (
            "checks.c1.frequency",
            "expected an integer, found a string (the value of `${env:MARKER_VAR}`)",
        ),
        (
            "checks.c1.locations[0]",
            "the value of `${env:MARKER_VAR}` is not allowed",
        ),
        (
            "checks.c1.alertChannels[0]",
            "the value of `${env:MARKER_VAR}` names no alertChannels",
        ),
        (
            "checks.c1.request.method",
            "the value of `${env:MARKER_VAR}` is not allowed",
        ),
        // From [defaults], through the check it is merged into.
        ("checks.c1.degradedResponseTime", "the value of `${env:MARKER_VAR}`"),
        (
            "checks.c1.lifecycle.ignoreChanges[0]",
            "the value of `${env:MARKER_VAR}` is not a field path",
        ),
        (
            "checks.c2.checkType",
            "the value of `${env:MARKER_VAR}` is not a valid checkType",
        ),
        (
            "checks.c3.script.file",
            "cannot read the value of `${env:MARKER_VAR}` as a script file",
        ),
    ] {
        let diagnostic = at(&all, field);
        assert!(diagnostic.message.contains(says), "{field}: {}", diagnostic.message);
        assert_eq!(diagnostic.label, "sensitive: its value is not shown", "{field}");
    }
}

/// monform.toml's own settings read `${env:}` too.
#[test]
fn settings_from_the_environment_are_not_quoted() {
    let (_dir, loaded) = load_files(&[(
        "monform.toml",
        "[project]\nname = \"${env:MARKER_VAR}!\"\nallow-paths = [\"${env:MARKER_VAR}\"]\n\n[state]\nbackend = \"${env:MARKER_VAR}\"\n\n[lint]\nunrouted-checks = \"${env:MARKER_VAR}\"\n",
    )]);
    let all = clean(&loaded);
    for field in [
        "project.name",
        "project.allow-paths[]",
        "state.backend",
        "lint.unrouted-checks",
    ] {
        assert!(at(&all, field).message.contains("`${env:MARKER_VAR}`"), "{field}");
    }
}

/// Item 7: a list item of `${env:}` cannot be an item key (it would be in
/// the address, names and every plan); a map's values may be, and stay
/// sensitive through `${each.value}`.
#[test]
fn a_sensitive_item_is_no_for_each_key() {
    let (_dir, loaded) = load_files(&[
        (
            "monform.toml",
            "[project]\nname = \"p\"\n\n[vars]\nlst = [\"plain\", \"${env:MARKER_VAR}\"]\nmap = { a = \"${env:MARKER_VAR}\" }\n",
        ),
        (
            "checks.yaml",
            r#"checks:
  c:
    forEach: "${var:lst}"
    checkType: URL
    name: "c ${each.key}"
    request: { url: "https://example.com/${each.value}" }
  m:
    forEach: "${var:map}"
    checkType: URL
    name: "m ${each.key}"
    request: { url: "https://example.com/${each.value}" }
    description: "${each.value}"
"#,
        ),
    ]);
    let all = clean(&loaded);
    let refused = at(&all, "checks.c.forEach[1]");
    assert_eq!(refused.code, "monform::sensitive-key");
    assert!(refused.message.contains("`${env:MARKER_VAR}`"), "{}", refused.message);
    let addresses: Vec<String> = loaded.desired.resources.keys().map(ToString::to_string).collect();
    assert!(addresses.iter().all(|a| !a.contains(MARKER)), "{addresses:?}");
    assert!(addresses.contains(&"checks.c[plain]".to_owned()), "{addresses:?}");
    let m = &loaded.desired.resources[&Address::item(Kind::Check, "m", "a")];
    let mut sensitive: Vec<String> = m.sensitive.iter().map(ToString::to_string).collect();
    sensitive.sort();
    assert_eq!(sensitive, ["description", "request.url"]);
}
