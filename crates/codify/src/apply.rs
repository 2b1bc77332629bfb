//! The edits made: those to a `forEach` definition settled across its
//! items, then each file's edits spliced in and every one read back from
//! the edited file before it counts.

use std::collections::BTreeMap;

use monform_config::Loaded;
use monform_config::source::FileId;
use monform_config::tree::Node;
use monform_model::Address;
use serde_json::Value;

use crate::locate::Edit;
use crate::{Codified, Field, FileChange, HandEdit, parse};

/// An edit and the field it writes.
pub(crate) struct Planned {
    pub edit: Edit,
    pub owners: Vec<(Address, String)>,
    /// The service's value, for a hand edit if it cannot be made.
    pub service: Value,
}

/// Edits to a `forEach` definition change every item: made once when every
/// item drifted to the same value, else each is a hand edit.
pub(crate) fn settle_shared(planned: Vec<Planned>, loaded: &Loaded, hand_edits: &mut Vec<HandEdit>) -> Vec<Planned> {
    let (shared, mut own): (Vec<Planned>, Vec<Planned>) = planned.into_iter().partition(|p| p.edit.shared);
    let mut groups: BTreeMap<(FileId, usize, usize), Vec<Planned>> = BTreeMap::new();
    for p in shared {
        groups
            .entry((p.edit.file, p.edit.start, p.edit.end))
            .or_default()
            .push(p);
    }
    for (_, group) in groups {
        let first = &group[0];
        let (kind, id) = (&first.owners[0].0.kind, &first.owners[0].0.id);
        let prefix = format!("{}[", id.split('[').next().unwrap_or(id));
        let items = loaded
            .desired
            .resources
            .keys()
            .filter(|a| a.kind == *kind && a.id.starts_with(&prefix))
            .count();
        let same = group.iter().all(|p| p.edit.text == first.edit.text);
        let mut addresses: Vec<&Address> = group.iter().map(|p| &p.owners[0].0).collect();
        addresses.dedup();
        if same && addresses.len() == items {
            let mut group = group.into_iter();
            let Some(mut one) = group.next() else { continue };
            one.owners.extend(group.flat_map(|p| p.owners));
            let shared = "written once in the forEach definition, for every item";
            one.edit.note = Some(match one.edit.note.take() {
                Some(note) => format!("{note}; {shared}"),
                None => shared.to_owned(),
            });
            own.push(one);
        } else {
            for p in group {
                let (address, path) = p.owners[0].clone();
                hand_edits.push(HandEdit {
                    address,
                    path: Some(path),
                    service: Some(p.service),
                    why: "written once for every item of its forEach, and the service changed it for some items only"
                        .into(),
                });
            }
        }
    }
    own
}

/// Makes the edits file by file; an edit whose result does not read back
/// as the service's value (or overlaps another) becomes a hand edit.
pub(crate) fn apply(planned: Vec<Planned>, loaded: &Loaded, out: &mut Codified) {
    let mut by_file: BTreeMap<FileId, Vec<Planned>> = BTreeMap::new();
    for p in planned {
        by_file.entry(p.edit.file).or_default().push(p);
    }
    for (file, mut edits) in by_file {
        let source = loaded.sources.get(file);
        edits.sort_by_key(|p| (p.edit.start, p.edit.end));
        // Overlapping edits (one value reached two ways): the first wins.
        let mut kept: Vec<Planned> = Vec::new();
        for p in edits {
            match kept.last() {
                Some(last) if p.edit.start < last.edit.end => {
                    reject(out, p, "another drifted field is written at the same place");
                }
                _ => kept.push(p),
            }
        }
        let all_read_back = |edits: &[Planned]| {
            let tree = parse(&splice(&source.text, edits), source.format, file);
            edits.iter().all(|p| {
                tree.as_ref()
                    .and_then(|t| walk(t, &p.edit.check))
                    .is_some_and(|n| same_value(&n.to_json(), &p.edit.expected))
            })
        };
        // One parse when every edit reads back (the usual case); else each
        // edit alone, so one that breaks the file is found as such.
        let mut kept = if all_read_back(&kept) {
            kept
        } else {
            let (good, bad): (Vec<Planned>, Vec<Planned>) =
                kept.into_iter().partition(|p| all_read_back(std::slice::from_ref(p)));
            for p in bad {
                reject(out, p, "the edit would not read back as the service's value");
            }
            good
        };
        loop {
            let after = splice(&source.text, &kept);
            let tree = parse(&after, source.format, file);
            let wrong = kept.iter().position(|p| {
                tree.as_ref()
                    .and_then(|t| walk(t, &p.edit.check))
                    .is_none_or(|n| !same_value(&n.to_json(), &p.edit.expected))
            });
            match wrong {
                Some(i) => {
                    let p = kept.remove(i);
                    reject(out, p, "the edit would not read back as the service's value");
                }
                None => {
                    for p in &kept {
                        for (address, path) in &p.owners {
                            out.fields.push(Field {
                                address: address.clone(),
                                path: path.clone(),
                                note: p.edit.note.clone(),
                            });
                        }
                    }
                    if !kept.is_empty() {
                        out.files.push(FileChange {
                            name: source.name.clone(),
                            path: source.path.clone(),
                            before: source.text.to_string(),
                            after,
                            new: false,
                        });
                    }
                    break;
                }
            }
        }
    }
    out.fields
        .sort_by(|a, b| (&a.address, &a.path).cmp(&(&b.address, &b.path)));
    out.hand_edits
        .sort_by(|a, b| (&a.address, &a.path).cmp(&(&b.address, &b.path)));
    out.secrets
        .sort_by(|a, b| (&a.address, &a.path).cmp(&(&b.address, &b.path)));
    out.conflicts
        .sort_by(|a, b| (&a.address, &a.path).cmp(&(&b.address, &b.path)));
}

fn reject(out: &mut Codified, p: Planned, why: &str) {
    for (address, path) in p.owners {
        out.hand_edits.push(HandEdit {
            address,
            path: Some(path),
            service: Some(p.service.clone()),
            why: why.into(),
        });
    }
}

fn splice(text: &str, edits: &[Planned]) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for p in edits {
        out.push_str(&text[at..p.edit.start]);
        out.push_str(&p.edit.text);
        at = p.edit.end;
    }
    out.push_str(&text[at..]);
    out
}

fn walk<'a>(node: &'a Node, path: &[String]) -> Option<&'a Node> {
    path.iter().try_fold(node, |n, key| n.get(key).map(|e| &e.value))
}

/// Equal as JSON, numbers by value (`5` and `5.0`).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}
