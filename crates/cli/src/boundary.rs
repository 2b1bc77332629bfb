//! The CLI reaches the engine only through its API boundary: `ops` (the
//! operations), `durable` (writing a file for the user) and the values
//! they return, re-exported at the engine's root. Never `stages` (one
//! stage past the operations' rules) nor a module of the engine's own.
//!
//! A test over the source rather than clippy's `disallowed-types` /
//! `disallowed-methods`: those list what is forbidden, one path at a time,
//! so a new engine module would be open until someone lists it; this is an
//! allow-list, and it also holds the engine's public modules to the ones
//! ARCHITECTURE.md names.

use std::path::Path;

/// Engine modules the CLI may name.
const MODULES: &[&str] = &["ops", "durable"];
/// Engine functions at the root the CLI may call.
const FUNCTIONS: &[&str] = &["masked_effective_check"];
/// The engine's public modules (lib.rs), as ARCHITECTURE.md lists them.
const PUBLIC_MODULES: &[&str] = &["durable", "ops", "stages"];

/// Every `monform_engine::` path in `source` past the boundary, as written.
fn past_boundary(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("monform_engine::") {
        let rest = &source[at + "monform_engine::".len()..];
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
                || FUNCTIONS.contains(&name.as_str())
                || name == "self";
            if !allowed {
                found.push(format!("monform_engine::{name}{}", if module { "::" } else { "" }));
            }
        }
    }
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
    assert!(past_boundary("use monform_engine::ops::{self, Session};").is_empty());
    assert!(past_boundary("use monform_engine::{Action, Plan, durable};").is_empty());
    assert!(past_boundary("monform_engine::durable::write(path, b)").is_empty());
    assert_eq!(
        past_boundary("use monform_engine::stages::fetch;"),
        ["monform_engine::stages::"]
    );
    assert_eq!(
        past_boundary("use monform_engine::{Plan, identity::uses_tags, ops::{self, Session}};"),
        ["monform_engine::identity::"]
    );
    assert_eq!(
        past_boundary("monform_engine::run_budget(&d, &a)"),
        ["monform_engine::run_budget"]
    );
}

#[test]
fn the_cli_reaches_the_engine_only_through_its_boundary() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 10, "the CLI's sources: {files:?}");
    let mut past = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file reads");
        for path in past_boundary(&text) {
            past.push(format!("{}: {path}", file.display()));
        }
    }
    assert!(
        past.is_empty(),
        "the CLI reaches past the engine's API boundary (ARCHITECTURE.md, \"Entry points and API boundaries\"):\n{}",
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
