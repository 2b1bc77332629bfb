//! Every front end reaches the engine only through its API boundary:
//! `ops` (the operations), `durable` (writing a file for the user) and the
//! values they return, re-exported at the engine's root. Never `stages`
//! (one stage past the operations' rules) nor a module of the engine's own.
//! The front ends are every crate of the workspace whose `[dependencies]`
//! name `monform-engine` (the CLI, the language server, the reconciler,
//! codify, the bench, and any added later), read from their Cargo.toml.
//!
//! A test over the source rather than clippy's `disallowed-types` /
//! `disallowed-methods`: those list what is forbidden, one path at a time,
//! so a new engine module would be open until someone lists it; this is an
//! allow-list, and it also holds the engine's public modules to the ones
//! ARCHITECTURE.md names.

use std::path::{Path, PathBuf};

/// Engine modules a front end may name.
const MODULES: &[&str] = &["ops", "durable"];
/// Engine functions at the root a front end may call.
const FUNCTIONS: &[&str] = &["masked_effective_check"];
/// The engine's public modules (lib.rs), as ARCHITECTURE.md lists them;
/// `conformance` only with the `test-support` feature, which no front end
/// names (and which the scan below would refuse).
const PUBLIC_MODULES: &[&str] = &["conformance", "durable", "ops", "stages"];
/// A module one front end may name besides [`MODULES`], and why.
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "monform-bench",
    "stages",
    "the offline diff times the differ alone (ARCHITECTURE.md, the engine's public surface)",
)];

/// Every `monform_engine::` path in `source` past the boundary, as written,
/// with `also` the modules allowed besides [`MODULES`]. A path through a
/// rename (`use monform_engine as engine;`, `use monform_engine::{self as
/// e}`, `extern crate monform_engine as e;`) is read as the engine's too.
fn past_boundary(source: &str, also: &[&str]) -> Vec<String> {
    let rename = regex::Regex::new(r"\bmonform_engine(?:::\{\s*self)?\s+as\s+([A-Za-z_][A-Za-z0-9_]*)")
        .expect("a valid pattern");
    let mut names = vec!["monform_engine".to_owned()];
    names.extend(rename.captures_iter(source).map(|c| c[1].to_owned()));
    let mut found = Vec::new();
    for crate_name in &names {
        let prefix = format!("{crate_name}::");
        for (at, _) in source.match_indices(&prefix) {
            // `engine::` inside `monform_engine::` or `my_engine::` is not the rename.
            let before = source[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &source[at + prefix.len()..];
            let items = match rest.strip_prefix('{') {
                Some(group) => top_level_items(group),
                None => vec![rest],
            };
            for item in items {
                let item = item.trim_start();
                let name: String = item.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let module = item[name.len()..].starts_with("::");
                // A type at the root is a value of the boundary (the engine's
                // own modules are private, so a type there is a re-export).
                let allowed = name.starts_with(char::is_uppercase)
                    || MODULES.contains(&name.as_str())
                    || also.contains(&name.as_str())
                    || FUNCTIONS.contains(&name.as_str())
                    || name == "self";
                if !allowed {
                    found.push(format!("monform_engine::{name}{}", if module { "::" } else { "" }));
                }
            }
        }
    }
    found
}

/// The workspace's front ends: each crate below `crates` whose
/// `[dependencies]` (or a target's) name `monform-engine`, as its package
/// name and its `src` folder.
fn front_ends(crates: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates).expect("the crates folder reads").flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let table: toml::Table = text
            .parse()
            .unwrap_or_else(|e| panic!("{} is not TOML: {e}", manifest.display()));
        let name = table
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_owned();
        let names_engine = |deps: Option<&toml::Value>| {
            let Some(deps) = deps.and_then(|d| d.as_table()) else {
                return false;
            };
            // A renamed dependency would hide its paths from the scan.
            for (key, value) in deps {
                let package = value.get("package").and_then(|p| p.as_str());
                assert!(
                    package != Some("monform-engine") || key == "monform-engine",
                    "{}: name the engine `monform-engine`, not `{key}`, so the boundary test reads its paths",
                    manifest.display()
                );
            }
            deps.contains_key("monform-engine")
        };
        let targets = table.get("target").and_then(|t| t.as_table());
        let depends = names_engine(table.get("dependencies"))
            || targets.is_some_and(|t| t.values().any(|t| names_engine(t.get("dependencies"))));
        if depends && name != "monform-engine" {
            found.push((name, entry.path().join("src")));
        }
    }
    found.sort();
    found
}

/// The items of a `{...}` use group (from after the `{`), each from its start.
fn top_level_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder reads").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("boundary.rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_scan_finds_paths_past_the_boundary() {
    assert!(past_boundary("use monform_engine::ops::{self, Session};", &[]).is_empty());
    assert!(past_boundary("use monform_engine::{Action, Plan, durable};", &[]).is_empty());
    assert!(past_boundary("monform_engine::durable::write(path, b)", &[]).is_empty());
    assert_eq!(
        past_boundary("use monform_engine::stages::fetch;", &[]),
        ["monform_engine::stages::"]
    );
    assert!(past_boundary("use monform_engine::stages::fetch;", &["stages"]).is_empty());
    assert_eq!(
        past_boundary(
            "use monform_engine::{Plan, identity::uses_tags, ops::{self, Session}};",
            &[]
        ),
        ["monform_engine::identity::"]
    );
    assert_eq!(
        past_boundary("monform_engine::run_budget(&d, &a)", &[]),
        ["monform_engine::run_budget"]
    );
    assert_eq!(
        past_boundary(
            "use monform_engine as engine;\nengine::stages::plan(); my_engine::x();",
            &[]
        ),
        ["monform_engine::stages::"]
    );
    assert_eq!(
        past_boundary("use monform_engine::{self as e, Plan};\nuse e::{ops, identity};", &[]),
        ["monform_engine::identity"]
    );
    assert_eq!(past_boundary("use monform_engine::*;", &[]), ["monform_engine::"]);
}

#[test]
fn every_front_end_reaches_the_engine_only_through_its_boundary() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let front_ends = front_ends(&crates);
    let names: Vec<&str> = front_ends.iter().map(|(name, _)| name.as_str()).collect();
    for known in [
        "monform",
        "monform-bench",
        "monform-codify",
        "monform-lsp",
        "monform-reconcile",
    ] {
        assert!(
            names.contains(&known),
            "{known} is a front end of the engine: {names:?}"
        );
    }
    let mut past = Vec::new();
    for (name, src) in &front_ends {
        let also: Vec<&str> = EXCEPTIONS
            .iter()
            .filter(|(front_end, _, _)| front_end == name)
            .map(|(_, module, _)| *module)
            .collect();
        let mut files = Vec::new();
        rust_files(src, &mut files);
        assert!(!files.is_empty(), "{name}'s sources in {}", src.display());
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file reads");
            for path in past_boundary(&text, &also) {
                past.push(format!("{name}: {}: {path}", file.display()));
            }
        }
    }
    assert!(
        past.is_empty(),
        "a front end reaches past the engine's API boundary (ARCHITECTURE.md, \"Entry points and API boundaries\"):\n{}",
        past.join("\n")
    );
}

#[test]
fn the_engine_makes_public_only_the_modules_of_its_boundary() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/src/lib.rs");
    let text = std::fs::read_to_string(lib).expect("the engine's lib.rs reads");
    let public: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').trim())
        .collect();
    assert_eq!(
        public, PUBLIC_MODULES,
        "a public engine module is an API boundary: list it in ARCHITECTURE.md and here"
    );
}
