//! `moved`, `import` and `removed`: top-level lists of a resource file that
//! declare, for review, what `state mv`, `import ADDRESS ID` and `state rm`
//! do by hand (Terraform's `moved`, `import` and `removed` blocks).
//!
//! Entries apply per environment: one with `environments: [..]` only in
//! those, and a `moved` or `import` entry whose resource the environment
//! loaded does not have (its `environments` leave it out) not there.

use std::collections::BTreeMap;

use monform_model::Address;

use crate::diagnostic::Diagnostic;
use crate::expand::{Context, ENVIRONMENTS, in_environment};
use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue};
use rustc_hash::FxHashSet;

/// The top-level keys of these lists.
pub const SECTIONS: [&str; 3] = ["moved", "import", "removed"];

/// An `import` entry's fingerprints of the secrets the object holds.
const SECRET_FINGERPRINTS: &str = "secretFingerprints";

/// `{ from: checks.homepage, to: checks.home }`: a rename.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub from: Address,
    pub to: Address,
    pub span: Span,
}

/// `{ to: checks.legacy-login, id: "..." }`: adopt an existing object.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub to: Address,
    pub id: String,
    /// `secretFingerprints`: field path to the salted fingerprint
    /// (`salt:digest`) of the secret the object holds now, as a migration
    /// read it from the tool that made it (never the value). Until the
    /// first apply records its own, a secret of the files with that
    /// fingerprint is not shown as to be set.
    pub secret_fingerprints: BTreeMap<String, String>,
    pub span: Span,
}

/// `{ from: checks.old-probe, destroy: false }`: stop managing an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    pub from: Address,
    /// Delete it, as leaving the files does (the default).
    pub destroy: bool,
    pub span: Span,
}

/// Every entry of the three lists that applies to the environment loaded,
/// in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Declarations {
    pub moved: Vec<Moved>,
    pub imports: Vec<Import>,
    pub removed: Vec<Removed>,
    /// Definitions (`section.id`, not items) the files have but whose
    /// `environments` leave out the environment loaded.
    pub absent: Vec<Address>,
}

impl Declarations {
    /// No entry and no definition left out: nothing a file's cache entry
    /// would have to keep besides its resources.
    pub fn is_empty(&self) -> bool {
        self.moved.is_empty() && self.imports.is_empty() && self.removed.is_empty() && self.absent.is_empty()
    }

    pub fn extend(&mut self, other: Declarations) {
        self.moved.extend(other.moved);
        self.imports.extend(other.imports);
        self.removed.extend(other.removed);
        self.absent.extend(other.absent);
    }

    /// Drops the `moved` and `import` entries whose resource the
    /// environment loaded does not have: they apply where it exists.
    fn keep_present(&mut self) {
        if self.absent.is_empty() {
            return;
        }
        let absent = &self.absent;
        // An item's definition: `checks.site[eu]` is of `checks.site`.
        let is_absent = |address: &Address| {
            let id = address.id.split_once('[').map_or(address.id.as_str(), |(id, _)| id);
            absent.iter().any(|a| a.kind == address.kind && a.id == id)
        };
        self.moved.retain(|m| !is_absent(&m.to));
        self.imports.retain(|i| !is_absent(&i.to));
    }

    /// Where each moved address ends up, chains followed (`a -> b`, `b -> c`
    /// gives `a -> c` and `b -> c`), with the entry of the first step.
    /// Cycles are left out (the loader reports them).
    pub fn moves(&self) -> BTreeMap<&Address, (&Address, &Moved)> {
        let next: BTreeMap<&Address, &Moved> = self.moved.iter().map(|m| (&m.from, m)).collect();
        let mut resolved = BTreeMap::new();
        for moved in &self.moved {
            let mut to = &moved.to;
            let mut steps = 0;
            while let Some(further) = next.get(to) {
                to = &further.to;
                steps += 1;
                if steps > self.moved.len() {
                    break;
                }
            }
            if steps <= self.moved.len() {
                resolved.insert(&moved.from, (to, moved));
            }
        }
        resolved
    }

    pub fn removed(&self, address: &Address) -> Option<&Removed> {
        self.removed.iter().find(|r| &r.from == address)
    }
}

/// Reads one of the lists (`section` is `moved`, `import` or `removed`),
/// keeping the entries whose `environments` include the one loaded.
pub(crate) fn parse(section: Entry, context: &Context<'_>, into: &mut Declarations, diagnostics: &mut Vec<Diagnostic>) {
    let items = match section.value.value {
        NodeValue::Seq(items) => items,
        NodeValue::Null => return,
        _ => {
            diagnostics.push(
                Diagnostic::new(
                    "monform::type",
                    format!("{}: expected a list, found {}", section.key, section.value.type_name()),
                )
                .at(section.key_span, "here")
                .help(example(&section.key)),
            );
            return;
        }
    };
    for item in items {
        let mut fields = Fields {
            section: &section.key,
            node: &item,
            diagnostics,
            ok: true,
        };
        let allowed: &[&str] = match section.key.as_str() {
            "moved" => &["from", "to", ENVIRONMENTS],
            "import" => &["to", "id", SECRET_FINGERPRINTS, ENVIRONMENTS],
            _ => &["from", "destroy", ENVIRONMENTS],
        };
        if !fields.known(allowed) {
            continue;
        }
        let field = format!("{}: `{ENVIRONMENTS}`", section.key);
        if let Some(list) = item.get(ENVIRONMENTS)
            && !in_environment(&field, &list.value, context, fields.diagnostics)
        {
            continue;
        }
        let span = item.span;
        match section.key.as_str() {
            "moved" => {
                let (from, to) = (fields.address("from"), fields.address("to"));
                if let (Some(from), Some(to)) = (from, to) {
                    into.moved.push(Moved { from, to, span });
                }
            }
            "import" => {
                let (to, id) = (fields.address("to"), fields.string("id"));
                let secret_fingerprints = fields.fingerprints(SECRET_FINGERPRINTS);
                if let (Some(to), Some(id), Some(secret_fingerprints)) = (to, id, secret_fingerprints) {
                    into.imports.push(Import {
                        to,
                        id,
                        secret_fingerprints,
                        span,
                    });
                }
            }
            _ => {
                let from = fields.address("from");
                let destroy = fields.boolean("destroy").unwrap_or(true);
                if let (Some(from), true) = (from, fields.ok) {
                    into.removed.push(Removed { from, destroy, span });
                }
            }
        }
    }
}

fn example(section: &str) -> &'static str {
    match section {
        "moved" => "write `moved:\n  - { from: checks.old-id, to: checks.new-id }`",
        "import" => "write `import:\n  - { to: checks.my-check, id: \"<remote id>\" }`",
        _ => "write `removed:\n  - { from: checks.old-id, destroy: false }`",
    }
}

/// Reads one entry's fields, reporting every problem.
struct Fields<'a> {
    section: &'a str,
    node: &'a Node,
    diagnostics: &'a mut Vec<Diagnostic>,
    ok: bool,
}

impl Fields<'_> {
    fn fail(&mut self, span: Span, message: String, label: &str) {
        self.ok = false;
        self.diagnostics.push(
            Diagnostic::new("monform::invalid", format!("{}: {message}", self.section))
                .at(span, label.to_owned())
                .help(example(self.section)),
        );
    }

    /// The entry is a map with only `allowed` keys.
    fn known(&mut self, allowed: &[&str]) -> bool {
        let Some(entries) = self.node.as_map() else {
            let message = format!("expected a map, found {}", self.node.type_name());
            self.fail(self.node.span, message, "here");
            return false;
        };
        for entry in entries {
            if !allowed.contains(&entry.key.as_str()) {
                let mut message = format!("unknown field `{}`", entry.key);
                if let Some(s) = crate::suggest(&entry.key, allowed.iter().copied()) {
                    message.push_str(&format!(" (did you mean `{s}`?)"));
                }
                self.fail(entry.key_span, message, "unknown field");
            }
        }
        self.ok
    }

    fn field(&mut self, name: &str, required: bool) -> Option<&Node> {
        let found = self.node.get(name).map(|e| &e.value);
        if found.is_none() && required {
            self.fail(self.node.span, format!("missing field `{name}`"), "in this entry");
        }
        found
    }

    fn string(&mut self, name: &str) -> Option<String> {
        let node = self.field(name, true)?;
        match &node.value {
            NodeValue::Str(s) if !s.is_empty() => Some(s.clone()),
            _ => {
                let (span, message) = (node.span, format!("`{name}` must be a non-empty string"));
                self.fail(span, message, "invalid value");
                None
            }
        }
    }

    fn address(&mut self, name: &str) -> Option<Address> {
        let span = self.node.get(name).map(|e| e.value.span);
        let text = self.string(name)?;
        match text.parse::<Address>() {
            Ok(address) => Some(address),
            Err(e) => {
                self.fail(
                    span.unwrap_or(self.node.span),
                    format!("`{name}`: {e}"),
                    "invalid address",
                );
                None
            }
        }
    }

    /// An optional map of field paths to `salt:digest` texts (empty when absent).
    fn fingerprints(&mut self, name: &str) -> Option<BTreeMap<String, String>> {
        // The entry's own node (not borrowed through `self`, which reports).
        let entry = self.node;
        let Some(node) = entry.get(name).map(|e| &e.value) else {
            return Some(BTreeMap::new());
        };
        let Some(entries) = node.as_map() else {
            let (span, message) = (
                node.span,
                format!("`{name}` must be a map of field paths to fingerprints"),
            );
            self.fail(span, message, "invalid value");
            return None;
        };
        let mut found = BTreeMap::new();
        let mut ok = true;
        for entry in entries {
            match &entry.value.value {
                NodeValue::Str(print) if is_fingerprint(print) => {
                    found.insert(entry.key.clone(), print.clone());
                }
                _ => {
                    let message = format!(
                        "`{name}.{}` must be a fingerprint `salt:digest` (hex digits)",
                        entry.key
                    );
                    self.fail(entry.value.span, message, "invalid value");
                    ok = false;
                }
            }
        }
        ok.then_some(found)
    }

    fn boolean(&mut self, name: &str) -> Option<bool> {
        let node = self.field(name, false)?;
        match node.value {
            NodeValue::Bool(b) => Some(b),
            _ => {
                let (span, message) = (node.span, format!("`{name}` must be true or false"));
                self.fail(span, message, "invalid value");
                None
            }
        }
    }
}

/// `salt:digest`, both hex digits: a fingerprint, never a value (a secret
/// pasted there by mistake is refused, and so not kept in the files' form).
fn is_fingerprint(text: &str) -> bool {
    let hex = |s: &str| !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    text.split_once(':')
        .is_some_and(|(salt, digest)| hex(salt) && hex(digest))
}

/// The checks that need every file, after dropping the `moved` and
/// `import` entries of resources the environment loaded does not have:
/// cycles, two moves to or from one address, a move from an address still
/// defined, an import of an address not defined, a removal of an address
/// still defined.
pub(crate) fn check(declarations: &mut Declarations, defined: &FxHashSet<Address>, diagnostics: &mut Vec<Diagnostic>) {
    declarations.keep_present();
    let declarations = &*declarations;
    let defined = |address: &Address| defined.contains(address);
    let mut seen_to: BTreeMap<&Address, Span> = BTreeMap::new();
    let mut seen_from: BTreeMap<&Address, Span> = BTreeMap::new();
    for moved in &declarations.moved {
        if moved.from == moved.to {
            diagnostics.push(
                Diagnostic::new("monform::moved", format!("moved: {} is moved to itself", moved.from))
                    .at(moved.span, "this entry")
                    .help("remove the entry"),
            );
            continue;
        }
        if moved.from.kind == monform_model::Kind::Variable {
            diagnostics.push(
                Diagnostic::new(
                    "monform::moved",
                    format!("moved: {} cannot move: a variable's logical id is its key", moved.from),
                )
                .at(moved.span, "this entry")
                .help("the API cannot rename a key: change it in the files and apply (it is replaced)"),
            );
        }
        if moved.from.kind != moved.to.kind {
            diagnostics.push(
                Diagnostic::new(
                    "monform::moved",
                    format!("moved: {} cannot move to {}, a different section", moved.from, moved.to),
                )
                .at(moved.span, "this entry")
                .help("an object keeps its kind: delete it and define the new one instead"),
            );
        }
        if let Some(first) = seen_to.insert(&moved.to, moved.span) {
            diagnostics.push(
                Diagnostic::new("monform::moved", format!("moved: two entries move to {}", moved.to))
                    .at(moved.span, "second move here")
                    .help("only one object can end up at an address")
                    .related(Diagnostic::new("monform::moved", "first move").at(first, "first move here")),
            );
        }
        if let Some(first) = seen_from.insert(&moved.from, moved.span) {
            diagnostics.push(
                Diagnostic::new("monform::moved", format!("moved: {} is moved twice", moved.from))
                    .at(moved.span, "second move here")
                    .help("an object can move to one address only")
                    .related(Diagnostic::new("monform::moved", "first move").at(first, "first move here")),
            );
        }
        if defined(&moved.from) {
            diagnostics.push(
                Diagnostic::new(
                    "monform::moved",
                    format!("moved: {} is still defined in the files", moved.from),
                )
                .at(moved.span, "this entry")
                .help(format!(
                    "rename {} to {} in the files, or remove this entry",
                    moved.from, moved.to
                )),
            );
        }
    }
    for cycle in move_cycles(declarations) {
        let names: Vec<String> = cycle.iter().map(|m| m.from.to_string()).collect();
        diagnostics.push(
            Diagnostic::new(
                "monform::moved",
                format!("moved: the moves form a cycle: {} -> {}", names.join(" -> "), names[0]),
            )
            .at(cycle[0].span, "part of the cycle")
            .help("an object cannot move back to where it was: remove one of these entries"),
        );
    }
    let mut imported: BTreeMap<&Address, Span> = BTreeMap::new();
    for import in &declarations.imports {
        if !defined(&import.to) {
            diagnostics.push(
                Diagnostic::new(
                    "monform::import",
                    format!("import: {} is not defined in the files", import.to),
                )
                .at(import.span, "this entry")
                .help(format!(
                    "define {} in a resource file: the import brings the object to that form",
                    import.to
                )),
            );
        }
        if let Some(first) = imported.insert(&import.to, import.span) {
            diagnostics.push(
                Diagnostic::new(
                    "monform::import",
                    format!("import: two entries import to {}", import.to),
                )
                .at(import.span, "second import here")
                .related(Diagnostic::new("monform::import", "first import").at(first, "first import here")),
            );
        }
    }
    for removed in &declarations.removed {
        if defined(&removed.from) {
            diagnostics.push(
                Diagnostic::new(
                    "monform::removed",
                    format!("removed: {} is still defined in the files", removed.from),
                )
                .at(removed.span, "this entry")
                .help(format!("delete {} from the files, or remove this entry", removed.from)),
            );
        }
    }
}

/// Each cycle of moves once, from its first entry in file order.
fn move_cycles(declarations: &Declarations) -> Vec<Vec<&Moved>> {
    let next: BTreeMap<&Address, &Moved> = declarations.moved.iter().map(|m| (&m.from, m)).collect();
    let mut reported: Vec<&Address> = Vec::new();
    let mut cycles = Vec::new();
    for start in &declarations.moved {
        if start.from == start.to || reported.contains(&&start.from) {
            continue;
        }
        let mut path = vec![start];
        let mut at = &start.to;
        while let Some(&step) = next.get(at) {
            if step.from == start.from {
                reported.extend(path.iter().map(|m| &m.from));
                cycles.push(path);
                break;
            }
            if path.iter().any(|m| m.from == step.from) || path.len() > declarations.moved.len() {
                break;
            }
            path.push(step);
            at = &step.to;
        }
    }
    cycles
}
