//! Import circles between the modules of one crate: module `a` names
//! `crate::b...` and `b` (or a module it names, and so on) names
//! `crate::a...`. Each crate's modules must form a DAG, so a module can be
//! read, moved or split knowing only what is below it; shared types go
//! down into a leaf module rather than both sides naming each other.
//!
//! An edge is a `crate::` or `super::` path anywhere in a module's file
//! outside its `#[cfg(test)]` items, to the longest module that path
//! starts with; a module and its own submodules never form an edge. Two
//! readings, because each sees what the other cannot:
//!
//! - `use` items are parsed with `syn`, so a grouped or nested import
//!   (`use crate::{a, b::{c, self}}`, `use super::{x, y}`) names each of
//!   its modules. A text scan cannot: the path is split across the group.
//!   `syn` is already built for the workspace's derive macros; a hand
//!   parser of the use-tree grammar would be a second one to keep right.
//! - A text scan finds the whole paths written elsewhere: expressions and
//!   types, but also doc links and macro arguments, which `syn` keeps as
//!   unparsed text or tokens.

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
    let mut files_by_module: BTreeMap<String, PathBuf> = BTreeMap::new();
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
        let module = parts.join("::");
        modules.insert(module.clone(), std::fs::read_to_string(&file)?);
        files_by_module.insert(module, file);
    }
    let tests = Regex::new(r"(?s)#\[cfg\(test\)\]\s*mod tests \{.*").expect("a valid pattern");
    let paths = Regex::new(r"\b((?:crate|super)(?:::[a-z_][a-z0-9_]*)+)").expect("a valid pattern");
    let mut graph = Graph::new();
    for (module, text) in &modules {
        let mut named = BTreeSet::new();
        let mut add = |path: &[String]| {
            if let Some(target) = edge(module, path, &modules) {
                named.insert(target);
            }
        };
        for found in paths.find_iter(&tests.replace(text, "")) {
            let path: Vec<String> = found.as_str().split("::").map(str::to_owned).collect();
            add(&path);
        }
        let file = files_by_module.get(module).map(PathBuf::as_path).unwrap_or(src);
        for path in use_paths(file, text)? {
            add(&path);
        }
        graph.insert(module.clone(), named);
    }
    Ok(graph)
}

/// The module `module`'s path names, if that is an edge: the longest
/// module below `crate` (or `module`'s `super`s) it starts with, when that
/// is neither `module` nor inside it nor around it.
fn edge(module: &str, path: &[String], modules: &BTreeMap<String, String>) -> Option<String> {
    // `crate` is the root; `super` the module's parent, `super::super` its
    // parent's. `self::` and other crates name nothing of another module.
    let mut base: Vec<&str> = Vec::new();
    let rest = match path.first().map(String::as_str) {
        Some("crate") => &path[1..],
        Some("super") => {
            let ups = path.iter().take_while(|p| *p == "super").count();
            base = module.split("::").filter(|p| !p.is_empty()).collect();
            if ups > base.len() {
                return None;
            }
            base.truncate(base.len() - ups);
            &path[ups..]
        }
        _ => return None,
    };
    base.extend(rest.iter().map(String::as_str));
    if base.is_empty() {
        // The root (`super::super` alone, `use super::{self}` in a top
        // module): every module is inside it, so it is never an edge.
        return None;
    }
    let target = longest_module(&base.join("::"), modules)?;
    (target != module && !nested(module, &target) && !nested(&target, module)).then_some(target)
}

/// Every path the `use` items of `text` (the file `file`) import, each
/// group expanded (`crate::{a, b::{self, c}}` -> `crate::a`, `crate::b`,
/// `crate::b::c`), at any depth of the file: in modules, functions and
/// blocks, but not in `#[cfg(test)]` items.
fn use_paths(file: &Path, text: &str) -> std::io::Result<Vec<Vec<String>>> {
    use syn::visit::Visit;

    struct Uses(Vec<Vec<String>>);
    impl<'a> Visit<'a> for Uses {
        fn visit_item(&mut self, item: &'a syn::Item) {
            let attrs = match item {
                syn::Item::Mod(m) => &m.attrs,
                syn::Item::Fn(f) => &f.attrs,
                syn::Item::Impl(i) => &i.attrs,
                syn::Item::Use(u) => &u.attrs,
                syn::Item::Const(c) => &c.attrs,
                syn::Item::Static(s) => &s.attrs,
                syn::Item::Struct(s) => &s.attrs,
                syn::Item::Enum(e) => &e.attrs,
                syn::Item::Trait(t) => &t.attrs,
                _ => return syn::visit::visit_item(self, item),
            };
            if !attrs.iter().any(is_cfg_test) {
                syn::visit::visit_item(self, item);
            }
        }
        fn visit_item_use(&mut self, item: &'a syn::ItemUse) {
            flatten(&item.tree, &mut Vec::new(), &mut self.0);
        }
    }
    let parsed = syn::parse_file(text).map_err(|e| {
        let at = e.span().start();
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}:{}:{}: not Rust that syn reads: {e}",
                file.display(),
                at.line,
                at.column + 1
            ),
        )
    })?;
    let mut uses = Uses(Vec::new());
    uses.visit_file(&parsed);
    Ok(uses.0)
}

/// `#[cfg(test)]`, the unit tests a module carries (not a module of its own).
fn is_cfg_test(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|word| word == "test")
}

/// The paths of a use tree below `prefix`: `self` in a group is the
/// prefix itself, a glob or a rename the path up to it.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => out.push(prefix.clone()),
        syn::UseTree::Name(n) => out.push(with(prefix, &n.ident)),
        syn::UseTree::Rename(r) if r.ident == "self" => out.push(prefix.clone()),
        syn::UseTree::Rename(r) => out.push(with(prefix, &r.ident)),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                flatten(tree, prefix, out);
            }
        }
    }
}

fn with(prefix: &[String], last: &syn::Ident) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.push(last.to_string());
    path
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

    #[test]
    fn grouped_and_nested_imports_name_each_of_their_modules() {
        let dir = tempfile_dir();
        write(
            &dir,
            &[
                ("src/lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\n"),
                // The issue's circle: grouped, with a type at the root.
                ("src/a.rs", "use crate::{Error, b};\n"),
                (
                    "src/b.rs",
                    "pub(crate) use crate::{\n    c::{self as see},\n    e::{inner::{X, Y}},\n};\n",
                ),
                ("src/c.rs", "fn f() {\n    use super::{a, d::*};\n}\n"),
                (
                    "src/d.rs",
                    "pub struct Z;\n#[cfg(test)]\nfn helper() { use crate::{a}; }\n",
                ),
                ("src/e/mod.rs", "pub mod inner;\n"),
                ("src/e/inner.rs", "use super::super::{d::Z};\n"),
            ],
        );
        let graph = module_graph(&dir.join("src")).expect("reads");
        assert_eq!(graph["a"], BTreeSet::from(["b".to_owned()]));
        assert_eq!(graph["b"], BTreeSet::from(["c".to_owned(), "e::inner".to_owned()]));
        assert_eq!(graph["c"], BTreeSet::from(["a".to_owned(), "d".to_owned()]));
        assert_eq!(graph["d"], BTreeSet::new(), "a #[cfg(test)] item is the module's tests");
        assert_eq!(graph["e::inner"], BTreeSet::from(["d".to_owned()]));
        assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_file_syn_cannot_read_is_an_error_naming_it() {
        let dir = tempfile_dir();
        write(
            &dir,
            &[("src/lib.rs", "mod a;\n"), ("src/a.rs", "fn f() {\n    let = ;\n}\n")],
        );
        let error = module_graph(&dir.join("src")).expect_err("not Rust");
        assert!(error.to_string().contains("a.rs:2:"), "{error}");
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
