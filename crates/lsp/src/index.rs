//! Where each logical id occurs in a load: its definition (the key in its
//! section), every reference to it (`group: production`, `alertChannels:
//! [oncall]`...) and the `moved` entries naming it. Read from what the
//! loader found (`Desired`: resources with their key spans and reference
//! spans, declarations with theirs), narrowed to the id's own characters.

use monform_config::source::Span;
use monform_config::{Loaded, Target};
use monform_model::Address;

/// How an id occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Definition,
    Reference,
    /// In a `moved`, `import` or `removed` entry.
    Declaration,
}

/// One occurrence of a logical id.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    /// The resource (for a `forEach` item, its definition: `checks.api`).
    pub address: Address,
    /// The id's characters only.
    pub span: Span,
    pub role: Role,
}

/// The address of the definition an address was made from (`checks.api[eu]`
/// -> `checks.api`).
pub fn definition_of(address: &Address) -> Address {
    match address.id.split_once('[') {
        Some((base, _)) => Address::new(address.kind, base),
        None => address.clone(),
    }
}

/// Every occurrence in the load, definitions first, each once.
pub fn occurrences(loaded: &Loaded) -> Vec<Occurrence> {
    let mut found: Vec<Occurrence> = Vec::new();
    let push = |found: &mut Vec<Occurrence>, address: &Address, span: Span, role: Role| {
        let address = definition_of(address);
        if let Some(span) = narrow(loaded, span, &address.id)
            && !found.iter().any(|o| o.span == span)
        {
            found.push(Occurrence { address, span, role });
        }
    };
    for resource in loaded.desired.resources.values() {
        push(&mut found, &resource.address, resource.span, Role::Definition);
    }
    for resource in loaded.desired.resources.values() {
        for reference in &resource.references {
            if let Target::Managed(target) = &reference.target {
                push(&mut found, target, reference.span, Role::Reference);
            }
        }
    }
    let declarations = &loaded.desired.declarations;
    for moved in &declarations.moved {
        for address in [&moved.from, &moved.to] {
            declared(loaded, &mut found, address, moved.span);
        }
    }
    for import in &declarations.imports {
        declared(loaded, &mut found, &import.to, import.span);
    }
    for removed in &declarations.removed {
        declared(loaded, &mut found, &removed.from, removed.span);
    }
    found
}

/// An address written out (`checks.old`) inside a declaration's entry.
fn declared(loaded: &Loaded, found: &mut Vec<Occurrence>, address: &Address, entry: Span) {
    let Some(text) = text(loaded, entry) else {
        return;
    };
    let written = address.to_string();
    let section = address.kind.section().len() + 1;
    for (at, _) in text.match_indices(&written) {
        let after = text[at + written.len()..].chars().next();
        if after.is_some_and(is_id_char) {
            continue;
        }
        let span = Span::new(entry.file, entry.start + at + section, written.len() - section);
        if !found.iter().any(|o| o.span == span) {
            found.push(Occurrence {
                address: definition_of(address),
                span,
                role: Role::Declaration,
            });
        }
    }
}

fn text(loaded: &Loaded, span: Span) -> Option<&str> {
    if span.file as usize >= loaded.sources.len() {
        return None;
    }
    loaded
        .sources
        .get(span.file)
        .text
        .get(span.start..span.start + span.len)
}

/// The part of `span` that is `id` (a key or value may be quoted, a
/// reference may be the whole `[a, b]` list when written in flow style).
fn narrow(loaded: &Loaded, span: Span, id: &str) -> Option<Span> {
    let text = text(loaded, span)?;
    text.match_indices(id)
        .find(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + id.len()..].chars().next();
            !before.is_some_and(is_id_char) && !after.is_some_and(is_id_char)
        })
        .map(|(at, _)| Span::new(span.file, span.start + at, id.len()))
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// The occurrence at byte `offset` of file `file`, if the cursor is on one
/// (its last character's end included: a cursor just after a word).
pub fn at(occurrences: &[Occurrence], file: u32, offset: usize) -> Option<&Occurrence> {
    occurrences
        .iter()
        .find(|o| o.span.file == file && o.span.start <= offset && offset <= o.span.start + o.span.len)
}
