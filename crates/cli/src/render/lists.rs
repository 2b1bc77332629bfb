//! Lists in a plan, item by item (issue 27 item 8): an assertion added, a
//! header removed, one field of an item changed, as Terraform shows them,
//! instead of two one-line JSON arrays to compare by eye. Remote ids in a
//! list of references that no object of the project has are named.
//!
//! The values come masked from the engine: a credential header's value is
//! already its mask on both sides, and a field change marked sensitive never
//! reaches this module.

use monform_engine::{Change, FieldChange, Plan, Whose};
use monform_model::sensitive::holds_mask;
use monform_model::{Address, Kind};
use serde_json::Value;
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// What happened to one item of a list.
#[derive(Debug, PartialEq)]
pub enum Item<'v> {
    Added(&'v Value),
    Removed(&'v Value),
    /// The same item (by position among the items that differ) with some fields changed.
    Changed(&'v Value, &'v Value),
}

/// The items that differ between two lists, in order, and how many are the same.
pub fn items<'v>(before: &'v [Value], after: &'v [Value]) -> (Vec<Item<'v>>, usize) {
    let old: Vec<String> = before.iter().map(Value::to_string).collect();
    let new: Vec<String> = after.iter().map(Value::to_string).collect();
    let mut out = Vec::new();
    let mut same = 0;
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        match op {
            DiffOp::Equal { len, .. } => same += len,
            DiffOp::Delete { old_index, old_len, .. } => {
                out.extend(before[old_index..old_index + old_len].iter().map(Item::Removed));
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                out.extend(after[new_index..new_index + new_len].iter().map(Item::Added));
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                let olds = &before[old_index..old_index + old_len];
                let news = &after[new_index..new_index + new_len];
                // Objects side by side are one item edited; anything else
                // (scalars, the surplus of the longer side) is removed and added.
                for (i, old) in olds.iter().enumerate() {
                    match news.get(i) {
                        Some(new) if old.is_object() && new.is_object() => out.push(Item::Changed(old, new)),
                        _ => out.push(Item::Removed(old)),
                    }
                }
                for (i, new) in news.iter().enumerate() {
                    if !(olds.get(i).is_some_and(Value::is_object) && new.is_object()) {
                        out.push(Item::Added(new));
                    }
                }
            }
        }
    }
    (out, same)
}

/// Both sides of a field change when it is a list on each (a missing or
/// null side is an empty list).
pub fn both_lists<'v>(before: Option<&'v Value>, after: Option<&'v Value>) -> Option<(&'v [Value], &'v [Value])> {
    let side = |v: Option<&'v Value>| -> Option<&'v [Value]> {
        match v {
            None | Some(Value::Null) => Some(&[]),
            Some(Value::Array(items)) => Some(items.as_slice()),
            Some(_) => None,
        }
    };
    let (b, a) = (side(before)?, side(after)?);
    // Two absent sides are no list at all.
    (before.is_some_and(Value::is_array) || after.is_some_and(Value::is_array)).then_some((b, a))
}

/// One item on one line: `{ key = value, ... }` or the scalar; a text of
/// several lines (a file of a code bundle, a dependency) by its length.
pub fn compact(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| match v.as_str().filter(|t| t.contains('\n')) {
                    Some(text) => format!("{k} = ({} lines)", text.lines().count()),
                    None => format!("{k} = {}", show(v)),
                })
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        other => show(other),
    }
}

pub fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// The fields of an edited item that differ: (sign, text).
pub fn changed_fields(before: &Value, after: &Value) -> (Vec<(char, String)>, usize) {
    let (Some(old), Some(new)) = (before.as_object(), after.as_object()) else {
        return (vec![('~', format!("{} -> {}", compact(before), compact(after)))], 0);
    };
    let mut out = Vec::new();
    let mut same = 0;
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) if a == b => same += 1,
            (Some(Value::String(a)), Some(Value::String(b))) if a.contains('\n') || b.contains('\n') => {
                out.push(('~', format!("{key} = <<EOT")));
                out.extend(text_diff(a, b));
                out.push((' ', "EOT".to_owned()));
            }
            (Some(a), Some(b)) => out.push(('~', format!("{key} = {} -> {}", show(a), show(b)))),
            (Some(a), None) => out.push(('-', format!("{key} = {}", show(a)))),
            (None, Some(b)) => out.push(('+', format!("{key} = {}", show(b)))),
            (None, None) => {}
        }
    }
    (out, same)
}

/// A changed text's lines, two of context around each change, as the
/// plan shows a script's.
fn text_diff(before: &str, after: &str) -> Vec<(char, String)> {
    let diff = similar::TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
        out.push((' ', format!("    {}", hunk.header())));
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            out.push((sign, format!("    {}", change.value().trim_end_matches('\n'))));
        }
    }
    out
}

pub use monform_model::facts::reference_target;

/// A note for an item of a list of references that names no object of the
/// project: the account's list holds a remote id monform cannot name by a
/// logical id, so the note says which object it is and whose, when the
/// account has it (`Plan::foreign`).
pub fn unknown_reference(plan: &Plan, target: Option<Kind>, item: &Value) -> Option<String> {
    let target = target?;
    let id = item.as_str()?;
    let known = plan.changes.iter().any(|c| c.address == Address::new(target, id));
    (!known).then(|| match plan.foreign.get(&(target, id.to_owned())) {
        Some(foreign) => format!(
            "  # remote id {id} of the account's {}{}, {}: no object of this project has it",
            target.section(),
            foreign.label.as_ref().map(|l| format!(" ({l})")).unwrap_or_default(),
            whose(&foreign.owner)
        ),
        None => format!(
            "  # remote id {id} of the account's {}: no object of this project has it",
            target.section()
        ),
    })
}

/// Whose an object of the account is, in words.
fn whose(owner: &Whose) -> String {
    match owner {
        Whose::Project(project) => format!("of project `{project}`"),
        Whose::Nobody => "of no project (made by hand)".to_owned(),
        Whose::Unknown => "whose owner cannot be told".to_owned(),
    }
}

/// One item of a list field in the plan's JSON.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemJson {
    pub change: ItemChange,
    /// The item before (removed, changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    /// The item after (added, changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// A removed reference to an object no object of the project is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_id: Option<UnknownId>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemChange {
    Added,
    Removed,
    Changed,
}

/// A remote id in a list of references that no object of the project has.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct UnknownId {
    /// The section of the kind referenced (`alertChannels`...).
    pub kind: &'static str,
    pub id: String,
    /// Its name (null when it has none), when the account has the object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<Option<String>>,
    /// Whose it is, when the account has the object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

/// Whose an object of the account is.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Owner {
    /// Another monform project's.
    Project { project: String },
    /// `nobody` (made by hand) or `unknown`.
    Other(OwnerName),
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OwnerName {
    Nobody,
    Unknown,
}

/// The item-level detail of a list field for the plan's JSON, or `None`
/// when the field is not a list on both sides.
pub fn json_items(plan: &Plan, change: &Change, field: &FieldChange) -> Option<Vec<ItemJson>> {
    let (b, a) = both_lists(field.before.as_ref(), field.after.as_ref())?;
    let target = reference_target(change.address.kind, &field.path);
    let (items, _) = items(b, a);
    let item = |change, before: Option<&Value>, after: Option<&Value>| ItemJson {
        change,
        before: before.cloned(),
        after: after.cloned(),
        unknown_id: None,
    };
    Some(
        items
            .into_iter()
            .map(|entry| match entry {
                Item::Added(v) => item(ItemChange::Added, None, Some(v)),
                Item::Removed(v) => {
                    let mut entry = item(ItemChange::Removed, Some(v), None);
                    if let (Some(kind), Some(id)) = (target, v.as_str())
                        && unknown_reference(plan, target, v).is_some()
                    {
                        let foreign = plan.foreign.get(&(kind, id.to_owned()));
                        entry.unknown_id = Some(UnknownId {
                            kind: kind.section(),
                            id: id.to_owned(),
                            label: foreign.map(|f| f.label.clone()),
                            owner: foreign.map(|f| match &f.owner {
                                Whose::Project(project) => Owner::Project {
                                    project: project.clone(),
                                },
                                Whose::Nobody => Owner::Other(OwnerName::Nobody),
                                Whose::Unknown => Owner::Other(OwnerName::Unknown),
                            }),
                        });
                    }
                    entry
                }
                Item::Changed(old, new) => item(ItemChange::Changed, Some(old), Some(new)),
            })
            .collect(),
    )
}

/// The body lines of a list field, item by item: (sign, text). `head` is
/// the field's first line (`name = [` and its notes); `None` when the field
/// is not a list on both sides, or both are empty.
pub fn lines(plan: &Plan, change: &Change, field: &FieldChange, sign: char, head: &str) -> Option<Vec<(char, String)>> {
    let (before, after) = both_lists(field.before.as_ref(), field.after.as_ref())?;
    if before.is_empty() && after.is_empty() {
        return None;
    }
    let target = reference_target(change.address.kind, &field.path);
    let (items, same) = items(before, after);
    let mut out = vec![(sign, head.to_owned())];
    for item in items {
        match item {
            Item::Added(value) => out.push(('+', format!("    {}", compact(value)))),
            Item::Removed(value) => {
                let note = unknown_reference(plan, target, value).unwrap_or_default();
                out.push(('-', format!("    {}{note}", compact(value))));
            }
            Item::Changed(old, new) => {
                out.push(('~', "    {".to_owned()));
                let (fields, mut same) = changed_fields(old, new);
                // A secret changed: which item it is, by its name (a header's key).
                if let Some((name, value)) = identity(old, new) {
                    out.push((' ', format!("        {name} = {}", show(value))));
                    same = same.saturating_sub(1);
                }
                out.extend(fields.into_iter().map(|(sign, text)| (sign, format!("        {text}"))));
                if same > 0 {
                    out.push((' ', format!("        ({same} unchanged field{} hidden)", plural(same))));
                }
                out.push((' ', "    }".to_owned()));
            }
        }
    }
    if same > 0 && change.action != monform_engine::Action::Create {
        out.push((' ', format!("    ({same} unchanged item{} hidden)", plural(same))));
    }
    out.push((' ', "]".to_owned()));
    Some(out)
}

/// The name of an item whose masked value changed (`key`, or `name`),
/// unchanged on both sides: the masks alone do not say which it is; and
/// the `path` of a file whose content changed (a code bundle's, a
/// dependency), always.
fn identity<'v>(old: &'v Value, new: &Value) -> Option<(&'static str, &'v Value)> {
    if let Some(path) = old
        .get("path")
        .filter(|p| new.get("path") == Some(*p) && old.get("content").is_some())
    {
        return Some(("path", path));
    }
    if !holds_mask(old) && !holds_mask(new) {
        return None;
    }
    ["key", "name"]
        .into_iter()
        .find_map(|name| Some((name, old.get(name)?)).filter(|(_, v)| new.get(name) == Some(*v)))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edited_object_is_one_changed_item_and_the_rest_are_counted_same() {
        let before = vec![
            json!({"source": "STATUS_CODE", "target": "200"}),
            json!({"source": "HEADERS", "target": "x"}),
        ];
        let after = vec![
            json!({"source": "STATUS_CODE", "target": "201"}),
            json!({"source": "HEADERS", "target": "x"}),
            json!({"source": "TEXT_BODY", "target": "ok"}),
        ];
        let (items, same) = items(&before, &after);
        assert_eq!(same, 1);
        assert_eq!(
            items,
            vec![Item::Changed(&before[0], &after[0]), Item::Added(&after[2])]
        );
        let (fields, same) = changed_fields(&before[0], &after[0]);
        assert_eq!(fields, vec![('~', "target = \"200\" -> \"201\"".to_owned())]);
        assert_eq!(same, 1);
    }

    #[test]
    fn a_changed_file_of_a_list_is_named_by_its_path_and_shown_as_a_diff() {
        let before = json!({"path": "tests/a.spec.ts", "content": "one\ntwo\nthree\n"});
        let after = json!({"path": "tests/a.spec.ts", "content": "one\n2\nthree\n"});
        assert_eq!(identity(&before, &after), Some(("path", &json!("tests/a.spec.ts"))));
        let (fields, same) = changed_fields(&before, &after);
        let text: Vec<String> = fields.iter().map(|(sign, line)| format!("{sign}{line}")).collect();
        assert_eq!(
            text,
            [
                "~content = <<EOT",
                "     @@ -1,3 +1,3 @@",
                "     one",
                "-    two",
                "+    2",
                "     three",
                " EOT"
            ]
        );
        assert_eq!(same, 1);
        assert_eq!(compact(&after), "{ path = \"tests/a.spec.ts\", content = (3 lines) }");
    }

    #[test]
    fn scalars_are_removed_and_added_never_changed() {
        let before = vec![json!("a"), json!("b")];
        let after = vec![json!("a"), json!("c")];
        let (items, same) = items(&before, &after);
        assert_eq!(same, 1);
        assert_eq!(items, vec![Item::Removed(&before[1]), Item::Added(&after[1])]);
    }

    #[test]
    fn alert_channels_of_a_check_are_references() {
        assert_eq!(reference_target(Kind::Check, "alertChannels"), Some(Kind::AlertChannel));
        assert_eq!(reference_target(Kind::Check, "request.assertions"), None);
    }
}
