//! The loader never panics, whatever the files contain, and every span it
//! reports points inside its file.
//!
//! Inputs:
//! - arbitrary bytes, raw (often not UTF-8) and lossy-decoded, and "token
//!   soup" (YAML/TOML punctuation, real names, odd numbers and strings), as
//!   resource files, as `monform.toml`, and straight into `parse_yaml` /
//!   `parse_toml`;
//! - structured documents: real sections, ids, fields and values, valid
//!   resources of every kind with random perturbations, and random trees,
//!   serialized to YAML and TOML in several styles (own emitters with
//!   anchors, aliases, tags, block scalars, flow and inline forms; and the
//!   serde-saphyr and toml serializers);
//! - those serializations with random byte edits;
//! - the shapes of issue 25: alias, `forEach` and substitution bombs (stopped
//!   by the byte budget), substitutions nested thousands deep, and
//!   one-line files of 70 KB and more.
//!
//! Checked on every load: `load` returns; every diagnostic (and related
//! diagnostic) with a span points inside its file, on character boundaries,
//! and renders with miette's graphical handler (as the CLI does); so do the
//! spans of the desired resources and their references.
//!
//! Each property runs 256 cases, or `PROPTEST_CASES`.

use std::fmt::Debug;
use std::path::Path;

use miette::{GraphicalReportHandler, GraphicalTheme};
use monform_config::source::{Sources, Span};
use monform_config::tree::{Node, NodeValue, parse_toml, parse_yaml};
use monform_config::{Diagnostic, Loaded, load};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::json;

mod documents;
mod issue25;
mod writers;
use documents::*;
use writers::*;

// ---- harness ----

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    }
}

fn env(name: &str) -> Option<String> {
    match name {
        "SET" => Some("value".into()),
        // Never read: a load that did would put it in a diagnostic or a value.
        "MONFORM_API_KEY" => Some("fuzz-credential".into()),
        "EMPTY" => Some(String::new()),
        "NESTED" => Some("${env:SET}".into()),
        "MULTI" => Some("line\nnext: 1 # é".into()),
        _ => None,
    }
}

const MINIMAL_PROJECT: &str = "[project]\nname = \"fuzz\"\n";

/// Valid `monform.toml` files the resource-file properties pick from.
const PROJECTS: &[&str] = &[
    MINIMAL_PROJECT,
    "[project]\nname = \"fuzz\"\n\n[defaults]\nfrequency = 10\nlocations = [\"eu-west-1\"]\ntags = [\"team:web\"]\n",
    "[project]\nname = \"fuzz\"\ninclude = [\"**/*.yaml\", \"**/*.toml\"]\n\n[api]\nurl = \"local\"\n\n[state]\nbackend = \"local\"\n",
    "[project]\nname = \"fuzz\"\ninclude = [\"monitors/*\"]\n\n[defaults]\nactivated = false\nalertChannels = [\"ch\"]\ngroup = \"g\"\n",
];

const SCRIPT: &[u8] = b"await page.goto(`${process.env.BASE_URL}`)\n";

/// Writes a project (monform.toml, scripts and `files`), loads it and checks
/// every span of the result.
fn load_project(project: &[u8], files: &[(String, Vec<u8>)]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "monform.toml", project);
    for script in ["script.js", "scripts/script.js", "monitors/script.js"] {
        write(root, script, SCRIPT);
    }
    for (path, bytes) in files {
        write(root, path, bytes);
    }
    let loaded = load(root, &env);
    check_loaded(&loaded);
    loaded
}

/// `load_project` without rendering, for the expansion bombs: rendering
/// their many diagnostics in files of megabyte lines costs more than the
/// load (the long-line shapes are rendered: issue 25 item 6).
fn load_project_unrendered(project: &[u8], files: &[(String, Vec<u8>)]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "monform.toml", project);
    for (path, bytes) in files {
        write(root, path, bytes);
    }
    let loaded = load(root, &env);
    fn check(sources: &Sources, diagnostic: &Diagnostic) {
        if let Some(span) = diagnostic.span {
            check_span(sources, span, &diagnostic.message);
        }
        let _ = diagnostic.location(sources);
        diagnostic.related.iter().for_each(|d| check(sources, d));
    }
    for diagnostic in &loaded.diagnostics {
        check(&loaded.sources, diagnostic);
    }
    loaded
}

fn write(root: &Path, relative: &str, bytes: &[u8]) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dir");
    }
    std::fs::write(path, bytes).expect("write file");
}

fn check_loaded(loaded: &Loaded) {
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
    for diagnostic in &loaded.diagnostics {
        check_diagnostic(&loaded.sources, diagnostic, &handler);
    }
    for resource in loaded.desired.resources.values() {
        check_span(&loaded.sources, resource.span, &resource.address);
        for reference in &resource.references {
            check_span(&loaded.sources, reference.span, &reference.path);
        }
    }
}

fn check_diagnostic(sources: &Sources, diagnostic: &Diagnostic, handler: &GraphicalReportHandler) {
    if let Some(span) = diagnostic.span {
        check_span(sources, span, &diagnostic.message);
    }
    let _ = diagnostic.location(sources);
    let mut rendered = String::new();
    assert!(
        handler
            .render_report(&mut rendered, &diagnostic.to_report(sources))
            .is_ok(),
        "cannot render {diagnostic:?}"
    );
    for related in &diagnostic.related {
        check_diagnostic(sources, related, handler);
    }
}

fn check_span(sources: &Sources, span: Span, what: &dyn Debug) {
    assert!(
        (span.file as usize) < sources.len(),
        "{what:?}: span {span:?} names a file that was not read"
    );
    let file = sources.get(span.file);
    check_span_in(&file.text, span, &format!("{what:?} in {}", file.name));
}

fn check_span_in(text: &str, span: Span, what: &str) {
    let end = span.start.checked_add(span.len);
    assert!(
        end.is_some_and(|end| end <= text.len()),
        "{what}: span {span:?} ends past the end of the file ({} bytes)",
        text.len()
    );
    let end = span.start + span.len;
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(end),
        "{what}: span {span:?} cuts a character"
    );
}

/// Every span of a parsed tree lies inside the text.
fn check_tree(text: &str, node: &Node) {
    check_span_in(text, node.span, "node");
    match &node.value {
        NodeValue::Seq(items) => items.iter().for_each(|item| check_tree(text, item)),
        NodeValue::Map(entries) => {
            for entry in entries {
                check_span_in(text, entry.key_span, &format!("key `{}`", entry.key));
                check_tree(text, &entry.value);
            }
        }
        _ => {}
    }
}

fn check_parsers(text: &str) {
    match parse_yaml(0, text) {
        Ok(node) => check_tree(text, &node),
        Err(error) => {
            if let Some(span) = error.span {
                check_span_in(text, span, &error.message);
            }
        }
    }
    match parse_toml(0, text) {
        Ok(node) => check_tree(text, &node),
        Err(errors) => {
            for error in errors {
                if let Some(span) = error.span {
                    check_span_in(text, span, &error.message);
                }
            }
        }
    }
}

// ---- arbitrary text ----

/// Pieces of YAML and TOML, real names and awkward values.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "checks", "groups", "snippets", "alertChannels", "variables", "statusPages", "privateLocations", "checkType", "URL",
    "API", "HEARTBEAT", "request", "url", "name", "script", "file", "frequency", "heartbeat", "period", "a", "b", "g",
    "ch", ":", ": ", "\n", "\n  ", "\n    ", "  ", " ", "- ", "-", "[", "]", "{", "}", ",", "\"", "'", "&a ", "*a",
    "&b ", "*b ", "*a : ", "? ", "?", "|", "|-", "|+", ">", ">-", "# c", "---", "...", "!!str ", "!!int ", "!!map ",
    "!!seq", "!t ", "!<tag:x> ", "<<: ", "<<: *a", "%YAML 1.2\n", "%TAG ! !x\n", "${env:", "${env:SET}", "${env:UNSET}",
    "${env:SET:-d}", "$${env:X}", "${env:1}", "${env:}", "${", "}", "\t", "\r", "\r\n", "é", "😀", "\u{feff}", "\u{0}",
    "\u{85}", "\u{2028}", "~", "null", "true", "no", "0", "-1", "0x1F", "0o17", "0b101", "1e999", "-.inf", ".nan",
    "1_000", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "4294967296",
    "=", " = ", "[[", "]]", "[checks.a]", "[[checks]]", "[checks.a.request]", "\"\"\"", "'''", "\\", "\\u",
    "\\U0001F600", "\\x41", "1979-05-27T07:32:00Z", "07:32:00", "1979-05-27", "a.b", "a.\"b\"", "+", "_", "inf", "nan",
    "+nan", "{ file = \"script.js\" }", "{ file: script.js }", "script.js", "../script.js", "/", ".",
    "${var:x:-", "${env:UNSET:-", "${each.value.x:-", "${env:MONFORM_API_KEY}", "${env:UNSET:-${env:SET}}",
    "{ file: /proc/self/environ }", "{ file: ../../../etc/passwd }", "forEachFile: \"../../*\"", "&big ", "*big, ",
];

fn token_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        8 => select(TOKENS).prop_map(str::to_owned),
        1 => "[a-z0-9 ]{1,6}",
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|pieces| pieces.concat())
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..600)
}

// ---- properties ----

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_as_resource_files(data in bytes(), project in select(PROJECTS), nested in any::<bool>()) {
        let dir = if nested { "monitors/" } else { "" };
        load_project(project.as_bytes(), &[
            (format!("{dir}fuzz.yaml"), lossy(&data)),
            (format!("{dir}fuzz.toml"), lossy(&data)),
            (format!("{dir}raw.yml"), data.clone()),
            (format!("{dir}raw.toml"), data),
        ]);
    }

    #[test]
    fn token_soup_as_resource_files(text in token_soup(), project in select(PROJECTS)) {
        load_project(project.as_bytes(), &[
            ("monitors/soup.yaml".to_owned(), text.clone().into_bytes()),
            ("monitors/soup.toml".to_owned(), text.into_bytes()),
        ]);
    }

    #[test]
    fn structured_documents(
        documents in prop::collection::vec((document(), style()), 1..4),
        project in select(PROJECTS),
    ) {
        let files: Vec<(String, Vec<u8>)> = documents
            .iter()
            .enumerate()
            .map(|(i, (doc, style))| {
                (format!("monitors/doc{i}.{}", style.extension()), style.write(doc).into_bytes())
            })
            .collect();
        load_project(project.as_bytes(), &files);
    }

    #[test]
    fn mutated_documents(
        doc in document(),
        style in style(),
        mutations in prop::collection::vec(mutation(), 1..6),
        project in select(PROJECTS),
    ) {
        let text = style.write(&doc);
        let bytes = mutate(&text, &mutations);
        load_project(project.as_bytes(), &[
            (format!("monitors/mutated.{}", style.extension()), lossy(&bytes)),
            (format!("monitors/raw.{}", style.extension()), bytes),
        ]);
    }

    #[test]
    fn project_files(
        project in project_document(),
        seed in any::<u64>(),
        serde in any::<bool>(),
        mutations in prop::collection::vec(mutation(), 0..3),
        soup in prop::option::weighted(0.2, token_soup()),
    ) {
        let style = if serde {
            Style::TomlSerde { pretty: seed % 2 == 0 }
        } else {
            Style::TomlOwn(seed, seed % 3 == 0)
        };
        let text = match soup {
            Some(soup) => soup,
            None => style.write(&project),
        };
        // A valid resource file, so that the project's settings are used.
        let resources = json!({
            "checks": { "url": template("url"), "beat": template("beat") },
            "groups": { "g": template("g") },
            "snippets": { "s": template("s") },
            "alertChannels": { "ch": template("ch"), "hook": template("hook") },
        });
        let resources = to_yaml(&V::from_json(&resources), seed, false).into_bytes();
        load_project(&mutate(&text, &mutations), &[("monitors/web.yaml".to_owned(), resources)]);
    }

    #[test]
    fn parsers_on_arbitrary_text(text in any::<String>(), soup in token_soup()) {
        check_parsers(&text);
        check_parsers(&soup);
    }

    #[test]
    fn parsers_on_structured_text(
        doc in document(),
        style in style(),
        mutations in prop::collection::vec(mutation(), 0..4),
    ) {
        let text = style.write(&doc);
        check_parsers(&text);
        check_parsers(&String::from_utf8_lossy(&mutate(&text, &mutations)));
    }
}

// ---- fixed cases ----

/// The structured generator starts from valid resources: together they load
/// without a single diagnostic, in every style.
#[test]
fn templates_are_valid() {
    let mut sections: Vec<(String, V)> = Vec::new();
    for (section, id, resource) in templates() {
        let resource = V::from_json(&resource);
        match sections.iter_mut().find(|(s, _)| s == section) {
            Some((_, V::Map(entries))) => entries.push((id.to_owned(), resource)),
            _ => sections.push((section.to_owned(), V::Map(vec![(id.to_owned(), resource)]))),
        }
    }
    let doc = V::Map(sections);
    let styles = [
        Style::YamlOwn(7, false),
        Style::YamlOwn(12345, false),
        Style::YamlOwn(3, false),
        Style::YamlSerde,
        Style::TomlOwn(7, false),
        Style::TomlOwn(999, false),
        Style::TomlOwn(4, false),
        Style::TomlSerde { pretty: false },
        Style::TomlSerde { pretty: true },
    ];
    for style in styles {
        let text = style.write(&doc);
        let loaded = load_project(
            MINIMAL_PROJECT.as_bytes(),
            &[(format!("monitors/all.{}", style.extension()), text.clone().into_bytes())],
        );
        assert!(
            loaded.diagnostics.is_empty(),
            "{style:?}:\n{text}\n{:#?}",
            loaded.diagnostics
        );
        assert_eq!(loaded.desired.len(), templates().len(), "{style:?}");
    }
}

/// Inputs that once produced spans past the end of the file.
#[test]
fn yaml_key_spans_stay_inside_the_file() {
    for text in [
        "?",
        "? ",
        "{? }",
        "checks:\n  ?",
        "a: &x a-rather-long-key-text\n*x : 1",
        "checks: &c web\n*c :",
    ] {
        check_parsers(text);
        load_project(
            MINIMAL_PROJECT.as_bytes(),
            &[("f.yaml".to_owned(), text.as_bytes().to_vec())],
        );
    }
}

/// Deep nesting is an error, not a stack overflow, even on a test thread's
/// small stack in a debug build.
#[test]
fn deep_nesting_is_an_error() {
    for depth in [40, 70, 1000] {
        let block: String = (0..depth).map(|i| format!("{}-\n", " ".repeat(i * 2))).collect();
        let flow = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let toml = format!("a = {}{}", "[".repeat(depth), "]".repeat(depth));
        let inline = format!("a = {}1{}", "{b = ".repeat(depth), "}".repeat(depth));
        check_parsers(&block);
        check_parsers(&flow);
        check_parsers(&toml);
        check_parsers(&inline);
        load_project(
            MINIMAL_PROJECT.as_bytes(),
            &[
                ("block.yaml".to_owned(), block.into_bytes()),
                ("flow.yaml".to_owned(), flow.into_bytes()),
                ("deep.toml".to_owned(), toml.into_bytes()),
                ("inline.toml".to_owned(), inline.into_bytes()),
            ],
        );
    }
}
