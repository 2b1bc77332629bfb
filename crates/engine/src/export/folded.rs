//! The export's values folded (`fold.rs`'s algorithm applied): the checks'
//! shared values into `[defaults]`, look-alike objects into `forEach`
//! definitions under logical ids a person would write, and every
//! reference to a folded object renamed to its item (`email[team-1]`).

use std::collections::{BTreeMap, HashMap, HashSet};

use monform_model::facts::{expand, facts};
use monform_model::{Address, Kind, Segment};
use serde_json::Value;

use super::Exported;
use super::fold::{self, Fold};
use crate::forms::lookup;

/// One folded definition: its address, and how many objects it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Folded {
    pub definition: Address,
    pub items: usize,
}

/// Folds `values` (each object's file value, escaped, by address; in the
/// files' order) in place: members of a group become one definition at
/// the place of the first. `fixed`: objects that must stay as they are
/// (a reference left out). Returns what was folded.
pub(super) fn fold_values(
    values: &mut Vec<(Address, Value)>,
    exported: &mut Exported,
    fixed: &HashSet<Address>,
    fold: Fold,
) -> Vec<Folded> {
    if fold == Fold::None {
        return Vec::new();
    }
    hoist_defaults(values, exported);
    let secret: HashSet<&Address> = exported
        .env
        .iter()
        .map(|e| &e.address)
        .chain(exported.service_references.iter().map(|(a, _)| a))
        .collect();
    let eligible: Vec<bool> = values
        .iter()
        .map(|(address, value)| {
            address.kind != Kind::Variable
                && !secret.contains(address)
                && !fixed.contains(address)
                && !has_script_file(address.kind, value)
        })
        .collect();
    // Per kind: the groups, then their logical ids.
    let mut groups: Vec<(Vec<usize>, String, Vec<String>)> = Vec::new();
    for &kind in Kind::ALL.iter() {
        let members: Vec<usize> = (0..values.len())
            .filter(|&i| eligible[i] && values[i].0.kind == kind)
            .collect();
        let candidates: Vec<&Value> = members.iter().map(|&i| &values[i].1).collect();
        let mut found: Vec<Vec<usize>> = fold::clusters(&candidates, fold)
            .into_iter()
            .map(|c| {
                // Members in the order of their ids, groups in that of
                // their first: the same account (listed in any order, as
                // after objects are made again) gets the same ids.
                let mut c: Vec<usize> = c.into_iter().map(|j| members[j]).collect();
                c.sort_by(|a, b| values[*a].0.id.cmp(&values[*b].0.id));
                c
            })
            // Only groups the definition can be written for (checked before
            // any reference is renamed; renaming keeps equal values equal).
            .filter(|c| {
                let vals: Vec<&Value> = c.iter().map(|&i| &values[i].1).collect();
                let keys: Vec<String> = (0..c.len()).map(|n| n.to_string()).collect();
                fold::definition(&vals, &keys, fold).is_some()
            })
            .collect();
        found.sort_by(|a, b| values[a[0]].0.id.cmp(&values[b[0]].0.id));
        let in_groups: HashSet<usize> = found.iter().flatten().copied().collect();
        let mut taken: HashSet<String> = (0..values.len())
            .filter(|i| values[*i].0.kind == kind && !in_groups.contains(i))
            .map(|i| values[i].0.id.clone())
            .collect();
        for group in found {
            let names: Vec<String> = group.iter().map(|&i| name_of(&values[i].0, &values[i].1)).collect();
            let ids: Vec<&str> = group.iter().map(|&i| values[i].0.id.as_str()).collect();
            let names_ref: Vec<&str> = names.iter().map(String::as_str).collect();
            let fallback = fallback_id(kind, &values[group[0]].1);
            let (id, keys) = fold::logical_ids(&names_ref, &ids, &fallback, &mut taken);
            groups.push((group, id, keys));
        }
    }
    if groups.is_empty() {
        return Vec::new();
    }
    let mut renamed: HashMap<(Kind, String), String> = HashMap::new();
    for (group, id, keys) in &groups {
        for (&i, key) in group.iter().zip(keys) {
            let address = &values[i].0;
            renamed.insert((address.kind, address.id.clone()), format!("{id}[{key}]"));
        }
    }
    for (address, value) in values.iter_mut() {
        rename_references(address.kind, value, &renamed);
    }
    let mut definitions: HashMap<usize, (Address, Value)> = HashMap::new();
    let mut dropped: HashSet<usize> = HashSet::new();
    let mut folded = Vec::new();
    for (group, id, keys) in &groups {
        let kind = values[group[0]].0.kind;
        let vals: Vec<&Value> = group.iter().map(|&i| &values[i].1).collect();
        let Some(definition) = fold::definition(&vals, keys, fold) else {
            // Unreachable in practice (see the filter above): the members
            // keep their own entries under their new addresses' old ids.
            exported
                .warnings
                .push(format!("{}.{id}: could not be folded", kind.section()));
            continue;
        };
        for (&i, key) in group.iter().zip(keys) {
            if let Some(remote) = exported.objects.remove(&values[i].0) {
                exported.objects.insert(Address::item(kind, id, key), remote);
            }
            dropped.insert(i);
        }
        let first = group.iter().copied().min().unwrap_or(group[0]);
        definitions.insert(first, (Address::new(kind, id.clone()), definition));
        folded.push(Folded {
            definition: Address::new(kind, id.clone()),
            items: group.len(),
        });
    }
    let old = std::mem::take(values);
    for (i, entry) in old.into_iter().enumerate() {
        if let Some(definition) = definitions.remove(&i) {
            values.push(definition);
        } else if !dropped.contains(&i) {
            values.push(entry);
        }
    }
    folded
}

/// The checks' shared top-level values as `[defaults]`, left out of each
/// check that has them (a check on private locations keeps its
/// `locations`: the loader gives it none).
fn hoist_defaults(values: &mut [(Address, Value)], exported: &mut Exported) {
    let checks: Vec<&Value> = values
        .iter()
        .filter(|(a, _)| a.kind == Kind::Check)
        .map(|(_, v)| v)
        .collect();
    let references: HashSet<String> = checks
        .iter()
        .flat_map(|v| facts(Kind::Check, v).refs.clone())
        .filter(|r| r.parent.is_empty())
        .map(|r| r.name)
        .collect();
    let skip = |field: &str| {
        matches!(field, "name" | "checkType" | "script" | "request" | "group") || references.contains(field)
    };
    let defaults = fold::shared_defaults(&checks, &skip);
    for (address, value) in values.iter_mut() {
        if address.kind != Kind::Check {
            continue;
        }
        let private = fold::runs_privately(value);
        let Some(map) = value.as_object_mut() else { continue };
        for (field, shared) in &defaults {
            if field == "locations" && private {
                continue;
            }
            if map.get(field) == Some(shared) {
                map.remove(field);
            }
        }
    }
    exported.defaults = defaults;
}

/// Header sets and assertion lists written alike in two or more checks'
/// entries (definitions, or checks left on their own) as `[vars]`, each
/// entry `${var:NAME}`: the loader substitutes a whole-value `${var:}`
/// with the variable's list, so every check loads as it was. Where they
/// cannot go: `[defaults]` fills only top-level fields common to every
/// check type, whole (decision 035, `merge_defaults`), and `request` is
/// neither; a group's `apiCheckDefaults` are appended by the service to
/// its API checks' own lists (`group_rules::apply_group`), so moving the
/// checks' lists there runs the same checks but changes every member and
/// the group: not what an import may do. Lists holding `$` (a secret's
/// `${env:}`, an item's `${each.value}`, escaped text) stay. Returns the
/// variables, named by their content (`headers-accept`), so a second
/// export writes the same.
pub(super) fn hoist_lists(values: &mut [(Address, Value)]) -> serde_json::Map<String, Value> {
    const FIELDS: [&str; 2] = ["headers", "assertions"];
    let hoistable = |list: &Value| {
        list.as_array().is_some_and(|l| !l.is_empty())
            && serde_json::to_string(list).is_ok_and(|text| !text.contains('$'))
    };
    // (field, the list's text) -> (how many entries, the list)
    let mut seen: BTreeMap<(&str, String), (usize, Value)> = BTreeMap::new();
    for (address, value) in values.iter() {
        if address.kind != Kind::Check {
            continue;
        }
        for field in FIELDS {
            let list = &value["request"][field];
            if hoistable(list) {
                let text = serde_json::to_string(list).unwrap_or_default();
                seen.entry((field, text)).or_insert((0, list.clone())).0 += 1;
            }
        }
    }
    let mut vars = serde_json::Map::new();
    let mut names: HashMap<(&str, String), String> = HashMap::new();
    for ((field, text), (count, list)) in seen {
        if count < 2 {
            continue;
        }
        let base = list_name(field, &list);
        let mut name = base.clone();
        let mut n = 2;
        while vars.contains_key(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        vars.insert(name.clone(), list);
        names.insert((field, text), name);
    }
    for (address, value) in values.iter_mut() {
        if address.kind != Kind::Check {
            continue;
        }
        for field in FIELDS {
            let Some(request) = value.get_mut("request").and_then(Value::as_object_mut) else {
                continue;
            };
            let Some(list) = request.get(field) else { continue };
            let key = (field, serde_json::to_string(list).unwrap_or_default());
            if let Some(name) = names.get(&key) {
                request.insert(field.to_owned(), Value::String(format!("${{var:{name}}}")));
            }
        }
    }
    vars
}

/// A variable's name from a list's content: `headers-accept-x-client`
/// (the header names), `assertions-status-code-200` (sources and targets).
fn list_name(field: &str, list: &Value) -> String {
    let words: Vec<String> = list
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|item| match field {
            "headers" => vec![item["key"].as_str().unwrap_or_default().to_owned()],
            _ => vec![
                item["source"].as_str().unwrap_or_default().to_owned(),
                item["property"].as_str().unwrap_or_default().to_owned(),
                item["target"].as_str().unwrap_or_default().to_owned(),
            ],
        })
        .collect();
    let mut slug = String::new();
    for c in words.join("-").chars() {
        let c = if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '-'
        };
        if c != '-' || !slug.ends_with('-') {
            slug.push(c);
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(48).collect();
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        field.to_owned()
    } else {
        format!("{field}-{slug}")
    }
}

/// Whether export writes one of the object's scripts to a file of its own
/// (a multi-line text): such objects keep their own entry.
fn has_script_file(kind: Kind, value: &Value) -> bool {
    facts(kind, value)
        .scripts
        .iter()
        .flat_map(|p| expand(p, value))
        .any(|path| {
            lookup(value, &path)
                .and_then(Value::as_str)
                .is_some_and(|t| t.contains('\n'))
        })
}

/// The name a member's logical id comes from: its name field as the
/// service has it, else its id.
fn name_of(address: &Address, value: &Value) -> String {
    let field = match address.kind {
        Kind::Dashboard => "header",
        Kind::PrivateLocation => "slugName",
        _ => "name",
    };
    value
        .get(field)
        .and_then(Value::as_str)
        .map(|s| monform_config::literal::unescape(s).into_owned())
        .unwrap_or_else(|| address.id.clone())
}

/// A definition's id when its members' names share nothing: its type
/// (`api-checks`, `email-channels`) or its section.
fn fallback_id(kind: Kind, value: &Value) -> String {
    let variant = ["checkType", "type"]
        .iter()
        .find_map(|f| value.get(*f).and_then(Value::as_str));
    match variant {
        Some(v) => format!("{v}-{}", kind.section()),
        None => kind.section().to_owned(),
    }
}

/// Renames each reference to a folded object to its item's address.
fn rename_references(kind: Kind, value: &mut Value, renamed: &HashMap<(Kind, String), String>) {
    for field in facts(kind, value).refs.clone() {
        for parent in expand(&field.parent, value) {
            let path = parent.key(&field.name);
            let found = path
                .segments()
                .iter()
                .try_fold(&mut *value, |current, segment| match segment {
                    Segment::Key(k) => current.get_mut(k),
                    Segment::Index(i) => current.get_mut(*i),
                });
            let Some(current) = found else {
                continue;
            };
            let rename = |text: &mut String| {
                if let Some(new) = renamed.get(&(field.target, text.clone())) {
                    *text = new.clone();
                }
            };
            match current {
                Value::String(text) => rename(text),
                Value::Array(items) => items.iter_mut().for_each(|item| {
                    if let Value::String(text) = item {
                        rename(text)
                    }
                }),
                _ => {}
            }
        }
    }
}
