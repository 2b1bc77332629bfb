//! Where each logical id occurs in a load: its definition (the key in its
//! section), every reference to it (`group: production`, `alertChannels:
//! [oncall]`...) and the `moved` entries naming it. Read from what the
//! loader found (`Desired`: resources with their key spans and reference
//! spans, declarations with theirs), narrowed to the id's own characters.

use monform_config::source::Span;
use monform_config::{DesiredResource, Loaded, Target};
use monform_model::Address;
use rustc_hash::FxHashSet;

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

/// Every occurrence of a load, each place once, by file (each file's by
/// place): a keystroke finds its file's again and keeps the others as they
/// are (one list of 400,000 at 100,000 checks was filtered and merged
/// again at each, a third of a keystroke).
#[derive(Debug, Default)]
pub struct Occurrences {
    by_file: Vec<Vec<Occurrence>>,
}

impl Occurrences {
    /// In file order and by place in a file.
    pub fn iter(&self) -> impl Iterator<Item = &Occurrence> {
        self.by_file.iter().flatten()
    }

    /// The occurrence at byte `offset` of file `file`, if the cursor is on
    /// one (its last character's end included: a cursor just after a word).
    pub fn at(&self, file: u32, offset: usize) -> Option<&Occurrence> {
        self.by_file
            .get(file as usize)?
            .iter()
            .find(|o| o.span.start <= offset && offset <= o.span.start + o.span.len)
    }

    /// `found` put in their files' lists, each list then in place order.
    fn put(&mut self, found: Vec<Occurrence>, files: usize) {
        if self.by_file.len() < files {
            self.by_file.resize_with(files, Vec::new);
        }
        let mut touched = vec![false; self.by_file.len()];
        for occurrence in found {
            let file = occurrence.span.file as usize;
            if file >= self.by_file.len() {
                self.by_file.resize_with(file + 1, Vec::new);
                touched.resize(file + 1, false);
            }
            touched[file] = true;
            self.by_file[file].push(occurrence);
        }
        for (list, _) in self.by_file.iter_mut().zip(touched).filter(|(_, touched)| *touched) {
            // Stable: as one sort of them all by (file, place) ordered them.
            list.sort_by_key(|o| o.span.start);
        }
    }
}

/// Every occurrence in the load.
pub fn occurrences(loaded: &Loaded) -> Occurrences {
    let mut all = Occurrences::default();
    let resources: Vec<&DesiredResource> = loaded.desired.resources.values().collect();
    all.put(occurrences_in(loaded, &resources, |_| true), loaded.sources.len());
    all
}

/// `occurrences` after the files `changed` (ids) were read again and
/// nothing else changed (`ops::Revalidation::Files`): those of the other
/// files kept from `before`, the changed files' found again.
pub fn patched(loaded: &Loaded, mut before: Occurrences, changed: &[u32]) -> Occurrences {
    for &file in changed {
        if let Some(list) = before.by_file.get_mut(file as usize) {
            list.clear();
        }
    }
    let resources: Vec<&DesiredResource> = changed.iter().flat_map(|&file| loaded.resources_in(file)).collect();
    before.put(
        occurrences_in(loaded, &resources, |file| changed.contains(&file)),
        loaded.sources.len(),
    );
    before
}

/// The occurrences of `resources` and of the declarations written in the
/// files `wanted` says (those of the resources), definitions first.
fn occurrences_in(loaded: &Loaded, resources: &[&DesiredResource], wanted: impl Fn(u32) -> bool) -> Vec<Occurrence> {
    let mut found = Found::default();
    let push = |found: &mut Found, address: &Address, span: Span, role: Role| {
        let address = definition_of(address);
        if let Some(span) = narrow(loaded, span, &address.id) {
            found.push(Occurrence { address, span, role });
        }
    };
    for resource in resources {
        // An item of a `forEach` points at its item: its definition's key
        // is the last line above it naming the definition's id.
        let span = match resource.address.id.split_once('[') {
            Some((id, _)) => match definition_key(loaded, resource.span, id) {
                Some(span) => span,
                None => continue,
            },
            None => resource.span,
        };
        push(&mut found, &resource.address, span, Role::Definition);
    }
    for resource in resources {
        for reference in &resource.references {
            if let Target::Managed(target) = &reference.target {
                push(&mut found, target, reference.span, Role::Reference);
            }
        }
    }
    let declarations = &loaded.desired.declarations;
    for moved in declarations.moved.iter().filter(|m| wanted(m.span.file)) {
        for address in [&moved.from, &moved.to] {
            declared(loaded, &mut found, address, moved.span);
        }
    }
    for import in declarations.imports.iter().filter(|i| wanted(i.span.file)) {
        declared(loaded, &mut found, &import.to, import.span);
    }
    for removed in declarations.removed.iter().filter(|r| wanted(r.span.file)) {
        declared(loaded, &mut found, &removed.from, removed.span);
    }
    found.all
}

/// The occurrences found so far, each place once: a set of the places
/// beside the list (asking the list was quadratic: 100,000 definitions
/// and 300,000 references took minutes).
#[derive(Default)]
struct Found {
    all: Vec<Occurrence>,
    places: FxHashSet<Span>,
}

impl Found {
    fn push(&mut self, occurrence: Occurrence) {
        if self.places.insert(occurrence.span) {
            self.all.push(occurrence);
        }
    }
}

/// The key `id:` (YAML) or the header `[section.id]` / key `id =` (TOML)
/// last written before `item`, in its file.
fn definition_key(loaded: &Loaded, item: Span, id: &str) -> Option<Span> {
    let file = loaded.sources.get(item.file);
    let before = file.text.get(..item.start)?;
    let starts: Vec<usize> = std::iter::once(0)
        .chain(before.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    for &start in starts.iter().rev() {
        let line = before[start..].lines().next().unwrap_or_default();
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let unquoted = trimmed.trim_start_matches(['"', '\'']);
        let quote = trimmed.len() - unquoted.len();
        let named = unquoted
            .strip_prefix(id)
            .is_some_and(|rest| rest.starts_with([':', '"', '\'', ' ', '=']));
        if named {
            return Some(Span::new(item.file, start + indent + quote, id.len()));
        }
        if trimmed.starts_with('[') && trimmed.trim_end().ends_with(&format!(".{id}]")) {
            let at = line.rfind(id)?;
            return Some(Span::new(item.file, start + at, id.len()));
        }
    }
    None
}

/// An address written out (`checks.old`) inside a declaration's entry.
fn declared(loaded: &Loaded, found: &mut Found, address: &Address, at: Span) {
    let Some(entry) = entry_extent(loaded, at) else {
        return;
    };
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
        found.push(Occurrence {
            address: definition_of(address),
            span,
            role: Role::Declaration,
        });
    }
}

/// The whole entry a declaration's span starts (the loader's span of a
/// map may be its first character): in YAML its line and the lines
/// indented below it, in TOML up to the next table.
fn entry_extent(loaded: &Loaded, at: Span) -> Option<Span> {
    if at.file as usize >= loaded.sources.len() {
        return None;
    }
    let file = loaded.sources.get(at.file);
    let text = &file.text;
    let start = at.start.min(text.len());
    let end = match file.format {
        monform_config::source::Format::Toml => text[start..].find("\n[").map_or(text.len(), |i| start + i),
        monform_config::source::Format::Rego => return None,
        monform_config::source::Format::Yaml => {
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            let line = &text[line_start..];
            let indent = line.len() - line.trim_start_matches(' ').len();
            let mut end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            while end < text.len() {
                let next = &text[end + 1..];
                let line = next.lines().next().unwrap_or_default();
                let own = line.len() - line.trim_start_matches(' ').len();
                if !line.trim().is_empty() && own <= indent {
                    break;
                }
                end = (end + 1 + line.len()).min(text.len());
            }
            end
        }
    };
    Some(Span::new(
        at.file,
        start,
        end.max(start + at.len).min(text.len()) - start,
    ))
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
    // Most often the id as it is: no search.
    if text == id {
        return Some(span);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(files: &[(&str, &str)]) -> (tempfile::TempDir, Loaded) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let loaded = monform_config::load(dir.path(), &|_| None);
        (dir, loaded)
    }

    fn shown(loaded: &Loaded) -> Vec<String> {
        let mut all: Vec<String> = occurrences(loaded)
            .iter()
            .map(|o| {
                let text = &loaded.sources.get(o.span.file).text[o.span.start..o.span.start + o.span.len];
                format!("{:?} {} {text}", o.role, o.address)
            })
            .collect();
        all.sort();
        all
    }

    /// A `forEach` definition is defined at its own key, and references to
    /// its items and `moved` entries naming it are its occurrences.
    #[test]
    fn for_each_items_and_declarations_point_at_the_definition() {
        let (_dir, loaded) = load(&[
            ("monform.toml", "[project]\nname = \"p\"\n"),
            (
                "a.yaml",
                "groups:\n  \"team\":\n    forEach: [eu, us]\n    name: \"Team ${each.key}\"\n    locations: [eu-west-1]\nchecks:\n  beat:\n    checkType: HEARTBEAT\n    name: Beat\n    group: \"team[eu]\"\n    heartbeat: { period: 1, periodUnit: hours, grace: 1, graceUnit: hours }\nmoved:\n  - { from: groups.crew, to: groups.team }\n",
            ),
        ]);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        assert_eq!(
            shown(&loaded),
            [
                "Declaration groups.crew crew",
                "Declaration groups.team team",
                "Definition checks.beat beat",
                "Definition groups.team team",
                "Reference groups.team team",
            ]
        );
    }
}
