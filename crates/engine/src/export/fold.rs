//! Folding (issue 49): look-alike objects of one kind written as one
//! `forEach` definition, the fields where they differ as its items, and
//! the values most checks share as `[defaults]`.
//!
//! Objects are clustered by the set of fields that differ between them
//! (their *slots*): fields equal in every member are written once in the
//! definition, each slot becomes `${each.value.F}` (with the text every
//! member shares before and after it kept in the definition: `url:
//! "https://api.example.com${each.value.url}"`), and each member is an item
//! keyed by a logical id from its name. A group whose slots are too many,
//! or of kinds the mode does not fold, is split by the slot with the
//! fewest distinct values (a shape: a frequency, a set of assertions) until
//! each part is foldable or too small. Pure functions over the files'
//! values (already escaped for the loader): `export` decides which objects
//! may fold (no secret, no script file) and writes what comes out.

use std::collections::{BTreeSet, HashMap, HashSet};

use monform_config::literal::{escape, unescape};
use serde_json::{Map, Value};

/// How much `export` and `import --all-unmanaged` fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fold {
    /// One entry per object.
    None,
    /// Fold only when at most 3 fields differ, each a string, number or
    /// boolean in maps (a name, a URL, a port), or a top-level list of
    /// such (locations); at least 3 objects a definition. `[defaults]` for
    /// the checks' shared top-level values.
    #[default]
    Safe,
    /// Also fold differing lists and nested values (whole, as items), up
    /// to 8 differing fields; at least 2 objects a definition.
    Aggressive,
}

impl Fold {
    fn max_slots(self) -> usize {
        match self {
            Fold::None => 0,
            Fold::Safe => 3,
            Fold::Aggressive => 8,
        }
    }

    fn min_items(self) -> usize {
        match self {
            Fold::None => usize::MAX,
            Fold::Safe => 3,
            Fold::Aggressive => 2,
        }
    }
}

/// One step of a path into a value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Step {
    Key(String),
    Index(usize),
}

/// A place where the members of a group differ.
#[derive(Debug, Clone)]
struct Slot {
    path: Vec<Step>,
    /// Whether the mode lets it vary in one definition; else the group is
    /// split by its values.
    allowed: bool,
}

fn at<'a>(value: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get(k),
        Step::Index(i) => v.get(i),
    })
}

fn at_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get_mut(k),
        Step::Index(i) => v.get_mut(*i),
    })
}

fn is_scalar(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

/// The slots of `values` below `path`: where maps share their keys (and,
/// aggressive, lists their length) the walk goes on; elsewhere a
/// difference is one slot.
fn slots(values: &[&Value], path: &mut Vec<Step>, fold: Fold, out: &mut Vec<Slot>) {
    let first = values[0];
    if values.iter().all(|v| *v == first) {
        return;
    }
    if let Value::Object(map) = first {
        let same_keys = values.iter().all(|v| {
            v.as_object()
                .is_some_and(|m| m.len() == map.len() && m.keys().all(|k| map.contains_key(k)))
        });
        if same_keys {
            // In key order: the slots (and so the splits) do not depend on
            // the order the service wrote the first member's fields in.
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                let children: Vec<&Value> = values.iter().filter_map(|v| v.get(key)).collect();
                path.push(Step::Key(key.clone()));
                slots(&children, path, fold, out);
                path.pop();
            }
            return;
        }
    }
    if let (Value::Array(items), Fold::Aggressive) = (first, fold)
        && values
            .iter()
            .all(|v| v.as_array().is_some_and(|a| a.len() == items.len()))
    {
        for i in 0..items.len() {
            let children: Vec<&Value> = values.iter().filter_map(|v| v.get(i)).collect();
            path.push(Step::Index(i));
            slots(&children, path, fold, out);
            path.pop();
        }
        return;
    }
    let allowed = !path.is_empty()
        && match fold {
            Fold::None => false,
            Fold::Safe => {
                let in_maps = path.iter().all(|s| matches!(s, Step::Key(_)));
                let scalars = values.iter().all(|v| is_scalar(v));
                let scalar_lists = path.len() == 1
                    && values
                        .iter()
                        .all(|v| v.as_array().is_some_and(|a| a.iter().all(is_scalar)));
                in_maps && (scalars || scalar_lists)
            }
            Fold::Aggressive => true,
        };
    out.push(Slot {
        path: path.clone(),
        allowed,
    });
}

fn slots_of(values: &[&Value], fold: Fold) -> Vec<Slot> {
    let mut out = Vec::new();
    slots(values, &mut Vec::new(), fold, &mut out);
    out
}

/// The groups of `values` (indices) that fold into one definition each,
/// in the order of their first member; objects in no group stay as they are.
pub fn clusters(values: &[&Value], fold: Fold) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if fold != Fold::None {
        split((0..values.len()).collect(), values, fold, &mut out);
    }
    out.sort_by_key(|c| c[0]);
    out
}

fn split(indices: Vec<usize>, values: &[&Value], fold: Fold, out: &mut Vec<Vec<usize>>) {
    if indices.len() < fold.min_items() {
        return;
    }
    let members: Vec<&Value> = indices.iter().map(|&i| values[i]).collect();
    let found = slots_of(&members, fold);
    let forced: Vec<&Slot> = found.iter().filter(|s| !s.allowed).collect();
    let by: Vec<&Slot> = if !forced.is_empty() {
        forced
    } else if found.len() <= fold.max_slots() {
        out.push(indices);
        return;
    } else {
        best_split(&members, &found).into_iter().collect()
    };
    let mut parts: Vec<(String, Vec<usize>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (&i, value) in indices.iter().zip(&members) {
        let key: String = by.iter().map(|s| shape_of(at(value, &s.path)) + "\u{0}").collect();
        match index.get(&key) {
            Some(&n) => parts[n].1.push(i),
            None => {
                index.insert(key.clone(), parts.len());
                parts.push((key, vec![i]));
            }
        }
    }
    if parts.len() < 2 {
        return;
    }
    for (_, part) in parts {
        split(part, values, fold, out);
    }
}

/// What a group is split by at a slot it may not vary in: a map's keys
/// (maps with the same keys are walked into, so only their keys can differ
/// here), any other value whole.
fn shape_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            format!("{keys:?}")
        }
        other => key_of(other),
    }
}

/// The slot to split a group by when too many differ. The fewer distinct
/// values a slot has, the likelier it is a shape (a frequency, a set of
/// headers) rather than a name; among slots with few, the one after which
/// the other fields' texts share the most (each part's URLs one host)
/// says the shape best.
fn best_split<'s>(members: &[&Value], found: &'s [Slot]) -> Option<&'s Slot> {
    let distinct = |slot: &Slot| -> usize {
        let values: HashSet<String> = members.iter().map(|v| key_of(at(v, &slot.path))).collect();
        values.len()
    };
    let counts: Vec<usize> = found.iter().map(distinct).collect();
    let fewest = counts.iter().copied().min()?;
    let shared_text = |by: &Slot| -> usize {
        let mut parts: HashMap<String, Vec<&Value>> = HashMap::new();
        for value in members {
            parts.entry(key_of(at(value, &by.path))).or_default().push(value);
        }
        let mut total = 0;
        for part in parts.values().filter(|p| p.len() > 1) {
            for other in found.iter().filter(|s| s.path != by.path) {
                let texts: Option<Vec<&str>> = part
                    .iter()
                    .map(|v| at(v, &other.path).and_then(Value::as_str))
                    .collect();
                if let Some((prefix, suffix)) = texts.and_then(|t| affixes(&t)) {
                    total += (prefix.chars().count() + suffix.chars().count()) * part.len();
                }
            }
        }
        total
    };
    found
        .iter()
        .zip(&counts)
        .enumerate()
        .filter(|(_, (_, n))| **n <= fewest * 2 && **n < members.len())
        .max_by_key(|(i, (slot, n))| (shared_text(slot), std::cmp::Reverse(**n), std::cmp::Reverse(*i)))
        .map(|(_, (slot, _))| slot)
}

fn key_of(value: Option<&Value>) -> String {
    value.map_or_else(|| "\u{1}".to_owned(), Value::to_string)
}

/// The item field a slot is read from: its last key, or its keys joined
/// with `_` when two slots end in the same key.
fn field_names(slots: &[Slot]) -> Vec<String> {
    let last = |s: &Slot| -> String {
        s.path
            .iter()
            .rev()
            .find_map(|step| match step {
                Step::Key(k) => Some(k.clone()),
                Step::Index(_) => None,
            })
            .unwrap_or_else(|| "value".to_owned())
    };
    let full = |s: &Slot| -> String {
        s.path
            .iter()
            .map(|step| match step {
                Step::Key(k) => k.clone(),
                Step::Index(i) => i.to_string(),
            })
            .collect::<Vec<_>>()
            .join("_")
    };
    let lasts: Vec<String> = slots.iter().map(last).collect();
    slots
        .iter()
        .zip(&lasts)
        .map(|(s, l)| {
            let usable = l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if usable && lasts.iter().filter(|o| *o == l).count() == 1 {
                l.clone()
            } else {
                let name: String = full(s)
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
                    .collect();
                if name.is_empty() { "value".to_owned() } else { name }
            }
        })
        .collect()
}

/// Where the shared text before an item may end (after one of these).
const PREFIX_ENDS: &[char] = &[' ', '/', '-', '_', '.', ':', '=', '?', '&', '#'];

/// Where the shared text after an item may start (with one of these).
const SUFFIX_STARTS: &[char] = &[' ', '/', '.', '?', '#'];

/// The text every string shares at its start and its end, cut where a
/// word or a path segment begins, so an item holds whole words (`/users`,
/// not `sers`). `None` when they share nothing or are not all strings.
fn affixes(texts: &[&str]) -> Option<(String, String)> {
    let first = texts.first()?;
    let mut prefix: Vec<char> = first.chars().collect();
    let mut suffix: Vec<char> = prefix.clone();
    for text in texts {
        let chars: Vec<char> = text.chars().collect();
        let p = prefix.iter().zip(&chars).take_while(|(a, b)| a == b).count();
        prefix.truncate(p);
        let s = suffix
            .iter()
            .rev()
            .zip(chars.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        suffix.drain(..suffix.len() - s);
    }
    let shortest = texts.iter().map(|t| t.chars().count()).min().unwrap_or(0);
    // The definition's text around a substitution holds no `$`: next to
    // `${each...}` it could read as the `$${` escape.
    if let Some(dollar) = prefix.iter().position(|c| *c == '$') {
        prefix.truncate(dollar);
    }
    if let Some(dollar) = suffix.iter().rposition(|c| *c == '$') {
        suffix.drain(..=dollar);
    }
    // The prefix ends where a word or a path segment begins (a slash stays
    // with the item, but not one of `//`): `Home (` leaves `(EU)` whole.
    while prefix.last().is_some_and(|c| !PREFIX_ENDS.contains(c)) {
        prefix.pop();
    }
    if prefix.last() == Some(&'/') && prefix.get(prefix.len().wrapping_sub(2)) != Some(&'/') {
        prefix.pop();
    }
    // The suffix starts where a word or a segment ends: ` (EU)`, `/health`,
    // never a lone `)`.
    while suffix.first().is_some_and(|c| !SUFFIX_STARTS.contains(c)) {
        suffix.remove(0);
    }
    // Each side keeps its brackets whole: `users (Shop 1)` and `carts
    // (Shop 2)` share no ` 1)`.
    while !balanced(&prefix) {
        prefix.pop();
        while prefix.last().is_some_and(|c| !PREFIX_ENDS.contains(c)) {
            prefix.pop();
        }
    }
    while !balanced(&suffix) {
        suffix.remove(0);
        while suffix.first().is_some_and(|c| !SUFFIX_STARTS.contains(c)) {
            suffix.remove(0);
        }
    }
    while prefix.len() + suffix.len() > shortest {
        suffix.remove(0);
    }
    if prefix.is_empty() && suffix.is_empty() {
        return None;
    }
    Some((prefix.into_iter().collect(), suffix.into_iter().collect()))
}

fn balanced(text: &[char]) -> bool {
    let count = |c: char| text.iter().filter(|x| **x == c).count();
    count('(') == count(')') && count('[') == count(']') && count('{') == count('}')
}

/// Every string in `value` as the loader reads it (items are substituted
/// as they are, never read again: no escape).
fn unescaped(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(unescape(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(unescaped).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), unescaped(v))).collect()),
        other => other.clone(),
    }
}

/// The definition of a group: the first member's value with every slot a
/// substitution, `forEach` first, an item per member under `keys`. `None`
/// when the members no longer fold (a slot the mode does not allow).
pub fn definition(values: &[&Value], keys: &[String], fold: Fold) -> Option<Value> {
    let mut found = slots_of(values, fold);
    if found.iter().any(|s| !s.allowed) || found.is_empty() {
        return None;
    }
    // An item reads best name first.
    found.sort_by_key(|s| s.path != [Step::Key("name".to_owned())]);
    let names = field_names(&found);
    let mut template = values[0].clone();
    let mut items: Vec<Map<String, Value>> = vec![Map::new(); values.len()];
    for (slot, field) in found.iter().zip(&names) {
        let texts: Option<Vec<String>> = values
            .iter()
            .map(|v| {
                at(v, &slot.path)
                    .and_then(Value::as_str)
                    .map(|s| unescape(s).into_owned())
            })
            .collect();
        let parts = texts
            .as_ref()
            .and_then(|t| affixes(&t.iter().map(String::as_str).collect::<Vec<_>>()));
        let (substitution, middles) = match (&texts, parts) {
            (Some(texts), Some((prefix, suffix))) => {
                let middles: Vec<Value> = texts
                    .iter()
                    .map(|t| {
                        let chars: Vec<char> = t.chars().collect();
                        let end = chars.len() - suffix.chars().count();
                        Value::String(chars[prefix.chars().count()..end].iter().collect())
                    })
                    .collect();
                let text = format!("{}${{each.value.{field}}}{}", escape(&prefix), escape(&suffix));
                (Value::String(text), middles)
            }
            _ => {
                let whole: Vec<Value> = values
                    .iter()
                    .map(|v| at(v, &slot.path).map(unescaped).unwrap_or(Value::Null))
                    .collect();
                (Value::String(format!("${{each.value.{field}}}")), whole)
            }
        };
        if let Some(place) = at_mut(&mut template, &slot.path) {
            *place = substitution;
        }
        for (item, value) in items.iter_mut().zip(middles) {
            item.insert(field.clone(), value);
        }
    }
    let for_each: Map<String, Value> = keys.iter().cloned().zip(items.into_iter().map(Value::Object)).collect();
    let mut definition = Map::new();
    definition.insert("forEach".to_owned(), Value::Object(for_each));
    if let Value::Object(fields) = template {
        definition.extend(fields);
    }
    Some(Value::Object(definition))
}

/// The logical ids of a group: the definition's, from what the members'
/// names share (`API users`, `API orders`: `api`), and an item key per
/// member from the rest of its name (`users`, `orders`); each member's own
/// id (`ids`) when the names do not tell them apart. `taken`: the ids the
/// section already uses, the definition's added.
pub fn logical_ids(names: &[&str], ids: &[&str], fallback: &str, taken: &mut HashSet<String>) -> (String, Vec<String>) {
    let (shared, middles): (String, Vec<String>) = match affixes(names) {
        Some((prefix, suffix)) => {
            let middles = names
                .iter()
                .map(|n| {
                    let chars: Vec<char> = n.chars().collect();
                    chars[prefix.chars().count()..chars.len() - suffix.chars().count()]
                        .iter()
                        .collect()
                })
                .collect();
            (format!("{prefix} {suffix}"), middles)
        }
        None if names.iter().all(|n| *n == names[0]) => {
            (names[0].to_owned(), names.iter().map(|_| String::new()).collect())
        }
        None => (String::new(), names.iter().map(|n| (*n).to_owned()).collect()),
    };
    let short = |text: &str| -> String {
        let mut id = super::slug(text);
        id.truncate(48);
        id.trim_end_matches('-').to_owned()
    };
    let mut keys: Vec<String> = middles.iter().map(|m| short(m)).collect();
    let distinct: HashSet<&String> = keys.iter().collect();
    if distinct.len() != keys.len() || middles.iter().any(|m| m.trim().is_empty() || short(m) == "x") {
        keys = ids.iter().map(|id| short(id)).collect();
    }
    let mut seen: HashSet<String> = HashSet::new();
    for key in keys.iter_mut() {
        let base = key.clone();
        let mut n = 2;
        while !seen.insert(key.clone()) {
            *key = format!("{base}-{n}");
            n += 1;
        }
    }
    let base = match short(&shared) {
        id if shared.trim().is_empty() || id == "x" => short(fallback),
        id => id,
    };
    let mut id = base.clone();
    let mut n = 2;
    while taken.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    taken.insert(id.clone());
    (id, keys)
}

/// The checks' top-level fields most of them share, for `[defaults]`: a
/// value at least 3 checks and more than half of them write, where every
/// check writes the field (else the default would add it to one that does
/// not); `locations` not counting checks that run on private locations
/// (the loader gives them no default `locations`). `skip`: fields never
/// made defaults (names, references, scripts).
pub fn shared_defaults(values: &[&Value], skip: &dyn Fn(&str) -> bool) -> Map<String, Value> {
    let mut fields: BTreeSet<&str> = BTreeSet::new();
    for value in values {
        for key in value.as_object().into_iter().flat_map(|m| m.keys()) {
            fields.insert(key);
        }
    }
    let mut out = Map::new();
    for field in &fields {
        if skip(field) || matches!(*field, "forEach" | "forEachFile" | "environments" | "lifecycle") {
            continue;
        }
        let counted: Vec<&&Value> = values
            .iter()
            .filter(|v| *field != "locations" || !runs_privately(v))
            .collect();
        if counted.iter().any(|v| v.get(*field).is_none()) {
            continue;
        }
        let mut counts: Vec<(&Value, usize)> = Vec::new();
        for value in &counted {
            let Some(found) = value.get(*field) else { continue };
            match counts.iter_mut().find(|(v, _)| *v == found) {
                Some((_, n)) => *n += 1,
                None => counts.push((found, 1)),
            }
        }
        let Some((common, n)) = counts.into_iter().max_by_key(|(_, n)| *n) else {
            continue;
        };
        if n >= 3 && n * 2 > counted.len() && toml_safe(common) {
            out.insert((*field).to_owned(), common.clone());
        }
    }
    out
}

/// Whether the check names private locations (the loader then adds no
/// default `locations`).
pub fn runs_privately(value: &Value) -> bool {
    value
        .get("privateLocations")
        .and_then(Value::as_array)
        .is_some_and(|l| !l.is_empty())
}

/// TOML has no null, and a `[defaults]` value holding a substitution would
/// be read in monform.toml's context.
fn toml_safe(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(s) => !s.contains("${"),
        Value::Array(items) => items.iter().all(toml_safe),
        Value::Object(map) => map.values().all(toml_safe),
        _ => true,
    }
}

#[cfg(test)]
mod tests;
