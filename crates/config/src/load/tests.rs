//! The loader on small projects on disk: what issue 25 asks of it.

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("tok-123".into()),
        "OWNER" => Some("alice".into()),
        "REGION" => Some("eu-west-1".into()),
        "SECRET_DESC" => Some("hidden".into()),
        "MONFORM_API_KEY" => Some("mk_live_do_not_print".into()),
        _ => None,
    }
}

/// A project of `files` (path, text) in a fresh folder, loaded.
fn load_files(files: &[(&str, &str)]) -> (tempfile::TempDir, Loaded) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        write(&dir.path().join(path), text.as_bytes());
    }
    let loaded = load(dir.path(), &env);
    (dir, loaded)
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn messages(loaded: &Loaded) -> Vec<String> {
    loaded.diagnostics.iter().map(|d| d.message.clone()).collect()
}

fn sensitive(loaded: &Loaded, address: &str) -> Vec<String> {
    let resource = loaded
        .desired
        .resources
        .values()
        .find(|r| r.address.to_string() == address)
        .unwrap_or_else(|| panic!("{address} not loaded: {:?}", messages(loaded)));
    let mut paths: Vec<String> = resource.sensitive.iter().map(ToString::to_string).collect();
    paths.sort();
    paths
}

/// Issue 25 item 1: the fields holding text of a non-public `${env:}`,
/// whole or partial, through `[vars]`, `[defaults]` and `forEach` items.
#[test]
fn sensitive_fields_follow_environment_values() {
    let (_dir, loaded) = load_files(&[
        (
            "monform.toml",
            "[project]\nname = \"p\"\npublic-env = [\"REGION\"]\n\n[vars]\ntoken = \"${env:TOKEN}\"\nbase = \"https://example.com\"\n\n[defaults]\ntags = [\"owner:${env:OWNER}\", \"static\"]\n",
        ),
        (
            "checks.yaml",
            r#"checks:
  api:
    forEach:
      a: { d: "shown" }
      b: {}
    checkType: API
    name: "API ${each.key} ${env:REGION}"
    description: "${each.value.d:-${env:SECRET_DESC}}"
    request:
      url: "${var:base}/x"
      headers:
        - { key: Accept, value: json }
        - { key: Authorization, value: "Bearer ${env:TOKEN}" }
  web:
    checkType: BROWSER
    name: Web
    tags: [own]
    script: "await page.goto('${var:base}')"
    environmentVariables:
      - { key: A, value: "${var:token}" }
      - { key: B, value: "${env:UNSET:-plain}" }
"#,
        ),
    ]);
    assert!(loaded.is_ok(), "{:?}", messages(&loaded));
    assert_eq!(
        sensitive(&loaded, "checks.api[a]"),
        ["request.headers[1].value", "tags[0]"]
    );
    assert_eq!(
        sensitive(&loaded, "checks.api[b]"),
        ["description", "request.headers[1].value", "tags[0]"]
    );
    // Its own tags: [defaults] does not apply.
    assert_eq!(sensitive(&loaded, "checks.web"), ["environmentVariables[0].value"]);
    // The values themselves are there, for apply to send.
    let api = &loaded.desired.resources[&Address::item(Kind::Check, "api", "b")];
    let json = api.resource.to_json();
    assert_eq!(json["description"], "hidden");
    assert_eq!(json["request"]["headers"][1]["value"], "Bearer tok-123");
}

/// Issue 25 item 1: `${env:}` of monform's credentials is an error at the
/// field naming the variable, never its value; in monform.toml too.
#[test]
fn credentials_cannot_be_read() {
    let (_dir, loaded) = load_files(&[
        (
            "monform.toml",
            "[project]\nname = \"p\"\nsecret-env = [\"TOKEN\"]\n\n[vars]\nk = \"${env:MONFORM_API_KEY}\"\n",
        ),
        (
            "a.yaml",
            "snippets:\n  s: { name: \"k=${env:MONFORM_API_KEY}\", script: x }\n  t: { name: \"${env:UNSET:-${env:TOKEN}}\", script: x }\n",
        ),
    ]);
    let messages = messages(&loaded);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(
        messages
            .iter()
            .filter(|m| m.contains("`${env:MONFORM_API_KEY}` may not be read"))
            .count(),
        2
    );
    assert!(messages.iter().any(|m| m.contains("`${env:TOKEN}` may not be read")));
    let rendered = format!("{:?}", loaded.diagnostics);
    assert!(
        !rendered.contains("mk_live") && !rendered.contains("tok-123"),
        "{rendered}"
    );
    let mut locations: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter_map(|d| d.location(&loaded.sources))
        .collect();
    locations.sort();
    assert_eq!(locations, ["a.yaml:2:14", "a.yaml:3:14", "monform.toml:6:5"]);
}

/// Issue 43 item 1: `[project] pass-env` names what scripts see on purpose;
/// monform's credentials, secret-env names and substitutions are refused
/// at the item.
#[test]
fn pass_env_refuses_credentials_at_the_item() {
    let (_dir, loaded) = load_files(&[(
        "monform.toml",
        "[project]\nname = \"p\"\nsecret-env = [\"TOKEN\"]\npass-env = [\"HTTPS_PROXY\", \"MONFORM_API_KEY\",\n  \"TOKEN\", \"${env:OWNER}\", \"MONFORM_STATE_URL\"]\n",
    )]);
    let refused = messages(&loaded);
    assert_eq!(
        refused,
        [
            "project.pass-env: `MONFORM_API_KEY` is monform's own credential: scripts never see it",
            "project.pass-env: `TOKEN` is in secret-env: scripts never see it",
            "project.pass-env: `${env:OWNER}` is not an environment variable name",
            "project.pass-env: `MONFORM_STATE_URL` is monform's own credential: scripts never see it",
        ]
    );
    let locations: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter_map(|d| d.location(&loaded.sources))
        .collect();
    assert_eq!(
        locations,
        [
            "monform.toml:4:28",
            "monform.toml:5:3",
            "monform.toml:5:12",
            "monform.toml:5:28"
        ]
    );

    let (_dir, loaded) = load_files(&[(
        "monform.toml",
        "[project]\nname = \"p\"\npass-env = [\"HTTPS_PROXY\", \"NODE_EXTRA_CA_CERTS\"]\n",
    )]);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let project = loaded.project.unwrap();
    let names: Vec<&str> = project.pass_env.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["HTTPS_PROXY", "NODE_EXTRA_CA_CERTS"]);
}

/// Issue 25 item 1: `{ file }` scripts and `forEachFile` globs stay in the
/// project, unless monform.toml allows a folder.
#[test]
fn paths_outside_the_project_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write(&dir.path().join("shared/lib.js"), b"shared()");
    write(&dir.path().join("private/key.js"), b"secret()");
    let files = [
        ("monform.toml", "[project]\nname = \"p\"\n"),
        (
            "a.yaml",
            r#"snippets:
  env: { name: Env, script: { file: /proc/self/environ } }
  passwd: { name: Passwd, script: { file: ../../../../../../etc/passwd } }
  shared: { name: Shared, script: { file: ../shared/lib.js } }
checks:
  e2e:
    forEachFile: "../private/*.js"
    checkType: BROWSER
    name: "E2E ${each.key}"
    script: { file: "${each.value}" }
"#,
        ),
    ];
    for (path, text) in files {
        write(&root.join(path), text.as_bytes());
    }
    let loaded = load(&root, &env);
    let mut found = messages(&loaded);
    found.sort();
    assert_eq!(
        found,
        [
            "checks.e2e.forEachFile: `../private` is outside the project",
            "snippets.env.script: script file `/proc/self/environ` is outside the project",
            "snippets.passwd.script: script file `../../../../../../etc/passwd` is outside the project",
            "snippets.shared.script: script file `../shared/lib.js` is outside the project",
        ]
    );
    // Allowed, the shared folder is read; the rest stays refused.
    write(
        &root.join("monform.toml"),
        b"[project]\nname = \"p\"\nallow-paths = [\"../shared\", \"../missing\"]\n",
    );
    let loaded = load(&root, &env);
    let found = messages(&loaded);
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(
        found
            .iter()
            .any(|m| m.starts_with("project.allow-paths: cannot use `../missing`"))
    );
    assert!(!found.iter().any(|m| m.contains("shared/lib.js")), "{found:?}");
    let shared = &loaded.desired.resources[&Address::new(Kind::Snippet, "shared")];
    assert_eq!(shared.resource.to_json()["script"], "shared()");
}

/// Issue 25 item 8: symbolic links among the resource files (and folders)
/// are followed inside the project; outside, broken or looping, each is a
/// diagnostic, never a silent skip that would make plan delete.
#[cfg(unix)]
#[test]
fn symbolic_links_are_followed_inside_the_project_only() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    write(&root.join("monform.toml"), b"[project]\nname = \"p\"\n");
    write(&root.join("real/a.yaml"), b"snippets:\n  a: { name: A, script: x }\n");
    write(&root.join("shared/b.yaml"), b"snippets:\n  b: { name: B, script: x }\n");
    write(
        &dir.path().join("outside/c.yaml"),
        b"snippets:\n  c: { name: C, script: x }\n",
    );
    write(
        &dir.path().join("outside/d.yaml"),
        b"snippets:\n  d: { name: D, script: x }\n",
    );
    symlink(root.join("real/a.yaml"), root.join("linked.yaml")).unwrap();
    symlink(root.join("shared"), root.join("monitors")).unwrap();
    symlink(dir.path().join("outside/c.yaml"), root.join("c.yaml")).unwrap();
    symlink(dir.path().join("outside"), root.join("out")).unwrap();
    symlink(root.join("nothing.yaml"), root.join("broken.yaml")).unwrap();
    symlink(&root, root.join("real/loop")).unwrap();
    let loaded = load(&root, &env);
    let mut ids: Vec<String> = loaded.desired.resources.keys().map(ToString::to_string).collect();
    ids.sort();
    // `a` once though two paths reach it; `b` through the linked folder.
    assert_eq!(ids, ["snippets.a", "snippets.b"]);
    let mut found = messages(&loaded);
    found.sort();
    assert_eq!(
        found,
        [
            "broken.yaml is a broken symbolic link: not read",
            "c.yaml is a symbolic link to outside the project: not read",
            "out is a symbolic link to outside the project: not read",
            "real/loop is a symbolic link to a folder above it: not followed",
        ]
    );
    // A linked file `include` leaves out is not read anyway: no error; a
    // linked folder may hold files it takes.
    write(
        &root.join("monform.toml"),
        b"[project]\nname = \"p\"\ninclude = [\"real/**\", \"out/**\"]\n",
    );
    let found = messages(&load(&root, &env));
    assert!(!found.iter().any(|m| m.starts_with("c.yaml")), "{found:?}");
    assert!(
        found.iter().any(|m| m.starts_with("out is a symbolic link")),
        "{found:?}"
    );
    // A linked monform.toml that leaves the project is not read either.
    std::fs::remove_file(root.join("monform.toml")).unwrap();
    write(&dir.path().join("outside/monform.toml"), b"[project]\nname = \"x\"\n");
    symlink(dir.path().join("outside/monform.toml"), root.join("monform.toml")).unwrap();
    let loaded = load(&root, &env);
    assert_eq!(
        messages(&loaded),
        ["monform.toml is a symbolic link to outside the project: not read"]
    );
}

/// Issue 25 item 10: a file that is not UTF-8 says where, and the
/// diagnostic points there.
#[test]
fn non_utf8_files_say_where() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("monform.toml"), b"[project]\nname = \"p\"\n");
    write(
        &dir.path().join("a.yaml"),
        b"snippets:\n  s: { name: \"caf\xE9\", script: x }\n",
    );
    let loaded = load(dir.path(), &env);
    assert_eq!(
        messages(&loaded),
        ["a.yaml is not UTF-8: byte 0xE9 at line 2, column 18 (byte offset 27)"]
    );
    assert_eq!(
        loaded.diagnostics[0].location(&loaded.sources).as_deref(),
        Some("a.yaml:2:18")
    );
}

/// Issue 25 item 14: the service's 1 MiB request limit applies to inline
/// scripts as to `{ file }` ones; item 10 to script files too.
#[test]
fn scripts_past_the_request_limit_and_non_utf8_scripts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("monform.toml"), b"[project]\nname = \"p\"\n");
    let inline = "x".repeat(2 << 20);
    write(
        &dir.path().join("a.yaml"),
        format!("snippets:\n  inline: {{ name: I, script: \"{inline}\" }}\n  big: {{ name: B, script: {{ file: big.js }} }}\n  latin: {{ name: L, script: {{ file: latin.js }} }}\n").as_bytes(),
    );
    write(&dir.path().join("big.js"), &vec![b'y'; (1 << 20) + 1]);
    write(&dir.path().join("latin.js"), b"ok();\n// caf\xE9\n");
    let loaded = load(dir.path(), &env);
    let mut found = messages(&loaded);
    found.sort();
    assert_eq!(
        found,
        [
            "snippets.big.script: script file `big.js` is larger than 1 MiB, the most the service accepts",
            "snippets.inline.script: the script takes 2097154 bytes in a request; the service accepts at most 1048576 (1 MiB)",
            "snippets.latin.script: script file `latin.js` is not UTF-8: byte 0xE9 at line 2, column 7 (byte offset 12)",
        ]
    );
}

/// Issue 25 item 4: `forEach` copies and substitutions count towards the
/// file's budget, so a small file cannot expand without bound.
#[test]
fn expansion_is_bounded_by_the_budget() {
    let big = "x".repeat(1 << 20);
    let toml = format!("[project]\nname = \"p\"\n\n[vars]\nbig = \"{big}\"\n");
    let names = "\"${var:big}\", ".repeat(200);
    let file = format!("snippets:\n  s: {{ name: S, script: x, tags: [{names}] }}\n");
    let (_dir, loaded) = load_files(&[("monform.toml", &toml), ("a.yaml", &file)]);
    let found = messages(&loaded);
    assert!(
        found
            .iter()
            .any(|m| m.starts_with("the file expands to more than 128 MiB")),
        "{:?}",
        found.iter().map(|m| &m[..m.len().min(100)]).collect::<Vec<_>>()
    );
    // A forEach of many items over a large definition.
    let items: String = (0..400).map(|i| format!("i{i}, ")).collect();
    let aliased = format!(
        "x: &big \"{}\"\nsnippets:\n  s:\n    forEach: [{items}]\n    name: S\n    script: x\n    description: [*big, *big, *big, *big, *big, *big, *big, *big, *big, *big]\n",
        "y".repeat(100_000)
    );
    let (_dir, loaded) = load_files(&[("monform.toml", "[project]\nname = \"p\"\n"), ("b.yaml", &aliased)]);
    assert!(
        messages(&loaded)
            .iter()
            .any(|m| m.starts_with("snippets.s: the file expands to more than")),
        "{:?}",
        messages(&loaded)
            .iter()
            .map(|m| &m[..m.len().min(100)])
            .collect::<Vec<_>>()
    );
    // Aliases of a large string: the parse stops at the alias that went
    // over, an error naming file and line (not a syntax error).
    let aliased = format!(
        "s: &s {}\nsnippets:\n  a: {{ name: A, script: x, description: [{}] }}\n",
        "x".repeat(60_000),
        "*s, ".repeat(9_000)
    );
    assert!(aliased.len() < 100_000);
    let (_dir, loaded) = load_files(&[("monform.toml", "[project]\nname = \"p\"\n"), ("c.yaml", &aliased)]);
    assert_eq!(loaded.diagnostics.len(), 1);
    let diagnostic = &loaded.diagnostics[0];
    assert_eq!(diagnostic.code, "monform::too-large");
    assert!(
        diagnostic.message.starts_with("the file expands to more than 128 MiB"),
        "{}",
        diagnostic.message
    );
    assert!(
        diagnostic
            .location(&loaded.sources)
            .is_some_and(|l| l.starts_with("c.yaml:3:"))
    );
}

/// Issue 31 item 1: an editor's unsaved text is loaded instead of the
/// disk's, for monform.toml and resource files alike; a name the project
/// does not read (outside it) is never read from the map either.
#[test]
fn unsaved_text_replaces_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("monform.toml"), b"[project]\nname = \"p\"\n");
    write(
        &dir.path().join("checks.yaml"),
        b"checks:\n  a: { checkType: HEARTBEAT, name: A, heartbeat: { period: 1, periodUnit: hours, grace: 1, graceUnit: hours } }\n",
    );
    assert!(load(dir.path(), &env).is_ok());
    let mut unsaved = Unsaved::default();
    unsaved.insert(
        "checks.yaml".into(),
        "checks:\n  a: { checkType: HEARTBEAT, name: A, frequncy: 5 }\n".into(),
    );
    unsaved.insert("../elsewhere.yaml".into(), "checks: {".into());
    let loaded = load_unsaved(dir.path(), &env, None, None, &unsaved);
    let unknown = loaded
        .diagnostics
        .iter()
        .find(|d| d.message.contains("unknown field"))
        .unwrap_or_else(|| panic!("no unknown field: {:?}", messages(&loaded)));
    let span = unknown.span.unwrap();
    let text = &loaded.sources.get(span.file).text;
    assert_eq!(&text[span.start..span.start + span.len], "frequncy");
    assert!(messages(&loaded).iter().all(|m| !m.contains("elsewhere")));

    unsaved.insert("monform.toml".into(), "[project]\nname = 5\n".into());
    let loaded = load_unsaved(dir.path(), &env, None, None, &unsaved);
    assert!(
        loaded.diagnostics.iter().any(|d| d.span.is_some_and(|s| s.file == 0)),
        "{:?}",
        messages(&loaded)
    );
}

/// Issue 31: the parse cache serves an editor's loads, but the text being
/// typed is never written to it.
#[test]
fn unsaved_text_is_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join(".monform/cache");
    let beat = "checks:\n  a: { checkType: HEARTBEAT, name: A, heartbeat: { period: 1, periodUnit: hours, grace: 1, graceUnit: hours } }\n";
    write(&dir.path().join("monform.toml"), b"[project]\nname = \"p\"\n");
    write(&dir.path().join("a.yaml"), beat.as_bytes());
    write(&dir.path().join("b.yaml"), beat.replace("a:", "b:").as_bytes());
    let entries = || {
        crate::settle_cache();
        std::fs::read_dir(&cache).map_or(0, |d| d.count())
    };
    let mut unsaved = Unsaved::default();
    unsaved.insert("a.yaml".into(), beat.replace("name: A", "name: A2").into());
    let first = load_unsaved(dir.path(), &env, None, Some(&cache), &unsaved);
    assert!(first.is_ok(), "{:?}", messages(&first));
    assert_eq!((first.cache.hits, first.cache.parsed, entries()), (0, 2, 1));
    let again = load_unsaved(dir.path(), &env, None, Some(&cache), &unsaved);
    assert_eq!((again.cache.hits, again.cache.parsed, entries()), (1, 1, 1));
}

/// An id defined in three files is reported twice, each time pointing at
/// the first definition, which is the one kept; the files' other
/// resources load as if there were no repeat.
#[test]
fn an_id_defined_again_points_at_its_first_definition() {
    let (_dir, loaded) = load_files(&[
        ("monform.toml", "[project]\nname = \"p\"\n"),
        ("a.yaml", "snippets:\n  s: { name: A, script: x }\n"),
        (
            "b.yaml",
            "snippets:\n  t: { name: T, script: x }\n  s: { name: B, script: x }\n",
        ),
        (
            "c.yaml",
            "snippets:\n  s: { name: C, script: x }\n  u: { name: U, script: x }\n",
        ),
    ]);
    let repeated: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.code == "monform::duplicate")
        .collect();
    assert_eq!(repeated.len(), 2, "{:?}", messages(&loaded));
    let name_of = |span: Option<Span>| span.map(|s| loaded.sources.get(s.file).name.clone());
    let again: Vec<_> = repeated.iter().map(|d| name_of(d.span)).collect();
    assert_eq!(again, [Some("b.yaml".to_owned()), Some("c.yaml".to_owned())]);
    for diagnostic in &repeated {
        assert_eq!(diagnostic.message, "duplicate logical id: snippets.s is defined twice");
        assert_eq!(name_of(diagnostic.related[0].span), Some("a.yaml".to_owned()));
    }
    let names: Vec<String> = loaded
        .desired
        .resources
        .values()
        .map(|r| r.resource.to_json()["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(names, ["A", "T", "U"]);
    assert_eq!(loaded.defined.all.len(), 3);
}
