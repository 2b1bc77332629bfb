//! Import circles between the modules of one crate: module `a` names
//! `crate::b...` and `b` (or a module it names, and so on) names
//! `crate::a...`. Each crate's modules must form a DAG, so a module can be
//! read, moved or split knowing only what is below it; shared types go
//! down into a leaf module rather than both sides naming each other.
//!
//! An edge is a `crate::path` or `super::name` anywhere in a module's file
//! (doc links included) outside its `#[cfg(test)] mod tests`, to the
//! longest module that path starts with; a module and its own submodules
//! never form an edge. A text scan rather than a parse: it only has to
//! find names, and it needs no compiler.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// Modules of one crate (`a::b` for `src/a/b.rs` or `src/a/b/mod.rs`, the
/// root for `lib.rs` / `main.rs`) and the modules each one names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module graph of the crate whose sources are in `src`. Files under
/// a `tests` folder are the crate's unit tests, not modules of its own.
pub fn module_graph(src: &Path) -> std::io::Result<Graph> {
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file).with_extension("");
        let mut parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.iter().any(|p| p == "tests") {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            parts.clear();
        }
        modules.insert(parts.join("::"), std::fs::read_to_string(&file)?);
    }
    let tests = Regex::new(r"(?s)#\[cfg\(test\)\]\s*mod tests \{.*").expect("a valid pattern");
    let paths =
        Regex::new(r"\b(crate::|(?:super::)+)([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)").expect("a valid pattern");
    let mut graph = Graph::new();
    for (module, text) in &modules {
        let text = tests.replace(text, "");
        let mut named = BTreeSet::new();
        for found in paths.captures_iter(&text) {
            // `crate` is the root; `super` the module's parent,
            // `super::super` its parent's.
            let mut base: Vec<&str> = Vec::new();
            let ups = found[1].matches("super").count();
            if ups > 0 {
                base = module.split("::").filter(|p| !p.is_empty()).collect();
                if ups > base.len() {
                    continue;
                }
                base.truncate(base.len() - ups);
            }
            base.push(&found[2]);
            let full = base.join("::");
            let Some(target) = longest_module(&full, &modules) else {
                continue;
            };
            if target != *module && !nested(module, &target) && !nested(&target, module) {
                named.insert(target);
            }
        }
        graph.insert(module.clone(), named);
    }
    Ok(graph)
}

/// The longest module `path` starts with (`a::b::Item` -> `a::b`).
fn longest_module(path: &str, modules: &BTreeMap<String, String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("::"))
        .find(|candidate| modules.contains_key(candidate))
}

/// Whether `inner` is a submodule of `outer`, at any depth.
fn nested(inner: &str, outer: &str) -> bool {
    inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with("::"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The circles of `graph`: its strongly connected sets of more than one
/// module, each sorted (Tarjan's algorithm).
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, module: &'g str) {
            let at = self.index.len();
            self.index.insert(module, at);
            self.low.insert(module, at);
            self.stack.push(module);
            for next in self.graph.get(module).into_iter().flatten() {
                let next = next.as_str();
                if !self.graph.contains_key(next) {
                    continue;
                }
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[module].min(self.low[next]);
                    self.low.insert(module, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[module].min(self.index[next]);
                    self.low.insert(module, low);
                }
            }
            if self.low[module] == self.index[module] {
                let mut set = Vec::new();
                while let Some(top) = self.stack.pop() {
                    set.push(top.to_owned());
                    if top == module {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in graph.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.found.sort();
    walk.found
}

/// Every circle of every crate below `crates` (`crates/<name>/src`), as
/// lines naming the crate, the modules and the edges between them.
pub fn workspace_circles(crates: &Path) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(crates)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for dir in names {
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = module_graph(&src)?;
        for set in circles(&graph) {
            let edges: Vec<String> = set
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|to| set.contains(to))
                        .map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            found.push(format!("{name}: {set:?} ({})", edges.join(", ")));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("folder");
            std::fs::write(path, text).expect("file");
        }
    }

    /// The workspace's own crates: the check CI runs.
    #[test]
    fn no_crate_of_the_workspace_has_an_import_circle() {
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let found = workspace_circles(&crates).expect("the crates folder reads");
        assert!(
            found.is_empty(),
            "modules that name each other (move what both need into a module below them):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn finds_a_circle_through_a_third_module_and_super() {
        let dir = tempfile_dir();
        write(
            &dir,
            &[
                ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
                ("src/a.rs", "use crate::b::Thing;\n"),
                (
                    "src/b.rs",
                    "/// Made from [`crate::c::inner::Other`].\npub struct Thing;\n",
                ),
                ("src/c/mod.rs", "mod inner;\n"),
                ("src/c/inner.rs", "use super::super::a::g;\n"),
                ("src/d.rs", "use crate::a;\n"),
            ],
        );
        let graph = module_graph(&dir.join("src")).expect("reads");
        assert_eq!(circles(&graph), vec![vec!["a", "b", "c::inner"]]);
        assert_eq!(graph["c::inner"], BTreeSet::from(["a".to_owned()]));
        let found = workspace_circles(dir.parent().expect("a parent")).expect("reads");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("c::inner -> a"), "{}", found[0]);
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_module_and_its_submodules_or_its_tests_make_no_circle() {
        let dir = tempfile_dir();
        write(
            &dir,
            &[
                ("src/main.rs", "mod a;\nmod b;\nuse crate::a::x;\n"),
                ("src/a.rs", "mod x;\npub use x::Y;\nuse crate::b::Z;\n"),
                ("src/a/x.rs", "use super::Y; use crate::a::Q;\n"),
                (
                    "src/b.rs",
                    "pub struct Z;\n#[cfg(test)]\nmod tests {\n    use crate::a::Y;\n}\n",
                ),
                ("src/b/tests/more.rs", "use crate::a::Y;\n"),
            ],
        );
        let graph = module_graph(&dir.join("src")).expect("reads");
        assert_eq!(graph["b"], BTreeSet::new());
        assert_eq!(graph["a"], BTreeSet::from(["b".to_owned()]));
        assert!(circles(&graph).is_empty(), "{graph:?}");
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    /// A fresh folder `<tmp>/<unique>/crate` (the crate's folder, so
    /// `workspace_circles` of its parent sees one crate).
    fn tempfile_dir() -> PathBuf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir()
            .join(format!(
                "monform-circles-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ))
            .join("crate");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("folder");
        dir
    }
}
